package spf

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/fared/fared/lsdb"
)

// capGraph: S–A and A–D with bandwidths sa and ad, metric m on S–A; D
// advertises 10.9.0.0/24 (Path Bandwidth pb when > 0) and extra prefixes.
func capGraph(sa, ad float32, m uint32, pb float32, adj string, extra ...string) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 2, "")
	for _, n := range []string{"S", "A", "D"} {
		b.AddNode(lsdb.Node{ID: n, Name: n})
	}
	b.AddLink("S", "A", lsdb.Link{Metric: m, MaxBW: sa, HasBW: true})
	b.AddLink("A", "S", lsdb.Link{Metric: m, MaxBW: sa, HasBW: true})
	b.AddLink("A", "D", lsdb.Link{Metric: 10, MaxBW: ad, HasBW: true})
	b.AddLink("D", "A", lsdb.Link{Metric: 10, MaxBW: ad, HasBW: true})
	b.AddPrefix("D", lsdb.Prefix{Prefix: netip.MustParsePrefix("10.9.0.0/24"), PathBW: pb, HasPathBW: pb > 0})
	for _, p := range extra {
		b.AddPrefix("D", lsdb.Prefix{Prefix: netip.MustParsePrefix(p)})
	}
	b.AddAdjacency(lsdb.Adjacency{Node: "A", IfIndex: 1, IfName: adj})
	return b.Build("S")
}

// Only bandwidths moved: a capacity change, with the links and prefixes
// that moved; anything else moved: not one.
func TestCapacityDiff(t *testing.T) {
	base := capGraph(100, 100, 10, 0, "e1")
	for _, c := range []struct {
		name            string
		g               *lsdb.Graph
		ok              bool
		links, prefixes []int32
	}{
		{"nothing (a refresh)", capGraph(100, 100, 10, 0, "e1"), true, nil, nil},
		{"link bandwidth", capGraph(100, 40, 10, 0, "e1"), true, []int32{2, 3}, nil}, // A→D, D→A (links by From: S, A, A, D)
		{"path bandwidth", capGraph(100, 100, 10, 20, "e1"), true, nil, []int32{0}},
		{"metric", capGraph(100, 100, 20, 0, "e1"), false, nil, nil},
		{"prefix added", capGraph(100, 100, 10, 0, "e1", "10.8.0.0/24"), false, nil, nil},
		{"adjacency", capGraph(100, 100, 10, 0, "e2"), false, nil, nil},
	} {
		ok, links, prefixes := CapacityDiff(base, c.g)
		if ok != c.ok || !slices.Equal(links, c.links) || !slices.Equal(prefixes, c.prefixes) {
			t.Errorf("%s: %v %v %v, want %v %v %v", c.name, ok, links, prefixes, c.ok, c.links, c.prefixes)
		}
	}
}
