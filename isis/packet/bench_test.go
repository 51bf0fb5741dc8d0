package packet

import (
	"testing"
)

// Two LSP shapes: ~1400 bytes, a full fragment at the default 1492-byte
// lsp-mtu (36 TE neighbours with sub-TLVs 6, 8, 9 and 20 prefixes with
// Path Bandwidth), and a 60-neighbour / 40-prefix spine (~2.4 KB, which
// the originator would split into two fragments).
var benchShapes = []struct {
	name       string
	nbrs, pfxs int
}{
	{"1400B", 36, 20},
	{"60nbr_40pfx", 60, 40},
}

func BenchmarkDecodeLSP(b *testing.B) {
	for _, s := range benchShapes {
		raw := benchLSP(s.nbrs, s.pfxs).AppendTo(nil)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeLSP(b *testing.B) {
	for _, s := range benchShapes {
		l := benchLSP(s.nbrs, s.pfxs)
		buf := l.AppendTo(nil)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = l.AppendTo(buf[:0])
			}
		})
	}
}

func BenchmarkLSPChecksumOK(b *testing.B) {
	raw := benchLSP(36, 20).AppendTo(nil)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if !LSPChecksumOK(raw) {
			b.Fatal("bad")
		}
	}
}
