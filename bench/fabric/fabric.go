// Package fabric builds synthetic CLOS fabrics as lsdb Graphs for tests and
// benchmarks of spf and fare. Bandwidths are random but seeded (the same
// seed gives the same fabric); both directions of a cable advertise the same
// Maximum Link Bandwidth. Every link has metric 10 and every leaf advertises
// one /32 (10.<pod>.<hi>.<lo>) with Path Bandwidth = largest finite float32
// (the "no constraint" default of the architecture).
//
// Node ids: "L<i>" / "S<i>" (3-stage), "P<pod>L<i>", "P<pod>S<i>",
// "X<plane>.<i>" (5-stage).
package fabric

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"

	"github.com/fared/fared/lsdb"
)

// Gbps converts Gbit/s to the wire unit, bytes/s.
func Gbps(g float64) float32 { return float32(g * 1e9 / 8) }

// speeds are the link speeds the generators draw from.
var speeds = []float32{Gbps(100), Gbps(200), Gbps(400), Gbps(40)}

// ThreeStage describes a leaf-spine fabric: every leaf links to every spine.
type ThreeStage struct {
	Spines, Leaves int
	Seed           uint64
}

// Counts returns nodes and directed lsdb links (two per cable).
func (c ThreeStage) Counts() (nodes, links int) {
	return c.Spines + c.Leaves, 2 * c.Spines * c.Leaves
}

// Builder fills a Builder; Self is "L0".
func (c ThreeStage) Builder() (*lsdb.Builder, string) {
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
			cable(b, fmt.Sprintf("L%d", l), fmt.Sprintf("S%d", s), speeds[rng.IntN(len(speeds))])
		}
	}
	return b, "L0"
}

// Graph builds the fabric.
func (c ThreeStage) Graph() *lsdb.Graph {
	b, self := c.Builder()
	return b.Build(self)
}

// FiveStage describes a 5-stage fabric (draft-xu-lsr-fare figure 2) flattened
// into one level: Pods × (Leaves leaves + Spines spines), leaves link to every
// spine of their pod, spine i of every pod links to all Super super-spines of
// plane i (Spines planes).
type FiveStage struct {
	Pods, Leaves, Spines, Super int
	Seed                        uint64
}

// Counts returns nodes and directed lsdb links.
func (c FiveStage) Counts() (nodes, links int) {
	nodes = c.Pods*(c.Leaves+c.Spines) + c.Spines*c.Super
	cables := c.Pods*c.Leaves*c.Spines + c.Pods*c.Spines*c.Super
	return nodes, 2 * cables
}

// Builder fills a Builder; Self is "P0L0".
func (c FiveStage) Builder() (*lsdb.Builder, string) {
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
				cable(b, fmt.Sprintf("P%dL%d", pod, l), fmt.Sprintf("P%dS%d", pod, s), speeds[rng.IntN(len(speeds))])
			}
		}
		for s := 0; s < c.Spines; s++ {
			for i := 0; i < c.Super; i++ {
				cable(b, fmt.Sprintf("P%dS%d", pod, s), fmt.Sprintf("X%d.%d", s, i), speeds[rng.IntN(len(speeds))])
			}
		}
	}
	return b, "P0L0"
}

// Graph builds the fabric.
func (c FiveStage) Graph() *lsdb.Graph {
	b, self := c.Builder()
	return b.Build(self)
}

func cable(b *lsdb.Builder, x, y string, bw float32) {
	b.AddLink(x, y, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
	b.AddLink(y, x, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
}

func leafPrefix(pod, leaf int) lsdb.Prefix {
	a := netip.AddrFrom4([4]byte{10, byte(pod), byte(leaf >> 8), byte(leaf)})
	return lsdb.Prefix{
		Prefix:    netip.PrefixFrom(a, 32).Masked(),
		PathBW:    math.MaxFloat32,
		HasPathBW: true,
	}
}

// WithLinkBW returns a copy of g in which link i advertises bw: the same
// topology (spf.SameTopology holds), as after a bandwidth-only LSP change.
func WithLinkBW(g *lsdb.Graph, i int, bw float32) *lsdb.Graph {
	g2 := *g
	g2.Links = slices.Clone(g.Links)
	g2.Links[i].MaxBW = bw
	g2.Links[i].HasBW = true
	g2.Topo = slices.Clone(g.TopoLinks())
	g2.Topo[i] = g2.Links[i].Topo()
	return &g2
}
