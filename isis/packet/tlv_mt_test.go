package packet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// The values below were read by hand from `xxd testdata/frr_mt_*.bin`
// (capture_mt.sh: FRR 8.4.4 r6 and r7 with topology ipv6-unicast and
// ipv4-multicast) and agree with FRR's own view, frr_mt_database.txt.
// TestGoldenRoundTrip re-encodes both files to the identical bytes.
func TestGoldenMTHello(t *testing.T) {
	h := decodeGolden[*P2PHello](t, goldenFiles(t), "frr_mt_p2p_iih.bin")
	if h.SourceID != sys(7) {
		t.Errorf("source %v", h.SourceID)
	}
	// e5 06 0000 0002 0003: MT 0, 2 and 3, no flags in a hello.
	want := []MTID{0, 2, 3}
	if got := h.TLVs.MultiTopologies(); !reflect.DeepEqual(got, want) {
		t.Errorf("TLV 229 %v, want %v", got, want)
	}
	if tw, ok := h.TLVs.ThreeWay(); !ok || tw.State != ThreeWayUp || tw.NeighborID != sys(6) {
		t.Errorf("3-way %+v", tw)
	}
}

func TestGoldenMTLSP(t *testing.T) {
	l := decodeGolden[*LSP](t, goldenFiles(t), "frr_mt_lsp.bin")
	if l.ID != MakeLSPID(sys(6), 0, 0) {
		t.Fatalf("LSP %v", l.ID)
	}
	if got := l.TLVs.MultiTopologies(); !reflect.DeepEqual(got, []MTID{0, 2, 3}) {
		t.Errorf("TLV 229 %v", got)
	}
	// de 5f 0002 0000.0000.0007.00 00000a 52 0c10 2001:db8:67::6 0d10
	// 2001:db8:67::7 0904 4e9502f9 (1.25e9) 0a04 … 0b20 …
	n2 := l.TLVs.MTISNeighbors(MTIPv6Unicast)
	if len(n2) != 1 || n2[0].ID != MakeNodeID(sys(7), 0) || n2[0].Metric != 10 {
		t.Fatalf("MT 2 neighbors %+v", n2)
	}
	if a, ok := IPv6IfAddr(n2[0].SubTLVs); !ok || a != ip("2001:db8:67::6") {
		t.Errorf("MT 2 IPv6 if addr %v", a)
	}
	if a, ok := IPv6NbrAddr(n2[0].SubTLVs); !ok || a != ip("2001:db8:67::7") {
		t.Errorf("MT 2 IPv6 nbr addr %v", a)
	}
	if bw, ok := MaxLinkBandwidth(n2[0].SubTLVs); !ok || bw != 1.25e9 {
		t.Errorf("MT 2 max link bandwidth %v", bw)
	}
	// de 6b 0003 …: the second TLV 222, MT 3, with IPv4 addresses too.
	n3 := l.TLVs.MTISNeighbors(3)
	if len(n3) != 1 || n3[0].ID != MakeNodeID(sys(7), 0) {
		t.Fatalf("MT 3 neighbors %+v", n3)
	}
	if a, ok := IPv4IfAddr(n3[0].SubTLVs); !ok || a != ip("10.0.67.6") {
		t.Errorf("MT 3 IPv4 if addr %v", a)
	}
	// ed 26 0002 0000000a 00 40 20010db800670000 0000000a 00 80 2001:db8:ff::6
	p6 := l.TLVs.MTIPv6Prefixes(MTIPv6Unicast)
	want := []IPv6Prefix{{Metric: 10, Prefix: pfx("2001:db8:67::/64")}, {Metric: 10, Prefix: pfx("2001:db8:ff::6/128")}}
	if !reflect.DeepEqual(p6, want) {
		t.Errorf("MT 2 IPv6 prefixes %+v", p6)
	}
	// MT 2 lives only in the MT TLVs: FRR sends no TLV 236 with MT on.
	if p := l.TLVs.IPv6Prefixes(); len(p) != 0 {
		t.Errorf("TLV 236 %+v", p)
	}
	if p := l.TLVs.MTIPv6Prefixes(MTIPv4Unicast); len(p) != 0 {
		t.Errorf("MT 0 in TLV 237: %+v", p)
	}
	j, err := json.Marshal(DescribeTLVs(l.TLVs, DefaultPathBandwidthSubTLV))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`"name":"multi_topology","topologies":[{"attached":false,"mt_id":0,"overload":false},{"attached":false,"mt_id":2,"overload":false},{"attached":false,"mt_id":3,"overload":false}],"type":229`,
		`"length":95,"mt_id":2,"name":"mt_is_reachability","neighbors":[{"id":"0000.0000.0007.00","metric":10,"sub_tlvs":[{"length":16,"name":"ipv6_interface_address","type":12,"value":"2001:db8:67::6"}`,
		`"name":"max_link_bandwidth","type":9,"value":1250000000`,
		`"length":38,"mt_id":2,"name":"mt_ipv6_reachability","prefixes":[{"down":false,"external":false,"metric":10,"prefix":"2001:db8:67::/64","sub_tlvs":[]}`,
	} {
		if !bytes.Contains(j, []byte(w)) {
			t.Errorf("missing %s in\n%s", w, j)
		}
	}
}

