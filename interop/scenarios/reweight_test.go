package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

// clos2x2: two spines, two leaves, every fared, every link 100G.
const clos2x2 = `name: rw
defaults: {hello-interval: 1s}
nodes:
  s1: {kind: fared}
  s2: {kind: fared}
  l1: {kind: fared}
  l2: {kind: fared}
links:
  - {a: l1, b: s1, bandwidth: 100G}
  - {a: l1, b: s2, bandwidth: 100G}
  - {a: l2, b: s1, bandwidth: 100G}
  - {a: l2, b: s2, bandwidth: 100G}
`

// TestCapacityChangesReachTheLeaf (issue 29): spine s1's run-time
// bandwidth override toward l2 changes five times; after each, l1's
// kernel group for l2's loopback holds the hand-computed weights, and
// l1's SPF log says the computation was a capacity change weighed at
// once, on the route-only path.
//
// By hand (docs/fare.md): l1 weighs spine s by min(bw(l1,s), bw(s,l2)),
// bw(s,l2) as s advertises it; s2 stays min(100,100) = 100, s1 is
// min(100, override):
//
//	40G  → s1:s2 = 40:100  (s1's share 40/140 = 0.2857)
//	10G  → 10:100          (0.0909)
//	100G → 100:100         (0.5)
//	25G  → 25:100          (0.2)
//	60G  → 60:100          (0.375)
func TestCapacityChangesReachTheLeaf(t *testing.T) {
	l := startLab(t, clos2x2)
	f := &fabric{t: t, ctx: ctxT(t), l: l}
	l1 := f.ns("l1")
	dst := l.Node("l2").Loopback.String() + "/32"
	f.waitRoute(l1, "l1", dst, map[string]float64{"s1": 100, "s2": 100}, 90*time.Second)
	iface := ifaceToward(l, "s1", "l2")
	for i, bw := range []float64{40, 10, 100, 25, 60} {
		// The stimulus, not a wait: changes a second apart are what the
		// damping rule never holds (rib.DefaultDampConfig).
		time.Sleep(time.Second)
		sent := time.Now()
		if out, err := l.Farectl(f.ctx, "s1", "isis", "bandwidth", iface, fmt.Sprintf("%gG", bw)); err != nil {
			t.Fatalf("change %d: %v: %s", i+1, err, out)
		}
		f.waitRoute(l1, "l1", dst, map[string]float64{"s1": min(100, bw), "s2": 100}, 20*time.Second)
		poll(t, f.ctx, 10*time.Second, fmt.Sprintf("change %d: l1's SPF log shows the capacity change", i+1), func() error {
			var v wire.SPFView
			if err := l.FarectlJSON(f.ctx, "l1", &v, "spf", "log"); err != nil {
				return err
			}
			for _, e := range v.Log {
				if e.At.After(sent) && e.Kind == "route-only" && e.Capacity && strings.Contains(e.Reason, "bandwidth change on s1→l2") {
					return nil
				}
			}
			return fmt.Errorf("no capacity computation since the change: %+v", v.Log[max(0, len(v.Log)-3):])
		})
	}
}
