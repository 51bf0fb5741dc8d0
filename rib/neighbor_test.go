package rib

import (
	"net/netip"
	"slices"
	"testing"
)

type repairer struct {
	recorder
	down, up []string
}

func (r *repairer) NeighborDown(ifindex int, gws ...netip.Addr) (int, error) {
	r.down = append(r.down, netip.AddrPortFrom(gws[0], uint16(ifindex)).String())
	return 1, nil
}

func (r *repairer) NeighborUp(ifindex int, gws ...netip.Addr) {
	r.up = append(r.up, netip.AddrPortFrom(gws[0], uint16(ifindex)).String())
}

// The protocols' calls reach the FIB at once, on the caller's goroutine
// (the manager is not even running), and a FIB without local repair is
// simply skipped.
func TestNeighborDownReachesFIB(t *testing.T) {
	r := &repairer{}
	m := New(Config{FIB: r})
	gw := netip.MustParseAddr("10.0.0.1")
	m.NeighborDown(3, gw)
	m.NeighborUp(3, gw)
	m.NeighborDown(3) // no address: nothing to do
	if !slices.Equal(r.down, []string{"10.0.0.1:3"}) || !slices.Equal(r.up, []string{"10.0.0.1:3"}) {
		t.Fatalf("down %v up %v", r.down, r.up)
	}
	New(Config{FIB: &recorder{}}).NeighborDown(3, gw)
	New(Config{}).NeighborDown(3, gw)
}
