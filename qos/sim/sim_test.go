package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/fared/fared/qos/model"
)

// line builds h1 -(100G)- S -(rate)- h2 with PFC on priority 3 (DSCP 26)
// and returns the network, the switch and its port toward h2; edits
// change the switch's desired state before it is applied.
func line(t *testing.T, rate float64, prof *model.Profile, edits ...func(*model.Desired)) (*Network, *Node, *Port) {
	t.Helper()
	n := New(DefaultParams())
	s := n.AddNode("S", false)
	h1, h2 := n.AddNode("h1", true), n.AddNode("h2", true)
	n.Connect(h1, s, 100e9, time.Microsecond)
	n.Connect(s, h2, rate, time.Microsecond)
	d := &model.Desired{}
	d.DSCP[26] = 3
	d.DSCP[48] = 6
	for _, p := range s.Ports {
		i := model.Iface{Name: p.Name, PFCConfigured: model.PriosOf(3), PFC: model.PriosOf(3)}
		for q := range i.Thresholds {
			i.Thresholds[q] = model.PFCThresholds{XOFF: 100_000, XON: 80_000, Headroom: 50_000}
			i.Queues[q] = model.Queue{Sched: model.Strict, Weight: 1}
		}
		if prof != nil && p.Name == "h2" {
			i.Queues[3].Profile = prof.Name
			d.Profiles = []model.Profile{*prof}
		}
		d.Ifaces = append(d.Ifaces, i)
	}
	d.Sort()
	for _, edit := range edits {
		edit(d)
	}
	if _, err := s.Backend(time.Time{}).Apply(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h1.DSCP, h2.DSCP = s.DSCP, s.DSCP
	h1.Ports[0].PFC = model.PriosOf(3)
	return n, s, s.Port("h2")
}

// TestPFCLossless: a 100G sender into a 10G port; PFC pauses the sender,
// the priority group never passes XOFF + headroom, nothing is lost.
func TestPFCLossless(t *testing.T) {
	n, s, _ := line(t, 10e9, nil)
	f := n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Size: 2_000_000, DSCP: 26})
	n.RunUntil(5 * time.Millisecond)
	in := s.Port("h1")
	if in.C[3].PauseTx == 0 || n.Node("h1").Ports[0].C[3].PauseRx == 0 {
		t.Fatalf("no PAUSE sent (%d) or received (%d)", in.C[3].PauseTx, n.Node("h1").Ports[0].C[3].PauseRx)
	}
	if lim := int64(100_000 + 50_000); in.PeakPG[3] > lim {
		t.Errorf("priority group peaked at %d bytes, above XOFF+headroom %d", in.PeakPG[3], lim)
	}
	if !f.Done || f.Lost != 0 || len(n.Drops) != 0 {
		t.Fatalf("flow done %v lost %d drops %v", f.Done, f.Lost, n.Drops)
	}
	// 2 MB at 10 Gb/s: 1.6 ms plus a few µs of path.
	if fct := f.FCT(); fct < 1600*time.Microsecond || fct > 1700*time.Microsecond {
		t.Errorf("FCT %v, want about 1.6 ms (the 10G port stays busy)", fct)
	}
}

// TestRemapKeepsArrivalPG: S remaps DSCP 26 (priority 3) to DSCP 27 in
// priority 4, lossless too, between its two ports (one port group), and
// the 10G egress backs up. The remapped packets wait in priority 4's
// egress queue but are counted in priority group 3 of the ingress, the
// priority h1 sends them in: PAUSE goes to h1's priority 3, which stops
// it, and nothing overflows the headroom. (Counted in group 4, the PAUSE
// would stop h1's idle priority 4 while priority 3 kept sending.)
func TestRemapKeepsArrivalPG(t *testing.T) {
	n, s, out := line(t, 10e9, nil, func(d *model.Desired) {
		d.DSCP[27] = 4
		for i := range d.Ifaces {
			d.Ifaces[i].Group = "g"
			d.Ifaces[i].PFC = model.PriosOf(3, 4)
			d.Ifaces[i].PFCConfigured = d.Ifaces[i].PFC
		}
		d.Remaps = []model.Remap{{Group: "g", From: 26, To: 27, Prio: 4}}
	})
	n.Node("h1").Ports[0].PFC = model.PriosOf(3, 4)
	f := n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Size: 2_000_000, DSCP: 26})
	n.RunUntil(5 * time.Millisecond)
	in := s.Port("h1")
	if out.C[3].Remapped == 0 || out.C[4].TxPackets == 0 || out.C[3].TxPackets != 0 {
		t.Fatalf("remapped %d, priority 4 sent %d, priority 3 sent %d: want every packet moved to 4", out.C[3].Remapped, out.C[4].TxPackets, out.C[3].TxPackets)
	}
	if in.C[3].PauseTx == 0 || in.C[4].PauseTx != 0 {
		t.Errorf("PAUSE sent on priority 3: %d, on 4: %d; want them on 3 only", in.C[3].PauseTx, in.C[4].PauseTx)
	}
	if lim := int64(100_000 + 50_000); in.PeakPG[3] > lim || in.PeakPG[4] != 0 {
		t.Errorf("priority groups peaked at %d (3) and %d (4): want 3 within XOFF+headroom %d, 4 unused", in.PeakPG[3], in.PeakPG[4], lim)
	}
	if !f.Done || f.Lost != 0 || len(n.Drops) != 0 {
		t.Fatalf("flow done %v lost %d drops %v", f.Done, f.Lost, n.Drops)
	}
}

