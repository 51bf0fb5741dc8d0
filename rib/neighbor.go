package rib

import (
	"net/netip"
	"time"
)

// NeighborRepairer is what local repair needs of the kernel FIB
// (fib.FIB has it; an Installer without it gets no local repair).
type NeighborRepairer interface {
	NeighborDown(ifindex int, gws ...netip.Addr) (int, error)
	NeighborUp(ifindex int, gws ...netip.Addr)
}

// NeighborDown is local repair, called by a routing protocol the moment
// an adjacency goes down (BFD, hold timer, neighbour restart): the
// neighbour, reached as gws on ifindex, leaves every kernel nexthop
// group at once, before the SPF back-off runs (fib.FIB.NeighborDown;
// docs/bfd.md says why this is loop-free in a CLOS). The rib's own
// routes and snapshot stay as computed until the protocol's new
// topology has gone through SPF and FARE, which set the exact weights.
//
// It runs on the caller's goroutine (the FIB has its own lock), so the
// kernel changes before the protocol's next event.
func (m *Manager) NeighborDown(ifindex int, gws ...netip.Addr) {
	r, ok := m.cfg.FIB.(NeighborRepairer)
	if !ok || len(gws) == 0 {
		return
	}
	start := time.Now()
	n, err := r.NeighborDown(ifindex, gws...)
	if err != nil {
		m.log.Error("local repair failed", "ifindex", ifindex, "neighbor", gws, "err", err)
	}
	if n > 0 {
		m.log.Info("local repair: neighbour removed from nexthop groups", "ifindex", ifindex, "neighbor", gws,
			"groups", n, "took", time.Since(start))
	}
}

// NeighborUp tells the FIB that the neighbour is back (its adjacency is
// up): the next computation may use it again.
func (m *Manager) NeighborUp(ifindex int, gws ...netip.Addr) {
	if r, ok := m.cfg.FIB.(NeighborRepairer); ok && len(gws) > 0 {
		r.NeighborUp(ifindex, gws...)
	}
}
