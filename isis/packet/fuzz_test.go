package packet

import (
	"bytes"
	"net/netip"
	"reflect"
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
	for _, p := range samplePDUs(f) {
		for _, k := range testKeys {
			f.Add(signed(f, p, k)) // TLV 10 of every type
		}
	}
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
		DescribeTLVs(TLVsOf(p), DefaultPathBandwidthSubTLV)
		_ = TLVsOf(p).Len()
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

// FuzzHelloEncode: the hello encoders never panic whatever lists they are
// given, what they write always decodes, every IS neighbour and address
// survives (in order, over as many TLVs as it takes), and Len agrees with
// the encoding. The fuzzer picks the list sizes (up to ~1200 MACs, 300
// IPv4 and 100 IPv6 addresses, any area, hostname and unknown TLV sizes)
// and the bytes they are filled from.
func FuzzHelloEncode(f *testing.F) {
	f.Add(uint16(43), uint16(1), uint8(1), uint8(3), uint16(5), uint16(0), uint16(0), []byte{1, 2, 3})
	f.Add(uint16(1000), uint16(64), uint8(16), uint8(20), uint16(300), uint16(300), uint16(600), []byte{0xff})
	f.Add(uint16(0), uint16(0), uint8(0), uint8(0), uint16(0), uint16(0), uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, nMAC, n4 uint16, n6, nArea uint8, hostLen, unkLen, padLen uint16, seed []byte) {
		nMAC, n4, n6 = nMAC%1200, n4%300, n6%100
		fill := func(i, k int) byte {
			if len(seed) == 0 {
				return byte(i*7 + k)
			}
			return seed[(i*7+k)%len(seed)] ^ byte(i) ^ byte(i>>8)
		}
		snpas := make([][6]byte, nMAC)
		for i := range snpas {
			for k := range 6 {
				snpas[i][k] = fill(i, k)
			}
		}
		a4 := make([]netip.Addr, n4)
		for i := range a4 {
			a4[i] = netip.AddrFrom4([4]byte{fill(i, 0), fill(i, 1), byte(i >> 8), byte(i)})
		}
		a6 := make([]netip.Addr, n6)
		for i := range a6 {
			a6[i] = netip.AddrFrom16([16]byte{0xfe, 0x80, 2: fill(i, 2), 15: byte(i)})
		}
		var areas [][]byte
		for i := range int(nArea % 40) {
			areas = append(areas, bytes.Repeat([]byte{fill(i, 3)}, 1+i%13))
		}
		tlvs := TLVs{
			&AreaAddresses{Areas: areas},
			&ProtocolsSupported{NLPIDs: []uint8{NLPIDIPv4, NLPIDIPv6}},
			&IPv4Addresses{Addrs: a4},
			&IPv6Addresses{Addrs: a6},
			&ISNeighbors{SNPAs: snpas},
			&Hostname{Name: string(bytes.Repeat([]byte{'h'}, int(hostLen%600)))},
			&Unknown{T: 250, Value: make([]byte, unkLen%600)},
			&Padding{Len: int(padLen % 2000)},
		}
		for _, h := range []PDU{
			&LANHello{Header: l2(TypeL2LANHello), CircuitType: CircuitL2, SourceID: sys(1), HoldTime: 9, TLVs: tlvs},
			&P2PHello{Header: Header{Type: TypeP2PHello}, CircuitType: CircuitL2, SourceID: sys(1), HoldTime: 9,
				TLVs: append(TLVs{&ThreeWay{State: ThreeWayUp, HasExtCircuit: true, ExtCircuitID: 1}}, tlvs...)},
		} {
			b := h.AppendTo(nil)
			if len(b) > 0xffff {
				return // the PDU length field cannot say it; not a hello anyone sends
			}
			hl := LANHelloHeaderLen
			if _, ok := h.(*P2PHello); ok {
				hl = P2PHelloHeaderLen
			}
			if got := TLVsOf(h).Len(); got+hl != len(b) {
				t.Fatalf("Len %d + %d != %d encoded", got, hl, len(b))
			}
			p, err := Decode(b)
			if err != nil {
				t.Fatalf("encoding does not decode: %v", err)
			}
			d := TLVsOf(p)
			if got := d.SNPAs(); len(got) != len(snpas) || (len(got) > 0 && !reflect.DeepEqual(got, snpas)) {
				t.Fatalf("%d MACs in, %d out", len(snpas), len(got))
			}
			if got := d.IPv4Addrs(); len(got) != len(a4) || (len(got) > 0 && !reflect.DeepEqual(got, a4)) {
				t.Fatalf("%d IPv4 in, %d out", len(a4), len(got))
			}
			if got := d.IPv6Addrs(); len(got) != len(a6) || (len(got) > 0 && !reflect.DeepEqual(got, a6)) {
				t.Fatalf("%d IPv6 in, %d out", len(a6), len(got))
			}
			if got := d.Areas(); len(got) != len(areas) {
				t.Fatalf("%d areas in, %d out", len(areas), len(got))
			}
			if name, _ := d.Hostname(); len(name) != min(int(hostLen%600), 255) {
				t.Fatalf("hostname of %d bytes became %d", hostLen%600, len(name))
			}
		}
	})
}
