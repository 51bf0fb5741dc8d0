package packet

import (
	"bytes"
	"math"
	"net/netip"
	"reflect"
	"testing"
)

// TestLSARoundTrip: every kind of LSA fared originates encodes with a valid
// checksum and decodes back to the same value.
func TestLSARoundTrip(t *testing.T) {
	for name, l := range sampleLSAs() {
		t.Run(name, func(t *testing.T) {
			if int(l.Length) != len(l.Raw) || cap(l.Raw) != len(l.Raw) {
				t.Errorf("length %d, raw %d (cap %d)", l.Length, len(l.Raw), cap(l.Raw))
			}
			if !LSAChecksumOK(l.Raw) || LSAChecksum(l.Raw) != l.Checksum {
				t.Errorf("checksum %#04x does not verify", l.Checksum)
			}
			got, n, err := DecodeLSA(append(append([]byte{}, l.Raw...), 0xee, 0xee))
			if err != nil || n != len(l.Raw) {
				t.Fatalf("DecodeLSA: %v (%d bytes)", err, n)
			}
			if !reflect.DeepEqual(got, l) {
				t.Errorf("decoded differs\n got %+v %+v\nwant %+v %+v", got.LSAHeader, got.Body, l.LSAHeader, l.Body)
			}
			// From the body, by value or pointer, Raw unset: same bytes.
			l2 := LSA{LSAHeader: l.LSAHeader, Body: deref(l.Body)}
			if enc := l2.AppendTo([]byte{1, 2, 3}); !bytes.Equal(enc[3:], l.Raw) || !bytes.Equal(enc[:3], []byte{1, 2, 3}) {
				t.Errorf("AppendTo from a value body differs")
			}
		})
	}
}

// deref is the value a pointer body (as Decode gives) points at: the
// bodies' methods have value receivers, so the value is a body too.
func deref(b LSABody) LSABody {
	if v := reflect.ValueOf(b); v.Kind() == reflect.Pointer && !v.IsNil() {
		return v.Elem().Interface().(LSABody)
	}
	return b
}

