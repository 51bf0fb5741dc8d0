package l2

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzDecode: Decode never panics, rejects only with a *DecodeError, and
// what it accepts re-encodes to a message that decodes to the same bytes
// again (encode∘decode is idempotent).
func FuzzDecode(f *testing.F) {
	f.Add(unhex(f, registerHex))
	f.Add(unhex(f, "01 07 0020 00000004 0b 01 01 01 02 6831 08 04 0aff0003 0c 02 7a31 0f 01 03"))
	f.Add(unhex(f, "01 08 000c 00000004 01 02 6831"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error of type %T", err)
			}
			_ = err.Error()
			return
		}
		enc := m.AppendTo(nil)
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v\nin  %x\nenc %x", err, b, enc)
		}
		if enc2 := m2.AppendTo(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("not idempotent\nenc  %x\nenc2 %x", enc, enc2)
		}
	})
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
