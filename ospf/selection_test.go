package ospf

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf/packet"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

// Route selection over hand-made link-state databases (RFC 2328 §16):
// LSAs in, buildGraph, spf.Routes (and the rib's merge of areas) out. The
// expected values are worked out from the RFC in the comments; every
// router id is 10.255.0.x and "S" (10.255.0.1) computes.

const selSelf = "10.255.0.1"

type selDB struct {
	in    *Instance
	areas map[string]*area
	now   time.Time
}

func newSelDB() *selDB {
	in := &Instance{rid: netip.MustParseAddr(selSelf)}
	in.as = newArea(in, 0, true)
	return &selDB{in: in, areas: map[string]*area{}, now: time.Now()}
}

func (d *selDB) area(name string) *area {
	if a := d.areas[name]; a != nil {
		return a
	}
	id, err := config.ParseArea(name)
	if err != nil {
		panic(err)
	}
	a := newArea(d.in, id, false)
	d.areas[name] = a
	d.in.areas = append(d.in.areas, a)
	return a
}

func (d *selDB) add(a *area, typ uint8, id, adv string, body packet.LSABody) {
	h := packet.LSAHeader{Type: typ, ID: netip.MustParseAddr(id), AdvRouter: netip.MustParseAddr(adv), Seq: packet.InitialSequenceNumber}
	a.db[keyOf(h)] = &lsaEntry{lsa: packet.LSA{LSAHeader: h, Body: body}, at: d.now}
}

// p2p, transit and stub are Router LSA links.
func p2p(nbr, ifAddr string, metric uint16) packet.RouterLink {
	return packet.RouterLink{ID: netip.MustParseAddr(nbr), Data: netip.MustParseAddr(ifAddr), Type: linkP2P, Metric: metric}
}

func transit(drAddr, ifAddr string, metric uint16) packet.RouterLink {
	return packet.RouterLink{ID: netip.MustParseAddr(drAddr), Data: netip.MustParseAddr(ifAddr), Type: linkTransit, Metric: metric}
}

func stubLink(prefix string, metric uint16) packet.RouterLink {
	p := netip.MustParsePrefix(prefix)
	return packet.RouterLink{ID: p.Addr(), Data: maskAddr(p.Bits()), Type: linkStub, Metric: metric}
}

func (d *selDB) router(areaName, rid string, flags uint8, links ...packet.RouterLink) {
	d.add(d.area(areaName), packet.LSARouter, rid, rid, &packet.RouterLSA{Flags: flags, Links: links})
}

// cable adds a point-to-point link both ways to the routers' link lists;
// the link subnets are left out.
func cable(links map[string][]packet.RouterLink, x, y string, metric uint16) {
	links[x] = append(links[x], p2p(y, x, metric))
	links[y] = append(links[y], p2p(x, y, metric))
}

func (d *selDB) network(areaName, drAddr string, bits int, routers ...string) {
	nl := &packet.NetworkLSA{Mask: maskAddr(bits)}
	for _, r := range routers {
		nl.Routers = append(nl.Routers, netip.MustParseAddr(r))
	}
	dr := routers[0]
	d.add(d.area(areaName), packet.LSANetwork, drAddr, dr, nl)
}

func (d *selDB) summary(areaName, adv, prefix string, metric uint32) {
	p := netip.MustParsePrefix(prefix)
	d.add(d.area(areaName), packet.LSASummary, p.Addr().String(), adv, &packet.SummaryLSA{Mask: maskAddr(p.Bits()), Metric: metric})
}

// external: e2 selects metric type 2; fwd "" is 0.0.0.0.
func (d *selDB) external(adv, prefix string, metric uint32, e2 bool, fwd string) {
	p := netip.MustParsePrefix(prefix)
	fa := netip.IPv4Unspecified()
	if fwd != "" {
		fa = netip.MustParseAddr(fwd)
	}
	d.add(d.in.as, packet.LSAExternal, p.Addr().String(), adv, &packet.ExternalLSA{Mask: maskAddr(p.Bits()), EBit: e2, Metric: metric, Forward: fa})
}

func (d *selDB) graph(areaName string) *lsdb.Graph { return d.in.buildGraph(d.area(areaName), d.now) }

// selRoute runs SPF over one area's graph and returns the route to prefix
// as "metric via first-hops" (first hops by router id), or "none".
func selRoute(g *lsdb.Graph, prefix string) string {
	r := spf.Run(g)
	for _, rt := range spf.Routes(r) {
		if rt.Prefix.String() != prefix {
			continue
		}
		var fh []string
		for _, n := range rt.FirstHops {
			fh = append(fh, g.Nodes[n].ID)
		}
		slices.Sort(fh)
		return fmt.Sprintf("%d via %s", rt.Metric, strings.Join(fh, ","))
	}
	return "none"
}

