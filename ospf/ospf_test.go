package ospf

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/lsdb"
)

// startP2PPair starts r1 and r2 on the point-to-point link w
// (10.254.0.0/31) and waits until both are Full.
func startP2PPair(t *testing.T, w *wire) (r1, r2 *memNode) {
	t.Helper()
	r1 = startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}})
	r2 = startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "r1 Full", fullCount(r1, 1))
	igptest.Poll(t, 10*time.Second, "r2 Full", fullCount(r2, 1))
	return r1, r2
}

// startLAN starts router n on the broadcast LAN w (10.253.0.n/24) with
// priority prio.
func startLAN(t *testing.T, n int, w *wire, prio int) *memNode {
	t.Helper()
	return startMem(t, n, []memIf{{name: "e0", typ: "broadcast", w: w, addr: pfx(fmt.Sprintf("10.253.0.%d/24", n)), prio: prio}})
}

// startLANOfThree starts routers 1, 2 and 3 on one LAN with priorities 10,
// 5 and 1, and waits until the DR (r1) and the BDR (r2) are Full with both
// others.
func startLANOfThree(t *testing.T, w *wire) (r1, r2, r3 *memNode) {
	t.Helper()
	r1, r2, r3 = startLAN(t, 1, w, 10), startLAN(t, 2, w, 5), startLAN(t, 3, w, 1)
	igptest.Poll(t, 20*time.Second, "DR Full with both others", fullCount(r1, 2))
	igptest.Poll(t, 20*time.Second, "BDR Full with both others", fullCount(r2, 2))
	return r1, r2, r3
}

// nbrState is the state of m's neighbour with router id rid ("" if it has
// none yet).
func nbrState(m *memNode, rid string) string {
	ns, _ := m.in.Neighbors(context.Background())
	for _, n := range ns {
		if n.RouterID == rid {
			return n.State
		}
	}
	return ""
}

// TestP2PFull: two routers on a P2P link reach Full, hold identical
// databases, and each graph shows the other's link with its Maximum
// Bandwidth, its loopback with the Path Bandwidth, and Self's adjacency.
func TestP2PFull(t *testing.T) {
	w := &wire{}
	r1, r2 := startP2PPair(t, w)
	// Per router: Router LSA, TE router address, TE link, 2 Extended
	// Prefix LSAs (loopback, link subnet).
	igptest.Poll(t, 10*time.Second, "identical LSDBs", sameDBn(10, r1, r2))
	igptest.Poll(t, 5*time.Second, "graph", func() error {
		g := r1.in.Graph("0.0.0.0")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		return checkP2PGraph(g)
	})
}

func checkP2PGraph(g *lsdb.Graph) error {
	self := g.Lookup("10.255.0.1")
	peer := g.Lookup("10.255.0.2")
	if self < 0 || peer < 0 || g.Self != self {
		return fmt.Errorf("nodes %+v self %d", g.Nodes, g.Self)
	}
	ls := g.LinksOf(peer)
	if len(ls) != 1 || ls[0].To != self || !ls[0].HasBW || ls[0].MaxBW != 1.25e9 || ls[0].Metric != 10 {
		return fmt.Errorf("peer links %+v", ls)
	}
	if a := g.LinkAddrs(g.Nodes[peer].First); a.Local.String() != "10.254.0.1" || a.Remote.String() != "10.254.0.0" {
		return fmt.Errorf("peer link addresses %+v", a)
	}
	found := false
	for _, p := range g.Prefixes {
		if p.Prefix.String() == "10.255.0.2/32" && p.Node == peer {
			found = true
			if !p.HasPathBW || p.PathBW != math.MaxFloat32 {
				return fmt.Errorf("loopback path bandwidth %+v", p)
			}
		}
	}
	if !found {
		return fmt.Errorf("peer loopback missing: %+v", g.Prefixes)
	}
	if len(g.Adjacencies) != 1 || g.Adjacencies[0].Node != "10.255.0.2" || g.Adjacencies[0].NbrAddrs[0].String() != "10.254.0.1" {
		return fmt.Errorf("adjacencies %+v", g.Adjacencies)
	}
	return nil
}