// TestMTWire: the MT TLVs are the MT id then exactly the bytes of their
// single-topology TLV, written here by hand from RFC 5120 §7 and RFC
// 5305/5308 rather than by our encoder.
func TestMTWire(t *testing.T) {
	pb := []byte{DefaultPathBandwidthSubTLV, 4, 0x4f, 0x15, 0x02, 0xf9} // 2.5e9 as float32
	cases := []struct {
		tlv  TLV
		want []byte
	}{
		{&MultiTopology{MTs: []MTID{0, MakeMTID(2) | 0x8000, MakeMTID(3) | 0x4000}},
			[]byte{229, 6, 0x00, 0x00, 0x80, 0x02, 0x40, 0x03}},
		{&MTISReach{MT: MakeMTID(2), Neighbors: []ExtISNeighbor{{ID: MakeNodeID(sys(2), 1), Metric: 0x010203}}},
			[]byte{222, 13, 0x00, 0x02, 0, 0, 0, 0, 0, 2, 1, 0x01, 0x02, 0x03, 0}},
		{&MTIPReach{MT: MakeMTID(3), Prefixes: []ExtIPPrefix{{Metric: 5, Down: true, Prefix: pfx("10.1.0.0/16"), SubTLVs: []SubTLV{pbSub(2.5e9)}}}},
			append([]byte{235, 16, 0x00, 0x03, 0, 0, 0, 5, 0x80 | 0x40 | 16, 10, 1, 6}, pb...)},
		{&MTIPv6Reach{MT: MakeMTID(2), Prefixes: []IPv6Prefix{{Metric: 7, External: true, Prefix: pfx("2001:db8::/32"), SubTLVs: []SubTLV{pbSub(2.5e9)}}}},
			append([]byte{237, 19, 0x00, 0x02, 0, 0, 0, 7, 0x40 | 0x20, 32, 0x20, 0x01, 0x0d, 0xb8, 6}, pb...)},
	}
	for _, c := range cases {
		got := TLVs{c.tlv}.AppendTo(nil)
		if !bytes.Equal(got, c.want) {
			t.Errorf("TLV %d\n got %x\nwant %x", c.tlv.Type(), got, c.want)
			continue
		}
		back, err := decodeTLVs(got, 0)
		if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], c.tlv) {
			t.Errorf("TLV %d decodes to %#v %v", c.tlv.Type(), back, err)
		}
		if TLVs(back).Len() != len(c.want) {
			t.Errorf("TLV %d: Len %d, wire %d", c.tlv.Type(), TLVs(back).Len(), len(c.want))
		}
	}
	m := MakeMTID(2) | 0x8000 | 0x4000
	if m.ID() != 2 || !m.Overload() || !m.Attached() || MakeMTID(0x1fff).ID() != 0xfff {
		t.Errorf("MTID accessors %#x", uint16(m))
	}
}

