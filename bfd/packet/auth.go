package packet

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// The authentication section (RFC 5880 §4.2-4.4) and its digests (§6.7).
//
// Simple password (§4.2):
//
//	Auth Type 1 | Auth Len 3+n | Key ID | Password (1..16 bytes)
//
// Keyed and meticulous keyed MD5 (§4.3) and SHA1 (§4.4):
//
//	Auth Type | Auth Len 24/28 | Key ID | Reserved
//	Sequence Number (32 bits)
//	Digest (16 bytes MD5, 20 bytes SHA1)
//
// The digest is MD5 or SHA1 (not an HMAC) of the whole packet with the key,
// zero-padded to the digest's length, in the digest field (§6.7.3-6.7.4).

// AuthType is the Auth Type of an authentication section.
type AuthType uint8

const (
	AuthSimple         AuthType = 1
	AuthKeyedMD5       AuthType = 2
	AuthMeticulousMD5  AuthType = 3
	AuthKeyedSHA1      AuthType = 4
	AuthMeticulousSHA1 AuthType = 5
	maxAuthType                 = AuthMeticulousSHA1
)

// MaxPassword is the longest simple password (§4.2).
const MaxPassword = 16

const (
	authHeadLen       = 3 // type, len, key id
	authCryptoHeadLen = 8 // type, len, key id, reserved, sequence number
	authSimpleLenMin  = authHeadLen + 1
	authSimpleMax     = authHeadLen + MaxPassword
)

var authNames = [...]string{"none", "simple", "keyed-md5", "meticulous-keyed-md5", "keyed-sha1", "meticulous-keyed-sha1"}

// String is the type's name in fared's configuration ("keyed-sha1").
func (t AuthType) String() string {
	if int(t) < len(authNames) {
		return authNames[t]
	}
	return fmt.Sprintf("auth-type-%d", uint8(t))
}

// ParseAuthType reads a name String gives (not "none").
func ParseAuthType(s string) (AuthType, bool) {
	for i, n := range authNames {
		if i > 0 && n == s {
			return AuthType(i), true
		}
	}
	return 0, false
}

// AuthTypeNames lists the configurable names, in Auth Type order.
func AuthTypeNames() []string { return append([]string(nil), authNames[1:]...) }

// Meticulous: the sequence number grows with every packet and must grow
// with every packet received (§6.7.3).
func (t AuthType) Meticulous() bool { return t == AuthMeticulousMD5 || t == AuthMeticulousSHA1 }

// Crypto: the section carries a sequence number and a digest.
func (t AuthType) Crypto() bool { return t >= AuthKeyedMD5 && t <= AuthMeticulousSHA1 }

// DigestLen is the digest's length (16 MD5, 20 SHA1; 0 simple).
func (t AuthType) DigestLen() int {
	switch t {
	case AuthKeyedMD5, AuthMeticulousMD5:
		return md5.Size
	case AuthKeyedSHA1, AuthMeticulousSHA1:
		return sha1.Size
	}
	return 0
}

// MaxKeyLen is the longest key (password) of the type: 16 for simple and
// MD5, 20 for SHA1 (the key fills the digest field when hashing).
func (t AuthType) MaxKeyLen() int {
	if t == AuthSimple {
		return MaxPassword
	}
	return t.DigestLen()
}

// Auth is an authentication section. It is a value (comparable), so a
// Control stays comparable.
type Auth struct {
	Type  AuthType // 0: no section
	KeyID uint8
	Seq   uint32 // keyed MD5/SHA1 only
	// Value is the password (simple) or the digest (MD5, SHA1); ValueLen
	// says how many bytes of it the section holds.
	Value    [20]byte
	ValueLen uint8
}

// Len is the Auth Len of the section.
func (a Auth) Len() int {
	if a.Type == AuthSimple {
		return authHeadLen + int(a.ValueLen)
	}
	return authCryptoHeadLen + a.Type.DigestLen()
}

// Password is a simple password's bytes.
func (a Auth) Password() []byte { return a.Value[:min(int(a.ValueLen), len(a.Value))] }

func (a Auth) appendTo(b []byte) []byte {
	b = append(b, byte(a.Type), byte(a.Len()), a.KeyID)
	if a.Type == AuthSimple {
		return append(b, a.Password()...)
	}
	b = append(b, 0) // reserved
	b = binary.BigEndian.AppendUint32(b, a.Seq)
	return append(b, a.Value[:a.Type.DigestLen()]...)
}

