package scenarios

import (
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
)

// clos5 is draft-xu-lsr-fare figure 2 scaled down: 3 pods (IS-IS areas,
// level 1) of 2 leaves and 2 L1L2 spines, and 2 planes (level 2) of 2
// super-spines; spine k of every pod connects to plane k. Pod B's leaves
// are FRR (L1 only), plane 2's super-spines are FRR (L2 only).
const clos5 = `name: clos5
defaults: {hello-interval: 1s}
nodes:
  a-s1: {kind: fared, level: 1-2, area: 49.0001}
  a-s2: {kind: fared, level: 1-2, area: 49.0001}
  a-l1: {kind: fared, level: 1, area: 49.0001, prefixes: [10.1.1.0/24]}
  a-l2: {kind: fared, level: 1, area: 49.0001}
  b-s1: {kind: fared, level: 1-2, area: 49.0002}
  b-s2: {kind: fared, level: 1-2, area: 49.0002}
  b-l1: {kind: frr, level: 1, area: 49.0002}
  b-l2: {kind: frr, level: 1, area: 49.0002}
  c-s1: {kind: fared, level: 1-2, area: 49.0003}
  c-s2: {kind: fared, level: 1-2, area: 49.0003}
  c-l1: {kind: fared, level: 1, area: 49.0003}
  c-l2: {kind: fared, level: 1, area: 49.0003}
  x1: {kind: fared, level: 2, area: 49.0100}
  x2: {kind: fared, level: 2, area: 49.0100}
  y1: {kind: frr, level: 2, area: 49.0100}
  y2: {kind: frr, level: 2, area: 49.0100}
links:
  - {a: a-l1, b: a-s1, bandwidth: 100G}
  - {a: a-l1, b: a-s2, bandwidth: 40G}
  - {a: a-l2, b: a-s1, bandwidth: 100G}
  - {a: a-l2, b: a-s2, bandwidth: 100G}
  - {a: b-l1, b: b-s1, bandwidth: 100G}
  - {a: b-l1, b: b-s2, bandwidth: 100G}
  - {a: b-l2, b: b-s1, bandwidth: 100G}
  - {a: b-l2, b: b-s2, bandwidth: 100G}
  - {a: c-l1, b: c-s1, bandwidth: 100G}
  - {a: c-l1, b: c-s2, bandwidth: 100G}
  - {a: c-l2, b: c-s1, bandwidth: 100G}
  - {a: c-l2, b: c-s2, bandwidth: 100G}
  - {a: a-s1, b: x1, bandwidth: 100G}
  - {a: a-s1, b: x2, bandwidth: 100G}
  - {a: b-s1, b: x1, bandwidth: 100G}
  - {a: b-s1, b: x2, bandwidth: 100G}
  - {a: c-s1, b: x1, bandwidth: 40G}
  - {a: c-s1, b: x2, bandwidth: 100G}
  - {a: a-s2, b: y1, bandwidth: 100G}
  - {a: a-s2, b: y2, bandwidth: 100G}
  - {a: b-s2, b: y1, bandwidth: 100G}
  - {a: b-s2, b: y2, bandwidth: 100G}
  - {a: c-s2, b: y1, bandwidth: 100G}
  - {a: c-s2, b: y2, bandwidth: 100G}
`