// TestMTSplit: an MT list over 255 bytes goes out as several TLVs of its
// type, each with the MT id, none over 255, every entry once and in order.
func TestMTSplit(t *testing.T) {
	ps := make([]IPv6Prefix, 40) // 40 * (6 + 8 + 7) = 840 bytes of entries
	for i := range ps {
		ps[i] = IPv6Prefix{Metric: uint32(i), Prefix: netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, byte(i)}), 64), SubTLVs: []SubTLV{pbSub(1e9)}}
	}
	ns := make([]ExtISNeighbor, 30) // 30 * 11 = 330
	for i := range ns {
		ns[i] = ExtISNeighbor{ID: MakeNodeID(sys(byte(i)), 0), Metric: 10}
	}
	v4 := make([]ExtIPPrefix, 40) // 40 * (5 + 3 + 7) = 600
	for i := range v4 {
		v4[i] = ExtIPPrefix{Metric: 1, Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 24), SubTLVs: []SubTLV{pbSub(1e9)}}
	}
	mts := make([]MTID, 200)
	for i := range mts {
		mts[i] = MakeMTID(uint16(i))
	}
	tl := TLVs{&MTIPv6Reach{MT: MakeMTID(2), Prefixes: ps}, &MTISReach{MT: MakeMTID(2), Neighbors: ns}, &MTIPReach{MT: MakeMTID(3), Prefixes: v4}, &MultiTopology{MTs: mts}}
	b := tl.AppendTo(nil)
	if len(b) != tl.Len() {
		t.Errorf("Len %d, encoded %d", tl.Len(), len(b))
	}
	back, err := decodeTLVs(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[uint8]int{}
	for _, v := range back {
		count[v.Type()]++
	}
	// Entries per TLV: 253 bytes of room after the MT id.
	if count[237] != 4 || count[222] != 2 || count[235] != 3 || count[229] != 2 {
		t.Errorf("TLV counts %v", count)
	}
	if got := TLVs(back).MTIPv6Prefixes(2); !reflect.DeepEqual(got, ps) {
		t.Errorf("IPv6 prefixes differ after split")
	}
	if got := TLVs(back).MTISNeighbors(2); !reflect.DeepEqual(got, ns) {
		t.Errorf("neighbors differ after split")
	}
	if got := TLVs(back).MTIPPrefixes(3); !reflect.DeepEqual(got, v4) {
		t.Errorf("IPv4 prefixes differ after split")
	}
	if got := TLVs(back).MultiTopologies(); !reflect.DeepEqual(got, mts) {
		t.Errorf("topologies differ after split")
	}
	fit, err := tl.Fit()
	if err != nil || !bytes.Equal(fit.AppendTo(nil), b) {
		t.Errorf("Fit differs from AppendTo: %v", err)
	}
	if got := PackMTIPv6Reach(MakeMTID(2), ps); len(got) != 4 || got[0].(*MTIPv6Reach).MT != MakeMTID(2) {
		t.Errorf("PackMTIPv6Reach: %d TLVs", len(got))
	}
}

// TestMTBad: malformed MT TLVs are errors that name the MT TLV.
func TestMTBad(t *testing.T) {
	for _, c := range []struct {
		wire []byte
		tlv  uint8
		msg  string
	}{
		{[]byte{229, 3, 0, 2, 0}, 229, "not a multiple of 2"},
		{[]byte{222, 1, 0}, 222, "no room for the 2-byte MT id"},
		{[]byte{235, 0}, 235, "no room for the 2-byte MT id"},
		{[]byte{237, 1, 2}, 237, "no room for the 2-byte MT id"},
		{[]byte{222, 12, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0, 10}, 222, "want at least 11"},
		{[]byte{235, 8, 0, 0, 0, 0, 0, 1, 33, 10, 0, 0}, 235, "more than 32"},
		{[]byte{237, 9, 0, 2, 0, 0, 0, 1, 0, 64, 0x20}, 237, "past the end of the TLV"},
	} {
		_, err := decodeTLVs(c.wire, 0)
		var de *DecodeError
		if !errors.As(err, &de) || de.TLV != c.tlv || !strings.Contains(de.Msg, c.msg) {
			t.Errorf("%x: %v, want TLV %d %q", c.wire, err, c.tlv, c.msg)
		}
	}
	// MT id only: a TLV with no entries is valid.
	if back, err := decodeTLVs([]byte{237, 2, 0, 2}, 0); err != nil || len(back[0].(*MTIPv6Reach).Prefixes) != 0 {
		t.Errorf("empty 237: %v", err)
	}
}

