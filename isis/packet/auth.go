package packet

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"hash"

	"github.com/fared/fared/internal/igp/keyauth"
)

// TLVAuth is the Authentication TLV (ISO 10589 §9.8, RFC 5304, RFC 5310).
const TLVAuth = 10

// Authentication types of TLV 10 (the first value byte).
const (
	AuthTypeClear   = 1  // cleartext password (ISO 10589)
	AuthTypeGeneric = 3  // generic cryptographic authentication: key id + HMAC-SHA (RFC 5310)
	AuthTypeHMACMD5 = 54 // HMAC-MD5 (RFC 5304)
)

// Auth is TLV 10. For AuthTypeGeneric, KeyID is the key id and Value the
// authentication data after it; for the other types Value is everything
// after the type byte (the password, the 16-byte digest).
type Auth struct {
	AuthType uint8
	KeyID    uint16
	Value    []byte
}

func (Auth) Type() uint8 { return TLVAuth }

func (a Auth) AppendValue(b []byte) []byte {
	b = append(b, a.AuthType)
	if a.AuthType == AuthTypeGeneric {
		b = binary.BigEndian.AppendUint16(b, a.KeyID)
	}
	return append(b, a.Value...)
}

func decodeAuth(v []byte, off int) (TLV, error) {
	if len(v) < 1 {
		return nil, tlvError(TLVAuth, off, 0, "empty: no authentication type")
	}
	a := &Auth{AuthType: v[0], Value: sub(v, 1, len(v))}
	switch a.AuthType {
	case AuthTypeHMACMD5:
		if len(v) != 1+md5.Size {
			return nil, tlvError(TLVAuth, off, 0, "HMAC-MD5: length %d, want 17 (RFC 5304)", len(v))
		}
	case AuthTypeGeneric:
		if len(v) < 3 {
			return nil, tlvError(TLVAuth, off, 0, "generic cryptographic: length %d, shorter than type and key id (RFC 5310)", len(v))
		}
		a.KeyID = binary.BigEndian.Uint16(v[1:])
		a.Value = sub(v, 3, len(v))
	}
	return a, nil
}

// Auth returns the first Authentication TLV.
func (t TLVs) Auth() (Auth, bool) {
	for _, v := range t {
		switch a := v.(type) {
		case *Auth:
			return *a, true
		case Auth:
			return a, true
		}
	}
	return Auth{}, false
}

// WithoutAuth returns the TLVs less any Authentication TLV (a new slice).
func (t TLVs) WithoutAuth() TLVs {
	out := make(TLVs, 0, len(t))
	for _, v := range t {
		if v.Type() != TLVAuth {
			out = append(out, v)
		}
	}
	return out
}

// Alg is an authentication algorithm (internal/igp/keyauth).
type Alg = keyauth.Alg

const (
	AlgClear      = keyauth.Clear      // cleartext password, type 1
	AlgHMACMD5    = keyauth.MD5        // RFC 5304, type 54
	AlgHMACSHA1   = keyauth.HMACSHA1   // RFC 5310, type 3
	AlgHMACSHA224 = keyauth.HMACSHA224 // RFC 5310, type 3, and so on
	AlgHMACSHA256 = keyauth.HMACSHA256
	AlgHMACSHA384 = keyauth.HMACSHA384
	AlgHMACSHA512 = keyauth.HMACSHA512
)

// ParseAlg reads an algorithm name as the config spells it: IS-IS knows
// every algorithm of keyauth.
func ParseAlg(s string) (Alg, bool) { return keyauth.ParseAlg(s) }

// Key is one authentication key. ID is sent only with RFC 5310 (and is
// how a receiver picks the key); an HMAC-MD5 key is matched by trying it.
type Key struct {
	ID     uint16
	Alg    Alg
	Secret []byte
}

// AuthType is the TLV 10 type the key's algorithm goes out as.
func (k Key) AuthType() uint8 {
	switch k.Alg {
	case AlgClear:
		return AuthTypeClear
	case AlgHMACMD5:
		return AuthTypeHMACMD5
	}
	return AuthTypeGeneric
}

// MaxClearPassword is the longest cleartext password TLV 10 carries.
const MaxClearPassword = MaxTLVValue - 1

