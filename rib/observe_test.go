package rib

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
)

// failing is an Installer whose every Sync reports two refused objects.
type failing struct{ recorder }

func (f *failing) Sync(routes []fib.Route) (fib.Stats, error) {
	f.recorder.Sync(routes)
	return fib.Stats{Messages: 5, RoutesAdded: 1}, errors.Join(errors.New("nexthop 1: EINVAL"), errors.New("route 2: EEXIST"))
}

// vee: S reaches D through A (one link of bwA) and B (one link of bwB);
// A and B reach D over 100G. Without B, only A.
func vee(bwA, bwB float32, withB bool) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 2, "")
	for _, n := range []string{"S", "A", "B", "D"} {
		b.AddNode(lsdb.Node{ID: n, Name: n})
	}
	link := func(x, y string, g float32, lx, ly string) {
		b.AddLinkAddrs(x, y, lsdb.Link{Metric: 10, MaxBW: g * gbit, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(netip.MustParseAddr(lx)), Remote: lsdb.AddrOf(netip.MustParseAddr(ly))})
		b.AddLinkAddrs(y, x, lsdb.Link{Metric: 10, MaxBW: g * gbit, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(netip.MustParseAddr(ly)), Remote: lsdb.AddrOf(netip.MustParseAddr(lx))})
	}
	link("S", "A", bwA, "10.0.0.0", "10.0.0.1")
	if withB {
		link("S", "B", bwB, "10.0.0.4", "10.0.0.5")
	}
	link("A", "D", 100, "10.0.1.0", "10.0.1.1")
	link("B", "D", 100, "10.0.1.2", "10.0.1.3")
	b.AddPrefix("D", lsdb.Prefix{Prefix: netip.MustParsePrefix("10.9.0.0/24")})
	b.AddAdjacency(lsdb.Adjacency{Node: "A", IfIndex: 1, IfName: "e1", Local: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/31")}, NbrAddrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}})
	if withB {
		b.AddAdjacency(lsdb.Adjacency{Node: "B", IfIndex: 3, IfName: "e3", Local: []netip.Prefix{netip.MustParsePrefix("10.0.0.4/31")}, NbrAddrs: []netip.Addr{netip.MustParseAddr("10.0.0.5")}})
	}
	return b.Build("S")
}

// Every computation is observed once, with its kind, the kernel's work
// and errors, and the routes FARE reweighted.
func TestObserve(t *testing.T) {
	obs := make(chan Observation, 16)
	f := &failing{}
	m := New(Config{FIB: f, Log: slog.New(slog.DiscardHandler), Observe: func(o Observation) { obs <- o }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	next := func(what string) Observation {
		t.Helper()
		select {
		case o := <-obs:
			return o
		case <-time.After(20 * time.Second): // SPF back-off: up to its long delay
			t.Fatalf("%s: no observation", what)
		}
		return Observation{}
	}

	// 25G and 40G: weights 25:40, a new route (no reweight).
	m.Submit(vee(25, 40, true), "t1")
	o := next("first")
	if o.SPF.Kind() != "full" || !o.Synced || o.FIB.Messages != 5 || o.FIBErrors != 2 || o.Reweighted != 0 || o.SPF.Trigger != "t1" {
		t.Fatalf("first: %+v", o)
	}
	// B's link to 100G: same next hops, weights 25:100 → one route
	// reweighted, and no Dijkstra (a bandwidth change is route-only).
	m.Submit(vee(25, 100, true), "t2")
	o = next("reweight")
	if o.SPF.Kind() != "route-only" || o.Reweighted != 1 {
		t.Fatalf("reweight: %+v", o)
	}
	// B's link gone: the next hops change, which is no reweight.
	m.Submit(vee(25, 100, false), "t3")
	o = next("topology change")
	if o.SPF.Kind() != "full" || o.Reweighted != 0 || o.SPF.RoutesChanged != 1 {
		t.Fatalf("topology change: %+v", o)
	}
}

func TestReweighted(t *testing.T) {
	gw := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	p1, p2, p3 := netip.MustParsePrefix("10.1.0.0/24"), netip.MustParsePrefix("10.2.0.0/24"), netip.MustParsePrefix("10.3.0.0/24")
	r := func(p netip.Prefix, hops ...NextHop) Route { return Route{Prefix: p, NextHops: hops} }
	h := func(g string, ix int, w uint32) NextHop { return NextHop{Gateway: gw(g), IfIndex: ix, KernelWeight: w} }
	a := []Route{
		r(p1, h("10.0.0.1", 1, 1), h("10.0.0.3", 2, 1)),
		r(p2, h("10.0.0.1", 1, 1), h("10.0.0.3", 2, 1)),
		r(p3, h("10.0.0.1", 1, 2), h("10.0.0.3", 2, 1)),
	}
	b := []Route{
		r(p1, h("10.0.0.1", 1, 2), h("10.0.0.3", 2, 1)), // reweighted
		r(p2, h("10.0.0.1", 1, 1)),                      // a next hop left: not a reweight
		r(p3, h("10.0.0.1", 1, 2), h("10.0.0.3", 2, 1)), // unchanged
	}
	if n := reweighted(a, b); n != 1 {
		t.Fatalf("reweighted %d, want 1", n)
	}
	if n := countErrors(errors.Join(errors.New("a"), errors.New("b"), errors.New("c"))); n != 3 {
		t.Fatalf("countErrors %d", n)
	}
	if countErrors(nil) != 0 || countErrors(errors.New("x")) != 1 {
		t.Fatal("countErrors of nil or one error")
	}
}
