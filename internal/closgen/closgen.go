// Package closgen generates synthetic CLOS fabrics for tests and
// benchmarks: of spf, fare and the rib, and for the IS-IS injector of
// bench/inject. It lives outside bench/ so that the core's tests never
// import the benchmark tree. Bandwidths are
// random but seeded (the same seed gives the same fabric); both directions
// of a cable advertise the same Maximum Link Bandwidth. Every link has
// metric 10 and every leaf advertises one /32 (10.<pod>.<hi>.<lo>) with
// Path Bandwidth = largest finite float32 (the "no constraint" default of
// the architecture).
//
// A fabric is first a Fabric (named nodes and cables, what a protocol
// speaker turns into LSPs), then, through Builder or Graph, an lsdb.Graph.
//
// Node ids: "L<i>" / "S<i>" (3-stage), "P<pod>L<i>", "P<pod>S<i>",
// "X<plane>.<i>" (5-stage).
package closgen

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

// Metric is the IS-IS metric of every generated link.
const Metric = 10

// Fabric is a generated fabric: nodes, the cables between them and the
// node SPF is computed for. Several cables between the same two nodes are
// parallel links.
type Fabric struct {
	Nodes  []Node
	Cables []Cable
	Self   int // index into Nodes
}

// Node is one router of a fabric.
type Node struct {
	Name     string
	Prefixes []lsdb.Prefix // Node is left zero; the Builder sets it
}

// Cable is a bidirectional link: both ends advertise BW and Metric.
type Cable struct {
	A, B   int // indexes into Fabric.Nodes
	BW     float32
	Metric uint32
}

// Index returns the index of the named node, or -1.
func (f *Fabric) Index(name string) int {
	for i := range f.Nodes {
		if f.Nodes[i].Name == name {
			return i
		}
	}
	return -1
}

// CablesOf returns the indexes of the cables at node n, in cable order.
func (f *Fabric) CablesOf(n int) []int {
	var out []int
	for i, c := range f.Cables {
		if c.A == n || c.B == n {
			out = append(out, i)
		}
	}
	return out
}

// Prefixes counts the prefixes of all nodes.
func (f *Fabric) Prefixes() int {
	n := 0
	for i := range f.Nodes {
		n += len(f.Nodes[i].Prefixes)
	}
	return n
}

// Builder fills an lsdb Builder with the fabric: nodes in order, each
// followed by its prefixes, then both directions of every cable.
func (f *Fabric) Builder() (*lsdb.Builder, string) {
	b := lsdb.NewBuilder("isis", 2, "")
	for _, n := range f.Nodes {
		b.AddNode(lsdb.Node{ID: n.Name})
		for _, p := range n.Prefixes {
			b.AddPrefix(n.Name, p)
		}
	}
	for _, c := range f.Cables {
		x, y := f.Nodes[c.A].Name, f.Nodes[c.B].Name
		b.AddLink(x, y, lsdb.Link{Metric: c.Metric, MaxBW: c.BW, HasBW: true})
		b.AddLink(y, x, lsdb.Link{Metric: c.Metric, MaxBW: c.BW, HasBW: true})
	}
	return b, f.Nodes[f.Self].Name
}

// Graph builds the fabric's lsdb Graph for Self.
func (f *Fabric) Graph() *lsdb.Graph {
	b, self := f.Builder()
	return b.Build(self)
}

// WithCableBW returns a copy of f in which cable i has bandwidth bw.
func (f *Fabric) WithCableBW(i int, bw float32) *Fabric {
	g := *f
	g.Cables = slices.Clone(f.Cables)
	g.Cables[i].BW = bw
	return &g
}

// fabricBuilder collects nodes and cables by name while a generator runs.
type fabricBuilder struct {
	f     *Fabric
	index map[string]int
}

func newFabricBuilder() *fabricBuilder {
	return &fabricBuilder{f: &Fabric{}, index: map[string]int{}}
}

func (b *fabricBuilder) node(name string, prefixes ...lsdb.Prefix) {
	b.index[name] = len(b.f.Nodes)
	b.f.Nodes = append(b.f.Nodes, Node{Name: name, Prefixes: prefixes})
}

func (b *fabricBuilder) cable(x, y string, bw float32) {
	b.f.Cables = append(b.f.Cables, Cable{A: b.index[x], B: b.index[y], BW: bw, Metric: Metric})
}

// ThreeStage describes a leaf-spine fabric: every leaf links to every spine.
// With Parallel = k > 0, every k-th leaf–spine pair (counting from the
// first) has a second, parallel cable.
type ThreeStage struct {
	Spines, Leaves int
	Parallel       int
	Seed           uint64
}