// TestDescribeMT: the database view of the MT TLVs fared originates,
// Path Bandwidth included, and of flags on a TLV 229 topology.
func TestDescribeMT(t *testing.T) {
	j, err := json.Marshal(DescribeTLVs(sampleMTLSP().TLVs, DefaultPathBandwidthSubTLV))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`{"attached":false,"mt_id":2,"overload":true}`,
		`{"attached":true,"mt_id":3,"overload":false,"reserved_bits":"0x1000"}`,
		`"mt_id":3,"name":"mt_ip_reachability","prefixes":[{"down":false,"metric":0,"prefix":"10.10.1.0/24","sub_tlvs":[{"length":4,"name":"path_bandwidth","type":200,"value":2500000000}]}`,
		`"mt_id":2,"name":"mt_ipv6_reachability","prefixes":[{"down":false,"external":false,"metric":0,"prefix":"2001:db8:1::/64","sub_tlvs":[{"length":4,"name":"path_bandwidth","type":200,"value":5000000000}]}`,
		`"mt_id":2,"name":"mt_is_reachability","neighbors":[{"id":"0000.0000.0002.00","metric":10,"sub_tlvs":[{"length":4,"name":"max_link_bandwidth","type":9,"value":1250000000}]}`,
	} {
		if !strings.Contains(string(j), w) {
			t.Errorf("missing %s in\n%s", w, j)
		}
	}
}

// mtBase is the single-topology TLV whose entries MT TLV t carries.
var mtBase = map[uint8]uint8{TLVMTISReach: TLVExtISReach, TLVMTIPReach: TLVExtIPReach, TLVMTIPv6Reach: TLVIPv6Reach}

// FuzzMTTLV: decoding a TLV 222, 235 or 237 value is decoding the MT id
// and then the value of TLV 22, 135 or 236: both accept or reject the
// same bytes, yield the same entries, and re-encode to the MT id followed
// by the single-topology encoding. TLV 229 decodes exactly the 2-byte ids
// and re-encodes to its input. Nothing panics, description included.
func FuzzMTTLV(f *testing.F) {
	for _, tv := range sampleMTLSP().TLVs {
		f.Add(tv.Type(), tv.AppendValue(nil))
	}
	for _, raw := range goldenFiles(f) {
		p, err := Decode(raw)
		if err != nil {
			continue
		}
		for _, tv := range TLVsOf(p) {
			if tv.Type() == TLVMultiTopology || mtBase[tv.Type()] != 0 {
				f.Add(tv.Type(), tv.AppendValue(nil))
			}
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, v []byte) {
		types := []uint8{TLVMultiTopology, TLVMTISReach, TLVMTIPReach, TLVMTIPv6Reach}
		typ := types[int(sel)%len(types)]
		if len(v) > MaxTLVValue {
			v = v[:MaxTLVValue]
		}
		got, err := decodeTLV(typ, v, 0)
		if typ == TLVMultiTopology {
			if (err == nil) != (len(v)%2 == 0) {
				t.Fatalf("229 of %d bytes: %v", len(v), err)
			}
			if err == nil && !bytes.Equal(got.AppendValue(nil), v) {
				t.Fatalf("229 re-encodes differently")
			}
			return
		}
		var base TLV
		var berr error = errors.New("no MT id")
		if len(v) >= 2 {
			base, berr = decodeTLV(mtBase[typ], v[2:], 0)
		}
		if (err == nil) != (berr == nil) {
			t.Fatalf("TLV %d: %v, its entries as TLV %d: %v", typ, err, mtBase[typ], berr)
		}
		if err != nil {
			if de, ok := err.(*DecodeError); !ok || de.TLV != typ {
				t.Fatalf("error %#v does not name TLV %d", err, typ)
			}
			return
		}
		if mt := binary.BigEndian.Uint16(v); !reflect.DeepEqual(got, mtOf(MTID(mt), base)) {
			t.Fatalf("TLV %d\n got %#v\nwant %#v", typ, got, mtOf(MTID(mt), base))
		}
		enc := got.AppendValue(nil)
		if want := base.AppendValue(append([]byte(nil), v[:2]...)); !bytes.Equal(enc, want) {
			t.Fatalf("TLV %d encodes %x, want %x", typ, enc, want)
		}
		if valueLen(got) != len(enc) {
			t.Fatalf("valueLen %d, encoded %d", valueLen(got), len(enc))
		}
		DescribeTLV(got, DefaultPathBandwidthSubTLV)
	})
}

// mtOf is the MT TLV of topology mt holding the entries of base.
func mtOf(mt MTID, base TLV) TLV {
	switch x := base.(type) {
	case *ExtISReach:
		return &MTISReach{MT: mt, Neighbors: x.Neighbors}
	case *ExtIPReach:
		return &MTIPReach{MT: mt, Prefixes: x.Prefixes}
	case *IPv6Reach:
		return &MTIPv6Reach{MT: mt, Prefixes: x.Prefixes}
	}
	return nil
}