// TestFARE5Stage: Path Bandwidth re-advertisement at L1L2 routers in both
// directions, and a far-pod leaf weighting its paths by it (draft §4.2).
func TestFARE5Stage(t *testing.T) {
	l := startLab(t, clos5)
	f := &fabric{t: t, ctx: ctxT(t), l: l}
	cl1 := f.ns("c-l1")
	const pA = "10.1.1.0/24" // a-l1's prefix

	// By hand, for a-l1's prefix P (no Path Bandwidth = no constraint):
	//  L1→L2 at a-s1: min(link a-s1–a-l1 100G, max) = 100G
	//        at a-s2: min(link a-s2–a-l1  40G, max) =  40G
	//  L2→L1 at c-s1 (plane 1, toward a-s1 over x1 and x2):
	//        min(100G, min(40,100) + min(100,100) = 140G) = 100G
	//        at c-s2 (plane 2, toward a-s2 over y1 and y2, FRR):
	//        min(40G, min(100,100) + min(100,100) = 200G) = 40G
	//  c-l1: min(uplink, re-advertised PB): c-s1 min(100,100) = 100,
	//        c-s2 min(100,40) = 40.
	start := time.Now()
	f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 100, "c-s2": 40}, 120*time.Second)
	t.Logf("FIGURE clos5: far-pod weights in c-l1's kernel %v after lab start", time.Since(start).Round(time.Millisecond))
	checkLeak(t, f, "a-s2", pA, 2, 40)
	checkLeak(t, f, "c-s2", pA, 1, 40)
	checkLeak(t, f, "c-s1", pA, 1, 100)

	t.Run("L1-only FRR leaf has a default route toward its spines", func(t *testing.T) {
		want := []string{gatewayToward(l, "b-l1", "b-s1"), gatewayToward(l, "b-l1", "b-s2")}
		sort.Strings(want)
		poll(t, f.ctx, 30*time.Second, "b-l1 default route", func() error {
			hops, err := frrRoute(f.ctx, l, "b-l1", "0.0.0.0/0")
			if err != nil {
				return err
			}
			sort.Strings(hops)
			if fmt.Sprint(hops) != fmt.Sprint(want) {
				return fmt.Errorf("default via %v, want %v", hops, want)
			}
			return nil
		})
	})
	t.Run("L1-only fared leaf has a capacity-weighted default route", func(t *testing.T) {
		f.waitRoute(cl1, "c-l1", "0.0.0.0/0", map[string]float64{"c-s1": 100, "c-s2": 100}, 20*time.Second)
	})
	t.Run("up/down bit stops L2→L1→L2 re-leaking", func(t *testing.T) {
		// Every pod's two L1L2 spines see P in L1 with the down bit set
		// by the other; none may put it back into L2. Each plane is its
		// own L2 partition, so in plane 1 (seen from x1) P's only L2
		// advertiser is a-s1, and in plane 2 (seen from c-s2's L2) a-s2.
		for node, want := range map[string]string{"x1": "[a-s1]", "c-s2": "[a-s2]"} {
			poll(t, f.ctx, 20*time.Second, node+": L2 advertisers of "+pA, func() error {
				v, err := faredLSDB(f.ctx, l, node)
				if err != nil {
					return err
				}
				var adv []string
				for _, p := range v.Prefixes {
					if p.Prefix == pA {
						adv = append(adv, p.Name)
					}
				}
				sort.Strings(adv)
				if fmt.Sprint(adv) != want {
					return fmt.Errorf("L2 advertisers of %s: %v, want %s", pA, adv, want)
				}
				return nil
			})
		}
	})
	t.Run("re-advertisement follows a leaf–spine change in the origin pod", func(t *testing.T) {
		// a-s2–a-l1 40G → 10G: a-s2 leaks min(10, max) = 10G; c-s2 re-
		// advertises min(10, 200) = 10G; c-l1: c-s1 100, c-s2 min(100,10).
		setBW(t, f, "a-s2", "a-l1", "10G")
		checkLeak(t, f, "a-s2", pA, 2, 10)
		checkLeak(t, f, "c-s2", pA, 1, 10)
		f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 100, "c-s2": 10}, 30*time.Second)
	})
	t.Run("re-advertisement follows a spine–super-spine change in the far pod", func(t *testing.T) {
		// c-s1–x2 100G → 20G: cap(c-s1→a-s1) = min(40,100) + min(20,100)
		// = 60G, so c-s1 re-advertises min(100, 60) = 60G.
		setBW(t, f, "c-s1", "x2", "20G")
		checkLeak(t, f, "c-s1", pA, 1, 60)
		f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 60, "c-s2": 10}, 30*time.Second)
	})
	t.Run("convergence: link event to far-pod kernel weights", func(t *testing.T) {
		// Ten bandwidth changes of a-s2–a-l1 (10G ↔ 25G), each timed from
		// the API call at a-s2 to the new weights in c-l1's kernel.
		var took []time.Duration
		for i := 0; i < 10; i++ {
			bw, w := "25G", 25.0
			if i%2 == 1 {
				bw, w = "10G", 10.0
			}
			t0 := time.Now()
			setBW(t, f, "a-s2", "a-l1", bw)
			f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 60, "c-s2": w}, 30*time.Second)
			took = append(took, time.Since(t0))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		t.Logf("FIGURE clos5 convergence over 10 runs: median %v, min %v, max %v", ((took[4] + took[5]) / 2).Round(time.Millisecond),
			took[0].Round(time.Millisecond), took[9].Round(time.Millisecond))
	})
	t.Run("a flapping link stays within the damping bound", func(t *testing.T) {
		before := levels(t, f, "a-s2")
		link := linkIndex(t, l, "a-l1", "a-s2")
		t0 := time.Now()
		for i := 0; i < 20; i++ {
			if err := l.SetLinkUp(f.ctx, link, false); err != nil {
				t.Fatal(err)
			}
			time.Sleep(250 * time.Millisecond)
			if err := l.SetLinkUp(f.ctx, link, true); err != nil {
				t.Fatal(err)
			}
			time.Sleep(250 * time.Millisecond)
		}
		elapsed := time.Since(t0)
		after := levels(t, f, "a-s2")
		// docs/isis.md: one LSP is originated at most once per
		// lsp-gen-interval (the lab's 500ms), and what a level leaks is
		// recomputed at most once per readvertise-hold (1s).
		genBound := uint64(math.Ceil(elapsed.Seconds()/0.5)) + 1
		leakBound := uint64(math.Ceil(elapsed.Seconds()/1.0)) + 1
		for i := range after {
			orig := after[i].Originated - before[i].Originated
			runs := after[i].Recomputations - before[i].Recomputations
			// a-s2 originates one LSP per level here (no fragments, no
			// pseudonode), so the bound applies to the level's count.
			t.Logf("L%d: %d LSPs originated, %d leak recomputations in %v (bounds %d, %d)", after[i].Level, orig, runs, elapsed.Round(time.Millisecond), genBound, leakBound)
			if orig > genBound {
				t.Errorf("L%d: %d LSPs originated during the flaps, bound %d", after[i].Level, orig, genBound)
			}
			if runs > leakBound {
				t.Errorf("L%d: %d leak recomputations, bound %d", after[i].Level, runs, leakBound)
			}
		}
		// And it all settles back.
		f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 60, "c-s2": 10}, 60*time.Second)
	})
}