// Router ids.
const (
	rS = selSelf
	rA = "10.255.0.2"
	rB = "10.255.0.3"
	rC = "10.255.0.4"
)

// TestLANSubnetCostIncludesRouterCost (RFC 2328 §16.1): a transit
// network's subnet is reached at the network vertex's distance, which
// includes the cost of the router's interface onto the network.
//
//	S -5- A -100-> N (10.0.5.0/24, DR A)
//	S -10- B -10-> N
//
// dist(A) = 5, dist(B) = 10; dist(N) = min(5 + 100, 10 + 10) = 20 via B.
// (Charging the subnet to every attached router at 0 gave 5 via A.)
func TestLANSubnetCostIncludesRouterCost(t *testing.T) {
	d := newSelDB()
	l := map[string][]packet.RouterLink{}
	cable(l, rS, rA, 5)
	cable(l, rS, rB, 10)
	l[rA] = append(l[rA], transit("10.0.5.1", "10.0.5.1", 100))
	l[rB] = append(l[rB], transit("10.0.5.1", "10.0.5.2", 10))
	for _, r := range []string{rS, rA, rB} {
		d.router("0", r, 0, l[r]...)
	}
	d.network("0", "10.0.5.1", 24, rA, rB)
	if got, want := selRoute(d.graph("0"), "10.0.5.0/24"), "20 via 10.255.0.3"; got != want {
		t.Errorf("10.0.5.0/24: %s, want %s", got, want)
	}
	// On the network itself the subnet is directly connected: no route.
	l[rS] = append(l[rS], transit("10.0.5.1", "10.0.5.3", 1))
	d.router("0", rS, 0, l[rS]...)
	d.network("0", "10.0.5.1", 24, rA, rB, rS)
	if got := selRoute(d.graph("0"), "10.0.5.0/24"); got != "none" {
		t.Errorf("10.0.5.0/24 with S on the LAN: %s, want none (connected)", got)
	}
}

// TestIntraAreaBeatsInterArea (RFC 2328 §11, §16.2(4)): an intra-area
// route wins over an inter-area one whatever their costs.
//
// One area: S -10- L, L advertises anycast 192.0.2.10/32 at 90 (intra,
// 10 + 90 = 100); S -10- R, an ABR, summarises it at 1 (inter, 10 + 1 =
// 11). Intra-area: 100 via L. (By cost alone: 11 via R.)
//
// Two areas: the same anycast prefix intra-area in area 1 (S -10- L, stub
// 90: 100) and inter-area in area 0 (S -10- R, summary 1: 11). The rib
// keeps area 1's intra-area route.
func TestIntraAreaBeatsInterArea(t *testing.T) {
	d := newSelDB()
	l := map[string][]packet.RouterLink{}
	rL, rR := rA, rB
	cable(l, rS, rL, 10)
	cable(l, rS, rR, 10)
	l[rL] = append(l[rL], stubLink("192.0.2.10/32", 90))
	d.router("0", rS, 0, l[rS]...)
	d.router("0", rL, 0, l[rL]...)
	d.router("0", rR, flagB, l[rR]...)
	d.summary("0", rR, "192.0.2.10/32", 1)
	if got, want := selRoute(d.graph("0"), "192.0.2.10/32"), "100 via 10.255.0.2"; got != want {
		t.Errorf("one area: %s, want %s", got, want)
	}

	d = newSelDB()
	l0, l1 := map[string][]packet.RouterLink{}, map[string][]packet.RouterLink{}
	cable(l0, rS, rR, 10)
	cable(l1, rS, rL, 10)
	l1[rL] = append(l1[rL], stubLink("192.0.2.10/32", 90))
	d.router("0", rS, flagB, l0[rS]...)
	d.router("0", rR, flagB, l0[rR]...)
	d.summary("0", rR, "192.0.2.10/32", 1)
	d.router("1", rS, flagB, l1[rS]...)
	d.router("1", rL, 0, l1[rL]...)
	got := selRib(t, d, "192.0.2.10/32", "0", "1")
	if want := "0.0.0.1 100 via 10.255.0.2 from 10.255.0.2"; got != want {
		t.Errorf("two areas: %s, want %s", got, want)
	}
}