// TestFastECN: marking at dequeue tells the receiver about congestion
// about one queue delay earlier than marking at enqueue.
func TestFastECN(t *testing.T) {
	first := func(dequeue bool) time.Duration {
		prof := &model.Profile{Name: "p", ECN: model.ECNAll, Dequeue: dequeue}
		prof.Colors[model.Green] = model.WRED{Enable: true, Min: 50_000, Max: 50_000, Prob: 100}
		n, _, port := line(t, 10e9, prof)
		f := n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Size: 1_000_000, DSCP: 26, ECT: true, CC: CCDCQCN})
		n.RunUntil(2 * time.Millisecond)
		if port.C[3].Marks == 0 || f.FirstCNP == 0 {
			t.Fatalf("dequeue=%v: no marks (%d) or CNP", dequeue, port.C[3].Marks)
		}
		return f.FirstCNP
	}
	enq, deq := first(false), first(true)
	// The queue at the threshold holds 50 KB: 40 µs at 10 Gb/s.
	if gain := enq - deq; gain < 30*time.Microsecond {
		t.Errorf("first CNP at %v (enqueue marking) vs %v (dequeue): gain %v, want about 40 µs", enq, deq, gain)
	}
	t.Logf("first CNP: enqueue marking %v, dequeue marking %v", enq, deq)
}

// TestSwitchCNP: a CNP sent by a switch (IPCC) reaches the sender and
// cuts its rate by (1 - alpha/2) with alpha = 1 at start.
func TestSwitchCNP(t *testing.T) {
	n, s, _ := line(t, 100e9, nil)
	f := n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Size: 0, Stop: time.Millisecond, DSCP: 26, CC: CCDCQCN})
	n.RunUntil(10 * time.Microsecond)
	if f.Rate() != 100e9 {
		t.Fatalf("rate %g before any CNP, want line rate", f.Rate())
	}
	if !n.SendCNP(s, f) {
		t.Fatal("switch has no route to the sender")
	}
	n.RunUntil(20 * time.Microsecond)
	if f.CNPsRx != 1 || n.CNPs["switch"] != 1 {
		t.Fatalf("CNPs at the sender %d, from switches %d", f.CNPsRx, n.CNPs["switch"])
	}
	if got := f.Rate(); math.Abs(got-50e9) > 1 {
		t.Errorf("rate after one CNP %g, want 50e9 (RC x (1 - 1/2))", got)
	}
	if a := f.Alpha(); math.Abs(a-1) > 1e-12 {
		t.Errorf("alpha %g, want (1-g)*1 + g = 1", a)
	}
}

// TestDCQCNRecovers: after a cut and no more CNPs, fast recovery brings
// the rate halfway back per timer period: RC = (RT + RC) / 2.
func TestDCQCNRecovers(t *testing.T) {
	n, s, _ := line(t, 100e9, nil)
	f := n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Stop: time.Millisecond, DSCP: 26, CC: CCDCQCN})
	n.RunUntil(10 * time.Microsecond)
	n.SendCNP(s, f)
	n.RunUntil(20 * time.Microsecond) // CNP arrived (~3 µs), rate 50G, target 100G
	cut := f.Rate()
	n.RunUntil(20*time.Microsecond + 55*time.Microsecond)
	if want := (cut + 100e9) / 2; math.Abs(f.Rate()-want) > 1 {
		t.Errorf("after one rate timer: %g, want %g", f.Rate(), want)
	}
}

