package packet

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func macs(n int) [][6]byte {
	out := make([][6]byte, n)
	for i := range out {
		out[i] = [6]byte{2, 0, 0, 0, byte(i >> 8), byte(i)}
	}
	return out
}

// countTLVs counts the wire TLVs of each type in an encoded TLV block,
// checking every length byte against the block (the decoder's view).
func countTLVs(t *testing.T, b []byte) map[uint8]int {
	t.Helper()
	n := map[uint8]int{}
	for i := 0; i < len(b); {
		if i+2 > len(b) || i+2+int(b[i+1]) > len(b) {
			t.Fatalf("TLV at %d runs past the block", i)
		}
		n[b[i]]++
		i += 2 + int(b[i+1])
	}
	return n
}

// TestISNeighborsSplitOver42: a LAN IIH with 43
// neighbours used to panic ("TLV 6 value is 258 bytes"). ISO 10589 §9.5
// and §9.7 let a hello carry several IS Neighbours TLVs: 43 MACs go out as
// 42 + 1, and 100 as 42 + 42 + 16, and decode back to the same list.
func TestISNeighborsSplitOver42(t *testing.T) {
	for _, n := range []struct{ macs, tlvs int }{{42, 1}, {43, 2}, {84, 2}, {85, 3}, {100, 3}, {237, 6}} {
		h := &LANHello{Header: l2(TypeL2LANHello), CircuitType: CircuitL2, SourceID: sys(1), HoldTime: 9,
			TLVs: TLVs{&AreaAddresses{Areas: [][]byte{{0x49, 0, 1}}}, &ISNeighbors{SNPAs: macs(n.macs)}}}
		b := h.AppendTo(nil)
		if got := countTLVs(t, b[LANHelloHeaderLen:])[TLVISNeighbors]; got != n.tlvs {
			t.Errorf("%d MACs: %d TLV 6s, want %d", n.macs, got, n.tlvs)
		}
		if h.TLVs.Len()+LANHelloHeaderLen != len(b) {
			t.Errorf("%d MACs: Len %d + header != %d encoded", n.macs, h.TLVs.Len(), len(b))
		}
		p, err := Decode(b)
		if err != nil {
			t.Fatalf("%d MACs: %v", n.macs, err)
		}
		if got := p.(*LANHello).TLVs.SNPAs(); !reflect.DeepEqual(got, macs(n.macs)) {
			t.Errorf("%d MACs: decoded %d", n.macs, len(got))
		}
	}
}

