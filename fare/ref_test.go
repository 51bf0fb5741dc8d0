package fare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// refCap is the definition, evaluated naively: cap(x→d) by recursion over
// the DAG children of x that lie on a path to d, with bw summed per child.
func refCap(r *spf.Result, x, d int32, memo map[int32]float64) float64 {
	if x == d {
		return math.Inf(1)
	}
	if v, ok := memo[x]; ok {
		return v
	}
	g := r.Graph
	sum := 0.0
	for m := int32(0); m < int32(len(g.Nodes)); m++ {
		bw, edge := 0.0, false
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			if r.EdgeParent[e] != x {
				continue
			}
			edge = true
			if g.Nodes[x].Pseudo {
				bw = math.Inf(1)
				continue
			}
			for _, li := range r.EdgeLinks[r.EdgeLinkStart[e]:r.EdgeLinkStart[e+1]] {
				bw += float64(g.Links[li].MaxBW)
			}
		}
		if !edge || !onPath(r, m, d) {
			continue
		}
		sum += math.Min(bw, refCap(r, m, d, memo))
	}
	memo[x] = sum
	return sum
}

// onPath: d is m or a DAG descendant of m.
func onPath(r *spf.Result, m, d int32) bool {
	if m == d {
		return true
	}
	for e := r.ParentStart[d]; e < r.ParentStart[d+1]; e++ {
		if onPath(r, m, r.EdgeParent[e]) {
			return true
		}
	}
	return false
}

func randomGraph(rng *rand.Rand, n int) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 2, "")
	for i := 0; i < n; i++ {
		b.AddNode(lsdb.Node{ID: fmt.Sprint("R", i), Overload: rng.IntN(12) == 0 && i != 0})
		b.AddPrefix(fmt.Sprint("R", i), lsdb.Prefix{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i), 0}), 24)})
	}
	pns := 1 + n/8
	for p := 0; p < pns; p++ {
		b.AddNode(lsdb.Node{ID: fmt.Sprint("P", p), Pseudo: true})
	}
	for i := 0; i < 3*n; i++ {
		x, y := rng.IntN(n), rng.IntN(n)
		if x == y {
			continue
		}
		m := uint32(1 + rng.IntN(3))
		bw := float32(1 + rng.IntN(10))
		for k := 0; k <= rng.IntN(2); k++ { // sometimes a parallel link
			b.AddLink(fmt.Sprint("R", x), fmt.Sprint("R", y), lsdb.Link{Metric: m, MaxBW: bw, HasBW: true})
			b.AddLink(fmt.Sprint("R", y), fmt.Sprint("R", x), lsdb.Link{Metric: m, MaxBW: bw, HasBW: true})
		}
	}
	for i := 0; i < n/2; i++ {
		x, p := rng.IntN(n), rng.IntN(pns)
		b.AddLink(fmt.Sprint("R", x), fmt.Sprint("P", p), lsdb.Link{Metric: uint32(1 + rng.IntN(3)), MaxBW: float32(1 + rng.IntN(10)), HasBW: true})
		b.AddLink(fmt.Sprint("P", p), fmt.Sprint("R", x), lsdb.Link{})
	}
	return b.Build("R0")
}

