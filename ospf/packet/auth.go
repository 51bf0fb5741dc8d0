package packet

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"hash"
)

// Alg is an OSPFv2 authentication algorithm.
type Alg uint8

const (
	AlgSimple   Alg = iota + 1 // AuType 1: the password in the header (RFC 2328 D.3)
	AlgMD5                     // AuType 2, keyed MD5 (RFC 2328 D.4.3)
	AlgHMACSHA1                // AuType 2, HMAC-SHA (RFC 5709)
	AlgHMACSHA256
	AlgHMACSHA384
	AlgHMACSHA512
)

var algNames = [...]string{AlgSimple: "clear", AlgMD5: "md5", AlgHMACSHA1: "hmac-sha-1",
	AlgHMACSHA256: "hmac-sha-256", AlgHMACSHA384: "hmac-sha-384", AlgHMACSHA512: "hmac-sha-512"}

func (a Alg) String() string {
	if int(a) < len(algNames) && algNames[a] != "" {
		return algNames[a]
	}
	return fmt.Sprintf("alg_%d", uint8(a))
}

// ParseAlg reads an algorithm name as the config spells it.
func ParseAlg(s string) (Alg, bool) {
	for i, n := range algNames {
		if n != "" && n == s {
			return Alg(i), true
		}
	}
	return 0, false
}

// AuType is the header AuType the algorithm goes out as.
func (a Alg) AuType() uint16 {
	if a == AlgSimple {
		return AuSimple
	}
	return AuCrypto
}

func (a Alg) hash() func() hash.Hash {
	switch a {
	case AlgMD5:
		return md5.New
	case AlgHMACSHA1:
		return sha1.New
	case AlgHMACSHA256:
		return sha256.New
	case AlgHMACSHA384:
		return sha512.New384
	case AlgHMACSHA512:
		return sha512.New
	}
	return nil
}

// DigestLen is the length of the digest appended to the packet (0 for
// the simple password).
func (a Alg) DigestLen() int {
	if h := a.hash(); h != nil {
		return h().Size()
	}
	return 0
}

// Key is one OSPF authentication key: a simple password (at most 8
// bytes) or a cryptographic key with its key id.
type Key struct {
	ID     uint8
	Alg    Alg
	Secret []byte
}

// MaxSimplePassword is the size of the header's Authentication field.
const MaxSimplePassword = 8

// apad is RFC 5709 §3.3's Apad: 0x878FE1F3 repeated to n bytes.
func apad(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = [4]byte{0x87, 0x8F, 0xE1, 0xF3}[i%4]
	}
	return b
}

// digest computes the cryptographic digest of pkt (the packet, its
// header's auth field already filled in).
//
// Keyed MD5 (RFC 2328 D.4.3): MD5 over the packet followed by the key
// padded with zeros to 16 bytes. HMAC-SHA (RFC 5709 §3.3): HMAC over the
// packet followed by Apad, the key zero-padded to L bytes or, if longer,
// hashed to L bytes.
func (k Key) digest(pkt []byte) []byte {
	h := k.Alg.hash()
	if k.Alg == AlgMD5 {
		var key [16]byte
		copy(key[:], k.Secret)
		m := md5.New()
		m.Write(pkt)
		m.Write(key[:])
		return m.Sum(nil)
	}
	l := k.Alg.DigestLen()
	secret := k.Secret
	if len(secret) > l {
		s := h()
		s.Write(secret)
		secret = s.Sum(nil)
	}
	m := hmac.New(h, secret)
	m.Write(pkt)
	m.Write(apad(l))
	return m.Sum(nil)
}

// Sign authenticates the encoded packet at b[start:] in place and appends
// the digest, if any. The packet must have been encoded with AuType
// k.Alg.AuType() (AppendTo then leaves the checksum 0 for AuType 2, and
// computes it without the Authentication field for AuType 1). seq is the
// cryptographic sequence number (RFC 2328 D.4.3), unused by AuType 1.
func Sign(b []byte, start int, k Key, seq uint32) ([]byte, error) {
	p := b[start:]
	if len(p) < HeaderLen {
		return b, fmt.Errorf("ospf: sign: %d bytes, shorter than the header", len(p))
	}
	if at := binary.BigEndian.Uint16(p[14:]); at != k.Alg.AuType() {
		return b, fmt.Errorf("ospf: sign: packet has AuType %d, key %s wants %d", at, k.Alg, k.Alg.AuType())
	}
	auth := p[pktAuthOff:pktAuthEnd]
	clear(auth)
	if k.Alg == AlgSimple {
		copy(auth, k.Secret)
		return b, nil
	}
	auth[2] = k.ID
	auth[3] = byte(k.Alg.DigestLen())
	binary.BigEndian.PutUint32(auth[4:], seq)
	binary.BigEndian.PutUint16(p[pktChecksumOff:], 0)
	return append(b, k.digest(p)...), nil
}

