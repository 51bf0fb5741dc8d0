package packet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// TLV codepoints this package decodes.
const (
	TLVAreaAddresses      = 1
	TLVISNeighbors        = 6
	TLVPadding            = 8
	TLVLSPEntries         = 9
	TLVPurgeOriginator    = 13
	TLVExtISReach         = 22
	TLVProtocolsSupported = 129
	TLVIPv4Addresses      = 132
	TLVTERouterID         = 134
	TLVExtIPReach         = 135
	TLVHostname           = 137
	TLVIPv6Addresses      = 232
	TLVIPv6Reach          = 236
	TLVThreeWay           = 240
)

// NLPIDs for TLV 129.
const (
	NLPIDIPv4 = 0xCC
	NLPIDIPv6 = 0x8E
)

// TLV is one wire TLV. AppendValue appends the value only; TLVs.AppendTo
// adds type and length.
type TLV interface {
	Type() uint8
	AppendValue(b []byte) []byte
}

// TLVs is the ordered TLV list of a PDU, one element per wire TLV.
type TLVs []TLV

// AppendTo appends every TLV as type, length, value. It never panics and
// never writes a length that disagrees with the value: a TLV whose value
// would exceed 255 bytes is sent as several TLVs of its type when it is a
// list (IS neighbours, addresses, reachability entries, …: ISO 10589 §9
// lets a PDU repeat them), and an entry or TLV that cannot fit one TLV on
// its own is left out (see Fit, which reports it).
func (t TLVs) AppendTo(b []byte) []byte {
	for _, v := range t {
		start := len(b)
		b = append(b, v.Type(), 0)
		b = v.AppendValue(b)
		n := len(b) - start - 2
		if n <= MaxTLVValue {
			b[start+1] = byte(n)
			continue
		}
		b = b[:start]
		parts, _ := split(v)
		for _, p := range parts {
			s := len(b)
			b = append(b, p.Type(), 0)
			b = p.AppendValue(b)
			if n := len(b) - s - 2; n <= MaxTLVValue {
				b[s+1] = byte(n)
			} else {
				b = b[:s] // split guarantees this cannot happen; never corrupt the PDU
			}
		}
	}
	return b
}

// Len is the encoded size of the TLVs in bytes, as AppendTo writes them.
func (t TLVs) Len() int {
	n := 0
	for _, v := range t {
		n += encodedLen(v)
	}
	return n
}

// encodedLen is the wire size of one TLV including its type and length
// bytes, and those of the extra instances an oversized list is split into.
func encodedLen(v TLV) int {
	if l := valueLen(v); l <= MaxTLVValue {
		return 2 + l
	}
	parts, _ := split(v)
	n := 0
	for _, p := range parts {
		n += 2 + valueLen(p)
	}
	return n
}

// AreaAddresses is TLV 1: each area is 1..13 bytes ("49.0001" is 49 00 01).
type AreaAddresses struct{ Areas [][]byte }

// ISNeighbors is TLV 6: the MAC addresses of LAN neighbours heard from.
type ISNeighbors struct{ SNPAs [][6]byte }

// Padding is TLV 8: Len zero bytes, used to pad hellos to the MTU. Padding
// that is not all zeros decodes as Unknown so its bytes survive.
type Padding struct{ Len int }

// LSPEntry is one entry of TLV 9.
type LSPEntry struct {
	Lifetime uint16
	ID       LSPID
	Seq      uint32
	Checksum uint16
}

// LSPEntries is TLV 9 (CSNP/PSNP), 16 bytes an entry.
type LSPEntries struct{ Entries []LSPEntry }

// PurgeOriginator is TLV 13 (RFC 6232), carried only in purges: the
// system that generated the purge and, when a router added the TLV to a
// purge that lacked it, the neighbour it received the purge from.
type PurgeOriginator struct {
	Generator SystemID
	HasSender bool
	Sender    SystemID
}

// ProtocolsSupported is TLV 129.
type ProtocolsSupported struct{ NLPIDs []uint8 }