// Counts returns nodes and directed lsdb links (two per cable).
func (c ThreeStage) Counts() (nodes, links int) {
	return c.Spines + c.Leaves, 2 * (c.Spines*c.Leaves + parallelCount(c.Spines*c.Leaves, c.Parallel))
}

func parallelCount(pairs, k int) int {
	if k <= 0 {
		return 0
	}
	return (pairs + k - 1) / k
}

// Fabric generates the fabric; Self is "L0".
func (c ThreeStage) Fabric() *Fabric {
	rng := rand.New(rand.NewPCG(c.Seed, 3))
	b := newFabricBuilder()
	for s := 0; s < c.Spines; s++ {
		b.node(fmt.Sprintf("S%d", s))
	}
	for l := 0; l < c.Leaves; l++ {
		b.node(fmt.Sprintf("L%d", l), leafPrefix(0, l))
	}
	pair := 0
	for l := 0; l < c.Leaves; l++ {
		for s := 0; s < c.Spines; s++ {
			x, y := fmt.Sprintf("L%d", l), fmt.Sprintf("S%d", s)
			b.cable(x, y, speeds[rng.IntN(len(speeds))])
			if c.Parallel > 0 && pair%c.Parallel == 0 {
				b.cable(x, y, speeds[rng.IntN(len(speeds))])
			}
			pair++
		}
	}
	b.f.Self = b.index["L0"]
	return b.f
}

// Builder fills a Builder; Self is "L0".
func (c ThreeStage) Builder() (*lsdb.Builder, string) { return c.Fabric().Builder() }

// Graph builds the fabric.
func (c ThreeStage) Graph() *lsdb.Graph { return c.Fabric().Graph() }

// FiveStage describes a 5-stage fabric (draft-xu-lsr-fare figure 2) flattened
// into one level: Pods × (Leaves leaves + Spines spines), leaves link to every
// spine of their pod, spine i of every pod links to all Super super-spines of
// plane i (Spines planes). With Parallel = k > 0, every k-th leaf–spine pair
// has a second cable.
type FiveStage struct {
	Pods, Leaves, Spines, Super int
	Parallel                    int
	Seed                        uint64
}

// Counts returns nodes and directed lsdb links.
func (c FiveStage) Counts() (nodes, links int) {
	nodes = c.Pods*(c.Leaves+c.Spines) + c.Spines*c.Super
	cables := c.Pods*c.Leaves*c.Spines + c.Pods*c.Spines*c.Super
	// Parallel cables are counted per pod: the pair counter restarts.
	cables += c.Pods * parallelCount(c.Leaves*c.Spines, c.Parallel)
	return nodes, 2 * cables
}

// Fabric generates the fabric; Self is "P0L0".
func (c FiveStage) Fabric() *Fabric {
	rng := rand.New(rand.NewPCG(c.Seed, 5))
	b := newFabricBuilder()
	for p := 0; p < c.Spines; p++ {
		for i := 0; i < c.Super; i++ {
			b.node(fmt.Sprintf("X%d.%d", p, i))
		}
	}
	for pod := 0; pod < c.Pods; pod++ {
		for s := 0; s < c.Spines; s++ {
			b.node(fmt.Sprintf("P%dS%d", pod, s))
		}
		for l := 0; l < c.Leaves; l++ {
			b.node(fmt.Sprintf("P%dL%d", pod, l), leafPrefix(pod, l))
		}
	}
	for pod := 0; pod < c.Pods; pod++ {
		pair := 0
		for l := 0; l < c.Leaves; l++ {
			for s := 0; s < c.Spines; s++ {
				x, y := fmt.Sprintf("P%dL%d", pod, l), fmt.Sprintf("P%dS%d", pod, s)
				b.cable(x, y, speeds[rng.IntN(len(speeds))])
				if c.Parallel > 0 && pair%c.Parallel == 0 {
					b.cable(x, y, speeds[rng.IntN(len(speeds))])
				}
				pair++
			}
		}
		for s := 0; s < c.Spines; s++ {
			for i := 0; i < c.Super; i++ {
				b.cable(fmt.Sprintf("P%dS%d", pod, s), fmt.Sprintf("X%d.%d", s, i), speeds[rng.IntN(len(speeds))])
			}
		}
	}
	b.f.Self = b.index["P0L0"]
	return b.f
}

// Builder fills a Builder; Self is "P0L0".
func (c FiveStage) Builder() (*lsdb.Builder, string) { return c.Fabric().Builder() }

// Graph builds the fabric.
func (c FiveStage) Graph() *lsdb.Graph { return c.Fabric().Graph() }

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
	return &g2
}
