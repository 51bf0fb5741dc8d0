package ospf

import (
	"net/netip"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/internal/igp"
)

// BFD for OSPF neighbours (RFC 5882), as FRR's ospfd runs it: one session
// per neighbour at least 2-Way on an interface whose config turns BFD on,
// between the interface addresses; a session going from Up to Down is the
// neighbour's InactivityTimer (RFC 2328 §10.3): it is gone at once.
//
// bfdTick (every instance tick) makes the sessions follow the neighbours
// and the config; a reload needs nothing else.
//
// Local repair (docs/bfd.md) is here too: a neighbour falling below 2-Way
// takes itself out of the kernel's nexthop groups at once, before the LSAs
// and SPF catch up.

// Repairer is the rib's local-repair hook (rib.Manager).
type Repairer = igp.Repairer

func (in *Instance) bfdTick(now time.Time) {
	want := igp.BFDWants{}
	for _, ifc := range in.ifaces {
		want.Iface(in.ocfg.BFD, ifc.cfg.BFD, ifc.running && !ifc.cfg.Passive, ifc.ifi.Index, ifc.name, func(add func(peer, local netip.Addr)) {
			for _, n := range ifc.nbrs {
				if n.state >= Nbr2Way {
					add(n.addr, ifc.addr.Addr())
				}
			}
		})
	}
	in.SyncBFD(want)
}

// onBFD kills the neighbour whose session went from Up to Down, unless
// the peer said AdminDown (RFC 5882 §3.2).
func (in *Instance) onBFD(e bfd.Event) {
	if !in.BFDFailed(e) {
		return
	}
	now := in.opt.Now()
	for _, ifc := range in.ifaces {
		if ifc.ifi.Index != e.Key.IfIndex || !ifc.running {
			continue
		}
		for k, n := range ifc.nbrs {
			if n.addr == e.Key.Peer {
				n.kill(now, "BFD session down ("+e.Diag.String()+")")
				delete(ifc.nbrs, k)
				ifc.neighborChange(now)
			}
		}
	}
	in.bfdTick(now)
}

// repair is local repair on a neighbour's state change: one that falls
// below 2-Way (dead, BFD, one-way) leaves the kernel's groups at once; one
// that reaches 2-Way again may be used. Leaving Full alone (a DR change
// on a LAN, a renewed database exchange) is no failure: the neighbour
// still forwards, and on a LAN it stays a next hop while 2-Way.
func (n *neighbor) repair(old, s NbrState) {
	r := n.ifc.in.opt.Repair
	if r == nil || n.ifc.ifi.Index <= 0 || !n.addr.IsValid() || (old < Nbr2Way) == (s < Nbr2Way) {
		return
	}
	if s < Nbr2Way {
		r.NeighborDown(n.ifc.ifi.Index, n.addr)
	} else {
		r.NeighborUp(n.ifc.ifi.Index, n.addr)
	}
}