// FuzzMTEncode: whatever number and size of entries an MT TLV is given,
// AppendTo writes TLVs of at most 255 value bytes that all carry its MT
// id, Len agrees, and every entry that fits a TLV comes back in order.
func FuzzMTEncode(f *testing.F) {
	f.Add(uint16(2), uint8(40), uint8(3), []byte{1, 2, 3})
	f.Add(uint16(0xffff), uint8(255), uint8(250), []byte{})
	f.Add(uint16(3), uint8(0), uint8(0), []byte{0xff})
	f.Fuzz(func(t *testing.T, mt uint16, n, subLen uint8, seed []byte) {
		fill := func(i, k int) byte {
			if len(seed) == 0 {
				return byte(i + k)
			}
			return seed[(i+k)%len(seed)] ^ byte(i)
		}
		ns := make([]ExtISNeighbor, n)
		p4 := make([]ExtIPPrefix, n)
		p6 := make([]IPv6Prefix, n)
		for i := range int(n) {
			// Entry i carries (subLen * i) % 256 bytes of sub-TLV: some
			// entries cannot fit a TLV and are left out.
			l := (int(subLen) * i) % 256
			var subs []SubTLV
			for l >= 2 {
				c := min(l-2, 255)
				subs = append(subs, SubTLV{Type: 250, Value: bytes.Repeat([]byte{fill(i, 0)}, c)})
				l -= 2 + c
			}
			ns[i] = ExtISNeighbor{ID: MakeNodeID(sys(fill(i, 1)), 0), Metric: uint32(i), SubTLVs: subs}
			p4[i] = ExtIPPrefix{Metric: uint32(i), Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, fill(i, 2)}), int(fill(i, 3))%33), SubTLVs: subs}
			p6[i] = IPv6Prefix{Metric: uint32(i), Prefix: netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, fill(i, 4)}), int(fill(i, 5))%129), SubTLVs: subs}
		}
		id := MTID(mt)
		tl := TLVs{&MTISReach{MT: id, Neighbors: ns}, &MTIPReach{MT: id, Prefixes: p4}, &MTIPv6Reach{MT: id, Prefixes: p6}}
		b := tl.AppendTo(nil)
		if len(b) != tl.Len() {
			t.Fatalf("Len %d, encoded %d", tl.Len(), len(b))
		}
		back, err := decodeTLVs(b, 0)
		if err != nil {
			t.Fatalf("encoding does not decode: %v", err)
		}
		for _, v := range back {
			if m := binary.BigEndian.Uint16(v.AppendValue(nil)); MTID(m) != id {
				t.Fatalf("TLV %d carries MT %#x, want %#x", v.Type(), m, mt)
			}
		}
		fits := func(size int) bool { return size <= MaxTLVValue-mtHeadLen }
		checkKept(t, "neighbors", ns, TLVs(back).MTISNeighbors(id.ID()), func(e *ExtISNeighbor) bool { return fits(e.wireLen()) })
		checkKept(t, "IPv4 prefixes", p4, TLVs(back).MTIPPrefixes(id.ID()), func(e *ExtIPPrefix) bool { return fits(e.wireLen()) })
		checkKept(t, "IPv6 prefixes", p6, TLVs(back).MTIPv6Prefixes(id.ID()), func(e *IPv6Prefix) bool { return fits(e.wireLen()) })
	})
}

// checkKept: got is exactly the entries of in that fit, in order,
// compared by their wire encoding (what a receiver sees: host bits past
// the prefix bytes are not sent).
func checkKept[E any](t *testing.T, what string, in, got []E, fits func(*E) bool) {
	t.Helper()
	var want []E
	for i := range in {
		if fits(&in[i]) {
			want = append(want, in[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d of %d fit, %d came back", what, len(want), len(in), len(got))
	}
	for i := range want {
		if g, w := entryWire(got[i]), entryWire(want[i]); !bytes.Equal(g, w) {
			t.Fatalf("%s %d: got %x, want %x", what, i, g, w)
		}
	}
}

// entryWire is the encoding of one TLV 22, 135 or 236 entry.
func entryWire(e any) []byte {
	switch x := e.(type) {
	case ExtISNeighbor:
		return ExtISReach{Neighbors: []ExtISNeighbor{x}}.AppendValue(nil)
	case ExtIPPrefix:
		return ExtIPReach{Prefixes: []ExtIPPrefix{x}}.AppendValue(nil)
	case IPv6Prefix:
		return IPv6Reach{Prefixes: []IPv6Prefix{x}}.AppendValue(nil)
	}
	panic("entryWire: not an entry")
}
