package packet

import (
	"encoding/binary"
	"math"
	"net/netip"
	"strconv"
)

// Opaque types (IANA "Opaque Link-State Advertisements (LSA) Option Types").
const (
	OpaqueTE         = 1 // RFC 3630
	OpaqueGrace      = 3 // RFC 3623
	OpaqueRouterInfo = 4 // RFC 7770
	OpaqueExtPrefix  = 7 // RFC 7684
	OpaqueExtLink    = 8 // RFC 7684
)

// knownOpaque are the opaque types whose body is a TLV list by definition:
// a TLV framing error there makes the LSA malformed. Other opaque types are
// tried as TLVs and kept raw (Body nil) if they do not parse.
func knownOpaque(t uint8) bool {
	switch t {
	case OpaqueTE, OpaqueGrace, OpaqueRouterInfo, OpaqueExtPrefix, OpaqueExtLink:
		return true
	}
	return false
}

// OpaqueLSA is the body of an opaque LSA (types 9, 10, 11; RFC 5250). The
// Link State ID is OpaqueType<<24 | OpaqueID (24 bits). TLVs are the
// top-level TLVs in wire order; what they mean depends on the opaque type
// (see TELinks, ExtPrefixes). Decode checks only their framing: a TE or
// Extended Prefix TLV with bad contents is still flooded, and the helpers
// report it.
type OpaqueLSA struct {
	OpaqueType uint8
	OpaqueID   uint32
	TLVs       []TLV
}

// OpaqueLSAID is the Link State ID of an opaque LSA.
func OpaqueLSAID(opaqueType uint8, opaqueID uint32) netip.Addr {
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], uint32(opaqueType)<<24|opaqueID&0xffffff)
	return netip.AddrFrom4(a)
}

func (o *OpaqueLSA) lsaID() netip.Addr { return OpaqueLSAID(o.OpaqueType, o.OpaqueID) }

func decodeOpaqueLSA(id netip.Addr, b []byte) (LSABody, *DecodeError) {
	a := id.As4()
	o := &OpaqueLSA{OpaqueType: a[0], OpaqueID: u24(a[1:])}
	tlvs, err := parseTLVs(b)
	if err != nil {
		if !knownOpaque(o.OpaqueType) {
			return nil, nil // not TLVs: keep it raw
		}
		return nil, err
	}
	o.TLVs = tlvs
	return o, nil
}

func (o OpaqueLSA) AppendBody(b []byte) []byte { return AppendTLVs(b, o.TLVs) }

// TLV is one TLV or sub-TLV of an opaque LSA: 16-bit type, 16-bit length
// (of Value, padding excluded), Value padded to a multiple of 4 bytes on
// the wire (RFC 3630 §2.3.2, RFC 7684 §2.1).
//
// Pad holds the padding bytes as received when they are not all zero
// (FRR 8.4.4 pads its SR-Algorithm TLV with 0xff), so that encoding a
// decoded body reproduces it; nil otherwise. AppendTo writes Pad when it
// has the right length for Value, zeros otherwise.
type TLV struct {
	Type  uint16
	Value []byte
	Pad   []byte
}

func pad4(n int) int { return (n + 3) &^ 3 }

// WireLen is the TLV's length on the wire, header and padding included.
func (t TLV) WireLen() int { return 4 + pad4(len(t.Value)) }

// AppendTo appends the TLV with its padding.
func (t TLV) AppendTo(b []byte) []byte {
	b = appendU16(b, t.Type)
	b = appendU16(b, uint16(len(t.Value)))
	b = append(b, t.Value...)
	n := pad4(len(t.Value)) - len(t.Value)
	if len(t.Pad) == n {
		return append(b, t.Pad...)
	}
	return append(b, make([]byte, n)...)
}

// AppendTLVs appends TLVs in order.
func AppendTLVs(b []byte, ts []TLV) []byte {
	for _, t := range ts {
		b = t.AppendTo(b)
	}
	return b
}

// TLVsLen is the wire length of ts.
func TLVsLen(ts []TLV) int {
	n := 0
	for _, t := range ts {
		n += t.WireLen()
	}
	return n
}