// TestBroadcastDR: three routers on one LAN elect the highest priority as
// DR and the next as BDR, all reach Full with both (DROthers stay 2-Way
// with each other: here there is none), the DR originates the Network LSA
// and everybody agrees on the database.
func TestBroadcastDR(t *testing.T) {
	w := &wire{}
	r1, r2, r3 := startLANOfThree(t, w)
	igptest.Poll(t, 15*time.Second, "r3 Full with DR and BDR", fullCount(r3, 2))
	igptest.Poll(t, 10*time.Second, "identical LSDBs", sameDB(r1, r2, r3))
	ifs, _ := r3.in.Interfaces(context.Background())
	if ifs[0].DR != "10.253.0.1" || ifs[0].BDR != "10.253.0.2" || ifs[0].State != "DROther" {
		t.Fatalf("r3 sees DR %s BDR %s state %s", ifs[0].DR, ifs[0].BDR, ifs[0].State)
	}
	igptest.Poll(t, 10*time.Second, "network LSA", func() error {
		db, _ := r2.in.Database(context.Background(), DatabaseQuery{Type: "network"})
		if len(db) != 1 || db[0].ID != "10.253.0.1" || db[0].AdvRouter != "10.255.0.1" {
			return fmt.Errorf("network LSAs %+v", db)
		}
		return sameDB(r1, r2, r3)()
	})
	// r3's graph: the pseudonode with three routers, r1's transit link
	// with its bandwidth, and next hops via the LAN to both others.
	igptest.Poll(t, 5*time.Second, "graph", func() error {
		g := r3.in.Graph("0.0.0.0")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		pn := g.Lookup("net:10.253.0.1")
		if pn < 0 || !g.Nodes[pn].Pseudo || len(g.LinksOf(pn)) != 3 {
			return fmt.Errorf("pseudonode missing or wrong: %+v", g.Nodes)
		}
		ls := g.LinksOf(g.Lookup("10.255.0.1"))
		if len(ls) != 1 || ls[0].To != pn || ls[0].MaxBW != 1.25e9 {
			return fmt.Errorf("r1 links %+v", ls)
		}
		if len(g.Adjacencies) != 2 {
			return fmt.Errorf("adjacencies %+v", g.Adjacencies)
		}
		return nil
	})
}

// TestBroadcastDROthers: with two priority-0 routers, the DROthers stay
// 2-Way with each other and Full with the DR.
func TestBroadcastDROthers(t *testing.T) {
	w := &wire{}
	r1 := startLAN(t, 1, w, 1)
	r2 := startLAN(t, 2, w, 0)
	r3 := startLAN(t, 3, w, 0)
	igptest.Poll(t, 15*time.Second, "DR Full with both", fullCount(r1, 2))
	igptest.Poll(t, 15*time.Second, "r2 Full with DR only", fullCount(r2, 1))
	igptest.Poll(t, 15*time.Second, "identical LSDBs", sameDB(r1, r2, r3))
	if st := nbrState(r2, "10.255.0.3"); st != "" && st != "2-Way" {
		t.Fatalf("DROther pair in %s, want 2-Way", st)
	}
}

// TestThreeRouterChain: r1 - r2 - r3 over two P2P links: flooding through
// r2 gives all three the same database, and r1 sees r3's loopback.
func TestThreeRouterChain(t *testing.T) {
	w1, w2 := &wire{}, &wire{}
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.0/31")}})
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.1/31")}, {name: "e1", typ: "p2p", w: w2, addr: pfx("10.254.0.2/31")}})
	r3 := startMem(t, 3, []memIf{{name: "e0", typ: "p2p", w: w2, addr: pfx("10.254.0.3/31")}})
	igptest.Poll(t, 10*time.Second, "r2 Full with both", fullCount(r2, 2))
	igptest.Poll(t, 10*time.Second, "identical LSDBs", sameDB(r1, r2, r3))
	igptest.Poll(t, 5*time.Second, "r3 loopback in r1's graph", func() error {
		g := r1.in.Graph("0.0.0.0")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "10.255.0.3/32" && g.Nodes[p.Node].ID == "10.255.0.3" {
				return nil
			}
		}
		return fmt.Errorf("missing")
	})
	// Stop r3: r2 notices after the dead interval, and its Router LSA
	// drops the link, in everybody's database.
	r3.stop()
	igptest.Poll(t, 10*time.Second, "r2 down to one neighbour", fullCount(r2, 1))
	igptest.Poll(t, 10*time.Second, "r1 and r2 agree", sameDB(r1, r2))
}

