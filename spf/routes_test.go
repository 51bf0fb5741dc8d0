package spf

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/lsdb/lsdbtest"
)

func inter(p *lsdb.Prefix) { p.Inter = true }
func e1(p *lsdb.Prefix)    { p.External = true }
func e2(p *lsdb.Prefix)    { p.External, p.Type2 = true, true }
func fwd(a string) func(*lsdb.Prefix) {
	return func(p *lsdb.Prefix) { p.Forward = netip.MustParseAddr(a) }
}

// routeMap runs SPF and Routes and indexes the routes by prefix.
func routeMap(g *lsdb.Graph) map[string]Route {
	got := map[string]Route{}
	for _, rt := range Routes(Run(g)) {
		got[rt.Prefix.String()] = rt
	}
	return got
}

// describe is a route's selection in short: metric, type-2 metric, kind,
// exits (Source.Node), advertisers (of Source.Prefix) and first hops.
type described struct {
	Metric      uint64
	Type2Metric uint32
	Kind        string
	Exits, Advs []string
	FirstHops   []string
}

func describe(g *lsdb.Graph, rt Route) described {
	d := described{Metric: rt.Metric, Type2Metric: rt.Type2Metric, FirstHops: ids(g, rt.FirstHops), Exits: []string{}, Advs: []string{}}
	switch {
	case rt.External && rt.Type2:
		d.Kind = "E2"
	case rt.External:
		d.Kind = "E1"
	case rt.Inter:
		d.Kind = "inter"
	case rt.Down:
		d.Kind = "down"
	default:
		d.Kind = "intra"
	}
	for _, s := range rt.Sources {
		d.Exits = append(d.Exits, g.Nodes[s.Node].ID)
		d.Advs = append(d.Advs, g.Nodes[g.Prefixes[s.Prefix].Node].ID)
	}
	return d
}

// TestOSPFPathTypeOrder: RFC 2328 §11/§16: intra-area, inter-area, type-1
// external, type-2 external, whatever the costs; type 2 compares the type-2
// metric (Y) first and the distance (X) second, and Metric is X.
//
// A = Self; B and C are neighbours at 10, D is behind C (C-D 90: dist 100).
func TestOSPFPathTypeOrder(t *testing.T) {
	g := lsdbtest.New("A", "B", "C", "D").
		Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).Cable("C", "D", 90, 1).
		// intra 100 + 5 = 105 (D) beats inter 10 + 1 = 11 (B)
		Prefix("D", "10.1.0.0/24", 5).Prefix("B", "10.1.0.0/24", 1, inter).
		// inter 100 + 50 = 150 (D) beats E1 10 + 1 = 11 (B)
		Prefix("D", "10.2.0.0/24", 50, inter).Prefix("B", "10.2.0.0/24", 1, e1).
		// E1 100 + 100 = 200 (D) beats E2 X 10, Y 1 (B)
		Prefix("D", "10.3.0.0/24", 100, e1).Prefix("B", "10.3.0.0/24", 1, e2).
		// E2: Y 20 (D, X 100) beats Y 50 (B, X 10)
		Prefix("D", "10.4.0.0/24", 20, e2).Prefix("B", "10.4.0.0/24", 50, e2).
		// E2: Y 20 both, X 10 (B) beats X 100 (D)
		Prefix("D", "10.5.0.0/24", 20, e2).Prefix("B", "10.5.0.0/24", 20, e2).
		// E2: Y 20 both, X 10 both (B, C): both kept
		Prefix("B", "10.6.0.0/24", 20, e2).Prefix("C", "10.6.0.0/24", 20, e2).
		Build("A")
	got := routeMap(g)
	want := map[string]described{
		"10.1.0.0/24": {Metric: 105, Kind: "intra", Exits: []string{"D"}, Advs: []string{"D"}, FirstHops: []string{"C"}},
		"10.2.0.0/24": {Metric: 150, Kind: "inter", Exits: []string{"D"}, Advs: []string{"D"}, FirstHops: []string{"C"}},
		"10.3.0.0/24": {Metric: 200, Kind: "E1", Exits: []string{"D"}, Advs: []string{"D"}, FirstHops: []string{"C"}},
		"10.4.0.0/24": {Metric: 100, Type2Metric: 20, Kind: "E2", Exits: []string{"D"}, Advs: []string{"D"}, FirstHops: []string{"C"}},
		"10.5.0.0/24": {Metric: 10, Type2Metric: 20, Kind: "E2", Exits: []string{"B"}, Advs: []string{"B"}, FirstHops: []string{"B"}},
		"10.6.0.0/24": {Metric: 10, Type2Metric: 20, Kind: "E2", Exits: []string{"B", "C"}, Advs: []string{"B", "C"}, FirstHops: []string{"B", "C"}},
	}
	if len(got) != len(want) {
		t.Errorf("%d routes, want %d", len(got), len(want))
	}
	for p, w := range want {
		if d := describe(g, got[p]); !reflect.DeepEqual(d, w) {
			t.Errorf("%s: %+v, want %+v", p, d, w)
		}
	}
}

