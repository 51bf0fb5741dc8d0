// Package packet is the BFD Control packet (RFC 5880 §4.1) as fared sends
// and receives it: the mandatory section and the optional authentication
// section (§4.2-4.4, auth.go).
//
// The field layout is GoBGP's (github.com/osrg/gobgp/v4/pkg/packet/bfd,
// BFDHeader): we do not write a third codec for 24 bytes. GoBGP's decoder
// does not keep the C, A, D and M bits nor the echo interval, accepts a
// Length other than the received size only when equal, and checks none of
// the reception rules of RFC 5880 §6.8.6; Decode adds those, reading the
// bits it drops straight from the bytes, and says which field at which
// offset is wrong.
package packet

import (
	"encoding/binary"
	"fmt"

	gobfd "github.com/osrg/gobgp/v4/pkg/packet/bfd"
)

// State is a session state as carried in the Sta field.
type State uint8

const (
	AdminDown State = iota
	Down
	Init
	Up
)

func (s State) String() string {
	return [...]string{"AdminDown", "Down", "Init", "Up"}[s&3]
}

// Diag is the diagnostic code (RFC 5880 §4.1).
type Diag uint8

const (
	DiagNone            Diag = 0
	DiagDetectExpired   Diag = 1 // Control Detection Time Expired
	DiagEchoFailed      Diag = 2
	DiagNeighborDown    Diag = 3 // Neighbor Signaled Session Down
	DiagForwardingReset Diag = 4
	DiagPathDown        Diag = 5
	DiagConcatPathDown  Diag = 6
	DiagAdminDown       Diag = 7
	DiagRevConcatDown   Diag = 8
)

func (d Diag) String() string {
	if int(d) < len(diagNames) {
		return diagNames[d]
	}
	return fmt.Sprintf("diag %d", uint8(d))
}

var diagNames = [...]string{"none", "control detection time expired", "echo function failed",
	"neighbor signaled session down", "forwarding plane reset", "path down", "concatenated path down",
	"administratively down", "reverse concatenated path down"}

// Version is the only protocol version (RFC 5880 §4.1).
const Version = 1

// Len is the length of a Control packet without authentication.
const Len = 24

// Control is one BFD Control packet. Intervals are in microseconds, as on
// the wire.
type Control struct {
	Diag       Diag
	State      State
	Poll       bool
	Final      bool
	CPI        bool // C: Control Plane Independent
	Demand     bool // D
	DetectMult uint8
	MyDisc     uint32
	YourDisc   uint32
	DesiredMinTx,
	RequiredMinRx,
	RequiredMinEchoRx uint32
	// Auth is the authentication section; Auth.Type 0: none (the A bit
	// is set exactly when there is one).
	Auth Auth
}

// ErrKind names a reason to discard a packet; its String is a metrics
// label and never changes.
type ErrKind uint8

const (
	KindTruncated ErrKind = iota + 1
	KindVersion
	KindLength
	KindMultiplier
	KindMultipoint
	KindMyDisc
	KindYourDisc
	KindAuth     // the A bit where none is expected (kept for the counter's name)
	KindAuthType // an Auth Type that is reserved (0) or unknown
	KindAuthLen  // an Auth Len that does not fit the type or the packet
)

func (k ErrKind) String() string {
	switch k {
	case KindTruncated:
		return "truncated"
	case KindVersion:
		return "version"
	case KindLength:
		return "length"
	case KindMultiplier:
		return "detect_mult"
	case KindMultipoint:
		return "multipoint"
	case KindMyDisc:
		return "my_disc"
	case KindYourDisc:
		return "your_disc"
	case KindAuth:
		return "auth"
	case KindAuthType:
		return "auth_type"
	case KindAuthLen:
		return "auth_len"
	}
	return fmt.Sprintf("kind_%d", uint8(k))
}

// DecodeError says why a packet was discarded and which field, at which
// byte offset, is at fault.
type DecodeError struct {
	Kind   ErrKind
	Field  string
	Offset int
	Msg    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("bfd: %s at offset %d: %s", e.Field, e.Offset, e.Msg)
}

func errAt(k ErrKind, field string, off int, format string, a ...any) error {
	return &DecodeError{Kind: k, Field: field, Offset: off, Msg: fmt.Sprintf(format, a...)}
}

