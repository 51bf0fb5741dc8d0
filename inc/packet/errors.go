package packet

import (
	"errors"
	"fmt"

	"github.com/fared/fared/internal/enum"
)

// ErrKind classifies why an INC packet was rejected; the names are metric
// labels and never change.
type ErrKind uint8

const (
	KindTruncated  ErrKind = iota + 1 // shorter than the INC header
	KindVersion                       // header version not 1
	KindFlags                         // unknown flag bits
	KindCollective                    // collective not in the draft's list
	KindDType                         // unknown data type
	KindOp                            // unknown operation
	KindLength                        // payload length is not count × element size
	KindOpcode                        // RoCEv2 opcode that INC does not use
)

var kindNames = enum.Names[ErrKind]{
	KindTruncated:  "truncated",
	KindVersion:    "version",
	KindFlags:      "flags",
	KindCollective: "collective",
	KindDType:      "dtype",
	KindOp:         "op",
	KindLength:     "length",
	KindOpcode:     "opcode",
}

func (k ErrKind) String() string { return kindNames.Name(k, "kind_") }

// Error is a rejected INC header or packet. Offset counts from the first
// byte of the INC header for DecodeHeader, of the IP header for Parse.
type Error struct {
	Kind   ErrKind
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("inc: offset %d: %s: %s", e.Offset, e.Kind, e.Msg) }

func errf(k ErrKind, off int, format string, args ...any) *Error {
	return &Error{Kind: k, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of an INC codec error, or 0.
func KindOf(err error) ErrKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