// TestISISClassOrderUnchanged pins the IS-IS order the OSPF kinds were
// added around: up internal, down internal, up external, down external
// (each winner here has the highest cost of the pair).
func TestISISClassOrderUnchanged(t *testing.T) {
	down := func(p *lsdb.Prefix) { p.Down = true }
	downExt := func(p *lsdb.Prefix) { p.Down, p.External = true, true }
	g := lsdbtest.New("A", "B", "C").Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).
		Prefix("C", "10.1.0.0/24", 9).Prefix("B", "10.1.0.0/24", 0, down).
		Prefix("C", "10.2.0.0/24", 9, down).Prefix("B", "10.2.0.0/24", 0, e1).
		Prefix("C", "10.3.0.0/24", 9, e1).Prefix("B", "10.3.0.0/24", 0, downExt).
		Build("A")
	got := routeMap(g)
	want := map[string]string{"10.1.0.0/24": "intra", "10.2.0.0/24": "down", "10.3.0.0/24": "E1"}
	for p, k := range want {
		if d := describe(g, got[p]); d.Kind != k || d.Metric != 19 || !reflect.DeepEqual(d.Exits, []string{"C"}) {
			t.Errorf("%s: %+v, want %s at 19 from C", p, d, k)
		}
	}
	if rt := got["10.3.0.0/24"]; rt.Down || rt.Type2 || rt.Inter {
		t.Errorf("flags of %+v", rt)
	}
}