// TestOversizeTLVsSplitOrDropped audits every encoder at and past its
// 255-byte limit: lists are split into several TLVs of their type, in
// order; what cannot fit one TLV is left out (and Fit says so); nothing
// panics and Len always matches the encoding.
func TestOversizeTLVsSplitOrDropped(t *testing.T) {
	addrs4 := func(n int) []netip.Addr {
		out := make([]netip.Addr, n)
		for i := range out {
			out[i] = netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		}
		return out
	}
	addrs6 := func(n int) []netip.Addr {
		out := make([]netip.Addr, n)
		for i := range out {
			out[i] = netip.AddrFrom16([16]byte{0xfe, 0x80, 14: byte(i >> 8), 15: byte(i)})
		}
		return out
	}
	areas := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte{0x49, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)} // 13 bytes, the ISO maximum
		}
		return out
	}
	nbrs := func(n, subBytes int) []ExtISNeighbor {
		out := make([]ExtISNeighbor, n)
		for i := range out {
			out[i] = ExtISNeighbor{ID: MakeNodeID(sys(byte(i)), 0), Metric: 10}
			if subBytes > 0 {
				out[i].SubTLVs = []SubTLV{{Type: 250, Value: make([]byte, subBytes)}}
			}
		}
		return out
	}
	p4 := func(n int) []ExtIPPrefix {
		out := make([]ExtIPPrefix, n)
		for i := range out {
			out[i] = ExtIPPrefix{Metric: 1, Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 16), SubTLVs: []SubTLV{pbSub(1e9)}}
		}
		return out
	}
	p6 := func(n int) []IPv6Prefix {
		out := make([]IPv6Prefix, n)
		for i := range out {
			out[i] = IPv6Prefix{Metric: 1, Prefix: netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0xd, 0xb8, 4: byte(i)}), 64)}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		tlv      TLV
		want     int // TLVs on the wire
		leftOut  bool
		checkOut func(TLVs) bool
	}{
		{"IPv4 addresses 63", &IPv4Addresses{Addrs: addrs4(63)}, 1, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv4Addrs(), addrs4(63)) }},
		{"IPv4 addresses 64", &IPv4Addresses{Addrs: addrs4(64)}, 2, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv4Addrs(), addrs4(64)) }},
		{"IPv6 addresses 15", &IPv6Addresses{Addrs: addrs6(15)}, 1, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv6Addrs(), addrs6(15)) }},
		{"IPv6 addresses 16", &IPv6Addresses{Addrs: addrs6(16)}, 2, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv6Addrs(), addrs6(16)) }},
		{"IPv6 addresses 100", &IPv6Addresses{Addrs: addrs6(100)}, 7, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv6Addrs(), addrs6(100)) }},
		// 18 areas of 13 bytes (+1 length byte each) = 252; 19 do not fit.
		{"areas 19", &AreaAddresses{Areas: areas(19)}, 2, false, func(d TLVs) bool { return reflect.DeepEqual(d.Areas(), areas(19)) }},
		{"empty area", &AreaAddresses{Areas: [][]byte{{0x49}, {}, {0x49, 0, 2}}}, 1, true, func(d TLVs) bool { return len(d.Areas()) == 2 }},
		{"protocols 300", &ProtocolsSupported{NLPIDs: make([]uint8, 300)}, 2, false, func(d TLVs) bool { return len(d.NLPIDs()) == 300 }},
		{"LSP entries 16", &LSPEntries{Entries: make([]LSPEntry, 16)}, 2, false, func(d TLVs) bool { return len(d.LSPEntries()) == 16 }},
		{"TLV 22, 24 plain neighbours", &ExtISReach{Neighbors: nbrs(24, 0)}, 2, false, func(d TLVs) bool { return reflect.DeepEqual(d.ExtISNeighbors(), nbrs(24, 0)) }},
		{"TLV 22, neighbours with big sub-TLVs", &ExtISReach{Neighbors: nbrs(5, 200)}, 5, false, func(d TLVs) bool { return len(d.ExtISNeighbors()) == 5 }},
		// 11 + 2 + 243 = 256: one neighbour cannot fit a TLV.
		{"TLV 22, one neighbour too big", &ExtISReach{Neighbors: append(nbrs(2, 0), nbrs(1, 243)...)}, 1, true, func(d TLVs) bool { return len(d.ExtISNeighbors()) == 2 }},
		{"TLV 135, 40 prefixes", &ExtIPReach{Prefixes: p4(40)}, 3, false, func(d TLVs) bool { return reflect.DeepEqual(d.ExtIPPrefixes(), p4(40)) }},
		{"TLV 236, 40 prefixes", &IPv6Reach{Prefixes: p6(40)}, 3, false, func(d TLVs) bool { return reflect.DeepEqual(d.IPv6Prefixes(), p6(40)) }},
		{"padding 600", &Padding{Len: 600}, 3, false, func(d TLVs) bool { return true }},
		{"hostname 300", &Hostname{Name: strings.Repeat("h", 300)}, 1, true, func(d TLVs) bool { h, _ := d.Hostname(); return h == strings.Repeat("h", 255) }},
		{"unknown 300", &Unknown{T: 250, Value: make([]byte, 300)}, 0, true, func(d TLVs) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := TLVs{tc.tlv}
			b := tl.AppendTo(nil)
			if tl.Len() != len(b) {
				t.Errorf("Len %d, encoded %d", tl.Len(), len(b))
			}
			n := 0
			for _, c := range countTLVs(t, b) {
				n += c
			}
			if n != tc.want {
				t.Errorf("%d TLVs on the wire, want %d", n, tc.want)
			}
			fit, err := tl.Fit()
			if (err != nil) != tc.leftOut {
				t.Errorf("Fit error %v, want left out %v", err, tc.leftOut)
			}
			if !bytes.Equal(fit.AppendTo(nil), b) {
				t.Error("Fit's TLVs encode differently from AppendTo")
			}
			for _, f := range fit {
				if valueLen(f) > MaxTLVValue {
					t.Errorf("Fit returned a TLV %d of %d bytes", f.Type(), valueLen(f))
				}
			}
			lsp := &LSP{Header: l2(TypeL2LSP), Lifetime: 1, ID: MakeLSPID(sys(1), 0, 0), Seq: 1, TLVs: tl}
			p, err := Decode(lsp.AppendTo(nil))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.checkOut(p.(*LSP).TLVs) {
				t.Errorf("decoded content differs: %+v", p.(*LSP).TLVs)
			}
		})
	}
}

