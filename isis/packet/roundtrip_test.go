package packet

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"
)

func TestRoundTripOriginated(t *testing.T) {
	for name, orig := range samplePDUs(t) {
		t.Run(name, func(t *testing.T) {
			b := orig.AppendTo(nil)
			if l, ok := orig.(*LSP); ok {
				if !LSPChecksumOK(b) {
					t.Error("checksum does not verify")
				}
				if l.Lifetime != 0 && LSPChecksum(b) == 0 {
					t.Error("zero checksum")
				}
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if l, ok := got.(*LSP); ok {
				// AppendTo computed it; the original still holds 0.
				o := *orig.(*LSP)
				o.Checksum = l.Checksum
				orig = &o
			}
			if !reflect.DeepEqual(got, orig) {
				t.Errorf("decoded differs\n got %#v\nwant %#v", got, orig)
				gt, wt := TLVsOf(got), TLVsOf(orig)
				for i := range min(len(gt), len(wt)) {
					if !reflect.DeepEqual(gt[i], wt[i]) {
						t.Errorf("TLV %d\n got %#v\nwant %#v", i, gt[i], wt[i])
					}
				}
			}
			if again := encode(got); !bytes.Equal(again, b) {
				t.Errorf("re-encoding differs\n got %x\nwant %x", again, b)
			}
		})
	}
}

func TestHelloPaddedToMTU(t *testing.T) {
	lan := samplePDUs(t)["lan_iih"]
	if n := len(lan.AppendTo(nil)); n != 1497 {
		t.Errorf("padded LAN hello is %d bytes, want 1497", n)
	}
	for n := 0; n <= 1600; n++ {
		got := PaddingTLVs(n).Len()
		want := n
		if n == 1 {
			want = 0
		}
		if got != want {
			t.Fatalf("PaddingTLVs(%d) takes %d bytes", n, got)
		}
	}
}

func TestPurgeKeepsZeroChecksum(t *testing.T) {
	purge := samplePDUs(t)["purge"].(*LSP)
	b := purge.AppendToKeepChecksum(nil)
	if b[24] != 0 || b[25] != 0 {
		t.Fatal("checksum not kept at 0")
	}
	if !LSPChecksumOK(b) {
		t.Error("purge with checksum 0 must be accepted")
	}
	SetLSPLifetime(b, 100)
	if LSPChecksumOK(b) {
		t.Error("checksum 0 on a live LSP must be rejected")
	}
	// AppendTo always computes one.
	c := purge.AppendTo(nil)
	if !LSPChecksumOK(c) || LSPChecksum(c) == 0 {
		t.Error("AppendTo checksum")
	}
}

func TestSetLSPLifetime(t *testing.T) {
	b := samplePDUs(t)["lsp"].AppendTo(nil)
	SetLSPLifetime(b, 7)
	if LSPLifetime(b) != 7 || !LSPChecksumOK(b) {
		t.Error("lifetime patch broke the LSP")
	}
	p, err := Decode(b)
	if err != nil || p.(*LSP).Lifetime != 7 {
		t.Errorf("decoded lifetime: %v", err)
	}
	SetLSPLifetime(b[:5], 1) // too short: no panic, no effect
}

func TestUnknownPreserved(t *testing.T) {
	weird := []byte{0xde, 0xad, 0xbe, 0xef}
	l := &LSP{Header: l2(TypeL2LSP), Lifetime: 100, ID: MakeLSPID(sys(1), 0, 0), Seq: 1, TLVs: TLVs{
		&Unknown{T: 199, Value: weird},
		&ExtISReach{Neighbors: []ExtISNeighbor{{ID: MakeNodeID(sys(2), 0), Metric: 1, SubTLVs: []SubTLV{{Type: 250, Value: weird}, {Type: 251}}}}},
		&ExtIPReach{Prefixes: []ExtIPPrefix{{Prefix: pfx("10.0.0.0/8"), SubTLVs: []SubTLV{{Type: 99, Value: weird}}}}},
		&IPv6Reach{Prefixes: []IPv6Prefix{{Prefix: pfx("2001:db8::/32"), SubTLVs: []SubTLV{{Type: 98, Value: weird}}}}},
		&Unknown{T: 8, Value: []byte{1, 2}}, // non-zero padding stays Unknown
		&Unknown{T: 199, Value: []byte{}},
	}}
	b := l.AppendTo(nil)
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(p), b) {
		t.Error("re-encoding differs")
	}
	tl := p.(*LSP).TLVs
	if len(tl) != 6 {
		t.Fatalf("%d TLVs", len(tl))
	}
	if u, ok := tl[0].(*Unknown); !ok || u.T != 199 || !bytes.Equal(u.Value, weird) {
		t.Errorf("unknown TLV %#v", tl[0])
	}
	if u, ok := tl[4].(*Unknown); !ok || u.T != 8 {
		t.Errorf("non-zero padding %#v", tl[4])
	}
	n := tl[1].(*ExtISReach).Neighbors[0]
	if len(n.SubTLVs) != 2 || n.SubTLVs[0].Type != 250 || !bytes.Equal(n.SubTLVs[0].Value, weird) {
		t.Errorf("sub-TLVs %+v", n.SubTLVs)
	}
	if s := tl[2].(*ExtIPReach).Prefixes[0].SubTLVs; len(s) != 1 || s[0].Type != 99 {
		t.Errorf("prefix sub-TLVs %+v", s)
	}
	// Decoded slices are capacity limited: appending must not clobber the
	// next sub-TLV.
	_ = append(n.SubTLVs[0].Value, 0xff)
	if n.SubTLVs[1].Type != 251 {
		t.Error("append to a decoded value overwrote its neighbour")
	}
}

