package packet

import (
	"fmt"

	"github.com/fared/fared/internal/enum"
)

// ErrKind classifies why Decode rejected a PDU. Its String is used as a
// metrics label, so the names never change.
type ErrKind uint8

const (
	KindTruncated   ErrKind = iota + 1 // buffer shorter than the fixed header
	KindBadHeader                      // IRPD, version or length indicator wrong
	KindIDLength                       // ID length not 0 or 6
	KindMaxArea                        // max area addresses not 0 or 3
	KindBadPDUType                     // PDU type not one IS-IS defines
	KindBadLength                      // PDU length field longer than the buffer or shorter than the header
	KindTLVOverflow                    // a TLV runs past the end of the PDU
	KindBadTLV                         // a known TLV's value is malformed
)

var kindNames = enum.Names[ErrKind]{
	KindTruncated:   "truncated",
	KindBadHeader:   "bad_header",
	KindIDLength:    "id_length",
	KindMaxArea:     "max_area",
	KindBadPDUType:  "bad_pdu_type",
	KindBadLength:   "bad_length",
	KindTLVOverflow: "tlv_overflow",
	KindBadTLV:      "bad_tlv",
}

func (k ErrKind) String() string { return kindNames.Name(k, "kind_") }

// DecodeError says why and where Decode rejected a PDU. Offset is from the
// start of the PDU (the IRPD byte): the offending header field, or for
// TLV errors the TLV's type byte. TLV and SubTLV are set only for TLV errors
// (SubTLV only when a sub-TLV is at fault).
type DecodeError struct {
	Kind    ErrKind
	PDUType uint8
	Offset  int
	TLV     uint8
	SubTLV  uint8
	Msg     string
}

func (e *DecodeError) Error() string {
	where := fmt.Sprintf("offset %d", e.Offset)
	if e.Kind == KindBadTLV || e.Kind == KindTLVOverflow {
		where = fmt.Sprintf("TLV %d at offset %d", e.TLV, e.Offset)
	}
	if name := pduName(e.PDUType); name != "" {
		return "isis: " + name + ": " + where + ": " + e.Msg
	}
	return "isis: " + where + ": " + e.Msg
}

// pduNames name the PDU types in messages.
var pduNames = enum.Names[uint8]{
	TypeL1LANHello: "L1 LAN IIH", TypeL2LANHello: "L2 LAN IIH", TypeP2PHello: "P2P IIH",
	TypeL1LSP: "L1 LSP", TypeL2LSP: "L2 LSP", TypeL1CSNP: "L1 CSNP", TypeL2CSNP: "L2 CSNP",
	TypeL1PSNP: "L1 PSNP", TypeL2PSNP: "L2 PSNP",
}

// pduName is the name of PDU type t, "" if IS-IS defines none.
func pduName(t uint8) string {
	if int(t) < len(pduNames) {
		return pduNames[t]
	}
	return ""
}

// tlvError is the error of a known TLV whose value does not parse. off is
// the TLV's offset within the PDU; Decode fills in PDUType.
func tlvError(t uint8, off int, sub uint8, format string, args ...any) *DecodeError {
	return &DecodeError{Kind: KindBadTLV, Offset: off, TLV: t, SubTLV: sub, Msg: fmt.Sprintf(format, args...)}
}
