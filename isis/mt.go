package isis

import (
	"slices"

	"github.com/fared/fared/isis/packet"
)

// Multi-topology (RFC 5120), issue 27 item 3. With multi-topology on, the
// hellos announce MT 0 (IPv4 unicast, the standard topology) and MT 2
// (IPv6 unicast) in TLV 229, as FRR's "topology ipv6-unicast" does, each
// adjacency records the topologies its neighbour announces, and our LSP
// carries TLV 229 and MT 2's links and IPv6 prefixes in TLVs 222 and 237
// (Path Bandwidth included) instead of TLV 236. What is not done yet: one
// graph per topology. The graph reads MT 2's IPv6 prefixes (TLV 237) as
// prefixes of the standard topology, which routes them right as long as
// MT 2 has the links MT 0 has (a congruent fabric, every link dual-stack).

// ourMTs are the topologies of the instance: MT 0 only without
// multi-topology.
func (in *Instance) ourMTs() []uint16 {
	if in.icfg.MultiTopology {
		return []uint16{packet.MTIPv4Unicast, packet.MTIPv6Unicast}
	}
	return []uint16{packet.MTIPv4Unicast}
}

// helloMTs is the TLV 229 of our hellos, nil without multi-topology (a
// single-topology router sends none). Hellos carry no O or A bits (RFC
// 5120 §7.1: those are for LSP fragment 0).
func (in *Instance) helloMTs() packet.TLV {
	if !in.icfg.MultiTopology {
		return nil
	}
	mts := in.ourMTs()
	t := &packet.MultiTopology{MTs: make([]packet.MTID, len(mts))}
	for i, id := range mts {
		t.MTs[i] = packet.MakeMTID(id)
	}
	return t
}

// neighborMTs are the topologies a hello announces, sorted and without
// repeats; a hello without TLV 229 is from a router of MT 0 only.
func neighborMTs(t packet.TLVs) []uint16 {
	mts := t.MultiTopologies()
	if len(mts) == 0 {
		return []uint16{packet.MTIPv4Unicast}
	}
	out := make([]uint16, len(mts))
	for i, m := range mts {
		out[i] = m.ID()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sharedMTs are the topologies both ends of an adjacency take part in:
// the ones the adjacency can carry. RFC 5120 forms the adjacency whatever
// the topologies; one with none in common carries no traffic of ours.
func (in *Instance) sharedMTs(a *adjacency) []uint16 {
	var out []uint16
	for _, id := range in.ourMTs() {
		if slices.Contains(a.mts, id) {
			out = append(out, id)
		}
	}
	return out
}

// multiTopologyTLVs turns our single-topology LSP TLVs into those of a
// router in MT 0 and MT 2 (nil change without multi-topology): TLV 229
// after TLV 129 (so it lands in fragment 0, RFC 5120 §7.1), TLV 22 kept
// for MT 0 and its neighbours that share MT 2 repeated in TLV 222, and
// the IPv6 prefixes moved from TLV 236 to TLV 237 of MT 2 with their
// sub-TLVs. An MT router reads IPv6 reachability from MT 2 only.
func (in *Instance) multiTopologyTLVs(tlvs packet.TLVs) packet.TLVs {
	if !in.icfg.MultiTopology {
		return tlvs
	}
	out := make(packet.TLVs, 0, len(tlvs)+3)
	var nbrs []packet.ExtISNeighbor
	var p6 []packet.IPv6Prefix
	for _, t := range tlvs {
		switch x := t.(type) {
		case *packet.IPv6Reach:
			p6 = append(p6, x.Prefixes...)
			continue
		case *packet.ExtISReach:
			for _, n := range x.Neighbors {
				if in.neighborInMT(n.ID, packet.MTIPv6Unicast) {
					nbrs = append(nbrs, n)
				}
			}
		}
		out = append(out, t)
		if _, ok := t.(*packet.ProtocolsSupported); ok {
			out = append(out, in.lspMTs())
		}
	}
	out = append(out, packet.PackMTISReach(packet.MakeMTID(packet.MTIPv6Unicast), nbrs)...)
	return append(out, packet.PackMTIPv6Reach(packet.MakeMTID(packet.MTIPv6Unicast), p6)...)
}

// lspMTs is the TLV 229 of our LSP: the hello's topologies, and the O bit
// on MT 2 while we are overloaded (MT 0 says it in the LSP header).
func (in *Instance) lspMTs() packet.TLV {
	t := in.helloMTs().(*packet.MultiTopology)
	for i, m := range t.MTs {
		if m.ID() != packet.MTIPv4Unicast && in.overloaded() {
			t.MTs[i] |= 0x8000
		}
	}
	return t
}

// neighborInMT: the TLV 22 neighbour id, a router on a P2P circuit or a
// LAN's pseudonode, has an Up adjacency of ours that shares topology mt
// (for a pseudonode: any Up adjacency on that LAN).
func (in *Instance) neighborInMT(id packet.NodeID, mt uint16) bool {
	shares := func(a *adjacency) bool { return a.state == AdjUp && slices.Contains(in.sharedMTs(a), mt) }
	for _, c := range in.circuits {
		if c.isP2P() {
			if a := c.p2p; a != nil && id.Pseudo() == 0 && a.sysID == id.SystemID() && shares(a) {
				return true
			}
			continue
		}
		for _, ll := range c.lan {
			if ll == nil || ll.lanID != id {
				continue
			}
			for _, a := range ll.adjs {
				if shares(a) {
					return true
				}
			}
		}
	}
	return false
}
