package fib

import (
	"testing"
)

// Local repair: the neighbour leaves every group at once, one replace per
// group, routes untouched; later Syncs that still name it (an SPF from
// the older topology) leave it out until one does not, or NeighborUp.
func TestNeighborDown(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	n.sysctl("net.ipv4.nexthop_compat_mode", "0")
	routes := []Route{
		{Prefix: pfx("10.90.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 5), nh(l[1].gw4, l[1].idx, 3), nh(l[2].gw4, l[2].idx, 2)}},
		{Prefix: pfx("10.92.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1)}},
		{Prefix: pfx("fd90::/64"), NextHops: []NextHop{nh(l[0].gw6, l[0].idx, 2), nh(l[2].gw6, l[2].idx, 1)}},
		{Prefix: pfx("10.91.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("10.93.0.0/24"), NextHops: []NextHop{nh(l[1].gw4, l[1].idx, 1), nh(l[2].gw4, l[2].idx, 1)}},
	}
	mustSync(t, f, routes)
	before, nhs0 := n.dump()
	ids := map[string]uint32{}
	for _, r := range before {
		ids[r.Prefix.String()] = r.NhID
	}
	untouched := groupWeights(t, nhs0, ids["10.93.0.0/24"])
	w := watch(t, n)
	w.drain(t)

	groups, err := f.NeighborDown(l[0].idx, l[0].gw4, l[0].gw6)
	if err != nil {
		t.Fatal(err)
	}
	routeMsgs, nhMsgs := w.drain(t)
	if groups != 3 || routeMsgs != 0 || len(nhMsgs) != 3 {
		t.Fatalf("local repair: %d groups rewritten, %d route and %v nexthop notifications; want 3 groups, 0 routes, one message per group", groups, routeMsgs, nhMsgs)
	}
	after, nhs := n.dump()
	for _, r := range after {
		if ids[r.Prefix.String()] != r.NhID {
			t.Errorf("%s moved from %#x to %#x", r.Prefix, ids[r.Prefix.String()], r.NhID)
		}
	}
	if g := groupWeights(t, nhs, ids["10.90.0.0/24"]); len(g) != 2 || g[l[1].gw4] != 3 || g[l[2].gw4] != 2 {
		t.Errorf("10.90/24 group: %v, want l1:3 l2:2 (weights kept)", g)
	}
	if g := groupWeights(t, nhs, ids["10.92.0.0/24"]); len(g) != 1 || g[l[1].gw4] != 1 {
		t.Errorf("10.92/24 group: %v, want l1 alone", g)
	}
	if g := groupWeights(t, nhs, ids["fd90::/64"]); len(g) != 1 || g[l[2].gw6] != 1 {
		t.Errorf("fd90::/64 group: %v, want l2 alone", g)
	}
	if g := groupWeights(t, nhs, ids["10.93.0.0/24"]); len(g) != len(untouched) {
		t.Errorf("a group without the neighbour changed: %v", g)
	}
	if _, ok := n.routeByPrefix("10.91.0.0/24"); !ok {
		t.Errorf("the single-path route via the neighbour is SPF's to change, not local repair's")
	}

	// An SPF from the older topology still names the neighbour: kept out.
	mustSync(t, f, routes)
	_, nhs = n.dump()
	r, _ := n.routeByPrefix("10.90.0.0/24")
	if g := groupWeights(t, nhs, r.NhID); len(g) != 2 || g[l[1].gw4] != 3 {
		t.Errorf("a stale Sync put the down neighbour back: %v", g)
	}
	// SPF without it: the mark goes; the neighbour returns when named.
	var without []Route
	for _, r := range routes {
		var hs []NextHop
		for _, h := range r.NextHops {
			if h.IfIndex != l[0].idx {
				hs = append(hs, h)
			}
		}
		if len(hs) > 0 {
			without = append(without, Route{Prefix: r.Prefix, NextHops: hs})
		}
	}
	mustSync(t, f, without)
	mustSync(t, f, routes)
	_, nhs = n.dump()
	r, _ = n.routeByPrefix("10.90.0.0/24")
	if g := groupWeights(t, nhs, r.NhID); len(g) != 3 || g[l[0].gw4] != 5 {
		t.Errorf("after SPF dropped and re-added the neighbour: %v", g)
	}
	// NeighborUp ends the mark at once.
	if _, err := f.NeighborDown(l[0].idx, l[0].gw4); err != nil {
		t.Fatal(err)
	}
	f.NeighborUp(l[0].idx, l[0].gw4)
	mustSync(t, f, routes)
	_, nhs = n.dump()
	r, _ = n.routeByPrefix("10.90.0.0/24")
	if g := groupWeights(t, nhs, r.NhID); len(g) != 3 {
		t.Errorf("after NeighborUp: %v", g)
	}
}
