package rib

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// recorder is an Installer that keeps what it was asked to install.
type recorder struct {
	mu    sync.Mutex
	syncs [][]fib.Route
}

func (r *recorder) Sync(routes []fib.Route) (fib.Stats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs = append(r.syncs, routes)
	return fib.Stats{}, nil
}

func (r *recorder) Capabilities() fib.Capabilities {
	return fib.Capabilities{NexthopObjects: true, Weight16: true}
}

func (r *recorder) last() ([]fib.Route, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.syncs) == 0 {
		return nil, 0
	}
	return r.syncs[len(r.syncs)-1], len(r.syncs)
}

const gbit = 1e9 / 8

// square: S has two parallel links to A (25G + 25G) and one to B (40G); A
// and B both reach D over 100G. D advertises 10.9.0.0/24.
func square(level int, down bool) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", level, "")
	for _, n := range []string{"S", "A", "B", "D"} {
		b.AddNode(lsdb.Node{ID: n, Name: n})
	}
	link := func(x, y string, g float32, lx, ly string) {
		b.AddLinkAddrs(x, y, lsdb.Link{Metric: 10, MaxBW: g * gbit, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(netip.MustParseAddr(lx)), Remote: lsdb.AddrOf(netip.MustParseAddr(ly))})
		b.AddLinkAddrs(y, x, lsdb.Link{Metric: 10, MaxBW: g * gbit, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(netip.MustParseAddr(ly)), Remote: lsdb.AddrOf(netip.MustParseAddr(lx))})
	}
	link("S", "A", 25, "10.0.0.0", "10.0.0.1")
	link("S", "A", 25, "10.0.0.2", "10.0.0.3")
	link("S", "B", 40, "10.0.0.4", "10.0.0.5")
	link("A", "D", 100, "10.0.1.0", "10.0.1.1")
	link("B", "D", 100, "10.0.1.2", "10.0.1.3")
	b.AddPrefix("D", lsdb.Prefix{Prefix: netip.MustParsePrefix("10.9.0.0/24"), Down: down})
	adj := func(node string, idx int, local, nbr string) {
		b.AddAdjacency(lsdb.Adjacency{Node: node, IfIndex: idx, IfName: "e" + string(rune('0'+idx)),
			Local: []netip.Prefix{netip.MustParsePrefix(local + "/31")}, NbrAddrs: []netip.Addr{netip.MustParseAddr(nbr)}})
	}
	adj("A", 1, "10.0.0.0", "10.0.0.1")
	adj("A", 2, "10.0.0.2", "10.0.0.3")
	adj("B", 3, "10.0.0.4", "10.0.0.5")
	return b.Build("S")
}

