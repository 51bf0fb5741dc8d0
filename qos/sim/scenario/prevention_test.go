package scenario

import (
	"testing"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/qos/qosconfig"
	"github.com/fared/fared/qos/sim"
)

// Deadlock prevention with a lossless remap (the seed's Figures 8 and 9,
// issue 30): the scenarios' leaves remap DSCP 26 (priority 3) at a bounce
// to DSCP 27, priority 4, which has PFC; the second-bounce rule, where
// given, remaps DSCP 27 to DSCP 28, priority 2, without PFC. docs/qos.md
// ("Prevention") states when each mode is deadlock-free; these tests are
// the evidence.

// lossless are the PFC priorities of every prevention scenario.
var lossless = model.PriosOf(3, 4)

// editGroups changes every port group of every switch of s.
func editGroups(s *Scenario, edit func(g *qosconfig.Group)) {
	for _, sw := range s.Switches {
		if sw.QoS == nil {
			continue
		}
		for i := range sw.QoS.Groups {
			edit(&sw.QoS.Groups[i])
		}
	}
}

// strict keeps only the lossless remap: no second-bounce rule.
func strict(g *qosconfig.Group) { g.Remaps = g.Remaps[:1] }

// lossyRemap replaces the remaps by the lossy one: DSCP 26 to DSCP 28,
// priority 2 (no PFC).
func lossyRemap(g *qosconfig.Group) {
	g.Remaps = []model.Remap{{Group: g.Name, From: 26, To: 28, Prio: 2}}
}