// TestForwardingAddress: RFC 2328 §16.4(3): an external with a forwarding
// address is routed toward the longest intra/inter-area route covering the
// address, at that route's cost, through its exits.
//
//	A = Self -10- B, A -10- C; B -10- D, C -10- D; C -10- E.
//	dist: B 10, C 10, D 20 (via B and C), E 20 (via C).
//	D: 10.7.0.0/24 intra at 0  → 20 via B, C
//	E: 10.7.0.0/16 inter at 0  → 20 via C
//	A (Self) owns 10.9.0.0/24, where B is 10.9.0.2 (A is 10.9.0.1).
func TestForwardingAddress(t *testing.T) {
	tp := lsdbtest.New("A", "B", "C", "D", "E").
		Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).Cable("B", "D", 10, 1).
		Cable("C", "D", 10, 1).Cable("C", "E", 10, 1).
		Prefix("D", "10.7.0.0/24", 0).
		Prefix("E", "10.7.0.0/16", 0, inter).
		Prefix("A", "10.9.0.0/24", 0).
		Prefix("C", "198.18.0.0/15", 1, e2).
		// /24 is the longest match: X 20 (exit D) + 5 = 25 via B, C.
		Prefix("B", "203.0.113.0/24", 5, e1, fwd("10.7.0.9")).
		// Only the /16 covers it: X 20 (exit E) + 5 = 25 via C.
		Prefix("B", "203.0.114.0/24", 5, e1, fwd("10.7.200.1")).
		// Type 2 at Y 7: B's via the /24 (X 20, exit D) ties with E's
		// own (X = dist(E) = 20): exits D and E, first hops B and C.
		Prefix("B", "203.0.115.0/24", 7, e2, fwd("10.7.0.9")).
		Prefix("E", "203.0.115.0/24", 7, e2).
		// Covered by an external only: not used, no route.
		Prefix("B", "203.0.116.0/24", 5, e1, fwd("198.18.0.1")).
		// On Self's network: B owns the address: X = dist(B) = 10, + 5.
		Prefix("C", "203.0.117.0/24", 5, e1, fwd("10.9.0.2")).
		// Self's own address: not used.
		Prefix("C", "203.0.118.0/24", 5, e1, fwd("10.9.0.1")).
		// A gateway that is no router of the graph: toward the ASBR C
		// (X = dist(C) = 10), which sits on that network.
		Prefix("C", "203.0.119.0/24", 5, e1, fwd("10.9.0.77"))
	tp.B.AddAdjacency(lsdb.Adjacency{Node: "B", IfIndex: 1, IfName: "e1",
		Local: []netip.Prefix{netip.MustParsePrefix("10.9.0.1/24")}, NbrAddrs: []netip.Addr{netip.MustParseAddr("10.9.0.2")}})
	g := tp.Build("A")
	got := routeMap(g)
	want := map[string]described{
		"203.0.113.0/24": {Metric: 25, Kind: "E1", Exits: []string{"D"}, Advs: []string{"B"}, FirstHops: []string{"B", "C"}},
		"203.0.114.0/24": {Metric: 25, Kind: "E1", Exits: []string{"E"}, Advs: []string{"B"}, FirstHops: []string{"C"}},
		"203.0.115.0/24": {Metric: 20, Type2Metric: 7, Kind: "E2", Exits: []string{"D", "E"}, Advs: []string{"B", "E"}, FirstHops: []string{"B", "C"}},
		"203.0.117.0/24": {Metric: 15, Kind: "E1", Exits: []string{"B"}, Advs: []string{"C"}, FirstHops: []string{"B"}},
		"203.0.119.0/24": {Metric: 15, Kind: "E1", Exits: []string{"C"}, Advs: []string{"C"}, FirstHops: []string{"C"}},
	}
	for p, w := range want {
		if d := describe(g, got[p]); !reflect.DeepEqual(d, w) {
			t.Errorf("%s: %+v, want %+v", p, d, w)
		}
	}
	for _, p := range []string{"203.0.116.0/24", "203.0.118.0/24"} {
		if rt, ok := got[p]; ok {
			t.Errorf("%s: %+v, want no route", p, describe(g, rt))
		}
	}
	// The result stays sorted by prefix (fare.Update relies on it), with
	// the internal routes untouched.
	rs := Routes(Run(g))
	for i := 1; i < len(rs); i++ {
		if comparePrefixes(rs[i-1].Prefix, rs[i].Prefix) >= 0 {
			t.Errorf("routes out of order at %d: %s, %s", i, rs[i-1].Prefix, rs[i].Prefix)
		}
	}
	if d := describe(g, got["10.7.0.0/24"]); d.Metric != 20 || !reflect.DeepEqual(d.FirstHops, []string{"B", "C"}) {
		t.Errorf("10.7.0.0/24: %+v", d)
	}
}

// TestPseudonodePrefix: a prefix on a pseudonode (an OSPF transit
// network's subnet) costs the distance of the network vertex, and the
// first hops are those toward it.
//
//	A = Self -10- B -50-> P, A -10- C -5-> P: dist(P) = min(60, 15) = 15 via C.
func TestPseudonodePrefix(t *testing.T) {
	g := lsdbtest.New("A", "B", "C").Node(lsdb.Node{ID: "P", Pseudo: true}).
		Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).
		LAN("P", "B", 50, 1).LAN("P", "C", 5, 1).
		Prefix("P", "10.0.7.0/24", 0).Build("A")
	want := described{Metric: 15, Kind: "intra", Exits: []string{"P"}, Advs: []string{"P"}, FirstHops: []string{"C"}}
	if d := describe(g, routeMap(g)["10.0.7.0/24"]); !reflect.DeepEqual(d, want) {
		t.Errorf("%+v, want %+v", d, want)
	}
}
