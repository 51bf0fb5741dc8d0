package rocev2

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrKind classifies why Decode rejected a packet. Its String is used as a
// metrics label, so the names never change.
type ErrKind uint8

const (
	KindTruncated     ErrKind = iota + 1 // shorter than the headers its opcode needs
	KindUnknownOpcode                    // an opcode this codec does not know
	KindBadVersion                       // BTH TVer is not 0
	KindBadPad                           // PadCnt larger than the payload
	KindBadICRC                          // the ICRC does not match
	KindBadIP                            // the IP/UDP framing around the BTH is wrong
)

var kindNames = [...]string{
	KindTruncated:     "truncated",
	KindUnknownOpcode: "unknown_opcode",
	KindBadVersion:    "bad_version",
	KindBadPad:        "bad_pad",
	KindBadICRC:       "bad_icrc",
	KindBadIP:         "bad_ip",
}

func (k ErrKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind_%d", uint8(k))
}

// Kinds lists every ErrKind, in order (for metric label sets).
func Kinds() []ErrKind {
	return []ErrKind{KindTruncated, KindUnknownOpcode, KindBadVersion, KindBadPad, KindBadICRC, KindBadIP}
}

// DecodeError says why and where a packet was rejected. Offset counts from
// the first byte of the buffer handed to the decoder (the BTH for Decode,
// the IP header for DecodeIP and VerifyICRC).
type DecodeError struct {
	Kind   ErrKind
	Header string // "BTH", "RETH", "ICRC", "IPv4", ...
	Offset int
	Msg    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("rocev2: %s at offset %d: %s", e.Header, e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrTruncated) and friends work.
func (e *DecodeError) Is(target error) bool {
	k, ok := target.(kindErr)
	return ok && ErrKind(k) == e.Kind
}

type kindErr ErrKind

func (k kindErr) Error() string { return "rocev2: " + ErrKind(k).String() }

// Sentinels for errors.Is.
var (
	ErrTruncated     error = kindErr(KindTruncated)
	ErrUnknownOpcode error = kindErr(KindUnknownOpcode)
	ErrBadVersion    error = kindErr(KindBadVersion)
	ErrBadPad        error = kindErr(KindBadPad)
	ErrBadICRC       error = kindErr(KindBadICRC)
	ErrBadIP         error = kindErr(KindBadIP)
)

func errf(kind ErrKind, header string, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Kind: kind, Header: header, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of a codec error, or 0 for nil and foreign errors.
func KindOf(err error) ErrKind {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Kind
	}
	return 0
}

// ErrorCounts counts rejected packets by kind. The zero value is ready;
// it is safe for concurrent use.
type ErrorCounts struct {
	n [len(kindNames)]atomic.Uint64
}

// Add counts err (nil and foreign errors are ignored) and returns its kind.
func (c *ErrorCounts) Add(err error) ErrKind {
	k := KindOf(err)
	if k != 0 && int(k) < len(c.n) {
		c.n[k].Add(1)
	}
	return k
}

// Get returns the count of one kind.
func (c *ErrorCounts) Get(k ErrKind) uint64 {
	if int(k) < len(c.n) {
		return c.n[k].Load()
	}
	return 0
}

// Map returns the non-zero counts keyed by kind name.
func (c *ErrorCounts) Map() map[string]uint64 {
	m := map[string]uint64{}
	for _, k := range Kinds() {
		if v := c.Get(k); v > 0 {
			m[k.String()] = v
		}
	}
	return m
}
