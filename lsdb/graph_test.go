package lsdb

import (
	"net/netip"
	"testing"
)

func TestBuildTwoWayAndParallel(t *testing.T) {
	b := NewBuilder("isis", 2, "")
	for _, id := range []string{"A", "B", "C"} {
		b.AddNode(Node{ID: id})
	}
	// A-B twice (parallel), B back to A once: both parallel links survive.
	b.AddLink("A", "B", Link{Metric: 10, MaxBW: 100, HasBW: true})
	b.AddLink("A", "B", Link{Metric: 10, MaxBW: 40, HasBW: true})
	b.AddLink("B", "A", Link{Metric: 10})
	// A→C one way only: dropped.
	b.AddLink("A", "C", Link{Metric: 10})
	// B→D: D has no database entry: dropped, D absent.
	b.AddLink("B", "D", Link{Metric: 10})
	b.AddPrefix("C", Prefix{Prefix: netip.MustParsePrefix("10.0.0.0/24")})
	b.AddPrefix("D", Prefix{Prefix: netip.MustParsePrefix("10.0.1.0/24")})
	g := b.Build("A")
	if len(g.Nodes) != 3 || g.Lookup("D") != -1 {
		t.Fatalf("nodes %+v", g.Nodes)
	}
	a := g.Lookup("A")
	if g.Self != a {
		t.Fatalf("self %d", g.Self)
	}
	ls := g.LinksOf(a)
	if len(ls) != 2 || ls[0].MaxBW != 100 || ls[1].MaxBW != 40 || g.Nodes[ls[0].To].ID != "B" {
		t.Fatalf("A links %+v", ls)
	}
	if n := len(g.LinksOf(g.Lookup("C"))); n != 0 {
		t.Fatalf("C links %d", n)
	}
	if len(g.Prefixes) != 1 || g.Nodes[g.Prefixes[0].Node].ID != "C" {
		t.Fatalf("prefixes %+v", g.Prefixes)
	}
}
