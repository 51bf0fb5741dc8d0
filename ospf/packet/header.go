package packet

import (
	"encoding/binary"
	"net/netip"
)

// Packet types (RFC 2328 A.3.1).
const (
	TypeHello = 1
	TypeDBD   = 2
	TypeLSR   = 3
	TypeLSU   = 4
	TypeLSAck = 5
)

// Version is the OSPF version this package speaks.
const Version = 2

// Authentication types (RFC 2328 D). Decode parses all three; Verify
// (auth.go) authenticates.
const (
	AuNull   = 0
	AuSimple = 1
	AuCrypto = 2
)

// HeaderLen is the length of the common packet header.
const HeaderLen = 24

// Header is the common OSPF packet header (RFC 2328 A.3.1).
//
// Decode fills every field as received. The encoders (AppendTo) ignore
// Length and Checksum and write the computed values: the length of the
// encoded packet, and the checksum over the packet without the Auth field
// for AuType 0 and 1 (0 for AuType 2, whose digest follows the packet).
// Version 0 is written as 2.
type Header struct {
	Version  uint8 // 2
	Type     uint8
	Length   uint16
	RouterID netip.Addr // IPv4
	AreaID   netip.Addr // IPv4
	Checksum uint16
	AuType   uint16
	Auth     [8]byte
}

// Packet is one OSPF packet: *Hello, *DBD, *LSR, *LSU or *LSAck.
type Packet interface {
	// PacketHeader returns the packet's own header, which callers may
	// modify before encoding.
	PacketHeader() *Header
	// AppendTo appends the encoded packet to b, with Length and Checksum
	// computed (the header's own values are ignored).
	AppendTo(b []byte) []byte
}

// addr4 reads an IPv4 address; b must have 4 bytes.
func addr4(b []byte) netip.Addr { return netip.AddrFrom4([4]byte(b[:4])) }

// appendAddr appends a as 4 bytes. The zero Addr (and anything that is not
// IPv4 or IPv4-mapped IPv6) is written as 0.0.0.0.
func appendAddr(b []byte, a netip.Addr) []byte {
	if a.Is4() || a.Is4In6() {
		v := a.Unmap().As4()
		return append(b, v[:]...)
	}
	return append(b, 0, 0, 0, 0)
}

func appendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendU24(b []byte, v uint32) []byte { return append(b, byte(v>>16), byte(v>>8), byte(v)) }
func u24(b []byte) uint32                 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func (h *Header) decode(b []byte) {
	h.Version = b[0]
	h.Type = b[1]
	h.Length = binary.BigEndian.Uint16(b[2:])
	h.RouterID = addr4(b[4:])
	h.AreaID = addr4(b[8:])
	h.Checksum = binary.BigEndian.Uint16(b[12:])
	h.AuType = binary.BigEndian.Uint16(b[14:])
	copy(h.Auth[:], b[16:24])
}

// appendHeader starts a packet of type t; finish fills in length and
// checksum once the body is there.
func (h *Header) appendHeader(b []byte, t uint8) []byte {
	v := h.Version
	if v == 0 {
		v = Version
	}
	b = append(b, v, t, 0, 0)
	b = appendAddr(b, h.RouterID)
	b = appendAddr(b, h.AreaID)
	b = append(b, 0, 0)
	b = appendU16(b, h.AuType)
	return append(b, h.Auth[:]...)
}

func (h *Header) finish(b []byte, start int) []byte {
	p := b[start:]
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	if h.AuType != AuCrypto {
		binary.BigEndian.PutUint16(p[pktChecksumOff:], PacketChecksum(p))
	}
	return b
}

// Decode decodes one OSPF packet: b is the IP payload, and bytes past the
// packet length (a cryptographic digest, an LLS block, link-layer padding)
// are ignored. It verifies the version, the type, the length, the
// authentication type (0, 1 or 2; anything else is KindAuth) and the
// checksum (not for AuType 2, which has none: Verify checks its digest),
// and returns a *Hello, *DBD, *LSR, *LSU or *LSAck.
//
// Decode never retains b: it copies the packet once, and every byte slice
// in the result (LSA.Raw, TLV values, raw TOS data) points into that copy,
// capacity-limited so that appending to one never overwrites its
// neighbour.
//
// An LSU decodes as long as every LSA in it is framed correctly and every
// LSA of a known type has a well-formed body; LSAs of unknown types (and
// opaque LSAs of unknown opaque types whose body is not a TLV list) are
// kept as LSA{Raw, Body: nil}. LSA checksums are not verified here: RFC
// 2328 §13 (1) discards just that LSA, see LSAChecksumOK.
//
// Every rejection is a *DecodeError.
func Decode(b []byte) (Packet, error) {
	if len(b) < HeaderLen {
		return nil, errf(KindTruncated, len(b), "%d bytes, shorter than the %d-byte packet header", len(b), HeaderLen)
	}
	t := b[1]
	fail := func(err *DecodeError) (Packet, error) {
		if err.PacketType == 0 && t >= TypeHello && t <= TypeLSAck {
			err.PacketType = t
		}
		return nil, err
	}
	if b[0] != Version {
		return fail(errf(KindBadVersion, 0, "version %d, want 2", b[0]))
	}
	if t < TypeHello || t > TypeLSAck {
		return fail(errf(KindBadType, 1, "packet type %d", t))
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n < HeaderLen {
		return fail(errf(KindBadLength, 2, "packet length %d, shorter than the header", n))
	}
	if n > len(b) {
		return fail(errf(KindBadLength, 2, "packet length %d, longer than the %d bytes received", n, len(b)))
	}
	at := binary.BigEndian.Uint16(b[14:])
	if at > AuCrypto {
		return fail(errf(KindAuth, 14, "authentication type %d not supported", at))
	}
	// AuType 2 has no checksum: the digest after the packet covers it
	// (Verify checks that; Decode only parses).
	if s := packetSum(b[:n]); at != AuCrypto && s != 0xffff {
		return fail(errf(KindBadChecksum, pktChecksumOff, "checksum %#04x, want %#04x",
			binary.BigEndian.Uint16(b[pktChecksumOff:]), PacketChecksum(b[:n])))
	}
	buf := make([]byte, n)
	copy(buf, b)
	var h Header
	h.decode(buf)
	body := buf[HeaderLen:]
	var (
		p   Packet
		err *DecodeError
	)
	switch t {
	case TypeHello:
		p, err = decodeHello(h, body)
	case TypeDBD:
		p, err = decodeDBD(h, body)
	case TypeLSR:
		p, err = decodeLSR(h, body)
	case TypeLSU:
		p, err = decodeLSU(h, body)
	case TypeLSAck:
		p, err = decodeLSAck(h, body)
	}
	if err != nil {
		return fail(err)
	}
	return p, nil
}
