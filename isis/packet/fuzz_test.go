package packet

import (
	"bytes"
	"testing"
)

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to
// bytes that decode again to the same encoding (encode∘decode is
// idempotent). Seeds: the FRR captures and the PDUs we originate.
func FuzzDecode(f *testing.F) {
	for _, b := range goldenFiles(f) {
		f.Add(b)
	}
	for _, p := range samplePDUs(f) {
		f.Add(p.AppendTo(nil))
	}
	f.Add(benchLSP(10, 10).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if _, ok := err.(*DecodeError); !ok {
				t.Fatalf("error of type %T", err)
			}
			_ = err.Error()
			return
		}
		enc := encode(p)
		if lsp, ok := p.(*LSP); ok && LSPChecksumOK(b) {
			// A valid checksum survives re-encoding.
			if !LSPChecksumOK(enc) {
				t.Fatalf("valid LSP re-encodes with a bad checksum: %v", lsp.ID)
			}
		}
		p2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v\nin  %x\nenc %x", err, b, enc)
		}
		if enc2 := encode(p2); !bytes.Equal(enc, enc2) {
			t.Fatalf("not idempotent\nenc  %x\nenc2 %x", enc, enc2)
		}
		// The description must not panic either.
		DescribeTLVs(pduTLVs(p), DefaultPathBandwidthSubTLV)
		_ = pduTLVs(p).Len()
	})
}

// FuzzParseLSPID: anything ParseLSPID accepts prints and parses back to
// the same id.
func FuzzParseLSPID(f *testing.F) {
	f.Add("0000.0000.0001.00-00")
	f.Add("ffff.ffff.ffff.ff.ff")
	f.Add("0000000000010000")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseLSPID(s)
		if err != nil {
			return
		}
		back, err := ParseLSPID(id.String())
		if err != nil || back != id {
			t.Fatalf("%q -> %v -> %v %v", s, id, back, err)
		}
		if a, err := ParseArea(s); err == nil {
			if b, err := ParseArea(FormatArea(a)); err != nil || !bytes.Equal(a, b) {
				t.Fatalf("area %q -> %x -> %q", s, a, FormatArea(a))
			}
		}
	})
}
