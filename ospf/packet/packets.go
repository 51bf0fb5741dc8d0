package packet

import (
	"encoding/binary"
	"net/netip"
)

// Fixed part lengths after the common header.
const (
	helloFixed = 20
	dbdFixed   = 8
	lsuFixed   = 4
	lsrEntry   = 12
)

// DBD flags (RFC 2328 A.3.3).
const (
	DBDFlagMS = 0x01 // master
	DBDFlagM  = 0x02 // more
	DBDFlagI  = 0x04 // init
)

// Options bits (RFC 2328 A.2, RFC 5250 for O, RFC 5613 for L).
const (
	OptMT = 0x01 // multi-topology (was the TOS bit)
	OptE  = 0x02 // external routing capability
	OptMC = 0x04
	OptNP = 0x08 // NSSA
	OptL  = 0x10 // LLS data block present
	OptDC = 0x20 // demand circuits
	OptO  = 0x40 // opaque LSAs
	OptDN = 0x80
)

// Hello is a Hello packet (RFC 2328 A.3.2).
type Hello struct {
	Header
	Mask          netip.Addr
	HelloInterval uint16
	Options       uint8
	Priority      uint8
	DeadInterval  uint32
	// DR and BDR are the interface addresses as on the wire: "none" is
	// 0.0.0.0, which Decode returns as a valid Addr (test with
	// IsUnspecified, not IsValid); AppendTo writes the zero Addr as
	// 0.0.0.0.
	DR, BDR   netip.Addr
	Neighbors []netip.Addr
}

// DBD is a Database Description packet (RFC 2328 A.3.3). Flags is the
// whole flags byte (DBDFlagI, DBDFlagM, DBDFlagMS and reserved bits).
type DBD struct {
	Header
	MTU     uint16
	Options uint8
	Flags   uint8
	Seq     uint32
	LSAs    []LSAHeader
}

// LSRequest is one entry of a Link State Request packet.
type LSRequest struct {
	Type      uint32 // LS type, a 32-bit field on this packet only
	ID        netip.Addr
	AdvRouter netip.Addr
}

// Key is the LSA the request names (its type truncated to 8 bits).
func (r LSRequest) Key() LSAKey { return LSAKey{Type: uint8(r.Type), ID: r.ID, AdvRouter: r.AdvRouter} }

// LSR is a Link State Request packet (RFC 2328 A.3.4).
type LSR struct {
	Header
	Requests []LSRequest
}

// LSU is a Link State Update packet (RFC 2328 A.3.5).
type LSU struct {
	Header
	LSAs []LSA
}

// LSAck is a Link State Acknowledgment packet (RFC 2328 A.3.6).
type LSAck struct {
	Header
	LSAs []LSAHeader
}

func (p *Hello) PacketHeader() *Header { return &p.Header }
func (p *DBD) PacketHeader() *Header   { return &p.Header }
func (p *LSR) PacketHeader() *Header   { return &p.Header }
func (p *LSU) PacketHeader() *Header   { return &p.Header }
func (p *LSAck) PacketHeader() *Header { return &p.Header }

func badLen(what string, n, fixed, unit int) *DecodeError {
	if n < fixed {
		return errf(KindBadLength, 2, "packet length %d, shorter than a %s (%d)", HeaderLen+n, what, HeaderLen+fixed)
	}
	return errf(KindBadLength, 2, "packet length %d: %d bytes after the fixed part, not a multiple of %d", HeaderLen+n, n-fixed, unit)
}

func decodeHello(h Header, b []byte) (*Hello, *DecodeError) {
	if len(b) < helloFixed || (len(b)-helloFixed)%4 != 0 {
		return nil, badLen("Hello", len(b), helloFixed, 4)
	}
	p := &Hello{
		Header:        h,
		Mask:          addr4(b),
		HelloInterval: binary.BigEndian.Uint16(b[4:]),
		Options:       b[6],
		Priority:      b[7],
		DeadInterval:  binary.BigEndian.Uint32(b[8:]),
		DR:            addr4(b[12:]),
		BDR:           addr4(b[16:]),
	}
	if n := (len(b) - helloFixed) / 4; n > 0 {
		p.Neighbors = make([]netip.Addr, n)
		for i := range p.Neighbors {
			p.Neighbors[i] = addr4(b[helloFixed+4*i:])
		}
	}
	return p, nil
}

func (p *Hello) AppendTo(b []byte) []byte {
	start := len(b)
	b = p.Header.appendHeader(b, TypeHello)
	b = appendAddr(b, p.Mask)
	b = appendU16(b, p.HelloInterval)
	b = append(b, p.Options, p.Priority)
	b = appendU32(b, p.DeadInterval)
	b = appendAddr(b, p.DR)
	b = appendAddr(b, p.BDR)
	for _, n := range p.Neighbors {
		b = appendAddr(b, n)
	}
	return p.Header.finish(b, start)
}