func TestDecodeDoesNotAlias(t *testing.T) {
	b := samplePDUs(t)["lsp"].AppendTo(nil)
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := encode(p)
	for i := range b {
		b[i] = 0xaa
	}
	if !bytes.Equal(encode(p), want) {
		t.Error("decoded PDU changed when the input buffer was overwritten")
	}
}

func TestPrefixHostBitsKept(t *testing.T) {
	// 10.1.2.3/20 on the wire is 3 prefix bytes 0a 01 02: the low nibble
	// of the third byte is sent as is.
	l := &LSP{Header: l2(TypeL2LSP), Lifetime: 1, TLVs: TLVs{&ExtIPReach{Prefixes: []ExtIPPrefix{{Prefix: netip.PrefixFrom(ip("10.1.2.3"), 20)}}}}}
	b := l.AppendTo(nil)
	if !bytes.Equal(b[27:], []byte{135, 8, 0, 0, 0, 0, 20, 10, 1, 2}) {
		t.Errorf("wire %x", b[27:])
	}
	p, _ := Decode(b)
	got := p.(*LSP).TLVs.ExtIPPrefixes()[0].Prefix
	if got != netip.PrefixFrom(ip("10.1.2.0"), 20) {
		t.Errorf("prefix %v", got)
	}
}

func TestPackers(t *testing.T) {
	l := benchLSP(60, 40)
	ns := l.TLVs.ExtISNeighbors()
	if len(ns) != 60 {
		t.Fatalf("%d neighbors", len(ns))
	}
	tlvs := PackExtISReach(ns)
	// 29 bytes a neighbour: 8 per TLV (232 bytes).
	if len(tlvs) != 8 {
		t.Errorf("%d TLV 22s, want 8", len(tlvs))
	}
	for _, v := range tlvs {
		if n := 2 + len(v.AppendValue(nil)); n > 257 {
			t.Errorf("TLV of %d bytes", n)
		}
	}
	if !reflect.DeepEqual(TLVs(tlvs).ExtISNeighbors(), ns) {
		t.Error("packing changed the neighbours")
	}
	ps := l.TLVs.ExtIPPrefixes()
	if got := TLVs(PackExtIPReach(ps)).ExtIPPrefixes(); !reflect.DeepEqual(got, ps) {
		t.Error("packing changed the prefixes")
	}
	v6 := make([]IPv6Prefix, 30)
	for i := range v6 {
		v6[i] = IPv6Prefix{Metric: uint32(i), Prefix: netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 1, 0xd, 0xb8, byte(i)}), 64), SubTLVs: []SubTLV{pbSub(1)}}
	}
	p6 := PackIPv6Reach(v6)
	if got := TLVs(p6).IPv6Prefixes(); !reflect.DeepEqual(got, v6) {
		t.Error("packing changed the IPv6 prefixes")
	}
	if n := len(p6); n != 3 { // 20 bytes each: 12 per TLV
		t.Errorf("%d TLV 236s", n)
	}
	es := make([]LSPEntry, 40)
	for i := range es {
		es[i].Seq = uint32(i)
	}
	if p := PackLSPEntries(es); len(p) != 3 || !reflect.DeepEqual(TLVs(p).LSPEntries(), es) {
		t.Errorf("LSP entries packed into %d TLVs", len(p))
	}
	as := make([]netip.Addr, 70)
	for i := range as {
		as[i] = netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})
	}
	if p := PackIPv4Addresses(as); len(p) != 2 || !reflect.DeepEqual(TLVs(p).IPv4Addrs(), as) {
		t.Error("IPv4 addresses")
	}
	if p := PackIPv6Addresses([]netip.Addr{ip("::1")}); len(p) != 1 {
		t.Error("IPv6 addresses")
	}
	if PackExtISReach(nil) != nil {
		t.Error("nothing to pack gives no TLV")
	}
}