// IPv4Addresses is TLV 132 (interface addresses).
type IPv4Addresses struct{ Addrs []netip.Addr }

// TERouterID is TLV 134 (RFC 5305).
type TERouterID struct{ Addr netip.Addr }

// Hostname is TLV 137 (RFC 5301). Name holds the bytes as sent.
type Hostname struct{ Name string }

// IPv6Addresses is TLV 232 (RFC 5308): link-local in hellos, non-link-local
// in LSPs.
type IPv6Addresses struct{ Addrs []netip.Addr }

// Three-way adjacency states (RFC 5303).
const (
	ThreeWayUp           = 0
	ThreeWayInitializing = 1
	ThreeWayDown         = 2
)

// ThreeWay is TLV 240 (RFC 5303), 1, 5, 11 or 15 bytes: the optional parts
// are present in that order, so HasNeighbor implies HasExtCircuit and
// NeighborExtCircuitID is only sent with 15 bytes.
type ThreeWay struct {
	State                uint8
	HasExtCircuit        bool
	ExtCircuitID         uint32
	HasNeighbor          bool
	NeighborID           SystemID
	NeighborExtCircuitID uint32
	// Length 11 (neighbor id without its extended circuit id) cannot be
	// told from 15 by the fields above; keep it so re-encoding is exact.
	NoNeighborExtCircuit bool
}

// Unknown is any TLV this package does not decode, kept byte for byte.
type Unknown struct {
	T     uint8
	Value []byte
}

func (AreaAddresses) Type() uint8      { return TLVAreaAddresses }
func (ISNeighbors) Type() uint8        { return TLVISNeighbors }
func (Padding) Type() uint8            { return TLVPadding }
func (LSPEntries) Type() uint8         { return TLVLSPEntries }
func (PurgeOriginator) Type() uint8    { return TLVPurgeOriginator }
func (ProtocolsSupported) Type() uint8 { return TLVProtocolsSupported }
func (IPv4Addresses) Type() uint8      { return TLVIPv4Addresses }
func (TERouterID) Type() uint8         { return TLVTERouterID }
func (Hostname) Type() uint8           { return TLVHostname }
func (IPv6Addresses) Type() uint8      { return TLVIPv6Addresses }
func (ThreeWay) Type() uint8           { return TLVThreeWay }
func (u Unknown) Type() uint8          { return u.T }

func (t AreaAddresses) AppendValue(b []byte) []byte {
	for _, a := range t.Areas {
		if !areaOK(a) {
			continue // unencodable: receivers reject a TLV holding it
		}
		b = append(b, byte(len(a)))
		b = append(b, a...)
	}
	return b
}

func (t ISNeighbors) AppendValue(b []byte) []byte {
	for _, m := range t.SNPAs {
		b = append(b, m[:]...)
	}
	return b
}

func (t Padding) AppendValue(b []byte) []byte {
	for range max(t.Len, 0) {
		b = append(b, 0)
	}
	return b
}

func (t LSPEntries) AppendValue(b []byte) []byte {
	for _, e := range t.Entries {
		b = binary.BigEndian.AppendUint16(b, e.Lifetime)
		b = append(b, e.ID[:]...)
		b = binary.BigEndian.AppendUint32(b, e.Seq)
		b = binary.BigEndian.AppendUint16(b, e.Checksum)
	}
	return b
}

// AppendValue: the number of system ids (1 or 2), then the ids.
func (t PurgeOriginator) AppendValue(b []byte) []byte {
	if !t.HasSender {
		b = append(b, 1)
		return append(b, t.Generator[:]...)
	}
	b = append(b, 2)
	b = append(b, t.Generator[:]...)
	return append(b, t.Sender[:]...)
}

func (t ProtocolsSupported) AppendValue(b []byte) []byte { return append(b, t.NLPIDs...) }

func (t IPv4Addresses) AppendValue(b []byte) []byte {
	for _, a := range t.Addrs {
		v := as4(a)
		b = append(b, v[:]...)
	}
	return b
}

