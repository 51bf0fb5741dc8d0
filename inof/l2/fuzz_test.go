package l2

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/fared/fared/internal/testvec"
)

// FuzzDecode: Decode never panics, rejects only with a *DecodeError, and
// what it accepts re-encodes to a message that decodes to the same bytes
// again (encode∘decode is idempotent).
func FuzzDecode(f *testing.F) {
	f.Add(testvec.Hex(f, registerHex))
	f.Add(testvec.Hex(f, "01 07 0020 00000004 0b 01 01 01 02 6831 08 04 0aff0003 0c 02 7a31 0f 01 03"))
	f.Add(testvec.Hex(f, "01 08 000c 00000004 01 02 6831"))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeStable(t, b)
	})
}

// decodeStable decodes b: a refusal must be a *DecodeError, and what is
// accepted re-encodes to bytes that decode and re-encode to themselves.
func decodeStable(t *testing.T, b []byte) (Message, bool) {
	t.Helper()
	m, err := Decode(b)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error of type %T", err)
		}
		_ = err.Error()
		return Message{}, false
	}
	enc := m.AppendTo(nil)
	m2, err := Decode(enc)
	if err != nil {
		t.Fatalf("re-encoding does not decode: %v\nin  %x\nenc %x", err, b, enc)
	}
	if enc2 := m2.AppendTo(nil); !bytes.Equal(enc, enc2) {
		t.Fatalf("not idempotent\nenc  %x\nenc2 %x", enc, enc2)
	}
	return m, true
}

// FuzzDecodeLLDP: no LLDPDU, however malformed, panics the decoder (gopacket
// included) or yields a host without an id.
func FuzzDecodeLLDP(f *testing.F) {
	for _, name := range []string{"testdata/lldpd_custom_tlv.bin", "testdata/lldpd_shutdown.bin"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeLLDP(b, DefaultOUI)
		if err == nil && h.Found && h.Host.ID == "" {
			t.Fatalf("host without id: %+v", h)
		}
	})
}

// FuzzDecodeAuth: messages carrying the auth TLV. Decode never panics and
// rejects only with a *DecodeError; what it accepts re-encodes to the same
// message; a message the fuzzer makes, signed, verifies with its key and
// with no other, and no single changed byte makes it verify.
func FuzzDecodeAuth(f *testing.F) {
	k := Key{ID: 3, Secret: []byte("fuzz-key-0123456789")}
	seed := func(m Message) []byte {
		m.Sign(k, 1700000000000)
		return m.AppendTo(nil)
	}
	f.Add(seed(Message{Type: TypeRegister, Seq: 1, Hold: 3 * time.Second, Host: Host{ID: "h1", Role: RoleTarget}}), uint16(5))
	f.Add(seed(Message{Type: TypeKeepalive, Seq: 2, Host: Host{ID: "h1"}}), uint16(20))
	f.Add(seed(Message{Type: TypeDeregister, Seq: 3, Host: Host{ID: "h1"}}), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, flip uint16) {
		if a, err := DecodeAuth(b); (err == nil) != (len(b) == AuthLen) {
			t.Fatalf("DecodeAuth of %d bytes: %v", len(b), err)
		} else if err == nil && !bytes.Equal(a.AppendTo(nil), b) {
			t.Fatalf("DecodeAuth/AppendTo: %x -> %x", b, a.AppendTo(nil))
		}
		m, ok := decodeStable(t, b)
		if !ok {
			return
		}
		if m.Auth != nil {
			_ = m.Verify(k) // whatever the bytes, no panic
		}
		// Sign what the fuzzer made; it verifies with k only, and every
		// changed byte breaks it.
		m.Sign(k, uint64(flip)<<20)
		signed := m.AppendTo(nil)
		if len(signed) > MaxLen+200 {
			return
		}
		d, err := Decode(signed)
		if err != nil {
			t.Fatalf("signed message does not decode: %v\n%x", err, signed)
		}
		if !d.Verify(k) || d.Verify(Key{ID: 3, Secret: []byte("another")}) {
			t.Fatalf("verify with the key %v, with another %v", d.Verify(k), d.Verify(Key{ID: 3, Secret: []byte("another")}))
		}
		c := bytes.Clone(signed)
		i := int(flip) % len(c)
		c[i] ^= 0x01
		if d, err := Decode(c); err == nil && d.Verify(k) {
			t.Fatalf("byte %d flipped, still verifies\n%x", i, c)
		}
	})
}