// TestAgainstReference compares the compiled capacity programs with the
// naive definition on random graphs (parallel links, pseudonodes, overload,
// equal-cost meshes).
func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for iter := 0; iter < 200; iter++ {
		g := randomGraph(rng, 6+rng.IntN(20))
		r := spf.Run(g)
		tb := ComputeTable(r, spf.Routes(r), Options{})
		for _, rt := range tb.Routes {
			d := rt.Advertisers[0]
			memo := map[int32]float64{}
			for _, h := range append(append([]NextHop(nil), rt.NextHops...), rt.Unused...) {
				want := out(refCap(r, h.Neighbor, d, memo))
				if !near(h.DownCap, want) {
					t.Fatalf("iter %d %s via %s: cap %v, want %v", iter, rt.Prefix, g.Nodes[h.Neighbor].ID, h.DownCap, want)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d next hops checked", checked)
	}
}

// TestRouteOnlyEqualsFull: after a bandwidth-only change, Reuse + Compute,
// and TopologyDiff + ReuseChanged + Update, give exactly what a full Run +
// Compute gives.
func TestRouteOnlyEqualsFull(t *testing.T) {
	for _, g := range []*lsdb.Graph{
		closgen.ThreeStage{Spines: 8, Leaves: 32, Seed: 1}.Graph(),
		closgen.FiveStage{Pods: 4, Leaves: 4, Spines: 4, Super: 4, Seed: 1}.Graph(),
	} {
		r1 := spf.Run(g)
		prev := ComputeTable(r1, spf.Routes(r1), Options{})
		// The last DAG link that does not leave Self (deep in the fabric),
		// and one of Self's own links.
		var deep, own int
		for _, l := range r1.EdgeLinks {
			if g.Links[l].From != g.Self {
				deep = int(l)
			} else {
				own = int(l)
			}
		}
		cases := []struct {
			name string
			g2   *lsdb.Graph
		}{
			{"deep link", closgen.WithLinkBW(g, deep, 1)},
			{"own link", closgen.WithLinkBW(g, own, 1)},
			{"deep link NaN", closgen.WithLinkBW(g, deep, float32(math.NaN()))},
			{"path bandwidth", withPathBW(g, len(g.Prefixes)-1, 7)},
			{"nothing", closgen.WithLinkBW(g, deep, g.Links[deep].MaxBW)},
			{"prefix added", withPrefix(g, g.Prefixes[len(g.Prefixes)-1].Node, "192.0.2.0/24")},
			{"anycast added", withPrefix(g, g.Prefixes[len(g.Prefixes)-2].Node, g.Prefixes[len(g.Prefixes)-1].Prefix.String())},
		}
		for _, tc := range cases {
			same, changed := spf.TopologyDiff(g, tc.g2, true)
			if !same {
				t.Fatalf("%s: TopologyDiff not same", tc.name)
			}
			r3 := spf.Run(tc.g2)
			full := ComputeTable(r3, spf.Routes(r3), Options{})
			r2 := spf.Reuse(r1, tc.g2)
			if reuse := ComputeTable(r2, spf.Routes(r2), Options{}); !reflect.DeepEqual(reuse, full) {
				t.Fatalf("%s: Reuse+Compute differs from a full run", tc.name)
			}
			r4 := spf.ReuseChanged(r1, tc.g2, changed)
			if up := Update(prev, r1, r4, spf.Routes(r4), changed, Options{}); !reflect.DeepEqual(up, full) {
				t.Fatalf("%s: Update differs from a full run", tc.name)
			}
			if tc.name != "nothing" && reflect.DeepEqual(prev, full) {
				t.Fatalf("%s: change had no effect", tc.name)
			}
		}
	}
}

func withPrefix(g *lsdb.Graph, node int32, p string) *lsdb.Graph {
	g2 := *g
	g2.Prefixes = append([]lsdb.Prefix(nil), g.Prefixes...)
	g2.Prefixes = append(g2.Prefixes, lsdb.Prefix{Prefix: netip.MustParsePrefix(p), Node: node})
	slices.SortStableFunc(g2.Prefixes, func(a, b lsdb.Prefix) int {
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		if a.Prefix.Bits() != b.Prefix.Bits() {
			return a.Prefix.Bits() - b.Prefix.Bits()
		}
		return int(a.Node - b.Node)
	})
	return &g2
}

func withPathBW(g *lsdb.Graph, i int, pb float32) *lsdb.Graph {
	g2 := *g
	g2.Prefixes = append([]lsdb.Prefix(nil), g.Prefixes...)
	g2.Prefixes[i].PathBW, g2.Prefixes[i].HasPathBW = pb, true
	return &g2
}