// TestABRUsesOnlyBackboneSummaries (RFC 2328 §16.2): an ABR computes
// inter-area routes from the backbone's Summary LSAs only.
//
//	area 0: S -10- B0 (ABR), B0 summarises 198.51.100.0/24 at 30: 40
//	area 1: S -10- B1 (ABR), B1 summarises it at 5: 15
//
// S is an ABR with an active backbone (B0 is a neighbour): 40 via B0,
// never 15 via B1 (B1 may well route it back through S). Without a
// backbone neighbour (RFC 3509 §2.2, FRR's default ABR type) area 1's
// summary counts: 15 via B1.
func TestABRUsesOnlyBackboneSummaries(t *testing.T) {
	build := func(backbone bool) *selDB {
		d := newSelDB()
		l0, l1 := map[string][]packet.RouterLink{}, map[string][]packet.RouterLink{}
		rB0, rB1 := rA, rB
		if backbone {
			cable(l0, rS, rB0, 10)
		}
		cable(l1, rS, rB1, 10)
		l0[rS] = append(l0[rS], stubLink("10.255.0.1/32", 0))
		d.router("0", rS, flagB, l0[rS]...)
		d.router("0", rB0, flagB, l0[rB0]...)
		d.summary("0", rB0, "198.51.100.0/24", 30)
		d.router("1", rS, flagB, l1[rS]...)
		d.router("1", rB1, flagB, l1[rB1]...)
		d.summary("1", rB1, "198.51.100.0/24", 5)
		return d
	}
	if got, want := selRib(t, build(true), "198.51.100.0/24", "0", "1"), "0.0.0.0 40 via 10.255.0.2 from 10.255.0.2"; got != want {
		t.Errorf("active backbone: %s, want %s", got, want)
	}
	if got, want := selRib(t, build(false), "198.51.100.0/24", "0", "1"), "0.0.0.1 15 via 10.255.0.3 from 10.255.0.3"; got != want {
		t.Errorf("no backbone neighbour: %s, want %s", got, want)
	}
}

// TestInternalBeatsExternalAcrossAreas (RFC 2328 §16.4(6)(a), and FRR's
// ospf_ase_calculate_route: no external route where an intra- or
// inter-area one exists): S is an ABR; an external at cost 11 loses to an
// intra-area route at 110 and to an inter-area route at 210 from another
// area.
//
//	external: S -10- A (ASBR), A: 192.0.2.0/24 type 1, metric 1: 10 + 1 = 11
//	intra:    S -10- L, L: stub 192.0.2.0/24 at 100: 10 + 100 = 110
//	inter:    S -10- R (ABR), R summarises it at 200: 10 + 200 = 210
func TestInternalBeatsExternalAcrossAreas(t *testing.T) {
	build := func(extArea, intArea string, inter bool) *selDB {
		d := newSelDB()
		le, li := map[string][]packet.RouterLink{}, map[string][]packet.RouterLink{}
		cable(le, rS, rA, 10)
		cable(li, rS, rB, 10)
		d.router(extArea, rS, flagB, le[rS]...)
		d.router(extArea, rA, flagE, le[rA]...)
		d.external(rA, "192.0.2.0/24", 1, false, "")
		d.router(intArea, rS, flagB, li[rS]...)
		if inter {
			d.router(intArea, rB, flagB, li[rB]...)
			d.summary(intArea, rB, "192.0.2.0/24", 200)
		} else {
			d.router(intArea, rB, 0, append(li[rB], stubLink("192.0.2.0/24", 100))...)
		}
		return d
	}
	if got, want := selRib(t, build("0", "1", false), "192.0.2.0/24", "0", "1"), "0.0.0.1 110 via 10.255.0.3 from 10.255.0.3"; got != want {
		t.Errorf("intra-area vs external: %s, want %s", got, want)
	}
	// The summary must come from the backbone (see
	// TestABRUsesOnlyBackboneSummaries): the external is in area 1.
	if got, want := selRib(t, build("1", "0", true), "192.0.2.0/24", "0", "1"), "0.0.0.0 210 via 10.255.0.3 from 10.255.0.3"; got != want {
		t.Errorf("inter-area vs external: %s, want %s", got, want)
	}
}

// twoASBRs: S -xa- A, S -xb- B, both ASBRs, in area 0.
func twoASBRs(xa, xb uint16) *selDB {
	d := newSelDB()
	l := map[string][]packet.RouterLink{}
	cable(l, rS, rA, xa)
	cable(l, rS, rB, xb)
	d.router("0", rS, 0, l[rS]...)
	d.router("0", rA, flagE, l[rA]...)
	d.router("0", rB, flagE, l[rB]...)
	return d
}

