package spf

import (
	"reflect"
	"testing"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/lsdb/lsdbtest"
)

func ids(g *lsdb.Graph, ns []int32) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, g.Nodes[n].ID)
	}
	return out
}

func TestEmptySelf(t *testing.T) {
	g := lsdbtest.New("A", "B").Cable("A", "B", 10, 1).Build("")
	r := Run(g)
	if r.Reachable(0) || r.Reachable(1) || len(r.FirstHops(1)) != 0 || len(Routes(r)) != 0 {
		t.Fatalf("non-empty result for Self=-1: %+v", r)
	}
}

func TestDiamondParallel(t *testing.T) {
	// A=self. A-B twice (metric 10), A-B once more at metric 20 (not on the
	// DAG), A-C 10, B-D 10, C-D 10, A-E 5, E-D 30 (longer: 35 > 20).
	tp := lsdbtest.New("A", "B", "C", "D", "E").
		Cable("A", "B", 10, 1).Cable("A", "B", 10, 2).Cable("A", "B", 20, 3).
		Cable("A", "C", 10, 1).Cable("B", "D", 10, 1).Cable("C", "D", 10, 1).
		Cable("A", "E", 5, 1).Cable("E", "D", 30, 1)
	g := tp.Build("A")
	r := Run(g)
	id := g.Lookup
	want := map[string]uint64{"A": 0, "B": 10, "C": 10, "D": 20, "E": 5}
	for n, d := range want {
		if r.Dist[id(n)] != d {
			t.Errorf("dist %s = %d, want %d", n, r.Dist[id(n)], d)
		}
	}
	if got := ids(g, r.Parents(id("D"))); !reflect.DeepEqual(sorted(got), []string{"B", "C"}) {
		t.Errorf("parents D = %v", got)
	}
	if got := ids(g, r.FirstHops(id("D"))); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Errorf("first hops D = %v", got)
	}
	if got := ids(g, r.Neighbors); !reflect.DeepEqual(got, []string{"B", "C", "E"}) {
		t.Errorf("neighbours = %v", got)
	}
	// Self's links to B: the two metric-10 links, not the metric-20 one.
	sl := r.SelfLinks(id("B"))
	if len(sl) != 2 {
		t.Fatalf("self links to B = %v", sl)
	}
	for _, li := range sl {
		l := g.Links[li]
		if l.From != id("A") || l.To != id("B") || l.Metric != 10 {
			t.Errorf("self link %d = %+v", li, l)
		}
	}
	// The DAG edge A→B carries both parallel links.
	e := r.ParentStart[id("B")]
	if r.ParentStart[id("B")+1]-e != 1 || r.EdgeLinkStart[e+1]-r.EdgeLinkStart[e] != 2 {
		t.Errorf("edge A→B: %d edges, %d links", r.ParentStart[id("B")+1]-e, r.EdgeLinkStart[e+1]-r.EdgeLinkStart[e])
	}
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestOverload(t *testing.T) {
	// L1 - S1, S2 - L2; S2 has the overload bit: reachable, not transit.
	tp := lsdbtest.New("L1", "S1", "L2").Node(lsdb.Node{ID: "S2", Overload: true}).
		Cable("L1", "S1", 10, 1).Cable("L1", "S2", 10, 1).
		Cable("S1", "L2", 10, 1).Cable("S2", "L2", 10, 1).
		Prefix("S2", "10.0.2.0/24", 0).Prefix("L2", "10.1.0.0/24", 0)
	g := tp.Build("L1")
	r := Run(g)
	if !r.Reachable(g.Lookup("S2")) || r.Dist[g.Lookup("L2")] != 20 {
		t.Fatalf("dist %v", r.Dist)
	}
	if got := ids(g, r.FirstHops(g.Lookup("L2"))); !reflect.DeepEqual(got, []string{"S1"}) {
		t.Errorf("first hops L2 = %v (S2 is overloaded)", got)
	}
	rs := Routes(r)
	if len(rs) != 2 || rs[0].Prefix.String() != "10.0.2.0/24" || ids(g, rs[0].FirstHops)[0] != "S2" {
		t.Errorf("routes %+v", rs)
	}
	// An overloaded Self still uses its own links.
	g2 := lsdbtest.New("S1", "L2").Node(lsdb.Node{ID: "L1", Overload: true}).
		Cable("L1", "S1", 10, 1).Cable("S1", "L2", 10, 1).Build("L1")
	if r2 := Run(g2); r2.Dist[g2.Lookup("L2")] != 20 {
		t.Errorf("overloaded self: dist %v", r2.Dist)
	}
}

