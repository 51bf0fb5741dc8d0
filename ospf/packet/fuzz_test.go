package packet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
)

// FuzzDecode: Decode never panics; whatever it accepts re-encodes to the
// very bytes it came from (up to the packet length, and for the checksum
// field up to the two one's complement zeros), each LSA's body encodes to
// something that decodes again, and Describe yields valid JSON. Seeds: the
// FRR captures and the packets fared sends.
func FuzzDecode(f *testing.F) {
	g := goldenFiles(f)
	for _, n := range sortedNames(g) {
		f.Add(g[n])
	}
	for _, p := range samplePackets() {
		f.Add(p.AppendTo(nil))
	}
	f.Add(benchLSU(2, 4).AppendTo(nil))
	for _, p := range samplePackets() {
		for _, k := range testKeys {
			f.Add(signedPacket(f, p, k, 1)) // AuType 1 and 2, digests after the packet
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzPacket(t, b)
		// Most mutations break the checksum; also try each input with it
		// repaired so that the fuzzer reaches the packet bodies.
		if len(b) >= HeaderLen {
			if n := int(binary.BigEndian.Uint16(b[2:])); n >= HeaderLen && n <= len(b) {
				c := append([]byte(nil), b...)
				binary.BigEndian.PutUint16(c[12:], PacketChecksum(c[:n]))
				fuzzPacket(t, c)
			}
		}
	})
}

func fuzzPacket(t *testing.T, b []byte) {
	p, err := Decode(b)
	if err != nil {
		if _, ok := err.(*DecodeError); !ok {
			t.Fatalf("error of type %T", err)
		}
		_ = err.Error()
		return
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	enc := p.AppendTo(nil)
	if len(enc) != n || !bytes.Equal(enc[:12], b[:12]) || !bytes.Equal(enc[14:], b[14:n]) {
		t.Fatalf("re-encoding differs\n in %x\nenc %x", b[:n], enc)
	}
	if _, err := Decode(enc); err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	if u, ok := p.(*LSU); ok {
		for i := range u.LSAs {
			checkLSA(t, u.LSAs[i])
		}
	}
}

// FuzzDecodeLSA: DecodeLSA never panics; an accepted LSA re-encodes from
// Raw to its bytes, and from its body to bytes that decode to the same
// body encoding (idempotent; reserved bytes become 0, so the body encoding
// of an arbitrary LSA may differ from Raw, never that of FRR's, see
// TestGoldenRoundTrip); the helpers and Describe never panic.
func FuzzDecodeLSA(f *testing.F) {
	for _, l := range goldenLSAs(f) {
		f.Add(l.Raw)
	}
	for _, l := range sampleLSAs() {
		f.Add(l.Raw)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, n, err := DecodeLSA(b)
		if err != nil {
			if _, ok := err.(*DecodeError); !ok {
				t.Fatalf("error of type %T", err)
			}
			_ = err.Error()
			return
		}
		if n < LSAHeaderLen || n > len(b) || !bytes.Equal(l.AppendTo(nil), b[:n]) {
			t.Fatalf("Raw re-encoding differs (n %d)", n)
		}
		checkLSA(t, l)
	})
}

func checkLSA(t *testing.T, l LSA) {
	t.Helper()
	if l.Body != nil {
		fb := LSA{LSAHeader: l.LSAHeader, Body: l.Body}
		enc := fb.AppendTo(nil)
		if !LSAChecksumOK(enc) {
			t.Fatalf("body encoding has a bad checksum")
		}
		l2, _, err := DecodeLSA(enc)
		if err != nil {
			t.Fatalf("body encoding does not decode: %v\n raw %x\n enc %x", err, l.Raw, enc)
		}
		if enc2 := (&LSA{LSAHeader: l2.LSAHeader, Body: l2.Body}).AppendTo(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("body encoding not idempotent\n enc  %x\n enc2 %x", enc, enc2)
		}
	}
	if o, ok := l.Body.(*OpaqueLSA); ok {
		_, _ = TERouterAddress(o)
		if links, err := TELinks(o); err == nil {
			for _, k := range links {
				_ = TELinkTLV(k)
			}
		}
		if ps, err := ExtPrefixes(o); err == nil {
			for _, p := range ps {
				_, _ = PathBandwidth(p.SubTLVs, DefaultPathBandwidthSubTLV)
				_ = ExtPrefixTLV(p)
			}
		}
	}
	for _, code := range []uint16{DefaultPathBandwidthSubTLV, 2} {
		if _, err := json.Marshal(Describe(&l, code)); err != nil {
			t.Fatalf("Describe: %v", err)
		}
	}
}
