package packet

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/fared/fared/internal/fletcher"
)

// bruteChecksum finds the checksum from the definition alone (ISO 8473
// annex C): the two bytes, each 1..255, for which both running sums over
// the whole region are 0 mod 255. Independent of fletcher.Checksum's algebra.
func bruteChecksum(region []byte, pos int) (uint16, bool) {
	b := append([]byte(nil), region...)
	for x := 1; x < 256; x++ {
		for y := 1; y < 256; y++ {
			b[pos], b[pos+1] = byte(x), byte(y)
			var c0, c1 int
			for _, v := range b {
				c0 = (c0 + int(v)) % 255
				c1 = (c1 + c0) % 255
			}
			if c0 == 0 && c1 == 0 {
				return uint16(x)<<8 | uint16(y), true
			}
		}
	}
	return 0, false
}

func TestChecksumKnownAnswer(t *testing.T) {
	// A minimal L2 LSP built by hand: 0000.0000.0001.00-00, seq 1,
	// lifetime 1200, flags 0x03, TLV 137 "r1". Checksum 0xd1f9 worked out
	// from the definition (a brute-force search of the two bytes that zero
	// both Fletcher sums over offset 12..end).
	want, _ := hex.DecodeString("831b010014010000001f04b0000000000001000000000001d1f90389027231")
	l := &LSP{Header: l2(TypeL2LSP), Lifetime: 1200, ID: MakeLSPID(sys(1), 0, 0), Seq: 1, Flags: 3, TLVs: TLVs{&Hostname{Name: "r1"}}}
	got := l.AppendTo(nil)
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Errorf("got  %x\nwant %x", got, want)
	}
	if LSPChecksum(want) != 0xd1f9 || !LSPChecksumOK(want) {
		t.Errorf("checksum %04x", LSPChecksum(want))
	}
}

func TestChecksumMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 30; i++ {
		n := 14 + r.IntN(120)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		if i%3 == 0 { // runs of 0xff and zeros stress the mod-255 corners
			for j := range b {
				b[j] = []byte{0, 0xff}[j%2]
			}
		}
		pos := 12
		want, ok := bruteChecksum(b, pos)
		if !ok {
			t.Fatalf("no checksum exists for %x", b)
		}
		if got := fletcher.Checksum(b, pos); got != want {
			t.Fatalf("len %d: got %04x want %04x", n, got, want)
		}
	}
}

func TestChecksumFRRGoldens(t *testing.T) {
	for name, raw := range goldenFiles(t) {
		if raw[4] != TypeL2LSP {
			continue
		}
		if got, want := LSPChecksum(raw), uint16(raw[24])<<8|uint16(raw[25]); got != want {
			t.Errorf("%s: computed %04x, FRR sent %04x", name, got, want)
		}
	}
}

func TestChecksumLarge(t *testing.T) {
	// Past the 4096-byte reduction step and at the 16-bit PDU length limit.
	l := benchLSP(1000, 1000)
	frags := SplitFragments(l.TLVs, 65535)
	big := &LSP{Header: l.Header, Lifetime: 1, TLVs: frags[0]}
	b := big.AppendTo(nil)
	if len(b) < 9000 || !LSPChecksumOK(b) {
		t.Errorf("%d-byte LSP checksum", len(b))
	}
}
