package fare

import (
	"sync"
	"testing"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Benchmark fabrics:
//
//	3-stage: 64 spines × 512 leaves: 576 nodes, 32,768 cables = 65,536 lsdb links, 512 prefixes.
//	5-stage: 64 pods × (64 leaves + 16 spines) + 16 planes × 64 super-spines:
//	         6,144 nodes; 65,536 leaf–spine + 65,536 spine–super cables = 131,072
//	         cables = 262,144 lsdb (directed) links; 4,096 prefixes.
var (
	three = closgen.ThreeStage{Spines: 64, Leaves: 512, Seed: 42}
	five  = closgen.FiveStage{Pods: 64, Leaves: 64, Spines: 16, Super: 64, Seed: 42}

	once3, once5 sync.Once
	g3, g5       *lsdb.Graph
)

// graph3 and graph5 build each fabric once, separately, so that a 3-stage
// benchmark does not carry the 5-stage graph in its live heap (the garbage
// collector scans all of it on every cycle).
func graph3() *lsdb.Graph { once3.Do(func() { g3 = three.Graph() }); return g3 }
func graph5() *lsdb.Graph { once5.Do(func() { g5 = five.Graph() }); return g5 }

func graphs() (*lsdb.Graph, *lsdb.Graph) { return graph3(), graph5() }

func TestBenchFabricCounts(t *testing.T) {
	a, b := graphs()
	if n, l := three.Counts(); len(a.Nodes) != n || len(a.Links) != l || n != 576 || l != 65536 || len(a.Prefixes) != 512 {
		t.Errorf("3-stage: %d nodes %d links", len(a.Nodes), len(a.Links))
	}
	if n, l := five.Counts(); len(b.Nodes) != n || len(b.Links) != l || n != 6144 || l != 262144 || len(b.Prefixes) != 4096 {
		t.Errorf("5-stage: %d nodes %d links", len(b.Nodes), len(b.Links))
	}
	r := spf.Run(b)
	rs := spf.Routes(r)
	tb := ComputeTable(r, rs, Options{})
	if len(tb.Routes) != 4095 || tb.Anomalies.Total() != 0 {
		t.Errorf("5-stage: %d routes, anomalies %+v", len(tb.Routes), tb.Anomalies)
	}
	// A remote leaf is reached over all 16 local spines.
	if rt := tb.Routes[len(tb.Routes)-1]; len(rt.NextHops) != 16 || rt.Mode != ModeWeighted {
		t.Errorf("remote route %+v", rt)
	}
}

func benchBuild(b *testing.B, bl *lsdb.Builder, self string) {
	b.ReportAllocs()
	for b.Loop() {
		bl.Build(self)
	}
}

func BenchmarkBuild3Stage(b *testing.B) { bl, s := three.Builder(); benchBuild(b, bl, s) }
func BenchmarkBuild5Stage(b *testing.B) { bl, s := five.Builder(); benchBuild(b, bl, s) }

func benchSPF(b *testing.B, g *lsdb.Graph) {
	b.ReportAllocs()
	for b.Loop() {
		spf.Run(g)
	}
}

func BenchmarkSPF3Stage(b *testing.B) { g := graph3(); benchSPF(b, g) }
func BenchmarkSPF5Stage(b *testing.B) { g := graph5(); benchSPF(b, g) }

func benchFARE(b *testing.B, g *lsdb.Graph) {
	r := spf.Run(g)
	rs := spf.Routes(r)
	b.ReportAllocs()
	for b.Loop() {
		ComputeTable(r, rs, Options{})
	}
}

func BenchmarkFARE3Stage(b *testing.B) { g := graph3(); benchFARE(b, g) }
func BenchmarkFARE5Stage(b *testing.B) { g := graph5(); benchFARE(b, g) }

// Full: SPF + routes + FARE weights, the target of a full run.
func benchFull(b *testing.B, g *lsdb.Graph) {
	b.ReportAllocs()
	for b.Loop() {
		r := spf.Run(g)
		ComputeTable(r, spf.Routes(r), Options{})
	}
}

func BenchmarkFull3Stage(b *testing.B) { g := graph3(); benchFull(b, g) }
func BenchmarkFull5Stage(b *testing.B) { g := graph5(); benchFull(b, g) }

// bwFlip is the pair of graphs the route-only benchmarks alternate
// between: g with the last DAG link not at Self set to 10G, and g.
func bwFlip(g *lsdb.Graph, r *spf.Result) [2]*lsdb.Graph {
	var li int
	for _, l := range r.EdgeLinks {
		if g.Links[l].From != g.Self {
			li = int(l)
		}
	}
	return [2]*lsdb.Graph{closgen.WithLinkBW(g, li, closgen.Gbps(10)), g}
}

// RouteOnly: one spine→leaf bandwidth changed. TopologyDiff (the topology
// check, which also lists the changed links) + ReuseChanged + routes +
// Update; the new Graph's Build is the protocol's cost, not counted.
func benchRouteOnly(b *testing.B, g *lsdb.Graph) {
	prevR := spf.Run(g)
	prev := ComputeTable(prevR, spf.Routes(prevR), Options{})
	flipLoop(b, bwFlip(g, prevR), func(ng *lsdb.Graph) {
		same, changed := spf.TopologyDiff(prevR.Graph, ng, true)
		if !same {
			b.Fatal("topology changed")
		}
		r := spf.ReuseChanged(prevR, ng, changed)
		prev = Update(prev, prevR, r, spf.Routes(r), changed, Options{})
		prevR = r
	})
}

// RouteOnlyPlain is the simple route-only path: SameTopology + Reuse
// (bandwidth snapshot refreshed from the whole DAG) + a full FARE pass.
func benchRouteOnlyPlain(b *testing.B, g *lsdb.Graph) {
	prev := spf.Run(g)
	flipLoop(b, bwFlip(g, prev), func(ng *lsdb.Graph) {
		if !spf.SameTopology(prev.Graph, ng) {
			b.Fatal("topology changed")
		}
		r := spf.Reuse(prev, ng)
		ComputeTable(r, spf.Routes(r), Options{})
		prev = r
	})
}

// flipLoop is the benchmark loop of a route-only change: each iteration
// hands step the other graph of gs.
func flipLoop(b *testing.B, gs [2]*lsdb.Graph, step func(ng *lsdb.Graph)) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		step(gs[i&1])
	}
}

func BenchmarkRouteOnly3Stage(b *testing.B)      { benchRouteOnly(b, graph3()) }
func BenchmarkRouteOnly5Stage(b *testing.B)      { benchRouteOnly(b, graph5()) }
func BenchmarkRouteOnlyPlain3Stage(b *testing.B) { benchRouteOnlyPlain(b, graph3()) }
func BenchmarkRouteOnlyPlain5Stage(b *testing.B) { benchRouteOnlyPlain(b, graph5()) }
