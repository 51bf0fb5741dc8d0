package l2

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// TLVAuth authenticates a host's request (Register, Keepalive,
// Deregister) with the host's key: key id, counter, HMAC-SHA-256. It is
// the last TLV of the message, and the HMAC covers every byte of the
// message before it and the TLV itself with the digest field zeroed
// (docs/inof.md, "Keys").
const TLVAuth = 16

// AuthLen is the length of the auth TLV's value: key id (2), counter (8),
// digest (32).
const AuthLen = 2 + 8 + sha256.Size

// Auth is the value of the auth TLV.
type Auth struct {
	// KeyID names which of the host's keys signed (rollover: a switch may
	// hold several keys of one host).
	KeyID uint16
	// Counter is the replay protection: the host's clock in milliseconds
	// since 1970, strictly increasing from one message to the next. A
	// switch accepts a counter only within AuthWindow of its own clock and
	// above the last it accepted from that host on that port.
	Counter uint64
	// Digest is HMAC-SHA-256 over the message (this field zeroed).
	Digest [sha256.Size]byte
}

// Key is one of a host's keys.
type Key struct {
	ID     uint16
	Secret []byte
}

// DecodeAuth parses the auth TLV's value.
func DecodeAuth(v []byte) (Auth, error) {
	if len(v) != AuthLen {
		return Auth{}, fmt.Errorf("auth: length %d, want %d", len(v), AuthLen)
	}
	a := Auth{KeyID: binary.BigEndian.Uint16(v), Counter: binary.BigEndian.Uint64(v[2:])}
	copy(a.Digest[:], v[10:])
	return a, nil
}

// AppendTo appends the auth TLV's value.
func (a *Auth) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, a.KeyID)
	b = binary.BigEndian.AppendUint64(b, a.Counter)
	return append(b, a.Digest[:]...)
}

// Sign adds the auth TLV to m: key k, counter c. The digest is computed
// over m as AppendTo encodes it, so m must not change afterwards.
func (m *Message) Sign(k Key, c uint64) {
	m.Auth = &Auth{KeyID: k.ID, Counter: c}
	m.raw = nil
	b := m.AppendTo(nil)
	m.Auth.Digest = digest(k.Secret, b)
}

// Verify reports whether m, as received, carries an auth TLV whose digest
// key k computes. A message built locally (not decoded) has no received
// bytes and does not verify.
func (m *Message) Verify(k Key) bool {
	if m.Auth == nil || m.raw == nil || m.Auth.KeyID != k.ID {
		return false
	}
	want := digest(k.Secret, m.raw)
	return hmac.Equal(want[:], m.Auth.Digest[:])
}

// digest is HMAC-SHA-256 over b, whose last sha256.Size bytes (the auth
// TLV's digest field) count as zero.
func digest(secret, b []byte) [sha256.Size]byte {
	h := hmac.New(sha256.New, secret)
	h.Write(b[:len(b)-sha256.Size])
	var zero [sha256.Size]byte
	h.Write(zero[:])
	var d [sha256.Size]byte
	copy(d[:], h.Sum(nil))
	return d
}