// Placeholder is the TLV 10 the key puts in a PDU before Sign fills it in:
// a cleartext password as it is, a digest field of zeros.
func (k Key) Placeholder() *Auth {
	a := &Auth{AuthType: k.AuthType(), KeyID: k.ID}
	if k.Alg == AlgClear {
		a.Value = k.Secret[:min(len(k.Secret), MaxClearPassword)]
	} else {
		a.Value = make([]byte, k.Alg.DigestLen())
	}
	if a.AuthType != AuthTypeGeneric {
		a.KeyID = 0
	}
	return a
}

// TLVLen is the wire size of the key's TLV 10, type and length included:
// what a PDU must leave room for.
func (k Key) TLVLen() int { return 2 + valueLen(k.Placeholder()) }

// authField locates the first TLV 10 in a raw PDU: the offset of its value
// (the type byte) and its length. Every TLV must be framed within the PDU
// length; more than one TLV 10 is an error (which one would count?).
func authField(p []byte) (off, n int, err error) {
	if len(p) < commonHdrLen {
		return 0, 0, fmt.Errorf("%d bytes, shorter than the common header", len(p))
	}
	t := p[4] & 0x1f
	hl := headerLen(t)
	if hl == 0 || len(p) < hl {
		return 0, 0, fmt.Errorf("not a complete IS-IS PDU header")
	}
	lo := pduLenOffset(t)
	end := int(binary.BigEndian.Uint16(p[lo:]))
	if end > len(p) || end < hl {
		return 0, 0, fmt.Errorf("PDU length %d does not fit the %d bytes", end, len(p))
	}
	off = -1
	for i := hl; i < end; {
		if i+2 > end || i+2+int(p[i+1]) > end {
			return 0, 0, fmt.Errorf("TLV %d at offset %d runs past the PDU", p[i], i)
		}
		if p[i] == TLVAuth {
			if off >= 0 {
				return 0, 0, fmt.Errorf("second authentication TLV at offset %d", i)
			}
			off, n = i+2, int(p[i+1])
		}
		i += 2 + int(p[i+1])
	}
	return off, n, nil
}

// isLSP reports whether the raw PDU is an LSP.
func isLSP(p []byte) bool {
	t := p[4] & 0x1f
	return t == TypeL1LSP || t == TypeL2LSP
}

// digest computes the authentication data of the raw PDU p whose TLV 10
// value starts at off, for key k. p is not modified. For an LSP the
// remaining lifetime and the checksum count as zero (RFC 5304 §2, RFC 5310
// §3.3): both change in transit. The digest field counts as zero for
// HMAC-MD5 (RFC 5304) and as Apad for RFC 5310.
func (k Key) digest(p []byte, off int) []byte {
	c := make([]byte, len(p))
	copy(c, p)
	if isLSP(c) {
		c[lspLifetime], c[lspLifetime+1] = 0, 0
		c[lspCksumField], c[lspCksumField+1] = 0, 0
	}
	l := k.Alg.DigestLen()
	var m hash.Hash
	if k.Alg == AlgHMACMD5 {
		clear(c[off+1 : off+1+l])
		m = hmac.New(md5.New, k.Secret)
	} else {
		copy(c[off+3:off+3+l], keyauth.Apad(l))
		m = keyauth.NewHMAC(k.Alg, k.Secret)
	}
	m.Write(c)
	return m.Sum(nil)
}

// Sign fills in the TLV 10 of the encoded PDU p (the key's Placeholder,
// put there by the encoder) in place. For an LSP it then recomputes the
// checksum, which covers the digest; a purge sent with checksum 0 keeps
// it. Sign fails if p holds no TLV 10 of the key's type and size.
func Sign(p []byte, k Key) error {
	off, n, err := authField(p)
	if err != nil {
		return err
	}
	ph := k.Placeholder()
	if off < 0 || n != valueLen(ph) || p[off] != ph.AuthType {
		return fmt.Errorf("isis: no %s authentication TLV to sign", k.Alg)
	}
	switch k.Alg {
	case AlgClear:
		copy(p[off+1:], ph.Value)
	case AlgHMACMD5:
		copy(p[off+1:], k.digest(p, off))
	default:
		binary.BigEndian.PutUint16(p[off+1:], k.ID)
		copy(p[off+3:], k.digest(p, off))
	}
	if isLSP(p) && binary.BigEndian.Uint16(p[lspCksumField:]) != 0 {
		binary.BigEndian.PutUint16(p[lspCksumField:], LSPChecksum(p))
	}
	return nil
}