func gatewayToward(l *interop.Lab, node, peer string) string {
	for _, lk := range l.Links {
		if lk.A == node && lk.B == peer {
			return lk.AddrB.Addr().String()
		}
		if lk.B == node && lk.A == peer {
			return lk.AddrA.Addr().String()
		}
	}
	return ""
}

// setBW overrides the bandwidth of node's interface toward peer through
// the API (farectl isis bandwidth).
func setBW(t *testing.T, f *fabric, node, peer, bw string) {
	t.Helper()
	if out, err := f.l.Farectl(f.ctx, node, "isis", "bandwidth", ifaceToward(f.l, node, peer), bw); err != nil {
		t.Fatalf("%s: %v: %s", node, err, out)
	}
}

// checkLeak waits until node leaks prefix into level `into` with the given
// Path Bandwidth (Gbit/s).
func checkLeak(t *testing.T, f *fabric, node, prefix string, into int, gbps float64) {
	t.Helper()
	poll(t, f.ctx, 30*time.Second, fmt.Sprintf("%s leaks %s into L%d at %vG", node, prefix, into, gbps), func() error {
		var v []isis.LeakView
		if err := f.l.FarectlJSON(f.ctx, node, &v, "isis", "leaks"); err != nil {
			return err
		}
		for _, lk := range v {
			if lk.Prefix == prefix && lk.IntoLevel == into {
				if got := lk.PathBW * 8 / 1e9; math.Abs(got-gbps) > gbps*1e-4 {
					return fmt.Errorf("path bandwidth %vG (original %v, capacity %vG)", got, lk.OrigPathBW, lk.Capacity*8/1e9)
				}
				return nil
			}
		}
		return fmt.Errorf("not leaked")
	})
}

func levels(t *testing.T, f *fabric, node string) []isis.LevelView {
	t.Helper()
	var v []isis.LevelView
	if err := f.l.FarectlJSON(f.ctx, node, &v, "isis", "levels"); err != nil {
		t.Fatal(err)
	}
	return v
}
