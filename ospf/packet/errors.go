package packet

import (
	"fmt"

	"github.com/fared/fared/internal/enum"
)

// ErrKind classifies why a decoder rejected its input. Its String is used
// as a metrics label, so the names never change.
type ErrKind uint8

const (
	KindTruncated   ErrKind = iota + 1 // buffer shorter than a fixed header or field
	KindBadVersion                     // OSPF version not 2
	KindBadLength                      // a length field disagrees with the bytes there are
	KindBadChecksum                    // packet checksum does not verify
	KindAuth                           // authentication type other than null
	KindBadType                        // packet type not 1..5
	KindBadLSA                         // a known LSA body is malformed
	KindBadTLV                         // a TLV or sub-TLV is malformed
)

var kindNames = enum.Names[ErrKind]{
	KindTruncated:   "truncated",
	KindBadVersion:  "bad_version",
	KindBadLength:   "bad_length",
	KindBadChecksum: "bad_checksum",
	KindAuth:        "auth",
	KindBadType:     "bad_type",
	KindBadLSA:      "bad_lsa",
	KindBadTLV:      "bad_tlv",
}

func (k ErrKind) String() string { return kindNames.Name(k, "kind_") }

// DecodeError says why and where a decoder rejected its input.
//
// Offset counts from the start of the buffer given to the decoder: the
// packet for Decode, the LSA for DecodeLSA, and for the opaque helpers
// (TELinks, ExtPrefixes, ...) the LSA the body sits in, TLVs assumed laid
// out as on the wire (as Decode leaves them). It points at the offending
// field, or at the header of the offending LSA, TLV or sub-TLV.
//
// PacketType is set by Decode; LSAType when an LSA is at fault; TLV (the
// top-level TLV type) and SubTLV (when a sub-TLV is at fault) for
// KindBadTLV.
type DecodeError struct {
	Kind       ErrKind
	Offset     int
	PacketType uint8
	LSAType    uint8
	TLV        uint16
	SubTLV     uint16
	Msg        string
}

func (e *DecodeError) Error() string {
	s := "ospf: "
	if n := packetName(e.PacketType); n != "" {
		s += n + ": "
	}
	if e.LSAType != 0 {
		s += fmt.Sprintf("LSA type %d: ", e.LSAType)
	}
	switch {
	case e.Kind == KindBadTLV && e.SubTLV != 0:
		s += fmt.Sprintf("TLV %d sub-TLV %d: ", e.TLV, e.SubTLV)
	case e.Kind == KindBadTLV:
		s += fmt.Sprintf("TLV %d: ", e.TLV)
	}
	return s + fmt.Sprintf("offset %d: %s: %s", e.Offset, e.Kind, e.Msg)
}

// packetNames name the packet types in messages.
var packetNames = enum.Names[uint8]{TypeHello: "Hello", TypeDBD: "DBD", TypeLSR: "LSR", TypeLSU: "LSU", TypeLSAck: "LSAck"}

// packetName is the name of packet type t, "" if OSPFv2 defines none.
func packetName(t uint8) string {
	if int(t) < len(packetNames) {
		return packetNames[t]
	}
	return ""
}

func errf(kind ErrKind, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Kind: kind, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// shift moves an error found in a sub-buffer to the coordinates of the
// enclosing one.
func shift(err error, by int) error {
	if e, ok := err.(*DecodeError); ok {
		e.Offset += by
	}
	return err
}
