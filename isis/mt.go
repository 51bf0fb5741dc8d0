package isis

import (
	"slices"

	"github.com/fared/fared/isis/packet"
)

// Multi-topology (RFC 5120), issue 27 item 3. With multi-topology on, the
// hellos announce MT 0 (IPv4 unicast, the standard topology) and MT 2
// (IPv6 unicast) in TLV 229, as FRR's "topology ipv6-unicast" does, and
// each adjacency records the topologies its neighbour announces. What is
// not done yet: origination of TLVs 222/237 (with Path Bandwidth in
// 235/237) and one graph per topology; until then the graph is that of
// the standard topology with IPv6 from TLV 236 (single topology).

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