// TestPacketRoundTrip: every packet fared sends encodes with a valid
// checksum and decodes back to the same value.
func TestPacketRoundTrip(t *testing.T) {
	for name, p := range samplePackets() {
		t.Run(name, func(t *testing.T) {
			enc := p.AppendTo([]byte{9})[1:]
			got, err := Decode(enc)
			if err != nil {
				t.Fatal(err)
			}
			h := got.PacketHeader()
			if int(h.Length) != len(enc) || h.Checksum != PacketChecksum(enc) {
				t.Errorf("length %d checksum %#04x for %d bytes", h.Length, h.Checksum, len(enc))
			}
			want := p.PacketHeader()
			want.Length, want.Checksum = h.Length, h.Checksum
			if !reflect.DeepEqual(got, p) {
				t.Errorf("decoded differs\n got %+v\nwant %+v", got, p)
			}
			if again := got.AppendTo(nil); !bytes.Equal(again, enc) {
				t.Error("re-encoding differs")
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	lsas := sampleLSAs()
	o := lsas["te_link"].Body.(*OpaqueLSA)
	if lsas["te_link"].ID != ip("1.0.0.1") {
		t.Errorf("opaque LSA ID %v", lsas["te_link"].ID)
	}
	if _, ok := TERouterAddress(o); ok {
		t.Error("router address in a link-only TE LSA")
	}
	links, err := TELinks(o)
	if err != nil || len(links) != 1 || links[0].MaxBW != 1.25e10 || links[0].Remote[0] != ip("10.0.12.2") || len(links[0].SubTLVs) != 2 {
		t.Errorf("TELinks %+v %v", links, err)
	}
	links, err = TELinks(lsas["te_frr_style"].Body.(*OpaqueLSA))
	if err != nil || len(links) != 1 || len(links[0].Local) != 2 || links[0].Remote != nil {
		t.Errorf("TELinks FRR style %+v %v", links, err)
	}
	if l, _ := TELinks(lsas["ext_prefix"].Body.(*OpaqueLSA)); l != nil {
		t.Error("TE links of an Extended Prefix LSA")
	}
	ps, err := ExtPrefixes(lsas["ext_prefix"].Body.(*OpaqueLSA))
	if err != nil || len(ps) != 3 {
		t.Fatalf("ExtPrefixes %+v %v", ps, err)
	}
	if bw, ok := PathBandwidth(ps[0].SubTLVs, DefaultPathBandwidthSubTLV); !ok || bw != math.MaxFloat32 {
		t.Errorf("path bandwidth %v %v", bw, ok)
	}
	if bw, ok := PathBandwidth(ps[1].SubTLVs, DefaultPathBandwidthSubTLV); !ok || bw != 2.5e9 || ps[1].Prefix != pfx("10.20.0.0/16") {
		t.Errorf("path bandwidth %v %v %v", bw, ok, ps[1].Prefix)
	}
	if _, ok := PathBandwidth(ps[1].SubTLVs, 32771); ok {
		t.Error("path bandwidth under another code")
	}
	if ps[2].Prefix != pfx("0.0.0.0/0") || ps[2].SubTLVs != nil || len(ExtPrefixTLV(ps[2]).Value) != 4 {
		t.Errorf("default route %+v", ps[2])
	}
	// Host bits survive.
	hb := ExtPrefix{Prefix: netip.PrefixFrom(ip("10.1.2.3"), 24)}
	ps, err = ExtPrefixes(&OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{ExtPrefixTLV(hb)}})
	if err != nil || ps[0].Prefix != hb.Prefix {
		t.Errorf("host bits %+v %v", ps, err)
	}
	for _, c := range []struct {
		m string
		n int
	}{{"255.255.255.0", 24}, {"0.0.0.0", 0}, {"255.255.255.255", 32}, {"255.0.255.0", -1}, {"128.0.0.0", 1}} {
		if got := MaskLen(ip(c.m)); got != c.n {
			t.Errorf("MaskLen(%s) = %d", c.m, got)
		}
		if c.n >= 0 && MaskFromLen(c.n) != ip(c.m) {
			t.Errorf("MaskFromLen(%d) = %v", c.n, MaskFromLen(c.n))
		}
	}
	if p, ok := LSAPrefix(ip("10.1.2.3"), ip("255.255.0.0")); !ok || p != pfx("10.1.0.0/16") {
		t.Errorf("LSAPrefix %v", p)
	}
	if OpaqueLSAID(OpaqueExtPrefix, 0x1000001) != ip("7.0.0.1") {
		t.Error("OpaqueLSAID does not keep the opaque ID to 24 bits")
	}
	// An IPv6 or zero address is written as 0.0.0.0, never a panic.
	if tl := AddrTLV(1, ip("2001:db8::1"), netip.Addr{}, ip("::ffff:10.0.0.1")); !bytes.Equal(tl.Value, []byte{0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1}) {
		t.Errorf("AddrTLV %x", tl.Value)
	}
	// Padding: wrong-length Pad is ignored.
	if b := (TLV{Type: 1, Value: []byte{1}, Pad: []byte{9}}).AppendTo(nil); !bytes.Equal(b, []byte{0, 1, 0, 1, 1, 0, 0, 0}) {
		t.Errorf("pad %x", b)
	}
}

func TestLSACompare(t *testing.T) {
	base := LSAHeader{Type: 1, Seq: 5, Checksum: 0x1000, Age: 100}
	with := func(f func(*LSAHeader)) LSAHeader { h := base; f(&h); return h }
	cases := []struct {
		name string
		a    LSAHeader
		want int
	}{
		{"same", base, 0},
		{"higher seq", with(func(h *LSAHeader) { h.Seq = 6; h.Checksum = 1 }), 1},
		{"lower seq", with(func(h *LSAHeader) { h.Seq = 4 }), -1},
		{"seq is signed", with(func(h *LSAHeader) { h.Seq = InitialSequenceNumber }), -1},
		{"higher checksum", with(func(h *LSAHeader) { h.Checksum = 0xf000 }), 1},
		{"lower checksum", with(func(h *LSAHeader) { h.Checksum = 0x0fff }), -1},
		{"MaxAge newer", with(func(h *LSAHeader) { h.Age = MaxAge }), 1},
		{"past MaxAge counts as MaxAge", with(func(h *LSAHeader) { h.Age = MaxAge + 5 }), 1},
		{"age diff 900 same", with(func(h *LSAHeader) { h.Age = 1000 }), 0},
		{"older by > 900", with(func(h *LSAHeader) { h.Age = 1001 }), -1},
		{"DoNotAge ignored", with(func(h *LSAHeader) { h.Age = DoNotAge | 100 }), 0},
	}
	for _, c := range cases {
		if got := c.a.Compare(base); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if got := base.Compare(c.a); got != -c.want {
			t.Errorf("%s reversed: %d, want %d", c.name, got, -c.want)
		}
	}
	young := with(func(h *LSAHeader) { h.Age = 0 })
	if young.Compare(with(func(h *LSAHeader) { h.Age = 901 })) != 1 {
		t.Error("younger by > 900 is not newer")
	}
}