// TestElephantMeter: a flow that outruns the rate after its burst is an
// elephant and moves to the elephant priority; small flows stay.
func TestElephantMeter(t *testing.T) {
	n, s, port := line(t, 100e9, nil)
	d := &model.Desired{Elephant: &model.Elephant{Rate: 1_000_000_000 / 8, Size: 100_000, Prio: 1, Color: model.Yellow, Idle: time.Second}}
	d.DSCP = s.DSCP
	for _, p := range s.Ports {
		i := model.Iface{Name: p.Name, PFC: model.PriosOf(3), PFCConfigured: model.PriosOf(3)}
		for q := range i.Thresholds {
			i.Thresholds[q] = model.PFCThresholds{XOFF: 100_000, XON: 80_000, Headroom: 50_000}
		}
		d.Ifaces = append(d.Ifaces, i)
	}
	d.Sort()
	be := s.Backend(time.Time{})
	if _, err := be.Apply(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	big := n.AddFlow(&Flow{Name: "big", Src: n.Node("h1"), Dst: n.Node("h2"), Size: 2_000_000, DSCP: 26})
	var mice []*Flow
	for i := 0; i < 10; i++ {
		mice = append(mice, n.AddFlow(&Flow{Name: "mouse", Src: n.Node("h1"), Dst: n.Node("h2"), Size: 20_000, DSCP: 26,
			Start: time.Duration(i) * 100 * time.Microsecond}))
	}
	n.RunUntil(5 * time.Millisecond)
	if !big.Done {
		t.Fatal("elephant not done")
	}
	for _, m := range mice {
		if !m.Done {
			t.Fatal("mouse not done")
		}
	}
	el := port.C[1].TxBytes
	// The burst allowance (100 KB) plus what the bucket refills while the
	// flow runs at 100 Gb/s (1% of it) go out as mice; the rest is elephant.
	if el < 1_800_000 || el > 1_900_000 {
		t.Errorf("elephant priority carried %d bytes, want 2 MB less the 100 KB burst and refill", el)
	}
	if port.C[1].ElephantBytes != el || port.C[3].ElephantBytes != 0 {
		t.Errorf("elephant bytes: queue 1 %d, queue 3 %d", port.C[1].ElephantBytes, port.C[3].ElephantBytes)
	}
	c, _ := be.Counters(context.Background())
	var elephants, small int
	for _, f := range c.Ifaces["h2"].Flows {
		if f.Elephant {
			elephants++
			if f.Key != "big" {
				t.Errorf("flow %s classified elephant", f.Key)
			}
		} else {
			small++
		}
	}
	if elephants != 1 || small != 10 {
		t.Errorf("classification: %d elephants, %d mice; want 1 and 10", elephants, small)
	}
}

// TestSetProfileLive: a profile changed while traffic runs takes effect
// at once (AI ECN tunes thresholds this way).
func TestSetProfileLive(t *testing.T) {
	high := &model.Profile{Name: "p", ECN: model.ECNAll}
	high.Colors[model.Green] = model.WRED{Enable: true, Min: 10_000_000, Max: 10_000_000, Prob: 100}
	n, _, port := line(t, 10e9, high)
	n.AddFlow(&Flow{Src: n.Node("h1"), Dst: n.Node("h2"), Stop: 2 * time.Millisecond, DSCP: 26, ECT: true})
	n.RunUntil(time.Millisecond)
	if port.C[3].Marks != 0 {
		t.Fatalf("%d marks below a 10 MB threshold", port.C[3].Marks)
	}
	low := *high
	low.Colors[model.Green] = model.WRED{Enable: true, Min: 20_000, Max: 40_000, Prob: 100}
	port.SetProfile(3, &low)
	n.RunUntil(2 * time.Millisecond)
	if port.C[3].Marks == 0 {
		t.Fatal("no marks after lowering the thresholds")
	}
}

// TestDWRR: two backlogged lossy queues with weights 3 and 1 share the
// port 3:1.
func TestDWRR(t *testing.T) {
	n := New(DefaultParams())
	s := n.AddNode("S", false)
	h1, h2, h3 := n.AddNode("h1", true), n.AddNode("h2", true), n.AddNode("h3", true)
	n.Connect(h1, s, 100e9, time.Microsecond)
	n.Connect(h2, s, 100e9, time.Microsecond)
	n.Connect(s, h3, 10e9, time.Microsecond)
	s.DSCP[10], s.DSCP[20] = 1, 2
	h1.DSCP, h2.DSCP = s.DSCP, s.DSCP
	out := s.Port("h3")
	out.Sched[1] = model.Queue{Sched: model.DWRR, Weight: 3}
	out.Sched[2] = model.Queue{Sched: model.DWRR, Weight: 1}
	n.AddFlow(&Flow{Src: h1, Dst: h3, Stop: 2 * time.Millisecond, DSCP: 10})
	n.AddFlow(&Flow{Src: h2, Dst: h3, Stop: 2 * time.Millisecond, DSCP: 20})
	n.RunUntil(2 * time.Millisecond)
	ratio := float64(out.C[1].TxBytes) / float64(out.C[2].TxBytes)
	if math.Abs(ratio-3) > 0.1 {
		t.Errorf("DWRR share %.3f, want 3", ratio)
	}
}
