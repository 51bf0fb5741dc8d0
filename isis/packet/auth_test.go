package packet

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
)

// withAuth returns a copy of p with the key's placeholder as its first TLV.
func withAuth(t testing.TB, p PDU, k Key) PDU {
	t.Helper()
	q := PrependTLVs(p, k.Placeholder())
	if q == nil {
		t.Fatalf("unknown PDU %T", p)
	}
	return q
}

func signed(t testing.TB, p PDU, k Key) []byte {
	t.Helper()
	b := withAuth(t, p, k).AppendTo(nil)
	if err := Sign(b, k); err != nil {
		t.Fatal(err)
	}
	return b
}

var testKeys = []Key{
	{Alg: AlgClear, Secret: []byte("plain")},
	{Alg: AlgHMACMD5, Secret: []byte("md5-secret")},
	{ID: 1, Alg: AlgHMACSHA1, Secret: []byte("sha1")},
	{ID: 7, Alg: AlgHMACSHA256, Secret: []byte("sha-256 key")},
	{ID: 65535, Alg: AlgHMACSHA512, Secret: bytes.Repeat([]byte("long"), 40)},
}

// Every PDU type signed with every algorithm decodes, verifies with its
// key and is rejected, for the right reason, with any other.
func TestSignVerify(t *testing.T) {
	for name, p := range samplePDUs(t) {
		for _, k := range testKeys {
			b := signed(t, p, k)
			d, err := Decode(b)
			if err != nil {
				t.Fatalf("%s %s: %v", name, k.Alg, err)
			}
			if a, ok := TLVsOf(d).Auth(); !ok || a.AuthType != k.AuthType() || (a.AuthType == AuthTypeGeneric && a.KeyID != k.ID) {
				t.Fatalf("%s %s: auth TLV %+v", name, k.Alg, a)
			}
			if l, ok := d.(*LSP); ok && !LSPChecksumOK(b) {
				t.Fatalf("%s %s: checksum broken by signing (%#04x)", name, k.Alg, l.Checksum)
			}
			got, err := Verify(b, []Key{{ID: 99, Alg: AlgHMACSHA256, Secret: []byte("x")}, k})
			if err != nil || got.Alg != k.Alg {
				t.Fatalf("%s %s: verify: %v", name, k.Alg, err)
			}
			wrong := k
			wrong.Secret = []byte("wrong")
			if _, err := Verify(b, []Key{wrong}); AuthKind(err) != AuthMismatch {
				t.Fatalf("%s %s: wrong secret: %v", name, k.Alg, err)
			}
			if k.AuthType() == AuthTypeGeneric {
				other := k
				other.ID++
				if _, err := Verify(b, []Key{other}); AuthKind(err) != AuthNoKey {
					t.Fatalf("%s %s: other key id: %v", name, k.Alg, err)
				}
			}
			otherType := Key{Alg: AlgHMACMD5, Secret: k.Secret}
			if k.Alg == AlgHMACMD5 {
				otherType = Key{Alg: AlgClear, Secret: k.Secret}
			}
			if _, err := Verify(b, []Key{otherType}); AuthKind(err) != AuthWrongType {
				t.Fatalf("%s %s: other type: %v", name, k.Alg, err)
			}
			if _, err := Verify(p.AppendTo(nil), []Key{k}); AuthKind(err) != AuthMissing {
				t.Fatalf("%s %s: unsigned: %v", name, k.Alg, err)
			}
			if k.Alg == AlgClear {
				continue
			}
			// One flipped bit anywhere covered fails; for an LSP the
			// lifetime and checksum are not covered.
			for i := range b {
				c := bytes.Clone(b)
				c[i] ^= 0x10
				_, err := Verify(c, []Key{k})
				lspMutable := isLSP(b) && (i == 10 || i == 11 || i == 24 || i == 25)
				if lspMutable && err != nil {
					t.Fatalf("%s %s: changing byte %d (lifetime/checksum) broke the digest: %v", name, k.Alg, i, err)
				}
				if !lspMutable && err == nil {
					t.Fatalf("%s %s: byte %d changed and the PDU still verifies", name, k.Alg, i)
				}
			}
		}
	}
}