// TestRestartOwnLSAs: a router that restarts gets its old LSAs back from
// its neighbour with higher sequence numbers than it starts with; it must
// outbid them and converge, and not flap.
func TestRestartOwnLSAs(t *testing.T) {
	w := &wire{}
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	r1 := startMem(t, 1, ifs1)
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	// Bump r1's sequence numbers a few times.
	for i := 0; i < 3; i++ {
		r1.in.SetBandwidth(context.Background(), "e0", config.Bandwidth(1e9*float64(i+2)))
		time.Sleep(100 * time.Millisecond)
	}
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	teSeq := func(m *memNode) int32 {
		v, _ := m.in.Database(context.Background(), DatabaseQuery{Type: "opaque-area"})
		for _, e := range v {
			if e.AdvRouter == "10.255.0.1" && e.ID == "1.0.0.1" {
				return e.Seq
			}
		}
		return 0
	}
	before := teSeq(r2)
	r1.stop()
	w.mu.Lock()
	for i, p := range w.ports {
		if p.addr.String() == "10.254.0.0" {
			w.ports = append(w.ports[:i], w.ports[i+1:]...) // r1's port goes away
			break
		}
	}
	w.mu.Unlock()
	r1 = startMem(t, 1, ifs1)
	igptest.Poll(t, 15*time.Second, "Full again", fullCount(r1, 1))
	igptest.Poll(t, 15*time.Second, "sync after restart", sameDBn(10, r1, r2))
	if after := teSeq(r1); after <= before {
		t.Fatalf("own TE link LSA at %s, was %s before the restart: old copy not outbid", seqHex(after), seqHex(before))
	}
}

// TestFlushWithdrawn: a prefix removed from the config is flushed
// (MaxAge) and disappears from the neighbour's graph.
func TestFlushWithdrawn(t *testing.T) {
	w := &wire{}
	ifs := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	y := testYAML(1, ifs, "    - {prefix: 10.255.0.1/32}\n    - {prefix: 10.10.1.0/24, path-bandwidth: 40G}\n")
	r1 := startMemCfg(t, parse(t, y), ifs, nil)
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	hasPfx := func(want bool) func() error {
		return func() error {
			g := r2.in.Graph("0.0.0.0")
			if g == nil {
				return fmt.Errorf("no graph")
			}
			for _, p := range g.Prefixes {
				if p.Prefix.String() == "10.10.1.0/24" {
					if !want {
						return fmt.Errorf("still there")
					}
					if p.PathBW != 5e9 {
						return fmt.Errorf("path bandwidth %v", p.PathBW)
					}
					return nil
				}
			}
			if want {
				return fmt.Errorf("missing")
			}
			return nil
		}
	}
	igptest.Poll(t, 10*time.Second, "prefix with path bandwidth", hasPfx(true))
	nc := parse(t, testYAML(1, ifs, ""))
	if _, err := r1.in.Reconfigure(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "prefix withdrawn", hasPfx(false))
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
}