// TestExternalE1BeatsE2 (RFC 2328 §16.4(6)(b); FRR ospf_route_cmp
// compares the path type first): A advertises 203.0.113.0/24 type 1 at
// 100 over a cost-50 link (50 + 100 = 150); B advertises it type 2 at 1
// over a cost-10 link (X = 10, Y = 1). Type 1 wins: 150 via A. (Adding
// distance and metric for both: 11 via B.)
func TestExternalE1BeatsE2(t *testing.T) {
	d := twoASBRs(50, 10)
	d.external(rA, "203.0.113.0/24", 100, false, "")
	d.external(rB, "203.0.113.0/24", 1, true, "")
	if got, want := selRoute(d.graph("0"), "203.0.113.0/24"), "150 via 10.255.0.2"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}

// TestExternalE2ComparesType2MetricFirst (RFC 2328 §16.4(6)(b),(d)):
// among type-2 externals the lowest type-2 metric wins and the distance to
// the ASBR only breaks ties.
//
//	A: X = 10, Y = 50;  B: X = 100, Y = 20  → B (Y 20 < 50); metric X = 100
//	(distance + metric: A 60, B 120 → A)
//	A: X = 10, Y = 20;  B: X = 100, Y = 20  → tie on Y, A (X 10 < 100)
func TestExternalE2ComparesType2MetricFirst(t *testing.T) {
	d := twoASBRs(10, 100)
	d.external(rA, "203.0.113.0/24", 50, true, "")
	d.external(rB, "203.0.113.0/24", 20, true, "")
	d.external(rA, "203.0.114.0/24", 20, true, "")
	d.external(rB, "203.0.114.0/24", 20, true, "")
	g := d.graph("0")
	if got, want := selRoute(g, "203.0.113.0/24"), "100 via 10.255.0.3"; got != want {
		t.Errorf("different type-2 metrics: %s, want %s", got, want)
	}
	if got, want := selRoute(g, "203.0.114.0/24"), "10 via 10.255.0.2"; got != want {
		t.Errorf("equal type-2 metrics: %s, want %s", got, want)
	}
}

// lanWithForward: S -10- A (ASBR), S -10- B; A (cost 50) and B (cost 5,
// the DR at 10.0.7.2) are on N = 10.0.7.0/24, where 10.0.7.9 is a gateway
// outside OSPF.
func lanWithForward() *selDB {
	d := newSelDB()
	l := map[string][]packet.RouterLink{}
	cable(l, rS, rA, 10)
	cable(l, rS, rB, 10)
	l[rA] = append(l[rA], transit("10.0.7.2", "10.0.7.1", 50))
	l[rB] = append(l[rB], transit("10.0.7.2", "10.0.7.2", 5))
	d.router("0", rS, 0, l[rS]...)
	d.router("0", rA, flagE, l[rA]...)
	d.router("0", rB, 0, l[rB]...)
	d.network("0", "10.0.7.2", 24, rB, rA)
	return d
}

// TestExternalForwardingAddress (RFC 2328 §16.4(3)-(5)): an external
// with a forwarding address is routed toward the address, at the distance
// of the intra/inter-area route that covers it.
//
// A advertises 203.0.113.0/24 type 1, metric 20, forwarding address
// 10.0.7.9 (on N). dist(N) = min(dist(A) + 50, dist(B) + 5) = min(60, 15)
// = 15 via B, so the route is 15 + 20 = 35 via B. (Toward the ASBR:
// 10 + 20 = 30 via A.)
func TestExternalForwardingAddress(t *testing.T) {
	d := lanWithForward()
	d.external(rA, "203.0.113.0/24", 20, false, "10.0.7.9")
	if got, want := selRoute(d.graph("0"), "203.0.113.0/24"), "35 via 10.255.0.3"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	// The rib names the ASBR as the advertiser, not the network the
	// route leads to.
	if got, want := selRib(t, d, "203.0.113.0/24", "0"), "0.0.0.0 35 via 10.255.0.3 from 10.255.0.2"; got != want {
		t.Errorf("rib: %s, want %s", got, want)
	}
}