// Decode parses a Control packet and applies the discard rules of RFC
// 5880 §6.8.6 that need no session: version, length, multiplier, M bit,
// My Discriminator, and Your Discriminator zero outside Down/AdminDown.
// With the A bit set the authentication section is parsed (its form
// only: whether it authenticates is the session's business, Verify).
func Decode(b []byte) (Control, error) {
	var c Control
	if len(b) < Len {
		return c, errAt(KindTruncated, "packet", 0, "%d bytes, a Control packet has at least %d", len(b), Len)
	}
	if v := b[0] >> 5; v != Version {
		return c, errAt(KindVersion, "Vers", 0, "version %d, want %d", v, Version)
	}
	n := int(b[3])
	hasAuth := b[1]&0x04 != 0
	minLen := Len
	if hasAuth {
		minLen = Len + 2 // §6.8.6: 26 with the A bit
	}
	if n < minLen || n > len(b) {
		return c, errAt(KindLength, "Length", 3, "length %d, want %d..%d (the received size)", n, minLen, len(b))
	}
	if b[2] == 0 {
		return c, errAt(KindMultiplier, "Detect Mult", 2, "zero")
	}
	if b[1]&0x01 != 0 {
		return c, errAt(KindMultipoint, "M bit", 1, "multipoint bit set")
	}
	var h gobfd.BFDHeader
	if err := h.UnmarshalBinary(b[:n]); err != nil {
		return c, errAt(KindLength, "packet", 0, "%v", err) // checked above: cannot happen
	}
	c = Control{
		Diag: Diag(h.Diagnostic), State: State(h.State), Poll: h.Poll, Final: h.Final,
		CPI: b[1]&0x08 != 0, Demand: b[1]&0x02 != 0,
		DetectMult: h.DetectTimeMultiplier, MyDisc: h.MyDiscriminator, YourDisc: h.YourDiscriminator,
		DesiredMinTx: h.DesiredMinTxInterval, RequiredMinRx: h.RequiredMinRxInterval,
		RequiredMinEchoRx: binary.BigEndian.Uint32(b[20:24]),
	}
	if c.MyDisc == 0 {
		return c, errAt(KindMyDisc, "My Discriminator", 4, "zero")
	}
	if c.YourDisc == 0 && c.State != Down && c.State != AdminDown {
		return c, errAt(KindYourDisc, "Your Discriminator", 8, "zero in state %s", c.State)
	}
	if hasAuth {
		a, err := decodeAuth(b[Len:n])
		if err != nil {
			return c, err
		}
		c.Auth = a
	}
	return c, nil
}

// AppendTo appends the packet's wire form: 24 bytes (M clear), then the
// authentication section when c.Auth has a type (A set, Length covering
// it). A keyed MD5/SHA1 section goes out as c.Auth holds it: Sign fills
// in the digest.
func (c Control) AppendTo(b []byte) []byte {
	h := gobfd.BFDHeader{
		Version: Version, Diagnostic: gobfd.DiagnosticType(c.Diag & 0x1f), State: gobfd.StateType(c.State & 3),
		Poll: c.Poll, Final: c.Final, DetectTimeMultiplier: c.DetectMult,
		MyDiscriminator: c.MyDisc, YourDiscriminator: c.YourDisc,
		DesiredMinTxInterval: c.DesiredMinTx, RequiredMinRxInterval: c.RequiredMinRx,
	}
	w, err := h.MarshalBinary()
	if err != nil {
		panic(err) // fields are masked to their widths above
	}
	if c.CPI {
		w[1] |= 0x08
	}
	if c.Demand {
		w[1] |= 0x02
	}
	binary.BigEndian.PutUint32(w[20:24], c.RequiredMinEchoRx)
	if c.Auth.Type != 0 {
		w[1] |= 0x04
		w[3] = byte(Len + c.Auth.Len())
		w = c.Auth.appendTo(w)
	}
	return append(b, w...)
}

func (c Control) String() string {
	flags := ""
	for _, f := range []struct {
		on bool
		s  string
	}{{c.Poll, "P"}, {c.Final, "F"}, {c.CPI, "C"}, {c.Auth.Type != 0, "A"}, {c.Demand, "D"}} {
		if f.on {
			flags += f.s
		}
	}
	s := fmt.Sprintf("state %s diag %s flags [%s] mult %d my %#x your %#x tx %dus rx %dus echo %dus",
		c.State, c.Diag, flags, c.DetectMult, c.MyDisc, c.YourDisc, c.DesiredMinTx, c.RequiredMinRx, c.RequiredMinEchoRx)
	if c.Auth.Type != 0 {
		s += fmt.Sprintf(" auth %s key %d seq %d", c.Auth.Type, c.Auth.KeyID, c.Auth.Seq)
	}
	return s
}
