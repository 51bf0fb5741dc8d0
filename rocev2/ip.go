package rocev2

import (
	"encoding/binary"
	"net/netip"
)

// Frame is the IP and UDP framing of a RoCEv2 packet, as a raw-socket
// sender writes it and a raw-socket receiver reads it.
type Frame struct {
	Src, Dst netip.Addr // both IPv4 or both IPv6
	TOS      uint8      // IPv4 TOS or IPv6 traffic class (DSCP<<2 | ECN)
	TTL      uint8      // hop limit for IPv6; 0 means 64
	ID       uint16     // IPv4 identification: the sender picks it (it is under the ICRC)
	DF       bool       // IPv4 don't fragment
	Flow     uint32     // IPv6 flow label (20 bits)
	SrcPort  uint16     // UDP source port (entropy for ECMP)
	DstPort  uint16     // UDP destination port; 0 means 4791
}

// HeaderLen is the length of the IP and UDP headers of f.
func (f *Frame) HeaderLen() int {
	if f.Src.Is4() {
		return IPv4HeaderLen + UDPHeaderLen
	}
	return IPv6HeaderLen + UDPHeaderLen
}

// Append appends the whole IP packet: IP and UDP headers, p (AppendTo) and
// its ICRC. The IPv4 header checksum is filled; the UDP checksum is 0 for
// IPv4 (allowed, and what RoCE NICs send) and computed for IPv6 (required).
func (f *Frame) Append(b []byte, p *Packet) []byte {
	start := len(b)
	b = f.appendHeaders(b)
	b = p.AppendTo(b)
	f.finish(b[start:])
	return b
}

// AppendHeaders appends the IP and UDP headers with zero lengths and
// checksums. A hot path then appends the UDP payload itself (ending with
// four ICRC bytes) and calls Finish on the whole IP packet.
func (f *Frame) AppendHeaders(b []byte) []byte { return f.appendHeaders(b) }

// Finish fills the lengths, the checksums and the ICRC of ip, an IP packet
// started with AppendHeaders.
func (f *Frame) Finish(ip []byte) { f.finish(ip) }

func (f *Frame) appendHeaders(b []byte) []byte {
	ttl := f.TTL
	if ttl == 0 {
		ttl = 64
	}
	if f.Src.Is4() {
		var frag uint16
		if f.DF {
			frag = 0x4000
		}
		s, d := f.Src.As4(), f.Dst.As4()
		b = append(b, 0x45, f.TOS, 0, 0, byte(f.ID>>8), byte(f.ID), byte(frag>>8), byte(frag), ttl, 17, 0, 0)
		b = append(b, s[:]...)
		b = append(b, d[:]...)
	} else {
		s, d := f.Src.As16(), f.Dst.As16()
		v := 6<<28 | uint32(f.TOS)<<20 | f.Flow&0xFFFFF
		b = binary.BigEndian.AppendUint32(b, v)
		b = append(b, 0, 0, 17, ttl)
		b = append(b, s[:]...)
		b = append(b, d[:]...)
	}
	dport := f.DstPort
	if dport == 0 {
		dport = UDPPort
	}
	return append(b, byte(f.SrcPort>>8), byte(f.SrcPort), byte(dport>>8), byte(dport), 0, 0, 0, 0)
}

// finish fills lengths, checksums and the ICRC of the IP packet ip.
func (f *Frame) finish(ip []byte) {
	if f.Src.Is4() {
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
		binary.BigEndian.PutUint16(ip[IPv4HeaderLen+4:], uint16(len(ip)-IPv4HeaderLen))
		binary.BigEndian.PutUint16(ip[10:], ^onesSum(0, ip[:IPv4HeaderLen]))
	} else {
		udpLen := len(ip) - IPv6HeaderLen
		binary.BigEndian.PutUint16(ip[4:], uint16(udpLen))
		binary.BigEndian.PutUint16(ip[IPv6HeaderLen+4:], uint16(udpLen))
	}
	_ = PutICRC(ip) // the UDP checksum is masked in the ICRC: order does not matter
	if !f.Src.Is4() {
		binary.BigEndian.PutUint16(ip[IPv6HeaderLen+6:], udp6Checksum(ip))
	}
}