func (t TERouterID) AppendValue(b []byte) []byte {
	v := as4(t.Addr)
	return append(b, v[:]...)
}

func (t Hostname) AppendValue(b []byte) []byte { return append(b, t.Name...) }

func (t IPv6Addresses) AppendValue(b []byte) []byte {
	for _, a := range t.Addrs {
		v := a.As16()
		b = append(b, v[:]...)
	}
	return b
}

func (t ThreeWay) AppendValue(b []byte) []byte {
	b = append(b, t.State)
	if !t.HasExtCircuit && !t.HasNeighbor {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, t.ExtCircuitID)
	if !t.HasNeighbor {
		return b
	}
	b = append(b, t.NeighborID[:]...)
	if t.NoNeighborExtCircuit {
		return b
	}
	return binary.BigEndian.AppendUint32(b, t.NeighborExtCircuitID)
}

func (u Unknown) AppendValue(b []byte) []byte { return append(b, u.Value...) }

// sub returns v[i:j] with its capacity cut at j, so appending to a decoded
// slice cannot overwrite the bytes that follow it in the decode buffer.
func sub(v []byte, i, j int) []byte { return v[i:j:j] }

// decodeTLVs parses p[off:] (p already cut to the PDU length) into TLVs.
func decodeTLVs(p []byte, off int) (TLVs, error) {
	// Count first: one exact allocation instead of append's growth steps.
	n := 0
	for i := off; i+2 <= len(p); i += 2 + int(p[i+1]) {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	out := make(TLVs, 0, n)
	for i := off; i < len(p); {
		if i+2 > len(p) {
			return nil, &DecodeError{Kind: KindTLVOverflow, Offset: i, TLV: p[i], Msg: "TLV header past the end of the PDU"}
		}
		t, l := p[i], int(p[i+1])
		if i+2+l > len(p) {
			return nil, &DecodeError{Kind: KindTLVOverflow, Offset: i, TLV: t, Msg: fmt.Sprintf("length %d past the end of the PDU (%d bytes left)", l, len(p)-i-2)}
		}
		v, err := decodeTLV(t, sub(p, i+2, i+2+l), i)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		i += 2 + l
	}
	return out, nil
}

func decodeTLV(t uint8, v []byte, off int) (TLV, error) {
	switch t {
	case TLVAreaAddresses:
		return decodeAreas(v, off)
	case TLVISNeighbors:
		if len(v)%6 != 0 {
			return nil, tlvError(t, off, 0, "length %d, not a multiple of 6", len(v))
		}
		x := &ISNeighbors{SNPAs: make([][6]byte, len(v)/6)}
		for k := range x.SNPAs {
			copy(x.SNPAs[k][:], v[6*k:])
		}
		return x, nil
	case TLVPadding:
		for _, c := range v {
			if c != 0 {
				return &Unknown{T: t, Value: v}, nil
			}
		}
		return &Padding{Len: len(v)}, nil
	case TLVLSPEntries:
		if len(v)%16 != 0 {
			return nil, tlvError(t, off, 0, "length %d, not a multiple of 16", len(v))
		}
		x := &LSPEntries{Entries: make([]LSPEntry, len(v)/16)}
		for k := range x.Entries {
			e := v[16*k:]
			x.Entries[k] = LSPEntry{Lifetime: binary.BigEndian.Uint16(e), Seq: binary.BigEndian.Uint32(e[10:]), Checksum: binary.BigEndian.Uint16(e[14:])}
			copy(x.Entries[k].ID[:], e[2:10])
		}
		return x, nil
	case TLVPurgeOriginator:
		return decodePOI(v, off)
	case TLVAuth:
		return decodeAuth(v, off)
	case TLVExtISReach:
		return decodeExtISReach(v, off)
	case TLVProtocolsSupported:
		return &ProtocolsSupported{NLPIDs: v}, nil
	case TLVIPv4Addresses:
		return decodeAddrs(t, off, v, 4, func(a []netip.Addr) TLV { return &IPv4Addresses{Addrs: a} })
	case TLVTERouterID:
		if len(v) != 4 {
			return nil, tlvError(t, off, 0, "length %d, want 4", len(v))
		}
		return &TERouterID{Addr: netip.AddrFrom4([4]byte(v))}, nil
	case TLVExtIPReach:
		return decodeExtIPReach(v, off)
	case TLVHostname:
		return &Hostname{Name: string(v)}, nil
	case TLVIPv6Addresses:
		return decodeAddrs(t, off, v, 16, func(a []netip.Addr) TLV { return &IPv6Addresses{Addrs: a} })
	case TLVIPv6Reach:
		return decodeIPv6Reach(v, off)
	case TLVThreeWay:
		return decodeThreeWay(v, off)
	case TLVMultiTopology:
		return decodeMultiTopology(v, off)
	case TLVMTISReach:
		return decodeMTISReach(v, off)
	case TLVMTIPReach:
		return decodeMTIPReach(v, off)
	case TLVMTIPv6Reach:
		return decodeMTIPv6Reach(v, off)
	}
	return &Unknown{T: t, Value: v}, nil
}

// decodeAddrs reads the packed addresses of TLV 132 (size 4) or 232 (size
// 16) and wraps them with tlv.
func decodeAddrs(t uint8, off int, v []byte, size int, tlv func([]netip.Addr) TLV) (TLV, error) {
	if len(v)%size != 0 {
		return nil, tlvError(t, off, 0, "length %d, not a multiple of %d", len(v), size)
	}
	addrs := make([]netip.Addr, len(v)/size)
	for k := range addrs {
		addrs[k], _ = netip.AddrFromSlice(v[size*k : size*(k+1)])
	}
	return tlv(addrs), nil
}

func decodeAreas(v []byte, off int) (TLV, error) {
	x := &AreaAddresses{}
	for i := 0; i < len(v); {
		l := int(v[i])
		if l == 0 || i+1+l > len(v) {
			return nil, tlvError(TLVAreaAddresses, off, 0, "area at value offset %d: length %d, %d bytes left", i, l, len(v)-i-1)
		}
		x.Areas = append(x.Areas, sub(v, i+1, i+1+l))
		i += 1 + l
	}
	return x, nil
}

// decodePOI: RFC 6232 §3 allows 1 or 2 system ids and nothing else; FRR
// rejects other lengths too, so a malformed TLV 13 is an error here.
func decodePOI(v []byte, off int) (TLV, error) {
	n := int(v0(v))
	if (n != 1 && n != 2) || len(v) != 1+6*n {
		return nil, tlvError(TLVPurgeOriginator, off, 0, "length %d with %d system ids, want 7 (1 id) or 13 (2 ids)", len(v), n)
	}
	x := &PurgeOriginator{Generator: SystemID(v[1:7]), HasSender: n == 2}
	if n == 2 {
		x.Sender = SystemID(v[7:13])
	}
	return x, nil
}

func decodeThreeWay(v []byte, off int) (TLV, error) {
	x := &ThreeWay{State: v0(v)}
	switch len(v) {
	case 1:
	case 5, 11, 15:
		x.HasExtCircuit = true
		x.ExtCircuitID = binary.BigEndian.Uint32(v[1:])
		if len(v) >= 11 {
			x.HasNeighbor = true
			copy(x.NeighborID[:], v[5:11])
			if len(v) == 15 {
				x.NeighborExtCircuitID = binary.BigEndian.Uint32(v[11:])
			} else {
				x.NoNeighborExtCircuit = true
			}
		}
	default:
		return nil, tlvError(TLVThreeWay, off, 0, "length %d, want 1, 5, 11 or 15", len(v))
	}
	return x, nil
}

// as4 is a.As4 that does not panic: encoders must not crash the daemon on
// a zero or IPv6 address put in an IPv4 field; they send 0.0.0.0.
func as4(a netip.Addr) [4]byte {
	if a.Is4() || a.Is4In6() {
		return a.Unmap().As4()
	}
	return [4]byte{}
}

func v0(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}
