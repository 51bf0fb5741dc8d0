package packet

import (
	"bytes"
	"testing"

	"github.com/fared/fared/internal/testvec"
)

// The digests below were computed outside Go, with Python's hashlib over
// the packet laid out by hand from RFC 5880 §4.1 and §4.3-4.4 (header:
// version 1, state Up, A bit, mult 3, Length 24 + Auth Len; my 0x11223344,
// your 0x55667788, tx and rx 50 ms, echo 0; then the section with the key
// zero-padded in the digest field, hashed, and the hash put in its place).
const (
	// Meticulous keyed SHA1, key id 7, sequence 0x01020304, key
	// "fared-bfd-key".
	goldenSHA1 = "20c4033411223344556677880000c3500000c35000000000051c0700010203041e8273011c95fa34edf96ffd15f0f21b9cf62bf1"
	// Keyed MD5, key id 1, sequence 42, key "md5key".
	goldenMD5 = "20c4033011223344556677880000c3500000c35000000000021801000000002a2c11e3f35d7994259bd8f1e204e3a29c"
)

func TestAuthGoldens(t *testing.T) {
	for _, g := range []struct {
		name, hex string
		typ       AuthType
		id        uint8
		seq       uint32
		key       string
	}{
		{"sha1", goldenSHA1, AuthMeticulousSHA1, 7, 0x01020304, "fared-bfd-key"},
		{"md5", goldenMD5, AuthKeyedMD5, 1, 42, "md5key"},
	} {
		b := testvec.Hex(t, g.hex)
		c, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if c.Auth.Type != g.typ || c.Auth.KeyID != g.id || c.Auth.Seq != g.seq || int(c.Auth.ValueLen) != g.typ.DigestLen() {
			t.Fatalf("%s: section %+v", g.name, c.Auth)
		}
		if !Verify(b, []byte(g.key)) {
			t.Fatalf("%s: the hand-computed digest does not verify", g.name)
		}
		if Verify(b, []byte(g.key+"x")) || Verify(b, nil) {
			t.Fatalf("%s: verifies with another key", g.name)
		}
		// Signing the same packet with a zero digest gives the golden.
		c.Auth.Value = [20]byte{}
		w := c.AppendTo(nil)
		if err := Sign(w, []byte(g.key)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w, b) {
			t.Fatalf("%s: signed %x\nwant   %x", g.name, w, b)
		}
		// Any bit changed anywhere in the packet breaks the digest.
		for i := range b {
			x := bytes.Clone(b)
			x[i] ^= 0x10
			if i == Len+3 {
				continue // reserved: ignored on receipt, but hashed
			}
			if _, err := Decode(x); err == nil && Verify(x, []byte(g.key)) {
				t.Fatalf("%s: byte %d flipped and the packet still verifies", g.name, i)
			}
		}
	}
}

func TestSimplePassword(t *testing.T) {
	c := Control{State: Down, DetectMult: 3, MyDisc: 9, DesiredMinTx: 1e6, RequiredMinRx: 1e6,
		Auth: Auth{Type: AuthSimple, KeyID: 3, ValueLen: 6}}
	copy(c.Auth.Value[:], "secret")
	b := c.AppendTo(nil)
	// Worked by hand: A bit with state Down (0x40|0x04), Length 24+3+6 =
	// 33, then type 1, len 9, key 3, "secret".
	if b[1] != 0x44 || b[3] != 33 || !bytes.Equal(b[24:], append([]byte{1, 9, 3}, "secret"...)) {
		t.Fatalf("encoded %x", b)
	}
	got, err := Decode(b)
	if err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if !Verify(b, []byte("secret")) || Verify(b, []byte("secre")) || Verify(b, []byte("secret!")) || Verify(b, []byte("Secret")) {
		t.Fatal("password check")
	}
}