// decodeAuth parses the section in b, which is everything from offset
// Len to the packet's Length: the section must fill it exactly (the
// digest covers Length bytes, so there is no room for anything else).
func decodeAuth(b []byte) (Auth, error) {
	var a Auth
	// len(b) >= 2: Decode asked for a Length of at least 26.
	a.Type = AuthType(b[0])
	if a.Type == 0 || a.Type > maxAuthType {
		return a, errAt(KindAuthType, "Auth Type", Len, "type %d is %s", b[0], map[bool]string{true: "reserved", false: "unknown"}[b[0] == 0])
	}
	n := int(b[1])
	if n != len(b) {
		return a, errAt(KindAuthLen, "Auth Len", Len+1, "%d, but the packet's Length leaves %d bytes for the section", n, len(b))
	}
	if a.Type == AuthSimple {
		if n < authSimpleLenMin || n > authSimpleMax {
			return a, errAt(KindAuthLen, "Auth Len", Len+1, "%d for a simple password, want %d..%d", n, authSimpleLenMin, authSimpleMax)
		}
		a.KeyID = b[2]
		a.ValueLen = uint8(copy(a.Value[:], b[authHeadLen:]))
		return a, nil
	}
	if want := authCryptoHeadLen + a.Type.DigestLen(); n != want {
		return a, errAt(KindAuthLen, "Auth Len", Len+1, "%d for %s, want %d", n, a.Type, want)
	}
	a.KeyID = b[2] // b[3] is reserved: ignored on receipt
	a.Seq = binary.BigEndian.Uint32(b[4:8])
	a.ValueLen = uint8(copy(a.Value[:], b[authCryptoHeadLen:]))
	return a, nil
}

// Sign completes the authentication section of an encoded packet b (as
// AppendTo wrote it, Length bytes) for key: the password of a simple
// section, the digest of a keyed MD5/SHA1 one. The packet's Auth Type
// says which; key is at most the type's MaxKeyLen bytes (longer keys are
// refused by the configuration).
func Sign(b []byte, key []byte) error {
	t, off, err := section(b)
	if err != nil {
		return err
	}
	if t == AuthSimple {
		if len(key) != int(b[Len+1])-authHeadLen {
			return fmt.Errorf("bfd: the section has room for %d password bytes, the key has %d", int(b[Len+1])-authHeadLen, len(key))
		}
		copy(b[Len+authHeadLen:], key)
		return nil
	}
	sum := digest(t, b, off, key)
	copy(b[off:], sum)
	return nil
}

// Verify reports whether the authentication section of packet b (the
// Length bytes received) is right for key: the same password, or the
// digest computed with the key. It runs in constant time in the key's
// bytes.
func Verify(b []byte, key []byte) bool {
	t, off, err := section(b)
	if err != nil {
		return false
	}
	if t == AuthSimple {
		pw := b[Len+authHeadLen : Len+int(b[Len+1])]
		return len(pw) == len(key) && subtle.ConstantTimeCompare(pw, key) == 1
	}
	return subtle.ConstantTimeCompare(digest(t, b, off, key), b[off:off+t.DigestLen()]) == 1
}

// section returns the Auth Type of a well-formed packet with an
// authentication section, and the offset of its digest.
func section(b []byte) (AuthType, int, error) {
	c, err := Decode(b)
	if err != nil {
		return 0, 0, err
	}
	if c.Auth.Type == 0 {
		return 0, 0, fmt.Errorf("bfd: the packet has no authentication section")
	}
	return c.Auth.Type, Len + authCryptoHeadLen, nil
}

// digest is MD5/SHA1 over the packet's Length bytes with the key,
// zero-padded, in place of the digest (b is not changed).
func digest(t AuthType, b []byte, off int, key []byte) []byte {
	n := int(b[3])
	buf := make([]byte, n)
	copy(buf, b[:n])
	field := buf[off : off+t.DigestLen()]
	clear(field)
	copy(field, key)
	if t.DigestLen() == md5.Size {
		s := md5.Sum(buf)
		return s[:]
	}
	s := sha1.Sum(buf)
	return s[:]
}
