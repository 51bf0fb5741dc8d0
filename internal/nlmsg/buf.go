// Package nlmsg encodes the rtnetlink requests fared writes the kernel's
// forwarding table with: nexthop objects, nexthop groups, routes by
// nexthop id, their deletion and the dump requests that read them back.
//
// It has two users, and that is why it is a package: fib (the daemon's
// kernel writer) and bench/ceiling (the bare netlink loop fib's rate is
// measured against). Both encode with these functions and chunk with
// Batch, so the ceiling sends the very bytes, in the very chunks, that
// fib sends: the ratio of the two rates is what fib adds, not a
// difference of encodings. The kernel's constants that x/sys/unix does
// not export are defined here once.
//
// The encoder appends whole messages to one buffer, so a batch of
// thousands of requests costs one allocation and one sendmsg per chunk
// instead of a []byte per attribute (as vishvananda/netlink's nl.RtAttr
// would). Decoding the kernel's answers stays with fib, but for the two
// layouts both directions share (GroupEntry, ClockDuration).
package nlmsg

import (
	"encoding/binary"
	"net/netip"
	"slices"

	"golang.org/x/sys/unix"
)

// ne is the host byte order netlink uses for every integer that is not
// explicitly big-endian (addresses are byte strings, ports big-endian).
var ne = binary.NativeEndian

// Buf is a growing buffer of complete netlink messages.
type Buf struct {
	b     []byte
	start int // offset of the message being built
	group int // offset of the open NHA_GROUP attribute (BeginGroup)
}

// Bytes are the messages encoded so far.
func (m *Buf) Bytes() []byte { return m.b }

// Grow makes room for n more bytes (a batch whose size is known).
func (m *Buf) Grow(n int) { m.b = slices.Grow(m.b, n) }

// Align4 rounds a netlink length up to the 4-byte alignment of
// messages and attributes.
func Align4(n int) int { return (n + 3) &^ 3 }

// Begin starts a message; End patches its length.
func (m *Buf) Begin(typ, flags uint16, seq uint32) {
	m.start = len(m.b)
	var h [unix.SizeofNlMsghdr]byte
	ne.PutUint16(h[4:], typ)
	ne.PutUint16(h[6:], flags)
	ne.PutUint32(h[8:], seq)
	m.b = append(m.b, h[:]...)
}

// End completes the message Begin started.
func (m *Buf) End() {
	ne.PutUint32(m.b[m.start:], uint32(len(m.b)-m.start))
}

// Abort forgets the message being built.
func (m *Buf) Abort() { m.b = m.b[:m.start] }

// Raw appends a fixed header (rtmsg, nhmsg) or any aligned bytes.
func (m *Buf) Raw(p []byte) { m.b = append(m.b, p...) }

// Attr appends one attribute, padded to 4 bytes.
func (m *Buf) Attr(typ uint16, payload []byte) {
	var h [4]byte
	ne.PutUint16(h[0:], uint16(4+len(payload)))
	ne.PutUint16(h[2:], typ)
	m.b = append(m.b, h[:]...)
	m.b = append(m.b, payload...)
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

// U32 appends a u32 attribute.
func (m *Buf) U32(typ uint16, v uint32) {
	var p [4]byte
	ne.PutUint32(p[:], v)
	m.Attr(typ, p[:])
}

// U16 appends a u16 attribute (padded).
func (m *Buf) U16(typ uint16, v uint16) {
	var p [2]byte
	ne.PutUint16(p[:], v)
	m.Attr(typ, p[:])
}

// Flag appends an attribute without payload.
func (m *Buf) Flag(typ uint16) { m.Attr(typ, nil) }

// Nest opens a nested attribute and returns its offset for NestEnd.
func (m *Buf) Nest(typ uint16) int {
	off := len(m.b)
	m.Attr(typ|unix.NLA_F_NESTED, nil)
	return off
}

// NestEnd closes the nested attribute Nest opened at off.
func (m *Buf) NestEnd(off int) { ne.PutUint16(m.b[off:], uint16(len(m.b)-off)) }

// AddrBytes is an address as netlink carries it: 4 bytes for IPv4, 16
// for IPv6.
func AddrBytes(a netip.Addr) []byte {
	if a.Is4() {
		v := a.As4()
		return v[:]
	}
	v := a.As16()
	return v[:]
}

// Family is the address family of a.
func Family(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}