func TestPseudonode(t *testing.T) {
	// A, B, C on a LAN (pseudonode P). B-D and C-D p2p. A also has a p2p
	// link to B with metric 10 = the LAN path cost (10 + 0), so B is reached
	// over two of A's links.
	tp := lsdbtest.New("A", "B", "C", "D").Node(lsdb.Node{ID: "P", Pseudo: true}).
		LAN("P", "A", 10, 100).LAN("P", "B", 10, 100).LAN("P", "C", 10, 100).
		Cable("A", "B", 10, 7).
		Cable("B", "D", 10, 1).Cable("C", "D", 10, 1)
	g := tp.Build("A")
	r := Run(g)
	id := g.Lookup
	if r.Dist[id("P")] != 10 || r.Dist[id("B")] != 10 || r.Dist[id("D")] != 20 {
		t.Fatalf("dist %v", r.Dist)
	}
	if got := ids(g, r.Neighbors); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Errorf("neighbours %v (pseudonode must not be one)", got)
	}
	if got := ids(g, r.FirstHops(id("D"))); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Errorf("first hops D = %v", got)
	}
	if got := r.FirstHops(id("P")); len(got) != 0 {
		t.Errorf("first hops of the pseudonode = %v", got)
	}
	// C is reached over A's link to P; B over the LAN link and the p2p link.
	lc := r.SelfLinks(id("C"))
	if len(lc) != 1 || g.Links[lc[0]].To != id("P") {
		t.Errorf("self links to C = %v", lc)
	}
	lb := r.SelfLinks(id("B"))
	if len(lb) != 2 {
		t.Errorf("self links to B = %v", lb)
	}
}

func TestTransitLAN(t *testing.T) {
	// X - Y p2p; Y, B, C on LAN P; B-D, C-D. First hop of D is Y only.
	g := lsdbtest.New("X", "Y", "B", "C", "D").Node(lsdb.Node{ID: "P", Pseudo: true}).
		Cable("X", "Y", 10, 1).LAN("P", "Y", 10, 1).LAN("P", "B", 10, 1).LAN("P", "C", 10, 1).
		Cable("B", "D", 10, 1).Cable("C", "D", 10, 1).Build("X")
	r := Run(g)
	if got := ids(g, r.FirstHops(g.Lookup("D"))); !reflect.DeepEqual(got, []string{"Y"}) {
		t.Errorf("first hops D = %v", got)
	}
	if got := ids(g, r.Parents(g.Lookup("D"))); !reflect.DeepEqual(sorted(got), []string{"B", "C"}) {
		t.Errorf("parents D = %v", got)
	}
}

func TestRoutes(t *testing.T) {
	// A=self; B, C neighbours; D behind B and C; E behind C only.
	base := func() *lsdbtest.Topo {
		return lsdbtest.New("A", "B", "C", "D", "E").
			Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).
			Cable("B", "D", 10, 1).Cable("C", "D", 10, 1).Cable("C", "E", 10, 1)
	}
	down := func(p *lsdb.Prefix) { p.Down = true }
	g := base().
		Prefix("A", "10.0.0.0/24", 0). // local: skipped
		Prefix("D", "10.0.0.0/24", 0).
		Prefix("D", "10.1.0.0/24", 5). // anycast, equal: 20+5 = 25 = 20+5
		Prefix("E", "10.1.0.0/24", 5).
		Prefix("D", "10.2.0.0/24", 1). // unequal: D 21 < E 25
		Prefix("E", "10.2.0.0/24", 5).
		Prefix("B", "10.3.0.0/24", 0, down). // down-bit at 10 loses to up at 20
		Prefix("D", "10.3.0.0/24", 0).
		Prefix("D", "10.4.0.0/24", 3).Prefix("D", "10.4.0.0/24", 1). // duplicate: lowest kept
		Build("A")
	r := Run(g)
	rs := Routes(r)
	got := map[string]Route{}
	for _, rt := range rs {
		got[rt.Prefix.String()] = rt
	}
	if _, ok := got["10.0.0.0/24"]; ok || len(rs) != 4 {
		t.Fatalf("routes %+v", rs)
	}
	check := func(p string, metric uint64, advs, fh []string, dn bool) {
		t.Helper()
		rt := got[p]
		var a []int32
		for _, s := range rt.Sources {
			a = append(a, s.Node)
		}
		if rt.Metric != metric || !reflect.DeepEqual(ids(g, a), advs) || !reflect.DeepEqual(ids(g, rt.FirstHops), fh) || rt.Down != dn {
			t.Errorf("%s: metric %d advs %v fh %v down %v", p, rt.Metric, ids(g, a), ids(g, rt.FirstHops), rt.Down)
		}
	}
	check("10.1.0.0/24", 25, []string{"D", "E"}, []string{"B", "C"}, false)
	check("10.2.0.0/24", 21, []string{"D"}, []string{"B", "C"}, false)
	check("10.3.0.0/24", 20, []string{"D"}, []string{"B", "C"}, false)
	check("10.4.0.0/24", 21, []string{"D"}, []string{"B", "C"}, false)
	if px := g.Prefixes[got["10.4.0.0/24"].Sources[0].Prefix]; px.Metric != 1 {
		t.Errorf("duplicate advertisement: picked metric %d", px.Metric)
	}
	// Only down-bit advertisements: the route carries Down.
	g2 := base().Prefix("B", "10.9.0.0/24", 0, down).Build("A")
	if rs := Routes(Run(g2)); len(rs) != 1 || !rs[0].Down {
		t.Errorf("down bit not carried: %+v", rs)
	}
}

