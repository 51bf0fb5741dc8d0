package packet

import (
	"encoding/binary"
	"fmt"
)

// PDU types (ISO 10589 9.1, 5 bits of the header's type octet).
const (
	TypeL1LANHello = 15
	TypeL2LANHello = 16
	TypeP2PHello   = 17
	TypeL1LSP      = 18
	TypeL2LSP      = 20
	TypeL1CSNP     = 24
	TypeL2CSNP     = 25
	TypeL1PSNP     = 26
	TypeL2PSNP     = 27
)

const (
	irpd         = 0x83 // intradomain routeing protocol discriminator
	commonHdrLen = 8

	// Header length indicators: common header plus each PDU's fixed part.
	LANHelloHeaderLen = 27
	P2PHelloHeaderLen = 20
	LSPHeaderLen      = 27
	CSNPHeaderLen     = 33
	PSNPHeaderLen     = 17

	// MaxTLVValue is the most a TLV (or sub-TLV) value can hold.
	MaxTLVValue = 255
)

// Header is the 8-byte common header. Decode keeps MaxAreaAddrs and IDLen
// as received (0 means 3 and 6 respectively) and AppendTo writes them back
// as they are, so FRR's zeros survive a round trip.
type Header struct {
	Type         uint8
	MaxAreaAddrs uint8
	IDLen        uint8
}

// PDU is any decoded IS-IS PDU.
type PDU interface {
	PDUHeader() Header
	// AppendTo appends the whole PDU, lengths (and LSP checksum) computed.
	AppendTo(b []byte) []byte
}

// PDUHeader returns the common header; embedding gives every PDU this method.
func (h Header) PDUHeader() Header { return h }

// Level is 1 or 2 from the PDU type; 0 for the point-to-point hello, which
// serves both levels, and for unknown types.
func (h Header) Level() int {
	switch h.Type {
	case TypeL1LANHello, TypeL1LSP, TypeL1CSNP, TypeL1PSNP:
		return 1
	case TypeL2LANHello, TypeL2LSP, TypeL2CSNP, TypeL2PSNP:
		return 2
	}
	return 0
}

// TypeName names the PDU type ("L2 LSP"). Not String: every PDU embeds
// Header, and a promoted String would make %v print only the type.
func (h Header) TypeName() string {
	if n := pduName(h.Type); n != "" {
		return n
	}
	return fmt.Sprintf("PDU type %d", h.Type)
}

func headerLen(t uint8) int {
	switch t {
	case TypeL1LANHello, TypeL2LANHello:
		return LANHelloHeaderLen
	case TypeP2PHello:
		return P2PHelloHeaderLen
	case TypeL1LSP, TypeL2LSP:
		return LSPHeaderLen
	case TypeL1CSNP, TypeL2CSNP:
		return CSNPHeaderLen
	case TypeL1PSNP, TypeL2PSNP:
		return PSNPHeaderLen
	}
	return 0
}

// pduLenOffset is where each PDU type keeps its 2-byte PDU length.
func pduLenOffset(t uint8) int {
	switch t {
	case TypeL1LANHello, TypeL2LANHello, TypeP2PHello:
		return 17
	}
	return 8
}

// appendCommon starts a PDU: the common header for h.
func appendCommon(b []byte, h Header) []byte {
	return append(b, irpd, byte(headerLen(h.Type)), 1, h.IDLen, h.Type&0x1f, 1, 0, h.MaxAreaAddrs)
}

// appendPDU appends a PDU: the common header of h, the fixed fields of
// its type (appended by fixed), the TLVs; then fills in the PDU length.
func appendPDU(b []byte, h Header, fixed func([]byte) []byte, tlvs TLVs) []byte {
	start := len(b)
	b = tlvs.AppendTo(fixed(appendCommon(b, h)))
	finishPDU(b, start, h.Type)
	return b
}