// RFC 5304 §2 by hand: HMAC-MD5 over the PDU with the digest field zero
// and, for an LSP, the remaining lifetime and checksum zero; the checksum
// is computed afterwards over the PDU with the digest in it.
func TestHMACMD5ByHand(t *testing.T) {
	k := Key{Alg: AlgHMACMD5, Secret: []byte("fabric-key")}
	for name, p := range samplePDUs(t) {
		unsigned := withAuth(t, p, k).AppendTo(nil)
		off := int(unsigned[1]) // the placeholder is the first TLV
		if unsigned[off] != TLVAuth || unsigned[off+1] != 17 || unsigned[off+2] != 54 {
			t.Fatalf("%s: placeholder % x", name, unsigned[off:off+3])
		}
		in := bytes.Clone(unsigned)
		if isLSP(in) {
			copy(in[10:12], []byte{0, 0})
			copy(in[24:26], []byte{0, 0})
		}
		m := hmac.New(md5.New, k.Secret)
		m.Write(in)
		want := m.Sum(nil)
		b := signed(t, p, k)
		if !bytes.Equal(b[off+3:off+19], want) {
			t.Fatalf("%s: digest %x, by hand %x", name, b[off+3:off+19], want)
		}
		if isLSP(b) {
			if !bytes.Equal(b[10:12], unsigned[10:12]) {
				t.Fatalf("%s: lifetime changed", name)
			}
			if !LSPChecksumOK(b) {
				t.Fatalf("%s: checksum not recomputed", name)
			}
		}
	}
}

// RFC 5310 §3.3 by hand: key id in clear, the authentication data field
// filled with Apad (0x878FE1F3 repeated) while hashing, a key longer than
// the digest hashed to it first.
func TestRFC5310ByHand(t *testing.T) {
	long := bytes.Repeat([]byte{0xA5}, 40) // longer than L = 32, shorter than the block
	for _, secret := range [][]byte{[]byte("short"), long} {
		k := Key{ID: 0x1234, Alg: AlgHMACSHA256, Secret: secret}
		p := samplePDUs(t)["lsp"]
		unsigned := withAuth(t, p, k).AppendTo(nil)
		off := int(unsigned[1])
		if unsigned[off+1] != 35 || unsigned[off+2] != 3 {
			t.Fatalf("placeholder % x", unsigned[off:off+5])
		}
		in := bytes.Clone(unsigned)
		copy(in[10:12], []byte{0, 0})
		copy(in[24:26], []byte{0, 0})
		for i := 0; i < 32; i += 4 {
			copy(in[off+5+i:], []byte{0x87, 0x8F, 0xE1, 0xF3})
		}
		ko := secret
		if len(ko) > 32 {
			s := sha256.Sum256(ko)
			ko = s[:]
		}
		m := hmac.New(sha256.New, ko)
		m.Write(in)
		want := m.Sum(nil)
		b := signed(t, p, k)
		if binary.BigEndian.Uint16(b[off+3:]) != 0x1234 {
			t.Fatalf("key id % x", b[off+3:off+5])
		}
		if !bytes.Equal(b[off+5:off+37], want) {
			t.Fatalf("secret %d bytes: digest %x, by hand %x", len(secret), b[off+5:off+37], want)
		}
	}
}

// Malformed TLV 10s are decode errors naming TLV 10 and its offset, and
// Verify rejects them as malformed, never panicking.
func TestAuthMalformed(t *testing.T) {
	p := samplePDUs(t)["p2p_iih"]
	for _, v := range [][]byte{{}, {54, 1, 2}, {3, 0}} {
		b := withAuth(t, p, Key{Alg: AlgClear, Secret: []byte("x")}).AppendTo(nil)
		off := int(b[1])
		tail := bytes.Clone(b[off+3:])
		b = append(append(b[:off], TLVAuth, byte(len(v))), v...)
		b = append(b, tail...)
		binary.BigEndian.PutUint16(b[17:], uint16(len(b)))
		_, err := Decode(b)
		var de *DecodeError
		if !errors.As(err, &de) || de.TLV != TLVAuth || de.Offset != off {
			t.Fatalf("value % x: %v", v, err)
		}
		if _, err := Verify(b, testKeys); err == nil {
			t.Fatalf("value % x verified", v)
		}
	}
	// Two authentication TLVs.
	k := testKeys[1]
	b := withAuth(t, withAuth(t, p, k), k).AppendTo(nil)
	if _, err := Verify(b, []Key{k}); AuthKind(err) != AuthMalformed {
		t.Fatalf("two TLV 10: %v", err)
	}
	if err := Sign(b, k); err == nil {
		t.Fatal("signed a PDU with two TLV 10")
	}
}

// FuzzVerify: Verify and Sign never panic on any bytes, Verify accepts
// only with a key, and whatever Sign signs verifies with that key.
func FuzzVerify(f *testing.F) {
	for _, p := range samplePDUs(f) {
		for _, k := range testKeys {
			f.Add(signed(f, p, k), uint8(0))
			f.Add(withAuth(f, p, k).AppendTo(nil), uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		k := testKeys[int(sel)%len(testKeys)]
		if _, err := Verify(b, nil); err != nil {
			t.Fatal("no keys must accept everything")
		}
		got, err := Verify(b, testKeys)
		if err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("error of type %T", err)
			}
			_ = err.Error()
		} else if got.Alg == 0 {
			t.Fatal("verified without a key")
		}
		c := bytes.Clone(b)
		if Sign(c, k) != nil {
			return
		}
		if _, err := Verify(c, []Key{k}); err != nil {
			t.Fatalf("signed PDU does not verify: %v\n%x", err, c)
		}
	})
}
