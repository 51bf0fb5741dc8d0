package packet

import (
	"encoding/binary"
	"net/netip"

	"github.com/fared/fared/internal/fletcher"
)

// LSAHeaderLen is the length of the LSA header.
const LSAHeaderLen = 20

// LSA types (RFC 2328 A.4.1, RFC 3101 for 7, RFC 5250 for 9–11).
const (
	LSARouter      = 1
	LSANetwork     = 2
	LSASummary     = 3
	LSAASBRSummary = 4
	LSAExternal    = 5
	LSANSSA        = 7
	LSAOpaqueLink  = 9
	LSAOpaqueArea  = 10
	LSAOpaqueAS    = 11
)

// Architectural constants of RFC 2328 B and §12.1.6.
const (
	MaxAge                = 3600
	MaxAgeDiff            = 900
	LSRefreshTime         = 1800
	DoNotAge              = 0x8000             // RFC 1793: demand-circuit age bit
	InitialSequenceNumber = int32(-0x7fffffff) // 0x80000001
	MaxSequenceNumber     = int32(0x7fffffff)
)

// LSAHeader is the 20-byte LSA header (RFC 2328 A.4.1).
type LSAHeader struct {
	Age       uint16
	Options   uint8
	Type      uint8
	ID        netip.Addr // Link State ID
	AdvRouter netip.Addr
	Seq       int32
	Checksum  uint16
	Length    uint16
}

// LSAKey identifies an LSA instance-independently (RFC 2328 §12.1). It is
// comparable and can key a map.
type LSAKey struct {
	Type      uint8
	ID        netip.Addr
	AdvRouter netip.Addr
}

// Key is the header's LSA identity.
func (h LSAHeader) Key() LSAKey { return LSAKey{Type: h.Type, ID: h.ID, AdvRouter: h.AdvRouter} }

// Compare says which of two instances of the same LSA is more recent
// (RFC 2328 §13.1): 1 if h is newer than o, -1 if older, 0 if they count
// as the same instance. In order: the greater sequence number (signed) is
// newer; then the greater checksum (unsigned); then an instance at MaxAge
// is newer than one that is not; then, if the ages differ by more than
// MaxAgeDiff, the younger is newer. The DoNotAge bit is ignored and ages
// past MaxAge count as MaxAge.
func (h LSAHeader) Compare(o LSAHeader) int {
	switch {
	case h.Seq > o.Seq:
		return 1
	case h.Seq < o.Seq:
		return -1
	case h.Checksum > o.Checksum:
		return 1
	case h.Checksum < o.Checksum:
		return -1
	}
	ha, oa := min(h.Age&^DoNotAge, MaxAge), min(o.Age&^DoNotAge, MaxAge)
	switch {
	case ha == MaxAge && oa != MaxAge:
		return 1
	case oa == MaxAge && ha != MaxAge:
		return -1
	case int(ha)-int(oa) > MaxAgeDiff:
		return -1
	case int(oa)-int(ha) > MaxAgeDiff:
		return 1
	}
	return 0
}

func (h *LSAHeader) decode(b []byte) {
	h.Age = binary.BigEndian.Uint16(b)
	h.Options = b[2]
	h.Type = b[3]
	h.ID = addr4(b[4:])
	h.AdvRouter = addr4(b[8:])
	h.Seq = int32(binary.BigEndian.Uint32(b[12:]))
	h.Checksum = binary.BigEndian.Uint16(b[16:])
	h.Length = binary.BigEndian.Uint16(b[18:])
}

// AppendTo appends the 20-byte header exactly as its fields say (DBD and
// LSAck entries).
func (h *LSAHeader) AppendTo(b []byte) []byte {
	b = appendU16(b, h.Age)
	b = append(b, h.Options, h.Type)
	b = appendAddr(b, h.ID)
	b = appendAddr(b, h.AdvRouter)
	b = appendU32(b, uint32(h.Seq))
	b = appendU16(b, h.Checksum)
	return appendU16(b, h.Length)
}

// LSABody is a decoded LSA body: *RouterLSA, *NetworkLSA, *SummaryLSA
// (types 3 and 4), *ExternalLSA (types 5 and 7) or *OpaqueLSA (types 9, 10,
// 11), as Decode returns them. The methods have value receivers, so the
// encoders take values or pointers alike.
type LSABody interface {
	// AppendBody appends the body's wire bytes (everything after the LSA
	// header).
	AppendBody(b []byte) []byte
}

// LSA is one LSA of an LSU or of the LSDB.
//
// Raw is the whole LSA, header included, as received (or as encoded by
// NewLSA); Body is the decoded body, nil for unknown types. AppendTo
// floods Raw unchanged when it is set; age it in place with SetLSAAge.
type LSA struct {
	LSAHeader
	Raw  []byte
	Body LSABody
}

