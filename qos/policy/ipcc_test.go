package policy

import (
	"net/netip"
	"testing"
	"time"
)

var (
	hA = netip.MustParseAddr("10.0.0.1")
	hB = netip.MustParseAddr("10.0.0.2")
	hC = netip.MustParseAddr("10.0.0.3")
	t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

func us(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }

func data(src, dst netip.Addr, qp, psn uint32, size int) IPCCPacket {
	return IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: psn, In: "in", Out: "out", Prio: 3, Size: size}
}

func ack(src, dst netip.Addr, qp, psn uint32) IPCCPacket {
	return IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: psn, AETH: true, In: "out", Out: "in", Prio: 3, Size: 64}
}

func testIPCC() *IPCC {
	c := DefaultIPCC()
	c.Poll, c.CNPInterval = 50*time.Microsecond, 50*time.Microsecond
	c.Low, c.High, c.Few, c.More = 10_000, 100_000, 2, 8
	return NewIPCC(c)
}

// TestIPCCLearnByPSN: two flows run from A to B; an ACK from B names the
// sender QP, and its PSN says which flow it acknowledges.
func TestIPCCLearnByPSN(t *testing.T) {
	p := testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), data(hA, hB, 0x10, psn, 1000))
	}
	for psn := uint32(0xFFFFF0); psn != 5; psn = (psn + 1) & 0xFFFFFF { // wraps past 2^24
		p.Observe(us(1), data(hA, hB, 0x11, psn, 1000))
	}
	p.Observe(us(2), ack(hB, hA, 0x77, 105))
	p.Observe(us(2), ack(hB, hA, 0x78, 2)) // after the wrap: flow 0x11
	p.Observe(us(2), ack(hB, hA, 0x79, 50_000))
	f10, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10})
	f11, _ := p.Flow(IPCCFlowKey{hA, hB, 0x11})
	if !f10.Learned || f10.SrcQP != 0x77 || !f11.Learned || f11.SrcQP != 0x78 {
		t.Fatalf("learnt %+v / %+v, want 0x77 for QP 0x10 and 0x78 for QP 0x11", f10, f11)
	}
	if f10.In != "in" || f10.Out != "out" || f10.Prio != 3 || f10.Packets != 11 || f10.Bytes != 11000 {
		t.Errorf("flow entry %+v", f10)
	}
	// A reverse packet without an AETH teaches nothing (anyone can send
	// one; issue 25): it is neither matched nor counted.
	p.Observe(us(3), IPCCPacket{Src: hB, Dst: hA, DestQP: 0x99, PSN: 1, Prio: 3, Size: 100})
	st := p.Stats()
	if st.Learned != 2 || st.Unmatched != 1 || st.Ambiguous != 0 {
		t.Errorf("stats %+v: want 2 learnt, 1 unmatched (PSN 50000), none ambiguous", st)
	}
	if f10, _ = p.Flow(f10.IPCCFlowKey); f10.SrcQP != 0x77 {
		t.Errorf("the packet without AETH changed a learnt QP: %#x", f10.SrcQP)
	}
	// An ACK whose PSN both flows sent is ambiguous.
	p.Observe(us(4), data(hA, hB, 0x11, 105, 1000))
	p.Observe(us(4), ack(hB, hA, 0x55, 105))
	if st := p.Stats(); st.Ambiguous != 1 {
		t.Errorf("ambiguous %d, want 1", st.Ambiguous)
	}
	// Even with a single flow between C and A, only an ACK teaches.
	p.Observe(us(5), data(hC, hA, 0x20, 1, 1000))
	p.Observe(us(5), IPCCPacket{Src: hA, Dst: hC, DestQP: 0x21, PSN: 1, Size: 100, Prio: 3, Out: "x"})
	if f, _ := p.Flow(IPCCFlowKey{hC, hA, 0x20}); f.Learned {
		t.Errorf("single flow C->A learnt from a packet without AETH: %+v", f)
	}
	p.Observe(us(5), ack(hA, hC, 0x21, 1))
	if f, _ := p.Flow(IPCCFlowKey{hC, hA, 0x20}); !f.Learned || f.SrcQP != 0x21 {
		t.Errorf("single flow C->A: %+v", f)
	}
}

