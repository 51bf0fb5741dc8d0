package packet

import (
	"encoding/binary"
)

// Multi-topology TLV codepoints (RFC 5120 §7).
const (
	TLVMTISReach     = 222 // MT Intermediate Systems: TLV 22 entries of one topology
	TLVMultiTopology = 229 // the topologies a router takes part in
	TLVMTIPReach     = 235 // MT reachable IPv4 prefixes: TLV 135 entries
	TLVMTIPv6Reach   = 237 // MT reachable IPv6 prefixes: TLV 236 entries
)

// Topology ids RFC 5120 §7.5 reserves.
const (
	MTIPv4Unicast = 0 // the standard topology: TLVs 22, 135 and 236 (never 222/235/237)
	MTIPv6Unicast = 2
)

// MTID is the 2-byte field that heads each topology of TLV 229 and each
// TLV 222, 235 and 237 (RFC 5120 §7): the O (overload) and A (attached)
// bits, which only TLV 229 in LSP fragment 0 uses, two reserved bits,
// then the 12-bit topology id. It is kept whole so that reserved bits a
// router set survive re-encoding.
type MTID uint16

// MakeMTID is topology id with no flags (ids above 4095 are cut to 12 bits).
func MakeMTID(id uint16) MTID { return MTID(id & 0x0fff) }

// ID is the 12-bit topology id.
func (m MTID) ID() uint16 { return uint16(m) & 0x0fff }

// Overload is the O bit: the router is overloaded in this topology.
func (m MTID) Overload() bool { return m&0x8000 != 0 }

// Attached is the A bit: the router is attached to other areas in this
// topology.
func (m MTID) Attached() bool { return m&0x4000 != 0 }

// MultiTopology is TLV 229: one MTID per topology, in hellos (flags 0) and
// in LSP fragment 0.
type MultiTopology struct{ MTs []MTID }

// MTISReach is TLV 222: TLV 22's neighbour entries in topology MT.
type MTISReach struct {
	MT        MTID
	Neighbors []ExtISNeighbor
}

// MTIPReach is TLV 235: TLV 135's prefix entries in topology MT.
type MTIPReach struct {
	MT       MTID
	Prefixes []ExtIPPrefix
}

// MTIPv6Reach is TLV 237: TLV 236's prefix entries in topology MT.
type MTIPv6Reach struct {
	MT       MTID
	Prefixes []IPv6Prefix
}

func (MultiTopology) Type() uint8 { return TLVMultiTopology }
func (MTISReach) Type() uint8     { return TLVMTISReach }
func (MTIPReach) Type() uint8     { return TLVMTIPReach }
func (MTIPv6Reach) Type() uint8   { return TLVMTIPv6Reach }

// mtHeadLen is the MT id that precedes the entries of TLVs 222, 235, 237.
const mtHeadLen = 2

// maxMTsPerTLV is how many topologies one TLV 229 holds.
const maxMTsPerTLV = MaxTLVValue / 2

func (t MultiTopology) AppendValue(b []byte) []byte {
	for _, m := range t.MTs {
		b = binary.BigEndian.AppendUint16(b, uint16(m))
	}
	return b
}

func (t MTISReach) AppendValue(b []byte) []byte {
	return ExtISReach{Neighbors: t.Neighbors}.AppendValue(binary.BigEndian.AppendUint16(b, uint16(t.MT)))
}

func (t MTIPReach) AppendValue(b []byte) []byte {
	return ExtIPReach{Prefixes: t.Prefixes}.AppendValue(binary.BigEndian.AppendUint16(b, uint16(t.MT)))
}

func (t MTIPv6Reach) AppendValue(b []byte) []byte {
	return IPv6Reach{Prefixes: t.Prefixes}.AppendValue(binary.BigEndian.AppendUint16(b, uint16(t.MT)))
}

func (t MultiTopology) valueLen() int { return 2 * len(t.MTs) }
func (t MTISReach) valueLen() int     { return mtHeadLen + sumWireLen(t.Neighbors) }
func (t MTIPReach) valueLen() int     { return mtHeadLen + sumWireLen(t.Prefixes) }
func (t MTIPv6Reach) valueLen() int   { return mtHeadLen + sumWireLen(t.Prefixes) }

func decodeMultiTopology(v []byte, off int) (TLV, error) {
	if len(v)%2 != 0 {
		return nil, tlvError(TLVMultiTopology, off, 0, "length %d, not a multiple of 2", len(v))
	}
	x := &MultiTopology{MTs: make([]MTID, len(v)/2)}
	for k := range x.MTs {
		x.MTs[k] = MTID(binary.BigEndian.Uint16(v[2*k:]))
	}
	return x, nil
}

// mtHead reads the MT id of TLV t; the entries follow it.
func mtHead(t uint8, v []byte, off int) (MTID, []byte, error) {
	if len(v) < mtHeadLen {
		return 0, nil, tlvError(t, off, 0, "length %d, no room for the 2-byte MT id", len(v))
	}
	return MTID(binary.BigEndian.Uint16(v)), v[mtHeadLen:], nil
}

