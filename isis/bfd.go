package isis

import (
	"net/netip"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/internal/igp"
)

// BFD for IS-IS adjacencies (RFC 5882): one session per Up adjacency on
// an interface whose config turns BFD on; the adjacency goes down the
// moment its session goes from Up to Down. As FRR's isisd does, the
// session runs over IPv6 link-local when both ends put one in their
// hellos (TLV 232), else over the first IPv4 interface address (TLV 132):
// both ends pick the same family, so the two sessions meet.
//
// Sessions follow the adjacencies: bfdTick (every instance tick) adds the
// missing ones and removes those whose adjacency went or whose config
// changed; a reload needs nothing else.
//
// Local repair (docs/bfd.md) is here too: an adjacency that goes down
// takes its neighbour out of the kernel's nexthop groups at once, before
// the LSPs and SPF catch up.

// Repairer is the rib's local-repair hook (rib.Manager).
type Repairer = igp.Repairer

// bfdPeer picks the session addresses of an adjacency (see above).
func (c *circuit) bfdPeer(a *adjacency) (peer, local netip.Addr) {
	if len(c.ll6) > 0 && len(a.addrs6) > 0 {
		return a.addrs6[0], c.ll6[0]
	}
	if len(c.addrs4) > 0 && len(a.addrs4) > 0 {
		return a.addrs4[0], c.addrs4[0].Addr()
	}
	return netip.Addr{}, netip.Addr{}
}

// upAdjs calls f for every Up adjacency of the circuit.
func (c *circuit) upAdjs(f func(a *adjacency)) {
	if c.p2p != nil && c.p2p.state == AdjUp {
		f(c.p2p)
	}
	for _, ll := range c.lan {
		if ll == nil {
			continue
		}
		for _, a := range ll.adjs {
			if a.state == AdjUp {
				f(a)
			}
		}
	}
}

// bfdTick makes the sessions match the Up adjacencies and the config.
func (in *Instance) bfdTick(now time.Time) {
	want := igp.BFDWants{}
	for _, c := range in.circuits {
		want.Iface(in.icfg.BFD, c.cfg.BFD, c.running && !c.cfg.Passive, c.ifi.Index, c.name, func(add func(peer, local netip.Addr)) {
			c.upAdjs(func(a *adjacency) {
				if peer, local := c.bfdPeer(a); peer.IsValid() {
					add(peer, local)
				}
			})
		})
	}
	in.SyncBFD(want)
}

// onBFD takes an adjacency down when its session goes from Up to Down,
// unless the peer said AdminDown (igp.Base.BFDFailed).
func (in *Instance) onBFD(e bfd.Event) {
	if !in.BFDFailed(e) {
		return
	}
	now := in.opt.Now()
	for _, c := range in.circuits {
		if c.ifi.Index != e.Key.IfIndex || !c.running {
			continue
		}
		reason := "BFD session down (" + e.Diag.String() + ")"
		if a := c.p2p; a != nil && a.state == AdjUp {
			if peer, _ := c.bfdPeer(a); peer == e.Key.Peer {
				c.adjDown(a, now, reason)
				c.p2p = nil
			}
		}
		for l := 1; l <= 2; l++ {
			ll := c.lan[l-1]
			if ll == nil {
				continue
			}
			for mac, a := range ll.adjs {
				if peer, _ := c.bfdPeer(a); a.state == AdjUp && peer == e.Key.Peer {
					c.adjDown(a, now, reason)
					delete(ll.adjs, mac)
					c.elect(l, now)
				}
			}
		}
	}
	in.bfdTick(now) // the session goes with its adjacency
}

// repairDown is local repair for an adjacency leaving Up.
func (c *circuit) repairDown(a *adjacency) {
	if r := c.in.opt.Repair; r != nil && c.ifi.Index > 0 {
		r.NeighborDown(c.ifi.Index, append(append([]netip.Addr(nil), a.addrs4...), a.addrs6...)...)
	}
}

// repairUp ends local repair for an adjacency reaching Up.
func (c *circuit) repairUp(a *adjacency) {
	if r := c.in.opt.Repair; r != nil && c.ifi.Index > 0 {
		r.NeighborUp(c.ifi.Index, append(append([]netip.Addr(nil), a.addrs4...), a.addrs6...)...)
	}
}