// ParseTLVs splits b, which must hold whole padded TLVs and nothing else,
// into TLVs whose values alias b. Errors are *DecodeError (KindBadTLV)
// with offsets from the start of b.
func ParseTLVs(b []byte) ([]TLV, error) {
	ts, err := parseTLVs(b)
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// parseTLVs: on error, TLV is the type of the TLV at fault.
func parseTLVs(b []byte) ([]TLV, *DecodeError) {
	n := 0
	for off := 0; off < len(b); n++ {
		if len(b)-off < 4 {
			return nil, errf(KindBadTLV, off, "%d bytes after the last TLV", len(b)-off)
		}
		l := int(binary.BigEndian.Uint16(b[off+2:]))
		if 4+pad4(l) > len(b)-off {
			e := errf(KindBadTLV, off, "TLV length %d (padded %d), %d bytes left", l, pad4(l), len(b)-off-4)
			e.TLV = binary.BigEndian.Uint16(b[off:])
			return nil, e
		}
		off += 4 + pad4(l)
	}
	if n == 0 {
		return nil, nil
	}
	ts := make([]TLV, n)
	off := 0
	for i := range ts {
		l := int(binary.BigEndian.Uint16(b[off+2:]))
		end := off + 4 + l
		ts[i] = TLV{Type: binary.BigEndian.Uint16(b[off:])}
		if l > 0 {
			ts[i].Value = b[off+4 : end : end]
		}
		off += 4 + pad4(l)
		for _, p := range b[end:off] {
			if p != 0 {
				ts[i].Pad = b[end:off:off]
				break
			}
		}
	}
	return ts, nil
}

// subTLVs parses the sub-TLVs of top-level TLV top at LSA offset off.
func subTLVs(b []byte, top uint16, off int) ([]TLV, *DecodeError) {
	ts, err := parseTLVs(b)
	if err != nil {
		err.SubTLV, err.TLV = err.TLV, top
		err.Offset += off
		return nil, err
	}
	return ts, nil
}

func tlvErr(off int, top, sub uint16, format string, args ...any) *DecodeError {
	e := errf(KindBadTLV, off, format, args...)
	e.TLV, e.SubTLV = top, sub
	return e
}

// FloatTLV is a TLV whose value is an IEEE float32 (bandwidths, bytes/s).
func FloatTLV(t uint16, v float32) TLV {
	return TLV{Type: t, Value: binary.BigEndian.AppendUint32(nil, math.Float32bits(v))}
}

// AddrTLV is a TLV whose value is IPv4 addresses.
func AddrTLV(t uint16, as ...netip.Addr) TLV {
	v := make([]byte, 0, 4*len(as))
	for _, a := range as {
		v = appendAddr(v, a)
	}
	return TLV{Type: t, Value: v}
}

func float(v []byte) float32 { return math.Float32frombits(binary.BigEndian.Uint32(v)) }

// TE LSA (opaque type 1, RFC 3630) TLVs and Link TLV sub-TLVs.
const (
	TETLVRouterAddr = 1
	TETLVLink       = 2

	TESubLinkType   = 1 // 1 byte: 1 point-to-point, 2 multi-access
	TESubLinkID     = 2
	TESubLocalAddr  = 3
	TESubRemoteAddr = 4
	TESubTEMetric   = 5
	TESubMaxBW      = 6 // float32, bytes/s
	TESubMaxRsvBW   = 7
	TESubUnrsvBW    = 8 // 8 float32
	TESubAdminGroup = 9
)

// TE link types (RFC 3630 §2.5.1).
const (
	TELinkP2P         = 1
	TELinkMultiAccess = 2
)

// teSubLen is the value length RFC 3630 gives a Link TLV sub-TLV; 0: a
// positive multiple of 4; -1: not checked.
func teSubLen(t uint16) int {
	switch t {
	case TESubLinkType:
		return 1
	case TESubLinkID, TESubTEMetric, TESubMaxBW, TESubMaxRsvBW, TESubAdminGroup:
		return 4
	case TESubLocalAddr, TESubRemoteAddr:
		return 0
	case TESubUnrsvBW:
		return 32
	}
	return -1
}

// TERouterAddress is the Router Address TLV of a TE LSA (the first one
// with a 4-byte value).
func TERouterAddress(o *OpaqueLSA) (netip.Addr, bool) {
	if o == nil || o.OpaqueType != OpaqueTE {
		return netip.Addr{}, false
	}
	for _, t := range o.TLVs {
		if t.Type == TETLVRouterAddr && len(t.Value) == 4 {
			return addr4(t.Value), true
		}
	}
	return netip.Addr{}, false
}

// TERouterTLV builds a Router Address TLV.
func TERouterTLV(a netip.Addr) TLV { return AddrTLV(TETLVRouterAddr, a) }

// TELink is a Link TLV of a TE LSA. The first Link Type, Link ID and
// Maximum Bandwidth sub-TLVs fill their fields, all Local and Remote
// Interface Address sub-TLVs fill Local and Remote; SubTLVs holds every
// other sub-TLV (repeats of the former included) in wire order.
type TELink struct {
	LinkType uint8
	LinkID   netip.Addr
	Local    []netip.Addr
	Remote   []netip.Addr
	MaxBW    float32 // bytes/s
	HasMaxBW bool
	SubTLVs  []TLV
}

// TELinks decodes the Link TLVs of a TE LSA (nil for another opaque type).
// Sub-TLVs RFC 3630 defines must have their length; anything else is a
// *DecodeError (KindBadTLV) with offsets from the start of the LSA.
func TELinks(o *OpaqueLSA) ([]TELink, error) {
	return decodeTopTLVs(o, OpaqueTE, TETLVLink, func(v []byte, off int) (TELink, *DecodeError) {
		return decodeTELink(v, off+4) // its offsets count from the TLV's value
	})
}

// decodeTopTLVs decodes with decode, in order, every top-level TLV of type
// tlvType in o if o is of opaqueType (nil otherwise); decode has the TLV's
// value and the offset of its header in the LSA.
func decodeTopTLVs[E any](o *OpaqueLSA, opaqueType uint8, tlvType uint16, decode func(v []byte, off int) (E, *DecodeError)) ([]E, error) {
	if o == nil || o.OpaqueType != opaqueType {
		return nil, nil
	}
	var out []E
	off := LSAHeaderLen
	for _, t := range o.TLVs {
		if t.Type == tlvType {
			e, err := decode(t.Value, off)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		off += t.WireLen()
	}
	return out, nil
}

func decodeTELink(v []byte, off int) (TELink, *DecodeError) {
	subs, err := subTLVs(v, TETLVLink, off)
	if err != nil {
		return TELink{}, err
	}
	var l TELink
	var haveType, haveID bool
	for _, s := range subs {
		want, n := teSubLen(s.Type), len(s.Value)
		if (want > 0 && n != want) || (want == 0 && (n == 0 || n%4 != 0)) {
			exp := "a multiple of 4"
			if want > 0 {
				exp = strconv.Itoa(want)
			}
			return TELink{}, tlvErr(off, TETLVLink, s.Type, "sub-TLV length %d, want %s", n, exp)
		}
		switch {
		case s.Type == TESubLinkType && !haveType:
			l.LinkType, haveType = s.Value[0], true
		case s.Type == TESubLinkID && !haveID:
			l.LinkID, haveID = addr4(s.Value), true
		case s.Type == TESubLocalAddr:
			l.Local = appendAddrs(l.Local, s.Value)
		case s.Type == TESubRemoteAddr:
			l.Remote = appendAddrs(l.Remote, s.Value)
		case s.Type == TESubMaxBW && !l.HasMaxBW:
			l.MaxBW, l.HasMaxBW = float(s.Value), true
		default:
			l.SubTLVs = append(l.SubTLVs, s)
		}
		off += s.WireLen()
	}
	return l, nil
}

func appendAddrs(as []netip.Addr, v []byte) []netip.Addr {
	for i := 0; i+4 <= len(v); i += 4 {
		as = append(as, addr4(v[i:]))
	}
	return as
}

// TELinkTLV builds a Link TLV: sub-TLVs Link Type, Link ID, Local and
// Remote Interface Addresses (when there are any), Maximum Bandwidth (when
// HasMaxBW), then l.SubTLVs.
func TELinkTLV(l TELink) TLV {
	subs := make([]TLV, 0, 5+len(l.SubTLVs))
	subs = append(subs, TLV{Type: TESubLinkType, Value: []byte{l.LinkType}}, AddrTLV(TESubLinkID, l.LinkID))
	if len(l.Local) > 0 {
		subs = append(subs, AddrTLV(TESubLocalAddr, l.Local...))
	}
	if len(l.Remote) > 0 {
		subs = append(subs, AddrTLV(TESubRemoteAddr, l.Remote...))
	}
	if l.HasMaxBW {
		subs = append(subs, FloatTLV(TESubMaxBW, l.MaxBW))
	}
	subs = append(subs, l.SubTLVs...)
	return TLV{Type: TETLVLink, Value: AppendTLVs(make([]byte, 0, TLVsLen(subs)), subs)}
}

// Extended Prefix Opaque LSA (opaque type 7, RFC 7684).
const (
	ExtPrefixTLVType = 1

	ExtPrefixRouteIntra    = 1
	ExtPrefixRouteInter    = 3
	ExtPrefixRouteExternal = 5
	ExtPrefixRouteNSSA     = 7

	ExtPrefixFlagA = 0x80 // attach
	ExtPrefixFlagN = 0x40 // node

	// Extended Prefix TLV sub-TLVs.
	ExtPrefixSubPrefixSID = 2 // RFC 8665

	// DefaultPathBandwidthSubTLV is the codepoint fared uses for the FARE
	// Path Bandwidth sub-TLV of the Extended Prefix TLV until IANA assigns
	// one (draft-xu-lsr-fare §3 says TBD). It lies in the Experimental Use
	// range 32768–33023 of the "OSPFv2 Extended Prefix TLV Sub-TLVs"
	// registry; see doc.go.
	DefaultPathBandwidthSubTLV = 32770
)

// ExtPrefix is an Extended Prefix TLV. Prefix keeps the address bytes as
// sent (host bits included) so that ExtPrefixTLV reproduces them; the
// address family is IPv4 unicast (0), the only one RFC 7684 defines.
type ExtPrefix struct {
	RouteType uint8
	Flags     uint8
	Prefix    netip.Prefix
	SubTLVs   []TLV
}

// ExtPrefixes decodes the Extended Prefix TLVs of an Extended Prefix LSA
// (nil for another opaque type). Errors are *DecodeError (KindBadTLV) with
// offsets from the start of the LSA.
func ExtPrefixes(o *OpaqueLSA) ([]ExtPrefix, error) {
	return decodeTopTLVs(o, OpaqueExtPrefix, ExtPrefixTLVType, decodeExtPrefix)
}

// decodeExtPrefix decodes the value of the TLV whose header is at off.
func decodeExtPrefix(v []byte, off int) (ExtPrefix, *DecodeError) {
	if len(v) < 4 {
		return ExtPrefix{}, tlvErr(off, ExtPrefixTLVType, 0, "length %d, shorter than 4", len(v))
	}
	bits, af := int(v[1]), v[2]
	if af != 0 {
		return ExtPrefix{}, tlvErr(off+6, ExtPrefixTLVType, 0, "address family %d, want 0 (IPv4 unicast)", af)
	}
	if bits > 32 {
		return ExtPrefix{}, tlvErr(off+5, ExtPrefixTLVType, 0, "prefix length %d", bits)
	}
	n := (bits + 31) / 32 * 4
	if len(v) < 4+n {
		return ExtPrefix{}, tlvErr(off, ExtPrefixTLVType, 0, "length %d, no room for a /%d prefix", len(v), bits)
	}
	var a [4]byte
	copy(a[:], v[4:4+n])
	p := ExtPrefix{RouteType: v[0], Flags: v[3], Prefix: netip.PrefixFrom(netip.AddrFrom4(a), bits)}
	subs, err := subTLVs(v[4+n:], ExtPrefixTLVType, off+8+n)
	if err != nil {
		return ExtPrefix{}, err
	}
	p.SubTLVs = subs
	return p, nil
}

// ExtPrefixTLV builds an Extended Prefix TLV. An invalid Prefix is written
// as 0.0.0.0/0.
func ExtPrefixTLV(p ExtPrefix) TLV {
	bits := max(0, p.Prefix.Bits())
	n := (bits + 31) / 32 * 4
	v := make([]byte, 0, 4+n+TLVsLen(p.SubTLVs))
	v = append(v, p.RouteType, uint8(bits), 0, p.Flags)
	if n > 0 {
		v = appendAddr(v, p.Prefix.Addr())
	}
	v = AppendTLVs(v, p.SubTLVs)
	return TLV{Type: ExtPrefixTLVType, Value: v}
}

// PathBandwidth is the value of the first Path Bandwidth sub-TLV (type
// code, 4-byte IEEE float, bytes/s) among subs.
func PathBandwidth(subs []TLV, code uint16) (float32, bool) {
	for _, s := range subs {
		if s.Type == code && len(s.Value) == 4 {
			return float(s.Value), true
		}
	}
	return 0, false
}

// PathBandwidthTLV builds a Path Bandwidth sub-TLV.
func PathBandwidthTLV(code uint16, v float32) TLV { return FloatTLV(code, v) }