func TestReuseEqualsRun(t *testing.T) {
	tp := lsdbtest.New("A", "B", "C", "D").Cable("A", "B", 10, 1).Cable("A", "C", 10, 1).
		Cable("B", "D", 10, 1).Cable("C", "D", 10, 1).Prefix("D", "10.0.0.0/24", 0)
	g1 := tp.Build("A")
	g2 := *g1
	g2.Links = append([]lsdb.Link(nil), g1.Links...)
	g2.Links[3].MaxBW = 99
	if !SameTopology(g1, &g2) {
		t.Fatal("bandwidth change must keep the topology")
	}
	r1 := Run(g1)
	re := Reuse(r1, &g2)
	full := Run(&g2)
	re.Graph, full.Graph = nil, nil
	if !reflect.DeepEqual(re, full) {
		t.Errorf("reuse differs from run:\n%+v\n%+v", re, full)
	}
	g3 := g2
	g3.Links = append([]lsdb.Link(nil), g1.Links...)
	g3.Links[3].Metric = 11
	if SameTopology(g1, &g3) {
		t.Error("metric change must break SameTopology")
	}
	g4 := g2
	g4.Nodes = append([]lsdb.Node(nil), g1.Nodes...)
	g4.Nodes[1].Overload = true
	if SameTopology(g1, &g4) {
		t.Error("overload change must break SameTopology")
	}
}

// TestAsymmetricParallelLinks: A advertises three links to B, B one back.
// B's entry range starts as the size of its own links (one) and is too
// short for its three entries; the DAG must still carry all three.
func TestAsymmetricParallelLinks(t *testing.T) {
	tp := lsdbtest.New("A", "B", "C")
	for i := 0; i < 3; i++ {
		tp.B.AddLink("A", "B", lsdb.Link{Metric: 10, MaxBW: float32(i + 1), HasBW: true})
	}
	tp.B.AddLink("B", "A", lsdb.Link{Metric: 10})
	tp.Cable("B", "C", 10, 1)
	g := tp.Build("A")
	r := Run(g)
	id := g.Lookup
	if got := ids(g, r.Parents(id("B"))); !reflect.DeepEqual(got, []string{"A"}) {
		t.Fatalf("parents B = %v", got)
	}
	e := r.ParentStart[id("B")]
	links := r.EdgeLinks[r.EdgeLinkStart[e]:r.EdgeLinkStart[e+1]]
	if len(links) != 3 {
		t.Fatalf("edge A→B carries %d links, want 3", len(links))
	}
	for i, li := range links {
		if l := g.Links[li]; l.From != id("A") || l.To != id("B") || l.MaxBW != float32(i+1) {
			t.Errorf("link %d of A→B = %+v", i, l)
		}
	}
	if got := r.SelfLinks(id("B")); len(got) != 3 {
		t.Errorf("self links to B = %v", got)
	}
	if got := ids(g, r.FirstHops(id("C"))); !reflect.DeepEqual(got, []string{"B"}) || r.Dist[id("C")] != 20 {
		t.Errorf("C: first hops %v, dist %d", got, r.Dist[id("C")])
	}
}
