package packet

import "testing"

// A realistic large LSU: 20 router LSAs with 32 p2p links each, 32
// FRR-style TE LSAs (router address + one link with max BW, max
// reservable and unreserved BW) and 20 Extended Prefix LSAs with Path
// Bandwidth: about 14 KB.
func BenchmarkDecodeLSU(b *testing.B) {
	raw := benchLSU(20, 32).AppendTo(nil)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// Encoding one 32-link router LSA from its body, checksum included.
func BenchmarkEncodeLSA(b *testing.B) {
	u := benchLSU(1, 32)
	l := LSA{LSAHeader: u.LSAs[0].LSAHeader, Body: u.LSAs[0].Body}
	buf := l.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = l.AppendTo(buf[:0])
	}
}

// Encoding the whole LSU (flooding: LSAs from Raw, packet checksum).
func BenchmarkEncodeLSU(b *testing.B) {
	u := benchLSU(20, 32)
	buf := u.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = u.AppendTo(buf[:0])
	}
}

func BenchmarkLSAChecksumOK(b *testing.B) {
	raw := benchLSU(1, 32).LSAs[0].Raw
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if !LSAChecksumOK(raw) {
			b.Fatal("bad")
		}
	}
}

func BenchmarkTELinks(b *testing.B) {
	o := benchLSU(1, 1).LSAs[1].Body.(*OpaqueLSA)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TELinks(o); err != nil {
			b.Fatal(err)
		}
	}
}