// DecodeLSA decodes one LSA at the start of b and returns it with the
// number of bytes it used (its length field). b may go on past the LSA.
// Raw is a private copy of the LSA's bytes; the checksum is not verified
// (see LSAChecksumOK). Errors are *DecodeError with offsets from the start
// of b.
func DecodeLSA(b []byte) (LSA, int, error) {
	if len(b) < LSAHeaderLen {
		return LSA{}, 0, errf(KindTruncated, len(b), "%d bytes, shorter than an LSA header", len(b))
	}
	n := int(binary.BigEndian.Uint16(b[18:]))
	if n < LSAHeaderLen || n > len(b) {
		e := errf(KindBadLength, 18, "LSA length %d, %d bytes there", n, len(b))
		e.LSAType = b[3]
		return LSA{}, 0, e
	}
	raw := make([]byte, n)
	copy(raw, b)
	l, err := decodeLSA(raw)
	if err != nil {
		return LSA{}, 0, err
	}
	return l, n, nil
}

// decodeLSA decodes raw, exactly one LSA whose length field is len(raw),
// aliasing it.
func decodeLSA(raw []byte) (LSA, *DecodeError) {
	l := LSA{Raw: raw}
	l.LSAHeader.decode(raw)
	body := raw[LSAHeaderLen:]
	var err *DecodeError
	switch l.Type {
	case LSARouter:
		l.Body, err = decodeRouterLSA(body)
	case LSANetwork:
		l.Body, err = decodeNetworkLSA(body)
	case LSASummary, LSAASBRSummary:
		l.Body, err = decodeSummaryLSA(body)
	case LSAExternal, LSANSSA:
		l.Body, err = decodeExternalLSA(body)
	case LSAOpaqueLink, LSAOpaqueArea, LSAOpaqueAS:
		l.Body, err = decodeOpaqueLSA(l.ID, body)
	}
	if err != nil {
		err.Offset += LSAHeaderLen
		err.LSAType = l.Type
		return LSA{}, err
	}
	return l, nil
}

// AppendTo appends the LSA. With Raw set it appends Raw unchanged (an LSA
// is flooded as received). Otherwise it encodes the header and Body with
// Length and the Fletcher checksum computed (RFC 2328 §12.1.7); see
// NewLSA for what it fills in.
func (l *LSA) AppendTo(b []byte) []byte {
	if l.Raw != nil {
		return append(b, l.Raw...)
	}
	return l.encode(b)
}

func (l *LSA) encode(b []byte) []byte {
	h := l.LSAHeader
	if h.Type == 0 {
		h.Type = defaultType(l.Body)
	}
	if o, ok := bodyOpaque(l.Body); ok {
		h.ID = o.lsaID()
	}
	start := len(b)
	h.Length, h.Checksum = 0, 0
	b = h.AppendTo(b)
	if l.Body != nil {
		b = l.Body.AppendBody(b)
	}
	p := b[start:]
	binary.BigEndian.PutUint16(p[18:], uint16(len(p)))
	binary.BigEndian.PutUint16(p[lsaCksumField:], fletcher.Checksum(p[lsaCksumStart:], lsaCksumField-lsaCksumStart))
	return b
}

func defaultType(body LSABody) uint8 {
	switch body.(type) {
	case RouterLSA, *RouterLSA:
		return LSARouter
	case NetworkLSA, *NetworkLSA:
		return LSANetwork
	case SummaryLSA, *SummaryLSA:
		return LSASummary
	case ExternalLSA, *ExternalLSA:
		return LSAExternal
	case OpaqueLSA, *OpaqueLSA:
		return LSAOpaqueArea
	}
	return 0
}

func bodyOpaque(body LSABody) (*OpaqueLSA, bool) {
	switch o := body.(type) {
	case *OpaqueLSA:
		return o, o != nil
	case OpaqueLSA:
		return &o, true
	}
	return nil, false
}

// NewLSA encodes an LSA originated here: header h and body. Length and
// Checksum are computed; a zero h.Type is taken from the body (Router 1,
// Network 2, Summary 3, External 5, Opaque 10); for an opaque body the
// Link State ID is always OpaqueType<<24|OpaqueID. The result has Raw set
// (capacity-limited) and its header fields as encoded.
func NewLSA(h LSAHeader, body LSABody) LSA {
	l := LSA{LSAHeader: h, Body: body}
	raw := l.encode(nil)
	l.Raw = raw[:len(raw):len(raw)]
	l.LSAHeader.decode(raw)
	return l
}