func TestAuthRoundTrip(t *testing.T) {
	for _, typ := range []AuthType{AuthKeyedMD5, AuthMeticulousMD5, AuthKeyedSHA1, AuthMeticulousSHA1} {
		c := Control{State: Init, DetectMult: 5, MyDisc: 1, YourDisc: 2, DesiredMinTx: 1e5, RequiredMinRx: 1e5,
			Auth: Auth{Type: typ, KeyID: 255, Seq: 0xfffffffe, ValueLen: uint8(typ.DigestLen())}}
		b := c.AppendTo(nil)
		if len(b) != Len+c.Auth.Len() || int(b[3]) != len(b) {
			t.Fatalf("%s: %d bytes, Length %d", typ, len(b), b[3])
		}
		if err := Sign(b, []byte("k")); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		c.Auth.Value = got.Auth.Value // the digest Sign wrote
		if got != c || !Verify(b, []byte("k")) {
			t.Fatalf("%s: %+v", typ, got)
		}
	}
}

func TestAuthDiscard(t *testing.T) {
	mod := mutator(testvec.Hex(t, goldenSHA1))
	checkDiscards(t, []discard{
		{"A bit, length 24", mod(func(b []byte) []byte { b[3] = 24; return b[:24] }), KindLength, 3},
		{"A bit, length 25", mod(func(b []byte) []byte { b[3] = 25; return b[:25] }), KindLength, 3},
		{"auth type 0", mod(func(b []byte) []byte { b[24] = 0; return b }), KindAuthType, 24},
		{"auth type 6", mod(func(b []byte) []byte { b[24] = 6; return b }), KindAuthType, 24},
		{"auth len short of the packet", mod(func(b []byte) []byte { b[25] = 27; return b }), KindAuthLen, 25},
		{"auth len past the packet", mod(func(b []byte) []byte { b[25] = 29; return b }), KindAuthLen, 25},
		{"sha1 section with md5's length", mod(func(b []byte) []byte { b[3], b[25] = 48, 24; return b[:48] }), KindAuthLen, 25},
		{"md5 type with sha1's length", mod(func(b []byte) []byte { b[24] = 2; return b }), KindAuthLen, 25},
		{"simple, no password", mod(func(b []byte) []byte { b[3], b[24], b[25] = 27, 1, 3; return b[:27] }), KindAuthLen, 25},
		{"simple, 17 bytes", mod(func(b []byte) []byte { b[3], b[24], b[25] = 44, 1, 20; return b[:44] }), KindAuthLen, 25},
	})
	// A packet without a section cannot be verified or signed.
	plain := testvec.Hex(t, golden)
	if Verify(plain, nil) || Sign(plain, []byte("k")) == nil {
		t.Error("a packet without a section verified or signed")
	}
}

func TestAuthTypeNames(t *testing.T) {
	for _, n := range AuthTypeNames() {
		a, ok := ParseAuthType(n)
		if !ok || a.String() != n {
			t.Errorf("%s: %v %v", n, a, ok)
		}
	}
	if _, ok := ParseAuthType("none"); ok {
		t.Error("none parses as a type")
	}
	if !AuthMeticulousSHA1.Meticulous() || AuthKeyedSHA1.Meticulous() || AuthSimple.Crypto() || AuthKeyedSHA1.MaxKeyLen() != 20 || AuthKeyedMD5.MaxKeyLen() != 16 {
		t.Error("type properties")
	}
}

// The cost of authentication per packet (docs/bfd.md): signing one
// packet and verifying one, per type.
func BenchmarkAuth(b *testing.B) {
	for _, typ := range []AuthType{AuthSimple, AuthMeticulousMD5, AuthMeticulousSHA1} {
		c := Control{State: Up, DetectMult: 3, MyDisc: 1, YourDisc: 2, DesiredMinTx: 1e5, RequiredMinRx: 1e5,
			Auth: Auth{Type: typ, KeyID: 1, Seq: 7, ValueLen: uint8(max(typ.DigestLen(), 6))}}
		key := []byte("secret")
		b.Run("sign/"+typ.String(), func(b *testing.B) {
			for b.Loop() {
				w := c.AppendTo(make([]byte, 0, 64))
				if err := Sign(w, key); err != nil {
					b.Fatal(err)
				}
			}
		})
		w := c.AppendTo(nil)
		Sign(w, key)
		b.Run("verify/"+typ.String(), func(b *testing.B) {
			for b.Loop() {
				if !Verify(w, key) {
					b.Fatal("does not verify")
				}
			}
		})
	}
}