// finishPDU writes the PDU length of the PDU appended at b[start:].
func finishPDU(b []byte, start int, t uint8) {
	binary.BigEndian.PutUint16(b[start+pduLenOffset(t):], uint16(len(b)-start))
}

// Decode parses one IS-IS PDU starting at its IRPD byte (802.3 and LLC
// already stripped). Bytes past the PDU length field are ignored (Ethernet
// padding). The result is *LANHello, *P2PHello, *LSP, *CSNP or *PSNP; any
// rejection is a *DecodeError.
func Decode(b []byte) (PDU, error) {
	if len(b) < commonHdrLen {
		return nil, &DecodeError{Kind: KindTruncated, Offset: len(b), Msg: fmt.Sprintf("%d bytes, shorter than the common header", len(b))}
	}
	t := b[4] & 0x1f // the top 3 bits are reserved: ignored on receipt
	if b[0] != irpd {
		return nil, &DecodeError{Kind: KindBadHeader, PDUType: t, Offset: 0, Msg: fmt.Sprintf("protocol discriminator 0x%02x, want 0x83", b[0])}
	}
	hl := headerLen(t)
	if hl == 0 {
		return nil, &DecodeError{Kind: KindBadPDUType, PDUType: t, Offset: 4, Msg: fmt.Sprintf("unknown PDU type %d", t)}
	}
	if int(b[1]) != hl {
		return nil, &DecodeError{Kind: KindBadHeader, PDUType: t, Offset: 1, Msg: fmt.Sprintf("header length %d, want %d", b[1], hl)}
	}
	if b[2] != 1 {
		return nil, &DecodeError{Kind: KindBadHeader, PDUType: t, Offset: 2, Msg: fmt.Sprintf("version/protocol id extension %d, want 1", b[2])}
	}
	if b[3] != 0 && b[3] != 6 {
		return nil, &DecodeError{Kind: KindIDLength, PDUType: t, Offset: 3, Msg: fmt.Sprintf("ID length %d, want 0 or 6", b[3])}
	}
	if b[5] != 1 {
		return nil, &DecodeError{Kind: KindBadHeader, PDUType: t, Offset: 5, Msg: fmt.Sprintf("version %d, want 1", b[5])}
	}
	if b[7] != 0 && b[7] != 3 {
		return nil, &DecodeError{Kind: KindMaxArea, PDUType: t, Offset: 7, Msg: fmt.Sprintf("maximum area addresses %d, want 0 or 3", b[7])}
	}
	if len(b) < hl {
		return nil, &DecodeError{Kind: KindTruncated, PDUType: t, Offset: len(b), Msg: fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(b), hl)}
	}
	lo := pduLenOffset(t)
	n := int(binary.BigEndian.Uint16(b[lo:]))
	if n > len(b) {
		return nil, &DecodeError{Kind: KindBadLength, PDUType: t, Offset: lo, Msg: fmt.Sprintf("PDU length %d, longer than the %d bytes received", n, len(b))}
	}
	if n < hl {
		return nil, &DecodeError{Kind: KindBadLength, PDUType: t, Offset: lo, Msg: fmt.Sprintf("PDU length %d, shorter than the %d-byte header", n, hl)}
	}
	// One private copy: the result may point into it, never into b.
	p := make([]byte, n)
	copy(p, b)
	h := Header{Type: t, MaxAreaAddrs: p[7], IDLen: p[3]}

	var pdu PDU
	var err error
	switch t {
	case TypeL1LANHello, TypeL2LANHello:
		pdu, err = decodeLANHello(h, p)
	case TypeP2PHello:
		pdu, err = decodeP2PHello(h, p)
	case TypeL1LSP, TypeL2LSP:
		pdu, err = decodeLSP(h, p)
	case TypeL1CSNP, TypeL2CSNP:
		pdu, err = decodeCSNP(h, p)
	default:
		pdu, err = decodePSNP(h, p)
	}
	if err != nil {
		if de, ok := err.(*DecodeError); ok {
			de.PDUType = t
		}
		return nil, err
	}
	return pdu, nil
}
