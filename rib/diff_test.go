package rib

import (
	"net/netip"
	"testing"
)

// TestDiffRoutes: a route counts as changed when the kernel would see a
// difference — a next hop's gateway, interface or weight, or the route
// appearing or going; a new route without next hops shows the kernel
// nothing.
func TestDiffRoutes(t *testing.T) {
	gw := netip.MustParseAddr
	px := netip.MustParsePrefix
	hop := func(g string, ifx int, w uint32) NextHop {
		return NextHop{Gateway: gw(g), IfIndex: ifx, KernelWeight: w, Interface: "ignored"}
	}
	a := []Route{
		{Prefix: px("10.0.1.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 3), hop("10.9.0.3", 2, 1)}},
		{Prefix: px("10.0.2.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 3)}},
		{Prefix: px("10.0.3.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 1)}},
		{Prefix: px("10.0.6.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 1)}},
		{Prefix: px("10.0.7.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 1)}},
	}
	b := []Route{
		// unchanged but for what the kernel does not see
		{Prefix: px("10.0.1.0/24"), Metric: 99, NextHops: []NextHop{hop("10.9.0.1", 1, 3), hop("10.9.0.3", 2, 1)}},
		{Prefix: px("10.0.2.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 4)}}, // weight
		{Prefix: px("10.0.4.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 1)}}, // new
		{Prefix: px("10.0.5.0/24")}, // new, no next hop: not a change
		{Prefix: px("10.0.6.0/24"), NextHops: []NextHop{hop("10.9.0.1", 2, 1)}},                        // interface
		{Prefix: px("10.0.7.0/24"), NextHops: []NextHop{hop("10.9.0.1", 1, 1), hop("10.9.0.3", 2, 1)}}, // one more
		// 10.0.3.0/24 is gone
	}
	if n := diffRoutes(a, b); n != 5 {
		t.Errorf("diffRoutes = %d, want 5 (10.0.2, .3, .4, .6, .7)", n)
	}
	if n := diffRoutes(a, a); n != 0 {
		t.Errorf("diffRoutes(a, a) = %d", n)
	}
}