// TestABR: r1 (area 1) - r2 (ABR, areas 1 and 0) - r3 (area 0). r3 learns
// r1's loopback from r2's Summary LSA, with the Path Bandwidth
// re-advertised as min(PB, bandwidth toward r1) in an inter-area Extended
// Prefix LSA; and r1 learns r3's loopback the other way.
func TestABR(t *testing.T) {
	w1, w2 := &wire{}, &wire{}
	if1 := []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.0/31"), area: "0.0.0.1"}}
	y1 := testYAML(1, if1, "    - {prefix: 10.255.0.1/32}\n    - {prefix: 10.10.1.0/24, path-bandwidth: 40G}\n")
	r1 := startMemCfg(t, parse(t, y1), if1, nil)
	if2 := []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.1/31"), area: "0.0.0.1"}, {name: "e1", typ: "p2p", w: w2, addr: pfx("10.254.0.2/31"), area: "0.0.0.0"}}
	r2 := startMemCfg(t, parse(t, testYAML(2, if2, "    - {prefix: 10.255.0.2/32, area: 0.0.0.0}\n")), if2, nil)
	r3 := startMem(t, 3, []memIf{{name: "e0", typ: "p2p", w: w2, addr: pfx("10.254.0.3/31")}})
	igptest.Poll(t, 10*time.Second, "r2 Full with both", fullCount(r2, 2))
	find := func(m *memNode, area, prefix, adv string) func() error {
		return func() error {
			g := m.in.Graph(area)
			if g == nil {
				return fmt.Errorf("no graph")
			}
			for _, p := range g.Prefixes {
				if p.Prefix.String() == prefix && g.Nodes[p.Node].ID == adv {
					if prefix == "10.10.1.0/24" && (!p.HasPathBW || p.PathBW != 1.25e9) {
						// min(40G, 10G link toward r1) = 10G = 1.25e9 bytes/s
						return fmt.Errorf("re-advertised path bandwidth %v", p.PathBW)
					}
					return nil
				}
			}
			return fmt.Errorf("%s from %s not in %s graph", prefix, adv, area)
		}
	}
	igptest.Poll(t, 10*time.Second, "r3 sees r1's prefix via r2", find(r3, "0.0.0.0", "10.10.1.0/24", "10.255.0.2"))
	igptest.Poll(t, 10*time.Second, "r3 sees r1's loopback via r2", find(r3, "0.0.0.0", "10.255.0.1/32", "10.255.0.2"))
	igptest.Poll(t, 10*time.Second, "r1 sees r3's loopback via r2", find(r1, "0.0.0.1", "10.255.0.3/32", "10.255.0.2"))
	igptest.Poll(t, 10*time.Second, "r1 sees r2's backbone loopback", find(r1, "0.0.0.1", "10.255.0.2/32", "10.255.0.2"))
	// The ABR explains it: from area 1, advertiser r1, original 40G,
	// capacity 10G (the link), result 10G.
	sv, err := r2.in.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sv {
		if s.Prefix == "10.10.1.0/24" {
			orig := float32(-1)
			if s.OrigPathBW != nil {
				orig = *s.OrigPathBW
			}
			got = append(got, fmt.Sprintf("%s<-%s %v %g %g %g", s.Area, s.FromArea, s.Advertisers, orig, s.Capacity, s.PathBW))
		}
	}
	if want := "[0.0.0.0<-0.0.0.1 [10.255.0.1] 5e+09 1.25e+09 1.25e+09]"; fmt.Sprint(got) != want {
		t.Errorf("summaries of 10.10.1.0/24: %v, want %s", got, want)
	}
	// The ABR sets the B bit.
	v, _ := r3.in.Database(context.Background(), DatabaseQuery{Type: "router", Detail: true})
	for _, e := range v {
		if e.AdvRouter == "10.255.0.2" {
			if fl := fmt.Sprint(e.Detail["body"].(map[string]any)["flags"]); fl != "0x01" {
				t.Errorf("ABR router LSA flags %s", fl)
			}
		}
	}
}

// TestExternal: an external prefix becomes an AS-External LSA plus an
// AS-scope Extended Prefix LSA, flooded to every area.
func TestExternal(t *testing.T) {
	w := &wire{}
	ifs := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	y := testYAML(1, ifs, "    - {prefix: 10.255.0.1/32}\n    - {prefix: 192.0.2.0/24, external: true, metric: 20, path-bandwidth: 8G}\n")
	r1 := startMemCfg(t, parse(t, y), ifs, nil)
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	igptest.Poll(t, 10*time.Second, "external in r2's graph", func() error {
		g := r2.in.Graph("0.0.0.0")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "192.0.2.0/24" && p.External && p.Metric == 20 && p.PathBW == 1e9 {
				return nil
			}
		}
		return fmt.Errorf("missing: %+v", g.Prefixes)
	})
	v, _ := r2.in.Database(context.Background(), DatabaseQuery{Area: "AS"})
	if len(v) != 2 {
		t.Fatalf("AS scope %+v", v)
	}
}