func decodeMTISReach(v []byte, off int) (TLV, error) {
	mt, rest, err := mtHead(TLVMTISReach, v, off)
	if err != nil {
		return nil, err
	}
	ns, err := decodeExtISNeighbors(TLVMTISReach, rest, off)
	if err != nil {
		return nil, err
	}
	return &MTISReach{MT: mt, Neighbors: ns}, nil
}

func decodeMTIPReach(v []byte, off int) (TLV, error) {
	mt, rest, err := mtHead(TLVMTIPReach, v, off)
	if err != nil {
		return nil, err
	}
	return decodeExtIPPrefixes(TLVMTIPReach, rest, off, func(ps []ExtIPPrefix) TLV { return &MTIPReach{MT: mt, Prefixes: ps} })
}

func decodeMTIPv6Reach(v []byte, off int) (TLV, error) {
	mt, rest, err := mtHead(TLVMTIPv6Reach, v, off)
	if err != nil {
		return nil, err
	}
	return decodeIPv6Prefixes(TLVMTIPv6Reach, rest, off, func(ps []IPv6Prefix) TLV { return &MTIPv6Reach{MT: mt, Prefixes: ps} })
}

// splitMT is split for the multi-topology TLVs: every part keeps the MT
// id and has 253 bytes for entries. ok is false for any other TLV.
func splitMT(v TLV) (parts []TLV, dropped int, ok bool) {
	const room = MaxTLVValue - mtHeadLen
	switch x := deref(v).(type) {
	case MultiTopology:
		return chunks(x.MTs, maxMTsPerTLV, func(s []MTID) TLV { return &MultiTopology{MTs: s} }), 0, true
	case MTISReach:
		parts, dropped = packRoom(x.Neighbors, room, (*ExtISNeighbor).wireLen, func(s []ExtISNeighbor) TLV { return &MTISReach{MT: x.MT, Neighbors: s} })
	case MTIPReach:
		parts, dropped = packRoom(x.Prefixes, room, (*ExtIPPrefix).wireLen, func(s []ExtIPPrefix) TLV { return &MTIPReach{MT: x.MT, Prefixes: s} })
	case MTIPv6Reach:
		parts, dropped = packRoom(x.Prefixes, room, (*IPv6Prefix).wireLen, func(s []IPv6Prefix) TLV { return &MTIPv6Reach{MT: x.MT, Prefixes: s} })
	default:
		return nil, 0, false
	}
	return parts, dropped, true
}

// PackMTISReach spreads topology mt's neighbours over as few TLV 222s as fit.
func PackMTISReach(mt MTID, ns []ExtISNeighbor) []TLV {
	parts, _, _ := splitMT(&MTISReach{MT: mt, Neighbors: ns})
	return parts
}

// PackMTIPReach spreads topology mt's prefixes over as few TLV 235s as fit.
func PackMTIPReach(mt MTID, ps []ExtIPPrefix) []TLV {
	parts, _, _ := splitMT(&MTIPReach{MT: mt, Prefixes: ps})
	return parts
}

// PackMTIPv6Reach spreads topology mt's prefixes over as few TLV 237s as fit.
func PackMTIPv6Reach(mt MTID, ps []IPv6Prefix) []TLV {
	parts, _, _ := splitMT(&MTIPv6Reach{MT: mt, Prefixes: ps})
	return parts
}

// MultiTopologies gathers the topologies of every TLV 229, in order.
func (t TLVs) MultiTopologies() []MTID {
	return gather(t, func(x *MultiTopology) []MTID { return x.MTs })
}

// mtEntries gathers the entries of every TLV of type T whose topology is
// id.
func mtEntries[T any, PT interface {
	*T
	TLV
}, E any](t TLVs, id uint16, mt func(*T) MTID, items func(*T) []E) []E {
	return gather[T, PT](t, func(x *T) []E {
		if mt(x).ID() != id {
			return nil
		}
		return items(x)
	})
}

// MTISNeighbors gathers the neighbours of every TLV 222 of topology id.
func (t TLVs) MTISNeighbors(id uint16) []ExtISNeighbor {
	return mtEntries(t, id, func(x *MTISReach) MTID { return x.MT }, func(x *MTISReach) []ExtISNeighbor { return x.Neighbors })
}

// MTIPPrefixes gathers the prefixes of every TLV 235 of topology id.
func (t TLVs) MTIPPrefixes(id uint16) []ExtIPPrefix {
	return mtEntries(t, id, func(x *MTIPReach) MTID { return x.MT }, func(x *MTIPReach) []ExtIPPrefix { return x.Prefixes })
}

// MTIPv6Prefixes gathers the prefixes of every TLV 237 of topology id.
func (t TLVs) MTIPv6Prefixes(id uint16) []IPv6Prefix {
	return mtEntries(t, id, func(x *MTIPv6Reach) MTID { return x.MT }, func(x *MTIPv6Reach) []IPv6Prefix { return x.Prefixes })
}