// AuthErrKind says why Verify rejected a packet. Its String is a metrics
// label (rx_rejected_auth_<kind>), so the names never change.
type AuthErrKind uint8

const (
	AuthWrongType AuthErrKind = iota + 1 // AuType other than the interface's
	AuthNoKey                            // key id we do not accept
	AuthMismatch                         // digest or password wrong
	AuthMalformed                        // digest length wrong, digest missing
)

var authErrNames = [...]string{AuthWrongType: "auth_type", AuthNoKey: "auth_key_id",
	AuthMismatch: "auth_mismatch", AuthMalformed: "auth_malformed"}

func (k AuthErrKind) String() string {
	if int(k) < len(authErrNames) && authErrNames[k] != "" {
		return authErrNames[k]
	}
	return fmt.Sprintf("auth_%d", uint8(k))
}

// AuthError is Verify's rejection; Offset points at the offending field.
type AuthError struct {
	Kind   AuthErrKind
	Offset int
	Msg    string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("ospf: authentication: offset %d: %s", e.Offset, e.Msg)
}

// Verified is what Verify found in an accepted packet.
type Verified struct {
	Key Key
	Seq uint32 // cryptographic sequence number (AuType 2)
}

// Verify authenticates the packet at the start of b (the IP payload: the
// packet, then for AuType 2 its digest, then maybe more). keys are the
// accepted keys, all of one AuType; none means null authentication
// (AuType 0). The cryptographic sequence number is returned for the
// caller's per-neighbour check (RFC 2328 D.4.3). b is not modified.
func Verify(b []byte, keys []Key) (Verified, error) {
	if len(b) < HeaderLen {
		return Verified{}, &AuthError{Kind: AuthMalformed, Offset: len(b), Msg: "shorter than the header"}
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n < HeaderLen || n > len(b) {
		return Verified{}, &AuthError{Kind: AuthMalformed, Offset: 2, Msg: fmt.Sprintf("packet length %d, %d bytes received", n, len(b))}
	}
	at := binary.BigEndian.Uint16(b[14:])
	want := uint16(AuNull)
	if len(keys) > 0 {
		want = keys[0].Alg.AuType()
	}
	if at != want {
		return Verified{}, &AuthError{Kind: AuthWrongType, Offset: 14, Msg: fmt.Sprintf("AuType %d, this interface uses %d", at, want)}
	}
	auth := b[pktAuthOff:pktAuthEnd]
	switch at {
	case AuNull:
		return Verified{}, nil
	case AuSimple:
		for _, k := range keys {
			var pw [MaxSimplePassword]byte
			copy(pw[:], k.Secret)
			if subtle.ConstantTimeCompare(auth, pw[:]) == 1 {
				return Verified{Key: k}, nil
			}
		}
		return Verified{}, &AuthError{Kind: AuthMismatch, Offset: pktAuthOff, Msg: "simple password does not match"}
	}
	id, l, seq := auth[2], int(auth[3]), binary.BigEndian.Uint32(auth[4:])
	for _, k := range keys {
		if k.ID != id {
			continue
		}
		if l != k.Alg.DigestLen() {
			return Verified{}, &AuthError{Kind: AuthMalformed, Offset: pktAuthOff + 3,
				Msg: fmt.Sprintf("key id %d: authentication data length %d, %s wants %d", id, l, k.Alg, k.Alg.DigestLen())}
		}
		if n+l > len(b) {
			return Verified{}, &AuthError{Kind: AuthMalformed, Offset: n,
				Msg: fmt.Sprintf("digest of %d bytes missing: %d bytes after the packet", l, len(b)-n)}
		}
		if !hmac.Equal(b[n:n+l], k.digest(b[:n])) {
			return Verified{}, &AuthError{Kind: AuthMismatch, Offset: n, Msg: fmt.Sprintf("key id %d: digest does not match", id)}
		}
		return Verified{Key: k, Seq: seq}, nil
	}
	return Verified{}, &AuthError{Kind: AuthNoKey, Offset: pktAuthOff + 2, Msg: fmt.Sprintf("key id %d is not accepted", id)}
}