// TestPurgeCarriesPOI (codec part): TLV 13 as RFC 6232 §3 lays it out —
// number of system ids (1 or 2), the generator, optionally the neighbour
// the purge was received from — checked against bytes written by hand
// from the RFC, decoded back, and the lengths the RFC forbids rejected
// (as FRR 8.4.4's unpack_tlv_purge_originator does).
func TestPurgeCarriesPOI(t *testing.T) {
	gen, snd := SystemID{0, 0, 0, 0, 0, 1}, SystemID{0, 0, 0, 0, 0, 2}
	for _, tc := range []struct {
		poi  PurgeOriginator
		want string
	}{
		{PurgeOriginator{Generator: gen}, "0d07" + "01" + "000000000001"},
		{PurgeOriginator{Generator: gen, HasSender: true, Sender: snd}, "0d0d" + "02" + "000000000001" + "000000000002"},
	} {
		purge := &LSP{Header: l2(TypeL2LSP), Lifetime: 0, ID: MakeLSPID(sys(9), 0, 0), Seq: 5, Checksum: 0, Flags: 3,
			TLVs: TLVs{&tc.poi, &Hostname{Name: "f1"}}}
		b := purge.AppendToKeepChecksum(nil)
		// Header (27 bytes), then TLV 13, then TLV 137 "f1".
		if got := hex.EncodeToString(b[LSPHeaderLen:]); got != tc.want+"89026631" {
			t.Errorf("encoded %s, want %s89026631", got, tc.want)
		}
		p, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.(*LSP).TLVs.PurgeOriginator()
		if !ok || got != tc.poi {
			t.Errorf("decoded %+v %v, want %+v", got, ok, tc.poi)
		}
		if !bytes.Equal(encode(p), b) {
			t.Error("round trip changed the bytes")
		}
		d := DescribeTLV(p.(*LSP).TLVs[0], DefaultPathBandwidthSubTLV)
		if d["name"] != "purge_originator" || d["generator"] != "0000.0000.0001" {
			t.Errorf("described as %v", d)
		}
	}
	for _, v := range []string{"", "00", "01000000000001ff", "02000000000001", "03" + strings.Repeat("00", 18), "01" + strings.Repeat("00", 12)} {
		val, _ := hex.DecodeString(v)
		purge := &LSP{Header: l2(TypeL2LSP), ID: MakeLSPID(sys(9), 0, 0), Seq: 5, TLVs: TLVs{&Unknown{T: TLVPurgeOriginator, Value: val}}}
		_, err := Decode(purge.AppendToKeepChecksum(nil))
		de, ok := err.(*DecodeError)
		if !ok || de.Kind != KindBadTLV || de.TLV != TLVPurgeOriginator || de.Offset != LSPHeaderLen {
			t.Errorf("value %q: %v", v, err)
		}
	}
}