// TestIPCCCount walks the seed's table with a poll equal to the CNP
// interval (a poll earns one interval's count): three learnt flows of
// 3000, 2000 and 1000 bytes per poll through one queue.
func TestIPCCCount(t *testing.T) {
	p := testIPCC()
	flows := []uint32{0x10, 0x11, 0x12}
	for _, qp := range flows {
		p.LearnPair(us(0), hA, hB, 0x100+qp, qp)
	}
	q := QueueKey{"out", 3}
	send := func(at int) {
		for i, qp := range flows {
			p.Observe(us(at), data(hA, hB, qp, uint32(at), 1000*(3-i)))
		}
	}
	type step struct {
		depth uint64
		level string
		want  []uint32 // sender QPs notified, in order
	}
	steps := []step{
		{0, "", nil}, // first poll: no congestion
		{20_000, "growing/low", []uint32{0x110, 0x111}}, // Few = 2, heaviest first
		{150_000, "growing/high", []uint32{0x110, 0x111, 0x112}},
		{120_000, "shrinking/high", []uint32{0x110, 0x111}},
		{50_000, "shrinking/low", nil},
		{50_000, "shrinking/low", nil}, // flat counts as shrinking
		{60_000, "growing/low", []uint32{0x110, 0x111}},
		{5_000, "", nil}, // below Low
	}
	for i, s := range steps {
		now := 50 * (i + 1)
		send(now - 10)
		out := p.Step(us(now), map[QueueKey]uint64{q: s.depth})
		var got []uint32
		for _, c := range out {
			got = append(got, c.DestQP)
			if c.Dst != hA || c.Src != hB || c.DSCP != 48 || c.Level != s.level || !c.At.Equal(us(now)) {
				t.Errorf("step %d: order %+v", i, c)
			}
		}
		if len(got) != len(s.want) {
			t.Fatalf("step %d (depth %d): CNPs to %x, want %x", i, s.depth, got, s.want)
		}
		for j := range got {
			if got[j] != s.want[j] {
				t.Fatalf("step %d: CNPs to %x, want %x", i, got, s.want)
			}
		}
	}
	qs := p.Queues()
	if len(qs) != 1 || qs[0].CNPs != 9 || qs[0].Congested != 6 {
		t.Errorf("queue view %+v, want 9 CNPs over 6 congested polls", qs)
	}
}

// TestIPCCInterval: polled every 10 µs, a growing high queue earns 8 CNPs
// per 50 µs, but each of its two flows gets one per 50 µs at most.
func TestIPCCInterval(t *testing.T) {
	p := testIPCC()
	p.cfg.Poll = 10 * time.Microsecond
	p.LearnPair(us(0), hA, hB, 0x20, 0x10)
	p.LearnPair(us(0), hC, hB, 0x21, 0x11)
	q := QueueKey{"out", 3}
	last := map[uint32]time.Time{}
	total := 0
	for i := 1; i <= 30; i++ {
		now := 10 * i
		p.Observe(us(now-1), data(hA, hB, 0x10, uint32(i), 1000))
		p.Observe(us(now-1), data(hC, hB, 0x11, uint32(i), 500))
		for _, c := range p.Step(us(now), map[QueueKey]uint64{q: uint64(100_000 + 1000*i)}) {
			if l, ok := last[c.DestQP]; ok && c.At.Sub(l) < 50*time.Microsecond {
				t.Fatalf("QP %#x notified at %v and %v: closer than 50 µs", c.DestQP, l, c.At)
			}
			last[c.DestQP] = c.At
			total++
		}
	}
	// 300 µs: each flow at 10, 60, ..., 260 µs = 6 CNPs.
	if total != 12 {
		t.Errorf("%d CNPs in 300 µs to two flows, want 12", total)
	}
	if p.Stats().RateLimit == 0 {
		t.Error("no flow was skipped by the interval")
	}
}

// TestIPCCNoQP: a congested flow whose sender QP was never learnt is
// skipped (counted), and the CNP goes to the next flow.
func TestIPCCNoQP(t *testing.T) {
	p := testIPCC()
	p.LearnPair(us(0), hC, hB, 0x21, 0x11)
	p.Step(us(0), map[QueueKey]uint64{{"out", 3}: 0})
	p.Observe(us(10), data(hA, hB, 0x10, 1, 3000)) // heaviest, unknown QP
	p.Observe(us(10), data(hC, hB, 0x11, 1, 1000))
	out := p.Step(us(50), map[QueueKey]uint64{{"out", 3}: 50_000})
	if len(out) != 1 || out[0].DestQP != 0x21 {
		t.Fatalf("orders %+v, want one CNP to QP 0x21", out)
	}
	if p.Stats().NoQP != 1 {
		t.Errorf("NoQP %d, want 1", p.Stats().NoQP)
	}
	// Unwatched queues send nothing.
	if out := p.Step(us(100), map[QueueKey]uint64{{"out", 4}: 500_000}); len(out) != 0 {
		t.Errorf("unwatched queue 4: %+v", out)
	}
}

// TestIPCCExpiry: a flow silent for longer than FlowTimeout leaves the
// table.
func TestIPCCExpiry(t *testing.T) {
	p := testIPCC()
	p.cfg.FlowTimeout = time.Millisecond
	p.Observe(us(0), data(hA, hB, 0x10, 1, 1000))
	p.Step(us(900), nil)
	if len(p.Flows()) != 1 {
		t.Fatal("flow expired early")
	}
	p.Step(us(1100), nil)
	if len(p.Flows()) != 0 || p.Stats().Expired != 1 {
		t.Fatalf("flows %v stats %+v", p.Flows(), p.Stats())
	}
	// Its pair index went with it: a reverse ACK now matches nothing.
	p.Observe(us(1200), ack(hB, hA, 0x77, 1))
	if p.Stats().Unmatched != 0 || p.Stats().Learned != 0 {
		t.Errorf("stats %+v", p.Stats())
	}
}