func run(t *testing.T, s *Scenario) *Output {
	t.Helper()
	out, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkNoDeadlock: the watchdog never fired, no queue of a lossless
// priority dropped a packet, and the only drops anywhere are lossy
// queues at their limit (no headroom overflow, no TTL expiry, no
// watchdog drop).
func checkNoDeadlock(t *testing.T, out *Output) {
	t.Helper()
	r := out.Results
	if len(out.Watchdog) != 0 {
		t.Errorf("watchdog fired: %v", out.Watchdog)
	}
	for _, p := range r.Ports {
		for _, q := range p.Queues {
			if lossless.Has(q.Prio) && q.Drops != 0 {
				t.Errorf("%s/%s priority %d (lossless) dropped %d packets", p.Node, p.Port, q.Prio, q.Drops)
			}
		}
	}
	for reason, n := range r.Drops {
		if reason != "lossy limit" {
			t.Errorf("%d drops for %q", n, reason)
		}
	}
}

// remapped is how many packets node remapped out of priority prio toward
// port.
func remapped(r *sim.Results, node, port string, prio int) uint64 {
	for _, p := range r.Ports {
		if p.Node != node || p.Port != port {
			continue
		}
		for _, q := range p.Queues {
			if q.Prio == prio {
				return q.Remapped
			}
		}
	}
	return 0
}

// flow returns the named flow's result.
func flow(t *testing.T, r *sim.Results, name string) sim.FlowResult {
	t.Helper()
	for _, f := range r.Flows {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no flow %s", name)
	return sim.FlowResult{}
}

// deadlocked is the set of node/iface that the watchdog detected on
// priority prio.
func deadlocked(out *Output, prio int) map[string]bool {
	got := map[string]bool{}
	for _, e := range out.Watchdog {
		if e.Kind == policy.EvDetected && e.Prio == prio {
			got[e.Node+"/"+e.Iface] = true
		}
	}
	return got
}

// TestBounceBaselineDeadlocks: clos-bounce without prevention deadlocks
// priority 3 on the cycle the two bouncing flows close (so the scenario
// does exercise a cyclic buffer dependency).
func TestBounceBaselineDeadlocks(t *testing.T) {
	s := load(t, "clos-bounce.yaml")
	for _, sw := range s.Switches {
		if sw.QoS != nil {
			sw.QoS.Groups = nil
		}
	}
	got := deadlocked(run(t, s), 3)
	for _, k := range []string{"S1/L1", "L1/S2", "S2/L2", "L2/S1"} {
		if !got[k] {
			t.Errorf("%s not detected on priority 3 (detected: %v)", k, got)
		}
	}
}

// TestBounceLosslessRemap: clos-bounce with the lossless remap: every
// path bounces at most once, so priority 3 (up to the bounce) and
// priority 4 (after it) are both up-then-down and acyclic. No deadlock,
// no drop at all, every flow complete.
func TestBounceLosslessRemap(t *testing.T) {
	out := run(t, load(t, "clos-bounce.yaml"))
	checkNoDeadlock(t, out)
	r := out.Results
	if len(r.Drops) != 0 {
		t.Errorf("drops %v: the lossless remap must lose nothing", r.Drops)
	}
	if remapped(r, "L1", "S2", 3) == 0 || remapped(r, "L2", "S1", 3) == 0 {
		t.Errorf("L1 remapped %d, L2 %d: the bounces were not identified", remapped(r, "L1", "S2", 3), remapped(r, "L2", "S1", 3))
	}
	for _, f := range r.Flows {
		if !f.Done || f.Lost != 0 {
			t.Errorf("flow %s: done %v, lost %d", f.Name, f.Done, f.Lost)
		}
	}
}

// TestBounceLossyRemap: clos-bounce with the lossy remap: no deadlock;
// the bounced flows leave the lossless class and lose packets, the
// others lose none.
func TestBounceLossyRemap(t *testing.T) {
	s := load(t, "clos-bounce.yaml")
	editGroups(s, lossyRemap)
	out := run(t, s)
	checkNoDeadlock(t, out)
	r := out.Results
	for _, name := range []string{"Z1", "Z2"} {
		if f := flow(t, r, name); !f.Done || f.Lost != 0 {
			t.Errorf("flow %s (no bounce): done %v, lost %d", name, f.Done, f.Lost)
		}
	}
	t.Logf("bounced flows lost X %d, Y %d packets (lossy after the bounce)", flow(t, r, "X").Lost, flow(t, r, "Y").Lost)
}

// TestSecondBounceLosslessRemap: clos-bounce2, paths that bounce twice,
// with the lossless remap and the second-bounce rule: priority 3 holds
// paths to their first bounce, priority 4 from the first to the second,
// the rest is lossy. No deadlock, no lossless drop; both rules fired.
func TestSecondBounceLosslessRemap(t *testing.T) {
	out := run(t, load(t, "clos-bounce2.yaml"))
	checkNoDeadlock(t, out)
	r := out.Results
	// First bounces: X at L1, Y at L2 (out of priority 3); second
	// bounces: X at L2, Y at L1 (out of priority 4).
	for _, c := range []struct {
		node, port string
		prio       int
	}{{"L1", "S2", 3}, {"L2", "S3", 3}, {"L2", "S3", 4}, {"L1", "S2", 4}} {
		if remapped(r, c.node, c.port, c.prio) == 0 {
			t.Errorf("%s toward %s remapped nothing out of priority %d", c.node, c.port, c.prio)
		}
	}
	for _, name := range []string{"Z1", "Z2"} {
		if f := flow(t, r, name); !f.Done || f.Lost != 0 {
			t.Errorf("flow %s: done %v, lost %d", name, f.Done, f.Lost)
		}
	}
	t.Logf("drops %v; X lost %d, Y lost %d (lossy after their second bounce)", r.Drops, flow(t, r, "X").Lost, flow(t, r, "Y").Lost)
}

// TestSecondBounceStrictDeadlocks: the same traffic with only the
// lossless remap (remap once, no second-bounce rule): the twice-bounced
// paths stay on priority 4 and close the cycle L1->S2 -> S2->L2 ->
// L2->S3 -> S3->L1 on it, which deadlocks. This is the bound docs/qos.md
// states: a lossless remap alone is deadlock-free for one bounce per path.
func TestSecondBounceStrictDeadlocks(t *testing.T) {
	s := load(t, "clos-bounce2.yaml")
	editGroups(s, strict)
	got := deadlocked(run(t, s), 4)
	for _, k := range []string{"L1/S2", "S2/L2", "L2/S3", "S3/L1"} {
		if !got[k] {
			t.Errorf("%s not detected on priority 4 (detected: %v)", k, got)
		}
	}
}

// TestSecondBounceLossyRemap: clos-bounce2 with the lossy remap: no
// deadlock for any number of bounces; priority 4 traffic (Z1, Z2) is
// untouched.
func TestSecondBounceLossyRemap(t *testing.T) {
	s := load(t, "clos-bounce2.yaml")
	editGroups(s, lossyRemap)
	out := run(t, s)
	checkNoDeadlock(t, out)
	for _, name := range []string{"Z1", "Z2"} {
		if f := flow(t, out.Results, name); !f.Done || f.Lost != 0 {
			t.Errorf("flow %s: done %v, lost %d", name, f.Done, f.Lost)
		}
	}
}

// TestLoopLosslessRemap: loop4's routing loop (a bounce at D on every
// lap) with the lossless remap and the second-bounce rule, the loop never
// stopping: priority 3 carries the first lap, priority 4 the second, and
// the copies die lossy after that. No deadlock, no lossless drop, the
// victim sharing priority 3 completes without loss.
func TestLoopLosslessRemap(t *testing.T) {
	out := run(t, load(t, "loop4-lossless.yaml"))
	checkNoDeadlock(t, out)
	r := out.Results
	if remapped(r, "D", "A", 3) == 0 || remapped(r, "D", "A", 4) == 0 {
		t.Errorf("D remapped %d out of priority 3 and %d out of 4: want both bounces", remapped(r, "D", "A", 3), remapped(r, "D", "A", 4))
	}
	if v := flow(t, r, "victim"); !v.Done || v.Lost != 0 {
		t.Errorf("victim: done %v, lost %d", v.Done, v.Lost)
	}
}

// TestLoopStrictRemapLosesLossless: loop4 with only the lossless remap:
// the looping copies stay on priority 4, lap after lap, until their TTL
// ends: lossless packets are dropped, and priority 4 carries the ring's
// whole cycle. A routing loop bounces without bound, beyond what
// remap-once covers.
func TestLoopStrictRemapLosesLossless(t *testing.T) {
	s := load(t, "loop4-lossless.yaml")
	editGroups(s, strict)
	r := run(t, s).Results
	if r.Drops["ttl"] == 0 {
		t.Errorf("drops %v: want the looping copies to reach their TTL on priority 4", r.Drops)
	}
	if remapped(r, "D", "A", 4) != 0 {
		t.Errorf("D remapped %d packets out of priority 4 with no rule for it", remapped(r, "D", "A", 4))
	}
}
