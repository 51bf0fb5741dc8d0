package packet

import (
	"encoding/binary"

	"github.com/fared/fared/internal/fletcher"
)

// LSP flag bits (ISO 10589 9.8).
const (
	LSPFlagPartition  = 0x80
	LSPFlagATTMask    = 0x78
	LSPFlagATTDefault = 0x08 // attached via the default metric: the only one in use
	LSPFlagOverload   = 0x04
	LSPFlagISTypeMask = 0x03 // 1: L1 IS, 3: L2 IS
)

// LSP is a Level 1 or Level 2 link state PDU (ISO 10589 9.8/9.9).
type LSP struct {
	Header
	Lifetime uint16 // remaining lifetime, seconds
	ID       LSPID
	Seq      uint32
	Checksum uint16
	Flags    uint8
	TLVs     TLVs
}

// Overload reports the LSP database overload bit.
func (l *LSP) Overload() bool { return l.Flags&LSPFlagOverload != 0 }

// Attached reports any ATT bit: the originator reaches other areas.
func (l *LSP) Attached() bool { return l.Flags&LSPFlagATTMask != 0 }

// Partition reports the partition repair bit.
func (l *LSP) Partition() bool { return l.Flags&LSPFlagPartition != 0 }

// ISType is the originator's IS type (1: L1 only, 3: L2).
func (l *LSP) ISType() uint8 { return l.Flags & LSPFlagISTypeMask }

// AppendTo appends the LSP with its PDU length and a freshly computed
// checksum; l.Checksum is ignored (and not updated).
func (l *LSP) AppendTo(b []byte) []byte {
	start := len(b)
	b = l.AppendToKeepChecksum(b)
	binary.BigEndian.PutUint16(b[start+lspCksumField:], fletcher.Checksum(b[start+lspCksumStart:], lspCksumField-lspCksumStart))
	return b
}

// AppendToKeepChecksum writes l.Checksum as it is: re-encoding a received
// LSP exactly, including purges that carry checksum 0.
func (l *LSP) AppendToKeepChecksum(b []byte) []byte {
	return appendPDU(b, l.Header, func(b []byte) []byte {
		b = binary.BigEndian.AppendUint16(append(b, 0, 0), l.Lifetime)
		b = binary.BigEndian.AppendUint32(append(b, l.ID[:]...), l.Seq)
		return append(binary.BigEndian.AppendUint16(b, l.Checksum), l.Flags)
	}, l.TLVs)
}

// Entry is the LSP's summary as carried in SNPs.
func (l *LSP) Entry() LSPEntry {
	return LSPEntry{Lifetime: l.Lifetime, ID: l.ID, Seq: l.Seq, Checksum: l.Checksum}
}

func decodeLSP(h Header, p []byte) (*LSP, error) {
	m := &LSP{
		Header:   h,
		Lifetime: binary.BigEndian.Uint16(p[10:]),
		Seq:      binary.BigEndian.Uint32(p[20:]),
		Checksum: binary.BigEndian.Uint16(p[24:]),
		Flags:    p[26],
	}
	copy(m.ID[:], p[12:20])
	var err error
	m.TLVs, err = decodeTLVs(p, LSPHeaderLen)
	return m, err
}