// TestExternalForwardingAddressUnreachable (RFC 2328 §16.4(3)): when no
// intra- or inter-area route covers the forwarding address, the LSA is not
// used and the next one is considered.
//
// A advertises 203.0.113.0/24 type 2 at 20 with forwarding address
// 172.16.9.9, covered only by B's external 172.16.0.0/16 (an external
// route does not count). B advertises 203.0.113.0/24 type 2 at 50, no
// forwarding address: 10 via B (X = dist(B) = 10, Y = 50). A second prefix
// only A advertises that way gets no route at all. (Ignoring the address:
// via A, which is not where the traffic should go.)
func TestExternalForwardingAddressUnreachable(t *testing.T) {
	d := lanWithForward()
	d.external(rB, "172.16.0.0/16", 1, true, "")
	d.external(rA, "203.0.113.0/24", 20, true, "172.16.9.9")
	d.external(rB, "203.0.113.0/24", 50, true, "")
	d.external(rA, "203.0.114.0/24", 20, true, "172.16.9.9")
	g := d.graph("0")
	if got, want := selRoute(g, "203.0.113.0/24"), "10 via 10.255.0.3"; got != want {
		t.Errorf("203.0.113.0/24: %s, want %s", got, want)
	}
	if got := selRoute(g, "203.0.114.0/24"); got != "none" {
		t.Errorf("203.0.114.0/24: %s, want none", got)
	}
}

// selRib submits the areas' graphs to a rib.Manager and returns its route
// to prefix as "area metric via neighbours from advertisers", once a computation covered
// every area (the SPF log's node count is the sum of the areas').
func selRib(t *testing.T, d *selDB, prefix string, areas ...string) string {
	t.Helper()
	m := rib.New(rib.Config{Routing: map[string]rib.Routing{Key: {Select: routing.Select}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := 0
	for _, a := range areas {
		g := d.graph(a)
		nodes += len(g.Nodes)
		m.Submit(g, "area "+a)
	}
	go m.Run(ctx)
	got := "none"
	igptest.Poll(t, 5*time.Second, "rib computed every area", func() error {
		s := m.Snapshot()
		n := 0
		for _, e := range s.Log {
			n = e.Nodes
		}
		if n != nodes {
			return fmt.Errorf("computed %d nodes, want %d", n, nodes)
		}
		got = "none"
		for _, r := range s.Routes {
			if r.Prefix.String() == prefix {
				var nb []string
				for _, h := range r.NextHops {
					nb = append(nb, h.Neighbor)
				}
				slices.Sort(nb)
				got = fmt.Sprintf("%s %d via %s from %s", r.Area, r.Metric, strings.Join(nb, ","), strings.Join(r.Advertisers, ","))
			}
		}
		return nil
	})
	return got
}

// The path type decides between areas before the metric (RFC 2328 §11,
// §16.4(6)): intra-area, inter-area, type-1 external, type-2 external;
// type 2 compares its type-2 metric, then (in the rib) the distance.
func TestPathTypeRank(t *testing.T) {
	rk := routing.Select(nil)
	g := &lsdb.Graph{Protocol: Key, Area: "0.0.0.1"}
	r := func(sr *spf.Route) uint64 {
		v, use := rk(g, nil, sr)
		if !use {
			t.Fatalf("%+v not used", sr)
		}
		return v
	}
	intra, inter := r(&spf.Route{}), r(&spf.Route{Inter: true})
	e1 := r(&spf.Route{External: true})
	e2a, e2b := r(&spf.Route{External: true, Type2: true, Type2Metric: 20}), r(&spf.Route{External: true, Type2: true, Type2Metric: 50})
	if !(intra < inter && inter < e1 && e1 < e2a && e2a < e2b) {
		t.Errorf("ranks intra %d inter %d E1 %d E2/20 %d E2/50 %d", intra, inter, e1, e2a, e2b)
	}
	if r(nil) != intra {
		t.Error("a route of unknown kind is not intra-area")
	}
	// An ABR with an active backbone ignores other areas' inter-area
	// routes (RFC 2328 §16.2); without one they count.
	bb := &lsdb.Graph{Protocol: Key, Area: backbone}
	active := routing.Select([]rib.Topology{{Graph: bb, Result: &spf.Result{Neighbors: []int32{1}}}})
	if _, use := active(g, nil, &spf.Route{Inter: true}); use {
		t.Error("inter-area route of area 1 used with an active backbone")
	}
	if _, use := active(bb, nil, &spf.Route{Inter: true}); !use {
		t.Error("backbone inter-area route not used")
	}
	if _, use := routing.Select([]rib.Topology{{Graph: bb, Result: &spf.Result{}}})(g, nil, &spf.Route{Inter: true}); !use {
		t.Error("inter-area route of area 1 not used without a backbone neighbour")
	}
}