// AuthErrKind says why Verify rejected a PDU (keyauth.ErrKind: its String
// is a metrics label).
type AuthErrKind = keyauth.ErrKind

const (
	AuthMissing   = keyauth.Missing   // no TLV 10 where one is required
	AuthWrongType = keyauth.WrongType // TLV 10 of a type we have no key for
	AuthNoKey     = keyauth.NoKey     // RFC 5310 key id we do not accept
	AuthMismatch  = keyauth.Mismatch  // digest or password wrong
	AuthMalformed = keyauth.Malformed // TLV 10 with a wrong length, two of them
)

// AuthError is Verify's rejection. Offset is that of the TLV 10 value (or
// of the first TLV when it is missing).
type AuthError = keyauth.Error

// AuthKind is why Verify rejected a PDU (keyauth.KindOf): the kind its
// rejected_auth_<kind> counter names.
func AuthKind(err error) AuthErrKind { return keyauth.KindOf(err) }

// authErr is Verify's rejection of kind at off.
func authErr(kind AuthErrKind, off int, format string, args ...any) *AuthError {
	return &AuthError{Proto: "isis", Kind: kind, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Verify checks the TLV 10 of the raw PDU p against the accepted keys and
// returns the key that verified. Bytes past the PDU length (padding) are
// not covered. With no keys everything is accepted (authentication off).
// HMAC-MD5 carries no key id, so each MD5 key is tried; RFC 5310 keys are
// picked by key id; cleartext passwords are compared. p is not modified.
func Verify(p []byte, keys []Key) (Key, error) {
	if len(keys) == 0 {
		return Key{}, nil
	}
	off, n, err := authField(p)
	if err != nil {
		return Key{}, authErr(AuthMalformed, 0, "%s", err)
	}
	if off < 0 {
		return Key{}, authErr(AuthMissing, int(p[1]), "no authentication TLV")
	}
	if n < 1 {
		return Key{}, authErr(AuthMalformed, off, "empty authentication TLV")
	}
	end := off + n
	typ := p[off]
	var id uint16
	if typ == AuthTypeGeneric {
		if n < 3 {
			return Key{}, authErr(AuthMalformed, off, "generic cryptographic TLV of %d bytes", n)
		}
		id = binary.BigEndian.Uint16(p[off+1:])
	}
	typeKnown, idKnown := false, false
	for _, k := range keys {
		if k.AuthType() != typ {
			continue
		}
		typeKnown = true
		if typ == AuthTypeGeneric && k.ID != id {
			continue
		}
		idKnown = true
		switch k.Alg {
		case AlgClear:
			if subtle.ConstantTimeCompare(p[off+1:end], k.Secret) == 1 {
				return k, nil
			}
		case AlgHMACMD5:
			if n != 1+md5.Size {
				return Key{}, authErr(AuthMalformed, off, "HMAC-MD5 TLV of %d bytes, want 17", n)
			}
			if hmac.Equal(p[off+1:end], k.digest(p, off)) {
				return k, nil
			}
		default:
			if n != 3+k.Alg.DigestLen() {
				return Key{}, authErr(AuthMalformed, off, "key id %d: %d bytes of authentication data, %s wants %d", id, n-3, k.Alg, k.Alg.DigestLen())
			}
			if hmac.Equal(p[off+3:end], k.digest(p, off)) {
				return k, nil
			}
		}
	}
	switch {
	case !typeKnown:
		return Key{}, authErr(AuthWrongType, off, "authentication type %d, none of our keys uses it", typ)
	case !idKnown:
		return Key{}, authErr(AuthNoKey, off, "key id %d is not accepted", id)
	}
	return Key{}, authErr(AuthMismatch, off, "authentication type %d: no accepted key matches", typ)
}

// PurgeTLVOK reports whether a TLV may appear in a purge when
// authentication is in use (RFC 6233 §3 and the IANA registry's purge
// column for the TLVs fared knows): authentication, Purge Originator
// Identification, dynamic hostname.
func PurgeTLVOK(t uint8) bool {
	return t == TLVAuth || t == TLVPurgeOriginator || t == TLVHostname
}