func TestSplitFragments(t *testing.T) {
	l := benchLSP(120, 100) // ~5 KB: several fragments
	frags := SplitFragments(l.TLVs, 1492)
	if len(frags) < 4 {
		t.Fatalf("%d fragments", len(frags))
	}
	var all TLVs
	for i, f := range frags {
		lsp := &LSP{Header: l.Header, Lifetime: 1200, ID: MakeLSPID(sys(1), 0, uint8(i)), Seq: 1, TLVs: f}
		b := lsp.AppendTo(nil)
		if len(b) > 1492 {
			t.Errorf("fragment %d is %d bytes", i, len(b))
		}
		if f.Len()+LSPHeaderLen != len(b) {
			t.Errorf("Len %d + header != %d", f.Len(), len(b))
		}
		all = append(all, f...)
	}
	if !reflect.DeepEqual(all, l.TLVs) {
		t.Error("fragments do not concatenate to the input")
	}
	if f := SplitFragments(nil, 1492); len(f) != 1 || len(f[0]) != 0 {
		t.Error("empty input gives one empty fragment")
	}
}

func TestTLVsLenMatchesEncoding(t *testing.T) {
	for name, p := range samplePDUs(t) {
		tl := TLVsOf(p)
		if tl.Len() != len(tl.AppendTo(nil)) {
			t.Errorf("%s: Len %d, encoded %d", name, tl.Len(), len(tl.AppendTo(nil)))
		}
	}
}

func TestValueTLVsEncode(t *testing.T) {
	// Callers may build TLVs as values; they encode like pointers and the
	// accessors see them.
	tl := TLVs{Hostname{Name: "x"}, ExtISReach{Neighbors: []ExtISNeighbor{{Metric: 1}}}, TERouterID{Addr: ip("1.2.3.4")}}
	ptr := TLVs{&Hostname{Name: "x"}, &ExtISReach{Neighbors: []ExtISNeighbor{{Metric: 1}}}, &TERouterID{Addr: ip("1.2.3.4")}}
	if !bytes.Equal(tl.AppendTo(nil), ptr.AppendTo(nil)) {
		t.Error("value and pointer TLVs encode differently")
	}
	if h, _ := tl.Hostname(); h != "x" || len(tl.ExtISNeighbors()) != 1 {
		t.Error("accessors miss value TLVs")
	}
	if r, ok := tl.TERouterID(); !ok || r != ip("1.2.3.4") {
		t.Error("TE router id")
	}
	// A zero or wrong-family address must not panic the encoder.
	_ = TLVs{TERouterID{}, IPv4Addresses{Addrs: []netip.Addr{ip("::1")}}, ExtIPReach{Prefixes: []ExtIPPrefix{{Prefix: pfx("2001:db8::/64")}}}}.AppendTo(nil)
}

func TestThreeWayLengths(t *testing.T) {
	for _, tw := range []ThreeWay{
		{State: ThreeWayDown},
		{State: ThreeWayInitializing, HasExtCircuit: true, ExtCircuitID: 0x01020304},
		{State: ThreeWayUp, HasExtCircuit: true, ExtCircuitID: 1, HasNeighbor: true, NeighborID: sys(7), NoNeighborExtCircuit: true},
		{State: ThreeWayUp, HasExtCircuit: true, ExtCircuitID: 1, HasNeighbor: true, NeighborID: sys(7), NeighborExtCircuitID: 2},
	} {
		h := &P2PHello{Header: Header{Type: TypeP2PHello}, CircuitType: CircuitL2, TLVs: TLVs{&tw}}
		b := h.AppendTo(nil)
		p, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := p.(*P2PHello).TLVs.ThreeWay()
		if got != tw || !bytes.Equal(encode(p), b) {
			t.Errorf("got %+v want %+v", got, tw)
		}
	}
}

func TestReservedBitsIgnored(t *testing.T) {
	b := samplePDUs(t)["lan_iih"].AppendTo(nil)
	b[4] |= 0xe0  // reserved bits of the PDU type
	b[19] |= 0x80 // reserved bit above the priority
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	h := p.(*LANHello)
	if h.Type != TypeL2LANHello || h.Priority != 64 {
		t.Errorf("type %d priority %d", h.Type, h.Priority)
	}
}
