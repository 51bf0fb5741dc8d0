package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// The four ring egresses of loop4: switch -> port toward the next switch.
var ring = map[string]string{"A": "B", "B": "C", "C": "D", "D": "A"}

func load(t *testing.T, file string) *Scenario {
	t.Helper()
	s, err := Load("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stepper runs an instance poll by poll and checks every new watchdog
// event against the data plane's ground truth at that moment.
type stepper struct {
	t    *testing.T
	in   *Instance
	poll time.Duration
	seen int
	// tx[node] = ring egress TxPackets of priority 3 at each poll
	tx map[string][]uint64
	// onset of each detection (simulated time of the XOFF it reports)
	onsets map[string]time.Duration
}

func newStepper(t *testing.T, in *Instance) *stepper {
	return &stepper{t: t, in: in, poll: in.S.Switches[0].QoS.Poll, tx: map[string][]uint64{}, onsets: map[string]time.Duration{}}
}

// run advances to end, calling each(ev) for every new event right after
// the poll that produced it.
func (s *stepper) run(end time.Duration, each func(e NodeEvent)) {
	n := s.in.Net
	for n.Now() < end {
		n.RunUntil(n.Now() + s.poll)
		for sw, port := range ring {
			s.tx[sw] = append(s.tx[sw], n.Node(sw).Port(port).C[3].TxPackets)
		}
		for ; s.seen < len(s.in.Events); s.seen++ {
			e := s.in.Events[s.seen]
			if e.Kind == policy.EvDetected {
				since, paused := n.Node(e.Node).Port(e.Iface).XOFFSince(e.Prio)
				if !paused {
					s.t.Errorf("%s %s: detected while the data plane has the queue running", e.Node, e.Iface)
				}
				s.onsets[e.Node+"/"+e.Iface] = since
			}
			if each != nil {
				each(e)
			}
		}
	}
}

func (s *stepper) applied(node, iface string) model.Iface {
	return *s.in.Controllers[node].Applied().Iface(iface)
}

// TestDeadlockDetectRecover: the seed's four-switch loop deadlocks; each
// ring queue is detected within [detection, detection + poll] of the XOFF
// that never released; during the auto-recover timer PFC is off on the
// interface and the stuck queue drops; when the timer ends PFC is back
// and the victim flow completes.
func TestDeadlockDetectRecover(t *testing.T) {
	sc := load(t, "loop4.yaml")
	q := sc.Switches[0].QoS
	det, rest, poll := q.Watchdog.Detection, q.Watchdog.Restoration, q.Poll
	in, err := sc.Start()
	if err != nil {
		t.Fatal(err)
	}
	st := newStepper(t, in)
	detectedAt := map[string]time.Duration{}
	recoveredAt := map[string]time.Duration{}
	st.run(sc.Duration, func(e NodeEvent) {
		now := in.Net.Now()
		key := e.Node + "/" + e.Iface
		switch e.Kind {
		case policy.EvDetected:
			if ring[e.Node] != e.Iface || e.Prio != 3 {
				t.Errorf("unexpected detection %s", e.Event)
			}
			if _, dup := detectedAt[key]; dup {
				t.Errorf("%s detected twice (the burst ended; the loop must not deadlock again)", key)
			}
			detectedAt[key] = now
			onset := st.onsets[key]
			lat := now - onset
			if lat < det || lat > det+poll {
				t.Errorf("%s: detected %v after the XOFF began, want within [%v, %v]", key, lat, det, det+poll)
			}
			t.Logf("%s: XOFF at %v, detected at %v: latency %v (detection-time %v, poll %v)", key, onset, now, lat, det, poll)
			// A real deadlock: the queue sent nothing since the XOFF.
			hist := st.tx[e.Node]
			first := int((onset+poll-1)/poll) - 1 // index of the first poll at or after the onset
			if first < len(hist) && hist[first] != hist[len(hist)-1] {
				t.Errorf("%s: queue sent %d packets between XOFF and detection", key, hist[len(hist)-1]-hist[first])
			}
			a := st.applied(e.Node, e.Iface)
			if a.PFC != 0 || !a.Drop.Has(3) {
				t.Errorf("%s in recovery: applied PFC %q drop %q, want PFC off and priority 3 dropped", key, a.PFC, a.Drop)
			}
		case policy.EvRecovered:
			recoveredAt[key] = now
			if d := detectedAt[key]; now-d != rest {
				t.Errorf("%s recovered %v after detection, want the restoration time %v", key, now-d, rest)
			}
			if a := st.applied(e.Node, e.Iface); a.PFC != model.PriosOf(3) || a.Drop != 0 {
				t.Errorf("%s after recovery: applied PFC %q drop %q, want PFC 3 and no drop", key, a.PFC, a.Drop)
			}
		default:
			t.Errorf("unexpected event %s", e.Event)
		}
	})
	if len(detectedAt) != 4 || len(recoveredAt) != 4 {
		t.Fatalf("detections %v, recoveries %v: want all four ring queues", detectedAt, recoveredAt)
	}
	victim := in.Net.Flows[1]
	if !victim.Done {
		t.Fatalf("victim delivered %d of %d bytes: traffic not restored", victim.Delivered, victim.Size)
	}
	if victim.Finish < recoveredAt["B/C"] {
		t.Errorf("victim finished at %v, before recovery at %v: it was never stuck", victim.Finish, recoveredAt["B/C"])
	}
	t.Logf("victim done at %v (recovery ended at %v); watchdog drops %d", victim.Finish, recoveredAt["B/C"], in.Net.Drops["watchdog"])
}

// TestDeadlockForward: with action forward the stuck queues transmit
// through the PAUSE instead of dropping; the deadlock clears the same way.
func TestDeadlockForward(t *testing.T) {
	sc := load(t, "loop4.yaml")
	for _, sw := range sc.Switches {
		sw.QoS.Watchdog.Action = model.ActionForward
	}
	out, err := sc.Run()
	if err != nil {
		t.Fatal(err)
	}
	var det, rec int
	for _, e := range out.Watchdog {
		switch e.Kind {
		case policy.EvDetected:
			det++
		case policy.EvRecovered:
			rec++
		}
	}
	if det != 4 || rec != 4 {
		t.Errorf("detections %d recoveries %d, want 4 and 4", det, rec)
	}
	if out.Results.Drops["watchdog"] != 0 {
		t.Errorf("forward action dropped %d packets itself", out.Results.Drops["watchdog"])
	}
	if v := out.Results.Flows[1]; !v.Done {
		t.Errorf("victim not done: %+v", v)
	}
}

// TestDeadlockLimit: looping traffic that never stops deadlocks again
// after each recovery; the third deadlock within the window reaches the
// limit and PFC stays off until restore; after restore, detection works
// again.
func TestDeadlockLimit(t *testing.T) {
	sc := load(t, "loop4.yaml")
	sc.Flows[0].Stop = time.Hour // the loop never stops
	q := sc.Switches[0].QoS
	in, err := sc.Start()
	if err != nil {
		t.Fatal(err)
	}
	st := newStepper(t, in)
	count := map[string]int{}
	limitAt := map[string]time.Duration{}
	st.run(25*time.Millisecond, func(e NodeEvent) {
		key := e.Node + "/" + e.Iface
		switch e.Kind {
		case policy.EvDetected:
			if _, lim := limitAt[key]; lim {
				t.Errorf("%s detected after the limit: detection must stay off", key)
			}
			count[key]++
		case policy.EvLimit:
			limitAt[key] = in.Net.Now()
			if count[key] != q.Watchdog.Limit {
				t.Errorf("%s: limit after %d deadlocks, want %d", key, count[key], q.Watchdog.Limit)
			}
		}
	})
	if len(limitAt) != 4 {
		t.Fatalf("limit reached on %v, want all four ring interfaces", limitAt)
	}
	// PFC stays off, poll after poll, long after the restoration time.
	until := in.Net.Now() + 10*q.Watchdog.Restoration
	for in.Net.Now() < until {
		in.Net.RunUntil(in.Net.Now() + q.Poll)
		for sw, port := range ring {
			if a := st.applied(sw, port); a.PFC != 0 {
				t.Fatalf("%s/%s: PFC %q back on at %v without restore", sw, port, a.PFC, in.Net.Now())
			}
		}
	}
	for _, e := range in.Events[st.seen:] {
		if e.Kind == policy.EvDetected {
			t.Errorf("detection while limited: %s", e.Event)
		}
	}
	st.seen = len(in.Events)
	// The operator restores: PFC and detection come back.
	now := Epoch.Add(in.Net.Now())
	for sw, port := range ring {
		ok, err := in.Controllers[sw].Restore(context.Background(), now, port)
		if err != nil || !ok {
			t.Fatalf("restore %s/%s: %v %v", sw, port, ok, err)
		}
		if a := st.applied(sw, port); a.PFC != model.PriosOf(3) {
			t.Fatalf("%s/%s after restore: PFC %q", sw, port, a.PFC)
		}
	}
	again := 0
	st.run(in.Net.Now()+10*time.Millisecond, func(e NodeEvent) {
		if e.Kind == policy.EvDetected {
			again++
		}
	})
	if again == 0 {
		t.Error("no detection after restore: detection did not come back (the loop still runs)")
	}
}

// TestIncastNoDeadlock: an incast pauses every hop but drains; the
// watchdog must not fire.
func TestIncastNoDeadlock(t *testing.T) {
	out, err := load(t, "incast.yaml").Run()
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results
	if len(out.Watchdog) != 0 {
		t.Errorf("watchdog fired on a draining incast: %v", out.Watchdog)
	}
	pausedAt := map[string]uint64{}
	for _, p := range r.Ports {
		pausedAt[p.Node+"/"+p.Port] = p.PauseRx
	}
	for _, k := range []string{"S/L2", "L1/S", "h1/L1"} {
		if pausedAt[k] == 0 {
			t.Errorf("%s was never paused: the incast does not exercise PFC", k)
		}
	}
	if len(r.Drops) != 0 {
		t.Errorf("drops in a lossless incast: %v", r.Drops)
	}
	if r.Elephants.Done != 8 {
		t.Errorf("%d of 8 incast flows done", r.Elephants.Done)
	}
	t.Logf("PAUSE frames %d; FCT p50 %v p99 %v", r.PauseTx, r.Elephants.P50, r.Elephants.P99)
}

// TestPreventionNoDeadlock: the same looping traffic, never stopping,
// with D's ring ports in a port group: the flow is remapped out of the
// lossless priority at D and priority 3 never deadlocks.
func TestPreventionNoDeadlock(t *testing.T) {
	out, err := load(t, "loop4-prevention.yaml").Run()
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results
	if len(out.Watchdog) != 0 {
		t.Errorf("watchdog events with prevention on: %v", out.Watchdog)
	}
	var remapped, lossless uint64
	for _, p := range r.Ports {
		for _, q := range p.Queues {
			if p.Node == "D" && p.Port == "A" {
				remapped += q.Remapped
			}
			if q.Prio == 3 {
				lossless += q.Drops
			}
		}
	}
	if remapped == 0 {
		t.Error("D remapped nothing: the high-risk flow was not identified")
	}
	if lossless != 0 {
		t.Errorf("%d priority-3 drops: the lossless priority lost packets", lossless)
	}
	if v := r.Flows[1]; !v.Done || v.Lost != 0 {
		t.Errorf("victim: %+v", v)
	}
	t.Logf("D remapped %d packets of the looping flow; its looping copies died by %v", remapped, r.Drops)
}

// TestDeterministic: the same scenario and seed give the same result.
func TestDeterministic(t *testing.T) {
	run := func() string {
		out, err := load(t, "loop4.yaml").Run()
		if err != nil {
			t.Fatal(err)
		}
		out.WallSeconds, out.SimPerWall = 0, 0
		b, _ := json.Marshal(out)
		return string(b)
	}
	a, b := run(), run()
	if a != b {
		t.Fatal("two runs of one scenario differ")
	}
}

// TestDetectionLatencySweep: the figure "detection latency against the
// configured time" on the four-switch loop: for each (poll, detection)
// the latency from the XOFF that never released to the detection, over
// the four ring queues; every one within [detection, detection + poll].
func TestDetectionLatencySweep(t *testing.T) {
	rows := []string{"| poll | detection-time | min latency | max latency | bound |", "|---|---|---|---|---|"}
	for _, poll := range []time.Duration{250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond} {
		for _, mult := range []int{2, 4, 8, 16} {
			det := time.Duration(mult) * poll
			lo, hi := time.Hour, time.Duration(0)
			// The loop starts at four phases of the poll grid, so the
			// XOFF begins at different points between two polls.
			for k := 0; k < 4; k++ {
				sc := load(t, "loop4.yaml")
				for _, sw := range sc.Switches {
					sw.QoS.Poll = poll
					sw.QoS.Watchdog.Detection = det
				}
				sc.Flows[0].Start = time.Duration(k) * poll / 4
				sc.Flows[0].Stop += sc.Flows[0].Start
				sc.Duration = det + 3*poll + 2*time.Millisecond
				in, err := sc.Start()
				if err != nil {
					t.Fatal(err)
				}
				st := newStepper(t, in)
				found := false
				st.run(sc.Duration, func(e NodeEvent) {
					if e.Kind != policy.EvDetected {
						return
					}
					found = true
					lat := in.Net.Now() - st.onsets[e.Node+"/"+e.Iface]
					lo, hi = min(lo, lat), max(hi, lat)
					if lat < det || lat > det+poll {
						t.Errorf("poll %v detection %v: %s latency %v outside [%v, %v]", poll, det, e.Node+"/"+e.Iface, lat, det, det+poll)
					}
				})
				if !found {
					t.Errorf("poll %v detection %v phase %d: no detection", poll, det, k)
				}
			}
			rows = append(rows, fmt.Sprintf("| %v | %v | %v | %v | [%v, %v] |", poll, det, lo.Round(time.Microsecond), hi.Round(time.Microsecond), det, det+poll))
		}
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}
