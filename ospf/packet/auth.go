package packet

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/fared/fared/internal/igp/keyauth"
)

// Alg is an OSPFv2 authentication algorithm (internal/igp/keyauth).
type Alg = keyauth.Alg

const (
	AlgSimple     = keyauth.Clear    // AuType 1: the password in the header (RFC 2328 D.3)
	AlgMD5        = keyauth.MD5      // AuType 2, keyed MD5 (RFC 2328 D.4.3)
	AlgHMACSHA1   = keyauth.HMACSHA1 // AuType 2, HMAC-SHA (RFC 5709)
	AlgHMACSHA256 = keyauth.HMACSHA256
	AlgHMACSHA384 = keyauth.HMACSHA384
	AlgHMACSHA512 = keyauth.HMACSHA512
)

// ParseAlg reads an algorithm name as the config spells it. RFC 5709
// defines no HMAC-SHA-224 for OSPFv2.
func ParseAlg(s string) (Alg, bool) {
	a, ok := keyauth.ParseAlg(s)
	return a, ok && a != keyauth.HMACSHA224
}

// Key is one OSPF authentication key: a simple password (at most 8
// bytes) or a cryptographic key with its key id.
type Key struct {
	ID     uint8
	Alg    Alg
	Secret []byte
}

// AuType is the header AuType the key's algorithm goes out as.
func (k Key) AuType() uint16 {
	if k.Alg == AlgSimple {
		return AuSimple
	}
	return AuCrypto
}

// MaxSimplePassword is the size of the header's Authentication field.
const MaxSimplePassword = 8

// digest computes the cryptographic digest of pkt (the packet, its
// header's auth field already filled in).
//
// Keyed MD5 (RFC 2328 D.4.3): MD5 over the packet followed by the key
// padded with zeros to 16 bytes. HMAC-SHA (RFC 5709 §3.3): HMAC over the
// packet followed by Apad, the key zero-padded to L bytes or, if longer,
// hashed to L bytes.
func (k Key) digest(pkt []byte) []byte {
	if k.Alg == AlgMD5 {
		var key [16]byte
		copy(key[:], k.Secret)
		m := md5.New()
		m.Write(pkt)
		m.Write(key[:])
		return m.Sum(nil)
	}
	m := keyauth.NewHMAC(k.Alg, k.Secret)
	m.Write(pkt)
	m.Write(keyauth.Apad(k.Alg.DigestLen()))
	return m.Sum(nil)
}

// Sign authenticates the encoded packet at b[start:] in place and appends
// the digest, if any. The packet must have been encoded with AuType
// k.AuType() (AppendTo then leaves the checksum 0 for AuType 2, and
// computes it without the Authentication field for AuType 1). seq is the
// cryptographic sequence number (RFC 2328 D.4.3), unused by AuType 1.
func Sign(b []byte, start int, k Key, seq uint32) ([]byte, error) {
	p := b[start:]
	if len(p) < HeaderLen {
		return b, fmt.Errorf("ospf: sign: %d bytes, shorter than the header", len(p))
	}
	if at := binary.BigEndian.Uint16(p[14:]); at != k.AuType() {
		return b, fmt.Errorf("ospf: sign: packet has AuType %d, key %s wants %d", at, k.Alg, k.AuType())
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

// AuthErrKind says why Verify rejected a packet (keyauth.ErrKind: its
// String is a metrics label).
type AuthErrKind = keyauth.ErrKind

const (
	AuthWrongType = keyauth.WrongType // AuType other than the interface's
	AuthNoKey     = keyauth.NoKey     // key id we do not accept
	AuthMismatch  = keyauth.Mismatch  // digest or password wrong
	AuthMalformed = keyauth.Malformed // digest length wrong, digest missing
)

// AuthError is Verify's rejection; Offset points at the offending field.
type AuthError = keyauth.Error

// AuthKind is why Verify rejected a packet (keyauth.KindOf): the kind its
// rejected_auth_<kind> counter names.
func AuthKind(err error) AuthErrKind { return keyauth.KindOf(err) }

// authErr is Verify's rejection of kind at off.
func authErr(kind AuthErrKind, off int, format string, args ...any) *AuthError {
	return &AuthError{Proto: "ospf", Kind: kind, Offset: off, Msg: fmt.Sprintf(format, args...)}
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
		return Verified{}, authErr(AuthMalformed, len(b), "shorter than the header")
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n < HeaderLen || n > len(b) {
		return Verified{}, authErr(AuthMalformed, 2, "packet length %d, %d bytes received", n, len(b))
	}
	at := binary.BigEndian.Uint16(b[14:])
	want := uint16(AuNull)
	if len(keys) > 0 {
		want = keys[0].AuType()
	}
	if at != want {
		return Verified{}, authErr(AuthWrongType, 14, "AuType %d, this interface uses %d", at, want)
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
		return Verified{}, authErr(AuthMismatch, pktAuthOff, "simple password does not match")
	}
	id, l, seq := auth[2], int(auth[3]), binary.BigEndian.Uint32(auth[4:])
	for _, k := range keys {
		if k.ID != id {
			continue
		}
		if l != k.Alg.DigestLen() {
			return Verified{}, authErr(AuthMalformed, pktAuthOff+3, "key id %d: authentication data length %d, %s wants %d", id, l, k.Alg, k.Alg.DigestLen())
		}
		if n+l > len(b) {
			return Verified{}, authErr(AuthMalformed, n, "digest of %d bytes missing: %d bytes after the packet", l, len(b)-n)
		}
		if !hmac.Equal(b[n:n+l], k.digest(b[:n])) {
			return Verified{}, authErr(AuthMismatch, n, "key id %d: digest does not match", id)
		}
		return Verified{Key: k, Seq: seq}, nil
	}
	return Verified{}, authErr(AuthNoKey, pktAuthOff+2, "key id %d is not accepted", id)
}