// onesSum adds b as big-endian 16-bit words to s (RFC 1071), folded.
func onesSum(s uint32, b []byte) uint16 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	return uint16(s)
}

func udp6Checksum(ip []byte) uint16 {
	udp := ip[IPv6HeaderLen:]
	var s uint32
	for i := 8; i < 40; i += 2 {
		s += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	s += uint32(len(udp)) + 17
	// The checksum field itself (udp[6:8]) counts as zero.
	c := ^onesSum(uint32(onesSum(s, udp[:6])), udp[8:])
	if c == 0 {
		c = 0xFFFF
	}
	return c
}

// DecodeIP parses a RoCEv2 IP packet as a raw socket returns it: the IPv4
// (no options) or IPv6 header, UDP to port 4791, the RoCEv2 packet, and
// verifies its ICRC. IPv4 packets are trimmed to their total length.
// Offsets in errors count from the IP header.
func DecodeIP(ip []byte) (Frame, Packet, error) {
	var f Frame
	var p Packet
	err := DecodeIPInto(ip, &f, &p)
	return f, p, err
}

// DecodeIPInto is DecodeIP into existing values (no allocation).
func DecodeIPInto(ip []byte, f *Frame, p *Packet) error {
	hl, err := ipUDPLen(ip)
	if err != nil {
		return err
	}
	if ip[0]>>4 == 4 {
		tl := int(binary.BigEndian.Uint16(ip[2:]))
		if tl < hl || tl > len(ip) {
			return errf(KindBadIP, "IPv4", 2, "total length %d, packet has %d bytes", tl, len(ip))
		}
		if fo := binary.BigEndian.Uint16(ip[6:]); fo&0x3FFF != 0 {
			return errf(KindBadIP, "IPv4", 6, "a fragment (flags/offset 0x%04x)", fo)
		}
		ip = ip[:tl]
		*f = Frame{Src: netip.AddrFrom4([4]byte(ip[12:16])), Dst: netip.AddrFrom4([4]byte(ip[16:20])),
			TOS: ip[1], TTL: ip[8], ID: binary.BigEndian.Uint16(ip[4:]), DF: ip[6]&0x40 != 0}
	} else {
		pl := int(binary.BigEndian.Uint16(ip[4:]))
		if IPv6HeaderLen+pl > len(ip) || pl < UDPHeaderLen {
			return errf(KindBadIP, "IPv6", 4, "payload length %d, packet has %d bytes", pl, len(ip))
		}
		ip = ip[:IPv6HeaderLen+pl]
		v := binary.BigEndian.Uint32(ip)
		*f = Frame{Src: netip.AddrFrom16([16]byte(ip[8:24])), Dst: netip.AddrFrom16([16]byte(ip[24:40])),
			TOS: uint8(v >> 20), Flow: v & 0xFFFFF, TTL: ip[7]}
	}
	u := ip[hl-UDPHeaderLen:]
	f.SrcPort = binary.BigEndian.Uint16(u)
	f.DstPort = binary.BigEndian.Uint16(u[2:])
	if f.DstPort != UDPPort {
		return errf(KindBadIP, "UDP", hl-6, "destination port %d, not RoCEv2", f.DstPort)
	}
	if ul := int(binary.BigEndian.Uint16(u[4:])); ul != len(ip)-hl+UDPHeaderLen {
		return errf(KindBadIP, "UDP", hl-4, "length %d, IP says %d", ul, len(ip)-hl+UDPHeaderLen)
	}
	if err := p.DecodeFrom(ip[hl:]); err != nil {
		if de, ok := err.(*DecodeError); ok {
			de.Offset += hl
		}
		return err
	}
	return VerifyICRC(ip)
}