func waitSync(t *testing.T, rec *recorder, n int) []fib.Route {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r, c := rec.last(); c >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Sync #%d", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestResolveAndHold: next hops resolve to (gateway, ifindex) per parallel
// link with weights by hand; nothing reaches the kernel before Ready.
func TestResolveAndHold(t *testing.T) {
	rec := &recorder{}
	var ready atomic.Bool
	m := New(Config{FIB: rec, Ready: ready.Load, StartupHold: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	m.Submit(square(2, false), "test")
	time.Sleep(300 * time.Millisecond)
	if _, n := rec.last(); n != 0 {
		t.Fatalf("%d Syncs before convergence, want 0", n)
	}
	if r := m.Snapshot(); len(r.Routes) != 1 || r.FIBError == "" {
		t.Fatalf("snapshot while holding: %+v", r)
	}
	ready.Store(true)
	routes := waitSync(t, rec, 1)
	if len(routes) != 1 {
		t.Fatalf("routes %+v", routes)
	}
	// w(A) = min(25+25, 100) = 50 split 25/25 over e1/e2; w(B) = min(40,
	// 100) = 40 → 25:25:40 (as quantised: proportional within 1e-4).
	want := map[int]float64{1: 25, 2: 25, 3: 40}
	got := map[int]uint32{}
	for _, h := range routes[0].NextHops {
		got[h.IfIndex] = h.Weight
		if h.Gateway != map[int]netip.Addr{1: netip.MustParseAddr("10.0.0.1"), 2: netip.MustParseAddr("10.0.0.3"), 3: netip.MustParseAddr("10.0.0.5")}[h.IfIndex] {
			t.Errorf("ifindex %d via %s", h.IfIndex, h.Gateway)
		}
	}
	for i, w := range want {
		if r := float64(got[i]) / float64(got[3]); r < w/40-1e-4 || r > w/40+1e-4 {
			t.Errorf("ifindex %d weight %d: ratio %.5f to ifindex 3, want %.5f (all %v)", i, got[i], r, w/40, got)
		}
	}
}

// levelRank ranks as IS-IS does (isis.Routing; its tests check it): up
// before down, then level 1 before level 2.
func levelRank([]Topology) Ranker {
	return func(g *lsdb.Graph, fr *fare.Route, _ *spf.Route) (uint64, bool) {
		var down uint64
		if fr.Down {
			down = 1
		}
		return down<<8 | uint64(g.Level), true
	}
}

// TestLevelPreference: the merge applies the protocol's ranks across its
// topologies: with IS-IS's, an up route beats a down one whatever the
// level; between two up routes level 1 wins (RFC 5302 §3.3, ISO 10589
// §7.2.12).
func TestLevelPreference(t *testing.T) {
	for _, tc := range []struct {
		l1Down, l2Down bool
		want           int
	}{{false, false, 1}, {true, false, 2}, {false, true, 1}, {true, true, 1}} {
		rec := &recorder{}
		m := New(Config{FIB: rec, Routing: map[string]Routing{"isis": {Select: levelRank}}})
		ctx, cancel := context.WithCancel(context.Background())
		go m.Run(ctx)
		m.Submit(square(1, tc.l1Down), "l1")
		m.Submit(square(2, tc.l2Down), "l2")
		deadline := time.Now().Add(5 * time.Second)
		for {
			s := m.Snapshot()
			if len(s.Routes) == 1 && s.Routes[0].Level == tc.want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%+v: routes %+v", tc, s.Routes)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}
}

// TestProtocolPreference: with IS-IS and OSPF both routing a prefix, OSPF
// (distance 110) wins over IS-IS (115), as in FRR's defaults.
func TestProtocolPreference(t *testing.T) {
	rec := &recorder{}
	m := New(Config{FIB: rec, Routing: map[string]Routing{"ospf": {Distance: 110}, "isis": {Distance: 115}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	m.Submit(square(2, false), "isis")
	o := square(0, false)
	o.Protocol, o.Area = "ospf", "0.0.0.0"
	m.Submit(o, "ospf")
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := m.Snapshot()
		if len(s.Routes) == 1 && s.Routes[0].Protocol == "ospf" && s.Routes[0].Area == "0.0.0.0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("routes %+v", s.Routes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMergePreference: the distance first; within one protocol the rank
// its Selection computes (the OSPF path type, IS-IS up/down and level:
// their tests check their rankers), then the metric; between protocols at
// one distance up before down, the lower level, then the metric; on a tie
// the first stays.
func TestMergePreference(t *testing.T) {
	r := func(proto string, metric uint64) Route { return Route{Protocol: proto, Metric: metric} }
	cases := []struct {
		name   string
		a      Route
		ra     uint64
		b      Route
		rb     uint64
		better bool
	}{
		{"rank 0 metric 100 beats rank 1 metric 1", r("ospf", 100), 0, r("ospf", 1), 1, true},
		{"rank 1<<32|20 beats rank 1<<32|50", r("ospf", 100), 1<<32 | 20, r("ospf", 10), 1<<32 | 50, true},
		{"equal rank: metric 10 beats 100", r("ospf", 10), 3, r("ospf", 100), 3, true},
		{"equal: first stays", r("ospf", 10), 0, r("ospf", 10), 0, false},
		{"distance before rank", r("ospf", 100), 99, r("isis", 1), 0, true},
		{"isis up L2 beats down L1", Route{Protocol: "isis", Level: 2, Metric: 50}, 2, Route{Protocol: "isis", Level: 1, Metric: 1, Down: true}, 1<<8 | 1, true},
		{"isis L1 beats L2", Route{Protocol: "isis", Level: 1, Metric: 50}, 1, Route{Protocol: "isis", Level: 2, Metric: 1}, 2, true},
	}
	for _, c := range cases {
		dist := map[string]int{"ospf": 110, "isis": 115} // FRR's defaults
		if got := better(c.a, c.ra, dist[c.a.Protocol], c.b, c.rb, dist[c.b.Protocol]); got != c.better {
			t.Errorf("%s: better = %v", c.name, got)
		}
	}
	// Two protocols at one distance: ranks are the protocols' own and do
	// not compare; up before down, the lower level (none: 0), the metric.
	for _, c := range []struct {
		name   string
		a, b   Route
		better bool
	}{
		{"up beats down", Route{Protocol: "b", Level: 2, Metric: 9}, Route{Protocol: "a", Level: 1, Down: true, Metric: 1}, true},
		{"no level beats L1", Route{Protocol: "b", Metric: 9}, Route{Protocol: "a", Level: 1, Metric: 1}, true},
		{"then the metric", Route{Protocol: "b", Metric: 1}, Route{Protocol: "a", Metric: 9}, true},
		{"tie: first stays", Route{Protocol: "b", Metric: 1}, Route{Protocol: "a", Metric: 1}, false},
	} {
		if got := better(c.a, 7, 100, c.b, 0, 100); got != c.better {
			t.Errorf("%s: better = %v", c.name, got)
		}
	}
}
