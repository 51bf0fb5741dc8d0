package packet

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// Router LSA flags (RFC 2328 A.4.2; Nt from RFC 3101).
const (
	RouterFlagB  = 0x01 // area border router
	RouterFlagE  = 0x02 // AS boundary router
	RouterFlagV  = 0x04 // virtual link endpoint
	RouterFlagNt = 0x10 // NSSA translator
)

// Router link types (RFC 2328 A.4.2).
const (
	LinkP2P     = 1
	LinkTransit = 2
	LinkStub    = 3
	LinkVirtual = 4
)

// RouterLSA is the body of a Router LSA (type 1). Flags is the whole flags
// byte; the reserved byte after it is written as 0.
type RouterLSA struct {
	Flags uint8
	Links []RouterLink
}

// RouterLink is one link of a Router LSA. TOS holds the additional TOS
// metrics (RFC 2328 keeps them for compatibility; nobody sends them).
type RouterLink struct {
	ID     netip.Addr
	Data   netip.Addr
	Type   uint8
	Metric uint16
	TOS    []TOSMetric
}

// TOSMetric is one TOS entry of a router link; the reserved byte between
// TOS and metric is written as 0.
type TOSMetric struct {
	TOS    uint8
	Metric uint16
}

func decodeRouterLSA(b []byte) (*RouterLSA, *DecodeError) {
	if len(b) < 4 {
		return nil, errf(KindBadLSA, len(b), "router LSA body of %d bytes, shorter than 4", len(b))
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	r := &RouterLSA{Flags: b[0]}
	if n > 0 {
		r.Links = make([]RouterLink, 0, min(n, (len(b)-4)/12))
	}
	off := 4
	for i := range n {
		if len(b)-off < 12 {
			return nil, errf(KindBadLSA, off, "router link %d of %d: %d bytes left, want 12", i+1, n, len(b)-off)
		}
		e := b[off:]
		l := RouterLink{ID: addr4(e), Data: addr4(e[4:]), Type: e[8], Metric: binary.BigEndian.Uint16(e[10:])}
		ntos := int(e[9])
		if len(b)-off-12 < 4*ntos {
			return nil, errf(KindBadLSA, off+9, "router link %d of %d: %d TOS metrics, %d bytes left", i+1, n, ntos, len(b)-off-12)
		}
		if ntos > 0 {
			l.TOS = make([]TOSMetric, ntos)
			for j := range l.TOS {
				t := e[12+4*j:]
				l.TOS[j] = TOSMetric{TOS: t[0], Metric: binary.BigEndian.Uint16(t[2:])}
			}
		}
		r.Links = append(r.Links, l)
		off += 12 + 4*ntos
	}
	if off != len(b) {
		return nil, errf(KindBadLSA, off, "%d bytes after the last of %d router links", len(b)-off, n)
	}
	return r, nil
}

func (r RouterLSA) AppendBody(b []byte) []byte {
	b = append(b, r.Flags, 0)
	b = appendU16(b, uint16(len(r.Links)))
	for _, l := range r.Links {
		b = appendAddr(b, l.ID)
		b = appendAddr(b, l.Data)
		b = append(b, l.Type, uint8(len(l.TOS)))
		b = appendU16(b, l.Metric)
		for _, t := range l.TOS {
			b = append(b, t.TOS, 0)
			b = appendU16(b, t.Metric)
		}
	}
	return b
}

// NetworkLSA is the body of a Network LSA (type 2).
type NetworkLSA struct {
	Mask    netip.Addr
	Routers []netip.Addr
}

func decodeNetworkLSA(b []byte) (*NetworkLSA, *DecodeError) {
	if len(b) < 4 || len(b)%4 != 0 {
		return nil, errf(KindBadLSA, 0, "network LSA body of %d bytes, not 4 + 4n", len(b))
	}
	n := &NetworkLSA{Mask: addr4(b)}
	if len(b) > 4 {
		n.Routers = make([]netip.Addr, (len(b)-4)/4)
		for i := range n.Routers {
			n.Routers[i] = addr4(b[4+4*i:])
		}
	}
	return n, nil
}

func (n NetworkLSA) AppendBody(b []byte) []byte {
	b = appendAddr(b, n.Mask)
	for _, r := range n.Routers {
		b = appendAddr(b, r)
	}
	return b
}

// SummaryLSA is the body of a Summary LSA (type 3, network; type 4, ASBR).
// Metric is 24 bits (the byte before it is written as 0); TOS holds the
// rest of the body, TOS entries RFC 2328 keeps for compatibility, raw.
type SummaryLSA struct {
	Mask   netip.Addr
	Metric uint32
	TOS    []byte
}

// LSInfinity is the 24-bit metric meaning unreachable.
const LSInfinity = 0xffffff

func decodeSummaryLSA(b []byte) (*SummaryLSA, *DecodeError) {
	if len(b) < 8 || len(b)%4 != 0 {
		return nil, errf(KindBadLSA, 0, "summary LSA body of %d bytes, not 8 + 4n", len(b))
	}
	s := &SummaryLSA{Mask: addr4(b), Metric: u24(b[5:])}
	if len(b) > 8 {
		s.TOS = b[8:len(b):len(b)]
	}
	return s, nil
}

func (s SummaryLSA) AppendBody(b []byte) []byte {
	b = appendAddr(b, s.Mask)
	b = append(b, 0)
	b = appendU24(b, s.Metric)
	return append(b, s.TOS...)
}

// ExternalLSA is the body of an AS-external LSA (type 5) and of an NSSA LSA
// (type 7, same layout). EBit set means a type 2 external metric. Metric is
// 24 bits; TOS holds the rest of the body (12-byte TOS entries), raw.
type ExternalLSA struct {
	Mask    netip.Addr
	EBit    bool
	Metric  uint32
	Forward netip.Addr
	Tag     uint32
	TOS     []byte
}

func decodeExternalLSA(b []byte) (*ExternalLSA, *DecodeError) {
	if len(b) < 16 || len(b)%4 != 0 {
		return nil, errf(KindBadLSA, 0, "external LSA body of %d bytes, not 16 + 4n", len(b))
	}
	e := &ExternalLSA{
		Mask:    addr4(b),
		EBit:    b[4]&0x80 != 0,
		Metric:  u24(b[5:]),
		Forward: addr4(b[8:]),
		Tag:     binary.BigEndian.Uint32(b[12:]),
	}
	if len(b) > 16 {
		e.TOS = b[16:len(b):len(b)]
	}
	return e, nil
}

func (e ExternalLSA) AppendBody(b []byte) []byte {
	b = appendAddr(b, e.Mask)
	var eb byte
	if e.EBit {
		eb = 0x80
	}
	b = append(b, eb)
	b = appendU24(b, e.Metric)
	b = appendAddr(b, e.Forward)
	b = appendU32(b, e.Tag)
	return append(b, e.TOS...)
}

// MaskLen is the prefix length of a contiguous IPv4 netmask, or -1 if m is
// not one.
func MaskLen(m netip.Addr) int {
	if !m.Is4() {
		return -1
	}
	a := m.As4()
	v := binary.BigEndian.Uint32(a[:])
	n := bits.LeadingZeros32(^v)
	if v<<n != 0 {
		return -1
	}
	return n
}

// MaskFromLen is the IPv4 netmask of a prefix length (clamped to 0..32).
func MaskFromLen(n int) netip.Addr {
	n = max(0, min(32, n))
	var v uint32
	if n > 0 {
		v = ^uint32(0) << (32 - n)
	}
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], v)
	return netip.AddrFrom4(a)
}

// LSAPrefix is the prefix a Summary (type 3), External or NSSA LSA
// advertises: Link State ID masked by the body's netmask. ok is false for
// a non-contiguous mask.
func LSAPrefix(id, mask netip.Addr) (netip.Prefix, bool) {
	n := MaskLen(mask)
	if n < 0 || !id.Is4() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(id, n).Masked(), true
}
