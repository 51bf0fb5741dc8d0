// Package lsdbtest draws small topologies by hand for the tests of spf,
// fare and the rib: a chain of calls over an lsdb.Builder, as in
//
//	g := lsdbtest.New("A", "B", "C").Cable("A", "B", 10, 100).Cable("B", "C", 10, 40).
//		Prefix("C", "10.0.0.0/24", 0).Build("A")
//
// Bandwidths are plain numbers: the math does not care about the unit.
// Large synthetic fabrics are internal/closgen's.
package lsdbtest

import (
	"net/netip"

	"github.com/fared/fared/lsdb"
)

// Topo is a topology being drawn. B is the builder underneath, for what
// the methods do not cover (adjacencies, link addresses).
type Topo struct{ B *lsdb.Builder }

// New starts an IS-IS level-2 topology with the given nodes.
func New(nodes ...string) *Topo {
	t := &Topo{B: lsdb.NewBuilder("isis", 2, "")}
	for _, n := range nodes {
		t.B.AddNode(lsdb.Node{ID: n})
	}
	return t
}

// Node adds a node with its attributes (Pseudo, Overload, ...).
func (t *Topo) Node(n lsdb.Node) *Topo { t.B.AddNode(n); return t }

// Cable adds x→y and y→x with the same metric and bandwidth.
func (t *Topo) Cable(x, y string, metric uint32, bw float32) *Topo {
	t.B.AddLink(x, y, lsdb.Link{Metric: metric, MaxBW: bw, HasBW: true})
	t.B.AddLink(y, x, lsdb.Link{Metric: metric, MaxBW: bw, HasBW: true})
	return t
}

// Link adds one direction with an explicit Link (no bandwidth, ...).
func (t *Topo) Link(x, y string, l lsdb.Link) *Topo { t.B.AddLink(x, y, l); return t }

// LAN attaches x to pseudonode pn: x→pn with metric, pn→x with metric 0.
func (t *Topo) LAN(pn, x string, metric uint32, bw float32) *Topo {
	t.B.AddLink(x, pn, lsdb.Link{Metric: metric, MaxBW: bw, HasBW: true})
	t.B.AddLink(pn, x, lsdb.Link{Metric: 0})
	return t
}

// Prefix adds prefix p advertised by node at metric, changed by mod.
func (t *Topo) Prefix(node, p string, metric uint32, mod ...func(*lsdb.Prefix)) *Topo {
	px := lsdb.Prefix{Prefix: netip.MustParsePrefix(p), Metric: metric}
	for _, m := range mod {
		m(&px)
	}
	t.B.AddPrefix(node, px)
	return t
}

// PathBW is a Prefix modifier: the prefix carries Path Bandwidth pb.
func PathBW(pb float32) func(*lsdb.Prefix) {
	return func(p *lsdb.Prefix) { p.PathBW, p.HasPathBW = pb, true }
}

// Build freezes the topology as seen from self (lsdb.Builder.Build).
func (t *Topo) Build(self string) *lsdb.Graph { return t.B.Build(self) }
