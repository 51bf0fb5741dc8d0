package closgen

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fared/fared/lsdb"
)

// legacyThree is the generator as it was before Fabric existed (direct
// Builder calls): the Fabric path must give the very same graph, so the
// spf/fare benchmark figures stay comparable across the change.
func legacyThree(c ThreeStage) *lsdb.Graph {
	rng := rand.New(rand.NewPCG(c.Seed, 3))
	b := lsdb.NewBuilder("isis", 2, "")
	for s := 0; s < c.Spines; s++ {
		b.AddNode(lsdb.Node{ID: fmt.Sprintf("S%d", s)})
	}
	for l := 0; l < c.Leaves; l++ {
		id := fmt.Sprintf("L%d", l)
		b.AddNode(lsdb.Node{ID: id})
		b.AddPrefix(id, leafPrefix(0, l))
	}
	for l := 0; l < c.Leaves; l++ {
		for s := 0; s < c.Spines; s++ {
			legacyCable(b, fmt.Sprintf("L%d", l), fmt.Sprintf("S%d", s), speeds[rng.IntN(len(speeds))])
		}
	}
	return b.Build("L0")
}

func legacyFive(c FiveStage) *lsdb.Graph {
	rng := rand.New(rand.NewPCG(c.Seed, 5))
	b := lsdb.NewBuilder("isis", 2, "")
	for p := 0; p < c.Spines; p++ {
		for i := 0; i < c.Super; i++ {
			b.AddNode(lsdb.Node{ID: fmt.Sprintf("X%d.%d", p, i)})
		}
	}
	for pod := 0; pod < c.Pods; pod++ {
		for s := 0; s < c.Spines; s++ {
			b.AddNode(lsdb.Node{ID: fmt.Sprintf("P%dS%d", pod, s)})
		}
		for l := 0; l < c.Leaves; l++ {
			id := fmt.Sprintf("P%dL%d", pod, l)
			b.AddNode(lsdb.Node{ID: id})
			b.AddPrefix(id, leafPrefix(pod, l))
		}
	}
	for pod := 0; pod < c.Pods; pod++ {
		for l := 0; l < c.Leaves; l++ {
			for s := 0; s < c.Spines; s++ {
				legacyCable(b, fmt.Sprintf("P%dL%d", pod, l), fmt.Sprintf("P%dS%d", pod, s), speeds[rng.IntN(len(speeds))])
			}
		}
		for s := 0; s < c.Spines; s++ {
			for i := 0; i < c.Super; i++ {
				legacyCable(b, fmt.Sprintf("P%dS%d", pod, s), fmt.Sprintf("X%d.%d", s, i), speeds[rng.IntN(len(speeds))])
			}
		}
	}
	return b.Build("P0L0")
}

func legacyCable(b *lsdb.Builder, x, y string, bw float32) {
	b.AddLink(x, y, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
	b.AddLink(y, x, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
}

func sameGraph(t *testing.T, what string, a, b *lsdb.Graph) {
	t.Helper()
	if a.Self != b.Self || !reflect.DeepEqual(a.Nodes, b.Nodes) || !reflect.DeepEqual(a.Links, b.Links) || !reflect.DeepEqual(a.Prefixes, b.Prefixes) {
		t.Errorf("%s: graph differs from the legacy generator's", what)
	}
}

func TestSameGraphAsLegacy(t *testing.T) {
	for _, c := range []ThreeStage{{Spines: 8, Leaves: 32, Seed: 1}, {Spines: 64, Leaves: 512, Seed: 42}} {
		sameGraph(t, fmt.Sprintf("%+v", c), c.Graph(), legacyThree(c))
	}
	for _, c := range []FiveStage{{Pods: 4, Leaves: 4, Spines: 4, Super: 4, Seed: 1}, {Pods: 8, Leaves: 16, Spines: 4, Super: 8, Seed: 42}} {
		sameGraph(t, fmt.Sprintf("%+v", c), c.Graph(), legacyFive(c))
	}
}

func TestParallelCables(t *testing.T) {
	c := ThreeStage{Spines: 4, Leaves: 6, Parallel: 5, Seed: 7}
	f := c.Fabric()
	// 24 leaf–spine pairs; pairs 0, 5, 10, 15, 20 get a second cable.
	if len(f.Cables) != 29 {
		t.Fatalf("%d cables, want 29", len(f.Cables))
	}
	if n, l := c.Counts(); n != len(f.Nodes) || l != 2*len(f.Cables) {
		t.Errorf("Counts %d/%d, fabric %d nodes %d cables", n, l, len(f.Nodes), len(f.Cables))
	}
	// L0–S0 (pair 0) has two cables, L0–S1 one.
	l0, s0, s1 := f.Index("L0"), f.Index("S0"), f.Index("S1")
	count := func(a, b int) int {
		n := 0
		for _, ci := range f.CablesOf(a) {
			if cb := f.Cables[ci]; cb.A == b || cb.B == b {
				n++
			}
		}
		return n
	}
	if count(l0, s0) != 2 || count(l0, s1) != 1 {
		t.Errorf("L0–S0 %d cables, L0–S1 %d", count(l0, s0), count(l0, s1))
	}
	g := f.Graph()
	if len(g.Links) != 58 {
		t.Errorf("graph has %d links, want 58", len(g.Links))
	}
	five := FiveStage{Pods: 3, Leaves: 4, Spines: 2, Super: 2, Parallel: 3, Seed: 1}
	if n, l := five.Counts(); n != len(five.Fabric().Nodes) || l != 2*len(five.Fabric().Cables) {
		t.Errorf("5-stage Counts %d/%d, fabric %d/%d", n, l, len(five.Fabric().Nodes), 2*len(five.Fabric().Cables))
	}
}
