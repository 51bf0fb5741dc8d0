// Package keyauth is what the IGPs' packet authentication shares: the
// algorithms a key chain names (their config names, hashes and digest
// lengths), the HMAC-SHA key preparation and Apad of RFC 5310 (IS-IS) and
// RFC 5709 (OSPFv2), which are the same construction, and the rejection
// a Verify returns. Where the digest covers and what it is placed in stay
// with each codec (isis/packet, ospf/packet): that is where they differ.
//
// It imports no protocol and nothing of the daemon, so the pure codecs can
// use it.
package keyauth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"

	"github.com/fared/fared/internal/enum"
)

// Alg is an authentication algorithm, as a key chain names it.
type Alg uint8

const (
	Clear      Alg = iota + 1 // cleartext (simple) password
	MD5                       // HMAC-MD5 (IS-IS, RFC 5304) or keyed MD5 (OSPFv2, RFC 2328 D.4.3)
	HMACSHA1                  // RFC 5310, RFC 5709
	HMACSHA224                // IS-IS only (RFC 5310)
	HMACSHA256
	HMACSHA384
	HMACSHA512
)

// algNames are the config's names of the algorithms.
var algNames = enum.Names[Alg]{Clear: "clear", MD5: "md5", HMACSHA1: "hmac-sha-1", HMACSHA224: "hmac-sha-224",
	HMACSHA256: "hmac-sha-256", HMACSHA384: "hmac-sha-384", HMACSHA512: "hmac-sha-512"}

func (a Alg) String() string { return algNames.Name(a, "alg_") }

// ParseAlg reads an algorithm name as the config spells it.
func ParseAlg(s string) (Alg, bool) { return algNames.Parse(s) }

// Hash is the algorithm's hash; nil for a cleartext password.
func (a Alg) Hash() func() hash.Hash {
	switch a {
	case MD5:
		return md5.New
	case HMACSHA1:
		return sha1.New
	case HMACSHA224:
		return sha256.New224
	case HMACSHA256:
		return sha256.New
	case HMACSHA384:
		return sha512.New384
	case HMACSHA512:
		return sha512.New
	}
	return nil
}

// DigestLen is the length of the algorithm's authentication data (0 for
// a cleartext password).
func (a Alg) DigestLen() int {
	if h := a.Hash(); h != nil {
		return h().Size()
	}
	return 0
}

// Apad is RFC 5310 §3.3's (and RFC 5709 §3.3's) Apad: 0x878FE1F3
// repeated to n bytes.
func Apad(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = [4]byte{0x87, 0x8F, 0xE1, 0xF3}[i%4]
	}
	return b
}

// NewHMAC is the HMAC of an HMAC-SHA algorithm with the key prepared as
// RFC 5310 §3.3 and RFC 5709 §3.3 say: a key longer than the digest
// length L is hashed to L bytes first (plain HMAC only hashes keys longer
// than the block size); a shorter one HMAC pads itself.
func NewHMAC(a Alg, secret []byte) hash.Hash {
	h := a.Hash()
	if len(secret) > a.DigestLen() {
		s := h()
		s.Write(secret)
		secret = s.Sum(nil)
	}
	return hmac.New(h, secret)
}

// ErrKind says why a Verify rejected a packet. Its String is a metrics
// label (rx_rejected_auth_<kind>), so the names never change.
type ErrKind uint8

const (
	Missing   ErrKind = iota + 1 // no authentication where it is required
	WrongType                    // an authentication type we have no key for
	NoKey                        // a key id we do not accept
	Mismatch                     // digest or password wrong
	Malformed                    // a wrong length, a digest missing, two authentication fields
)

var errKindNames = enum.Names[ErrKind]{Missing: "auth_missing", WrongType: "auth_type", NoKey: "auth_key_id",
	Mismatch: "auth_mismatch", Malformed: "auth_malformed"}

func (k ErrKind) String() string { return errKindNames.Name(k, "auth_") }

// KindOf is why err rejected a packet: the Kind of the *Error in its
// chain, Malformed for another error, 0 for nil.
func KindOf(err error) ErrKind {
	var e *Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Kind
	}
	return Malformed
}

// Error is a Verify's rejection. Proto names the protocol in the message
// ("isis", "ospf"); Offset is where in the packet the fault lies.
type Error struct {
	Proto  string
	Kind   ErrKind
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: authentication: offset %d: %s", e.Proto, e.Offset, e.Msg)
}
