package packet

import "encoding/binary"

// Circuit type values (ISO 10589 9.5; the top 6 bits are reserved).
const (
	CircuitL1   = 1
	CircuitL2   = 2
	CircuitL1L2 = 3
)

// LANHello is a Level 1 or Level 2 LAN IS-IS Hello (ISO 10589 9.5/9.6).
type LANHello struct {
	Header
	CircuitType uint8
	SourceID    SystemID
	HoldTime    uint16
	Priority    uint8 // 7 bits; the top bit is reserved and dropped
	LANID       NodeID
	TLVs        TLVs
}

// P2PHello is the point-to-point IS-IS Hello (ISO 10589 9.7).
type P2PHello struct {
	Header
	CircuitType    uint8
	SourceID       SystemID
	HoldTime       uint16
	LocalCircuitID uint8
	TLVs           TLVs
}

// appendHelloHead appends the fields both IIHs start with.
func appendHelloHead(b []byte, circuitType uint8, src SystemID, hold uint16) []byte {
	b = append(b, circuitType)
	b = append(b, src[:]...)
	return binary.BigEndian.AppendUint16(b, hold)
}

// AppendTo appends the hello with its PDU length filled in.
func (h *LANHello) AppendTo(b []byte) []byte {
	return appendPDU(b, h.Header, func(b []byte) []byte {
		b = appendHelloHead(b, h.CircuitType, h.SourceID, h.HoldTime)
		b = append(b, 0, 0, h.Priority&0x7f)
		return append(b, h.LANID[:]...)
	}, h.TLVs)
}

// AppendTo appends the hello with its PDU length filled in.
func (h *P2PHello) AppendTo(b []byte) []byte {
	return appendPDU(b, h.Header, func(b []byte) []byte {
		b = appendHelloHead(b, h.CircuitType, h.SourceID, h.HoldTime)
		return append(b, 0, 0, h.LocalCircuitID)
	}, h.TLVs)
}

func decodeLANHello(h Header, p []byte) (*LANHello, error) {
	m := &LANHello{Header: h, CircuitType: p[8], HoldTime: binary.BigEndian.Uint16(p[15:]), Priority: p[19] & 0x7f}
	copy(m.SourceID[:], p[9:15])
	copy(m.LANID[:], p[20:27])
	var err error
	m.TLVs, err = decodeTLVs(p, LANHelloHeaderLen)
	return m, err
}

func decodeP2PHello(h Header, p []byte) (*P2PHello, error) {
	m := &P2PHello{Header: h, CircuitType: p[8], HoldTime: binary.BigEndian.Uint16(p[15:]), LocalCircuitID: p[19]}
	copy(m.SourceID[:], p[9:15])
	var err error
	m.TLVs, err = decodeTLVs(p, P2PHelloHeaderLen)
	return m, err
}
