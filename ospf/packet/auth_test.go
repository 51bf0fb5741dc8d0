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

var testKeys = []Key{
	{Alg: AlgSimple, Secret: []byte("pass")},
	{ID: 1, Alg: AlgMD5, Secret: []byte("md5-key")},
	{ID: 2, Alg: AlgHMACSHA1, Secret: []byte("sha1")},
	{ID: 3, Alg: AlgHMACSHA256, Secret: []byte("sha-256 secret")},
	{ID: 255, Alg: AlgHMACSHA512, Secret: bytes.Repeat([]byte("k"), 100)},
}

// signedPacket encodes p with the key's AuType and signs it.
func signedPacket(t testing.TB, p Packet, k Key, seq uint32) []byte {
	t.Helper()
	h := p.PacketHeader()
	old := *h
	h.AuType = k.AuType()
	b := p.AppendTo(nil)
	*h = old
	b, err := Sign(b, 0, k, seq)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every packet type signed with every algorithm decodes, verifies with
// its key (giving back the sequence number) and fails, for the right
// reason, with any other.
func TestSignVerify(t *testing.T) {
	for name, p := range samplePackets() {
		for _, k := range testKeys {
			b := signedPacket(t, p, k, 0x01020304)
			n := int(binary.BigEndian.Uint16(b[2:]))
			if n+k.Alg.DigestLen() != len(b) {
				t.Fatalf("%s %s: length field %d, %d bytes with the digest", name, k.Alg, n, len(b))
			}
			if _, err := Decode(b); err != nil {
				t.Fatalf("%s %s: %v", name, k.Alg, err)
			}
			v, err := Verify(b, []Key{{ID: 9, Alg: k.Alg, Secret: []byte("other")}, k})
			if err != nil || v.Key.ID != k.ID {
				t.Fatalf("%s %s: verify: %v", name, k.Alg, err)
			}
			wrong := k
			wrong.Secret = []byte("wrong")
			if _, err := Verify(b, []Key{wrong}); AuthKind(err) != AuthMismatch {
				t.Fatalf("%s %s: wrong secret: %v", name, k.Alg, err)
			}
			if _, err := Verify(p.AppendTo(nil), []Key{k}); AuthKind(err) != AuthWrongType {
				t.Fatalf("%s %s: null auth packet: %v", name, k.Alg, err)
			}
			if _, err := Verify(b, nil); AuthKind(err) != AuthWrongType {
				t.Fatalf("%s %s: interface without auth: %v", name, k.Alg, err)
			}
			if k.Alg == AlgSimple {
				continue
			}
			if v.Seq != 0x01020304 {
				t.Fatalf("%s %s: seq %#x", name, k.Alg, v.Seq)
			}
			other := k
			other.ID++
			if _, err := Verify(b, []Key{other}); AuthKind(err) != AuthNoKey {
				t.Fatalf("%s %s: other key id: %v", name, k.Alg, err)
			}
			if _, err := Verify(b[:len(b)-1], []Key{k}); AuthKind(err) != AuthMalformed {
				t.Fatalf("%s %s: short digest: %v", name, k.Alg, err)
			}
			for i := range b {
				c := bytes.Clone(b)
				c[i] ^= 0x08
				if _, err := Verify(c, []Key{k}); err == nil {
					t.Fatalf("%s %s: byte %d changed and it still verifies", name, k.Alg, i)
				}
			}
		}
	}
}

// Keyed MD5 by hand (RFC 2328 D.4.3): checksum 0, the auth field holds
// 0, 0, key id, 16, the sequence number; the digest is MD5 of the packet
// followed by the key zero-padded to 16 bytes, appended after the packet.
func TestKeyedMD5ByHand(t *testing.T) {
	p := samplePackets()["hello"]
	k := Key{ID: 7, Alg: AlgMD5, Secret: []byte("frr")}
	b := signedPacket(t, p, k, 1700000000)
	n := int(binary.BigEndian.Uint16(b[2:]))
	if !bytes.Equal(b[12:24], []byte{0, 0, 0, 2, 0, 0, 7, 16, 0x65, 0x53, 0xf1, 0x00}) {
		t.Fatalf("header bytes 12..23: % x", b[12:24])
	}
	key := make([]byte, 16)
	copy(key, "frr")
	sum := md5.Sum(append(bytes.Clone(b[:n]), key...))
	if !bytes.Equal(b[n:], sum[:]) {
		t.Fatalf("digest %x, by hand %x", b[n:], sum)
	}
}

// RFC 5709 §3.3 by hand: HMAC-SHA-256 over the packet followed by Apad
// (0x878FE1F3 repeated to 32 bytes); a key longer than 32 bytes is hashed
// first.
func TestHMACSHA256ByHand(t *testing.T) {
	p := samplePackets()["hello"]
	for _, secret := range [][]byte{[]byte("bird"), bytes.Repeat([]byte{1}, 33)} {
		k := Key{ID: 1, Alg: AlgHMACSHA256, Secret: secret}
		b := signedPacket(t, p, k, 5)
		n := int(binary.BigEndian.Uint16(b[2:]))
		if b[18] != 1 || b[19] != 32 {
			t.Fatalf("key id %d, length %d", b[18], b[19])
		}
		ko := secret
		if len(ko) > 32 {
			s := sha256.Sum256(ko)
			ko = s[:]
		}
		m := hmac.New(sha256.New, ko)
		m.Write(b[:n])
		for range 8 {
			m.Write([]byte{0x87, 0x8F, 0xE1, 0xF3})
		}
		if want := m.Sum(nil); !bytes.Equal(b[n:], want) {
			t.Fatalf("%d-byte key: digest %x, by hand %x", len(secret), b[n:], want)
		}
	}
}

// FuzzVerify: Verify never panics on any bytes, accepts only with a key,
// and a packet Sign made verifies.
func FuzzVerify(f *testing.F) {
	for _, p := range samplePackets() {
		for i, k := range testKeys {
			f.Add(signedPacket(f, p, k, 42), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		k := testKeys[int(sel)%len(testKeys)]
		v, err := Verify(b, []Key{k})
		if err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("error of type %T", err)
			}
			_ = err.Error()
		} else if v.Key.Alg != k.Alg {
			t.Fatal("verified without the key")
		}
		if len(b) < HeaderLen {
			return
		}
		n := int(binary.BigEndian.Uint16(b[2:]))
		if n < HeaderLen || n > len(b) {
			return
		}
		c := bytes.Clone(b[:n])
		binary.BigEndian.PutUint16(c[14:], k.AuType())
		c, err = Sign(c, 0, k, 9)
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		if _, err := Verify(c, []Key{k}); err != nil {
			t.Fatalf("signed packet does not verify: %v", err)
		}
	})
}