// decodeHeaders reads a list of LSA headers filling all of b.
func decodeHeaders(b []byte) []LSAHeader {
	if len(b) == 0 {
		return nil
	}
	hs := make([]LSAHeader, len(b)/LSAHeaderLen)
	for i := range hs {
		hs[i].decode(b[i*LSAHeaderLen:])
	}
	return hs
}

func decodeDBD(h Header, b []byte) (*DBD, *DecodeError) {
	if len(b) < dbdFixed || (len(b)-dbdFixed)%LSAHeaderLen != 0 {
		return nil, badLen("DBD", len(b), dbdFixed, LSAHeaderLen)
	}
	return &DBD{
		Header:  h,
		MTU:     binary.BigEndian.Uint16(b),
		Options: b[2],
		Flags:   b[3],
		Seq:     binary.BigEndian.Uint32(b[4:]),
		LSAs:    decodeHeaders(b[dbdFixed:]),
	}, nil
}

// appendEach appends the entries es (LSAs, LSA headers) in order.
func appendEach[E any, P interface {
	*E
	AppendTo([]byte) []byte
}](b []byte, es []E) []byte {
	for i := range es {
		b = P(&es[i]).AppendTo(b)
	}
	return b
}

func (p *DBD) AppendTo(b []byte) []byte {
	start := len(b)
	b = p.Header.appendHeader(b, TypeDBD)
	b = appendU16(b, p.MTU)
	b = append(b, p.Options, p.Flags)
	b = appendU32(b, p.Seq)
	return p.Header.finish(appendEach(b, p.LSAs), start)
}

func decodeLSR(h Header, b []byte) (*LSR, *DecodeError) {
	if len(b)%lsrEntry != 0 {
		return nil, badLen("LSR", len(b), 0, lsrEntry)
	}
	p := &LSR{Header: h}
	if len(b) > 0 {
		p.Requests = make([]LSRequest, len(b)/lsrEntry)
		for i := range p.Requests {
			e := b[i*lsrEntry:]
			p.Requests[i] = LSRequest{Type: binary.BigEndian.Uint32(e), ID: addr4(e[4:]), AdvRouter: addr4(e[8:])}
		}
	}
	return p, nil
}

func (p *LSR) AppendTo(b []byte) []byte {
	start := len(b)
	b = p.Header.appendHeader(b, TypeLSR)
	for _, r := range p.Requests {
		b = appendU32(b, r.Type)
		b = appendAddr(b, r.ID)
		b = appendAddr(b, r.AdvRouter)
	}
	return p.Header.finish(b, start)
}

func decodeLSU(h Header, b []byte) (*LSU, *DecodeError) {
	if len(b) < lsuFixed {
		return nil, badLen("LSU", len(b), lsuFixed, 1)
	}
	count := binary.BigEndian.Uint32(b)
	p := &LSU{Header: h}
	off := lsuFixed
	if count > 0 {
		p.LSAs = make([]LSA, 0, min(uint64(count), uint64((len(b)-off)/LSAHeaderLen)))
	}
	for i := uint32(0); i < count; i++ {
		at := HeaderLen + off
		if len(b)-off < LSAHeaderLen {
			return nil, errf(KindTruncated, at, "LSA %d of %d: packet ends %d bytes into its header", i+1, count, len(b)-off)
		}
		n := int(binary.BigEndian.Uint16(b[off+18:]))
		if n < LSAHeaderLen || n > len(b)-off {
			e := errf(KindBadLength, at+18, "LSA %d of %d: length %d, %d bytes left in the packet", i+1, count, n, len(b)-off)
			e.LSAType = b[off+3]
			return nil, e
		}
		l, err := decodeLSA(b[off : off+n : off+n])
		if err != nil {
			err.Offset += at
			return nil, err
		}
		p.LSAs = append(p.LSAs, l)
		off += n
	}
	if off != len(b) {
		return nil, errf(KindBadLength, 2, "packet length %d: %d bytes after the last of %d LSAs", HeaderLen+len(b), len(b)-off, count)
	}
	return p, nil
}

func (p *LSU) AppendTo(b []byte) []byte {
	start := len(b)
	b = p.Header.appendHeader(b, TypeLSU)
	b = appendU32(b, uint32(len(p.LSAs)))
	return p.Header.finish(appendEach(b, p.LSAs), start)
}

func decodeLSAck(h Header, b []byte) (*LSAck, *DecodeError) {
	if len(b)%LSAHeaderLen != 0 {
		return nil, badLen("LSAck", len(b), 0, LSAHeaderLen)
	}
	return &LSAck{Header: h, LSAs: decodeHeaders(b)}, nil
}

func (p *LSAck) AppendTo(b []byte) []byte {
	start := len(b)
	b = p.Header.appendHeader(b, TypeLSAck)
	return p.Header.finish(appendEach(b, p.LSAs), start)
}
