package spf_test

import (
	"math"
	"net/netip"
	"testing"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// TestPseudonodePrefixWeights: fare weighs a route whose advertiser is a
// pseudonode (an OSPF transit network's subnet, RFC 2328 §16.1) like any
// other destination: the routers' links onto the network bound the
// capacity, the network's own links do not.
//
//	S -10- A -10-> P, S -10- B -10-> P; S–A and S–B 40, A→P 25, B→P 10.
//	dist(P) = 20 via A and via B.
//	w(A) = min(bw(S,A) 40, cap(A→P) = bw(A,P) 25) = 25
//	w(B) = min(40, 10) = 10; shares 25/35 and 10/35.
func TestPseudonodePrefixWeights(t *testing.T) {
	b := lsdb.NewBuilder("ospf", 0, "0.0.0.0")
	for _, n := range []string{"S", "A", "B"} {
		b.AddNode(lsdb.Node{ID: n})
	}
	b.AddNode(lsdb.Node{ID: "P", Pseudo: true})
	cable := func(x, y string, bw float32) {
		b.AddLink(x, y, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
		b.AddLink(y, x, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
	}
	lan := func(x string, bw float32) {
		b.AddLink(x, "P", lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
		b.AddLink("P", x, lsdb.Link{})
	}
	cable("S", "A", 40)
	cable("S", "B", 40)
	lan("A", 25)
	lan("B", 10)
	b.AddPrefix("P", lsdb.Prefix{Prefix: netip.MustParsePrefix("10.0.7.0/24")})
	g := b.Build("S")
	r := spf.Run(g)
	tb := fare.ComputeTable(r, spf.Routes(r), fare.Options{})
	if len(tb.Routes) != 1 || tb.Routes[0].Mode != fare.ModeWeighted || tb.Anomalies.Total() != 0 {
		t.Fatalf("table %+v", tb)
	}
	rt := tb.Routes[0]
	want := map[string]float64{"A": 25, "B": 10}
	if len(rt.NextHops) != 2 {
		t.Fatalf("next hops %+v", rt.NextHops)
	}
	for _, h := range rt.NextHops {
		id := g.Nodes[h.Neighbor].ID
		if h.Weight != want[id] || math.Abs(h.Share-want[id]/35) > 1e-12 {
			t.Errorf("%s: weight %v share %v, want %v, %v", id, h.Weight, h.Share, want[id], want[id]/35)
		}
	}
}
