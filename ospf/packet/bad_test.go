package packet

import (
	"encoding/binary"
	"errors"
	"testing"
)

// fix rewrites the packet checksum after a test edited the bytes.
func fix(b []byte) []byte {
	binary.BigEndian.PutUint16(b[12:], PacketChecksum(b))
	return b
}

// trunc cuts a packet to n bytes and makes its length field and checksum
// agree.
func trunc(b []byte, n int) []byte {
	b = append([]byte(nil), b[:n]...)
	binary.BigEndian.PutUint16(b[2:], uint16(n))
	binary.BigEndian.PutUint16(b[12:], PacketChecksum(b))
	return b
}

// lsuOf encodes an LSU of raw LSAs (which may be malformed on purpose).
// Its first LSA starts at offset 28.
func lsuOf(raws ...[]byte) []byte {
	u := &LSU{Header: sampleHeader(TypeLSU)}
	for _, r := range raws {
		u.LSAs = append(u.LSAs, LSA{Raw: r})
	}
	return u.AppendTo(nil)
}

// rawLSA builds an LSA of type t with a given body, length and checksum
// computed but no validation.
func rawLSA(t uint8, id string, body ...byte) []byte {
	h := LSAHeader{Type: t, ID: ip(id), AdvRouter: ip("10.255.0.9"), Seq: 1}
	return NewLSA(h, rawBody(body)).Raw
}

type rawBody []byte

func (r rawBody) AppendBody(b []byte) []byte { return append(b, r...) }

func TestDecodeErrors(t *testing.T) {
	hello := samplePackets()["hello"].AppendTo(nil)
	router := sampleLSAs()["router"].Raw
	mod := func(b []byte, f func(b []byte)) []byte {
		b = append([]byte(nil), b...)
		f(b)
		return b
	}
	badRouter := mod(router, func(b []byte) { binary.BigEndian.PutUint16(b[22:], 6) }) // 6 links announced, 5 there
	cases := []struct {
		name   string
		in     []byte
		kind   ErrKind
		offset int
		lsa    uint8
		tlv    uint16
		msg    string // exact Error() when set
	}{
		{name: "empty", in: nil, kind: KindTruncated},
		{name: "short header", in: hello[:23], kind: KindTruncated, offset: 23},
		{name: "version 3", in: mod(hello, func(b []byte) { b[0] = 3 }), kind: KindBadVersion, offset: 0},
		{name: "type 6", in: mod(hello, func(b []byte) { b[1] = 6 }), kind: KindBadType, offset: 1},
		{name: "length < header", in: mod(hello, func(b []byte) { b[3] = 20 }), kind: KindBadLength, offset: 2},
		{name: "length > buffer", in: hello[:len(hello)-4], kind: KindBadLength, offset: 2,
			msg: "ospf: Hello: offset 2: bad_length: packet length 52, longer than the 48 bytes received"},
		{name: "auth type 3", in: mod(hello, func(b []byte) { b[15] = 3 }), kind: KindAuth, offset: 14},
		{name: "auth type 256", in: fix(mod(hello, func(b []byte) { b[14] = 1 })), kind: KindAuth, offset: 14},
		{name: "bad checksum", in: mod(hello, func(b []byte) { b[12] ^= 0x40 }), kind: KindBadChecksum, offset: 12},
		{name: "bit flip in body", in: mod(hello, func(b []byte) { b[30] ^= 1 }), kind: KindBadChecksum, offset: 12},
		{name: "hello neighbour list not 4n", in: trunc(hello, len(hello)-2), kind: KindBadLength, offset: 2},
		{name: "hello shorter than fixed part", in: trunc(hello, 40), kind: KindBadLength, offset: 2},
		{name: "DBD partial LSA header", in: trunc(append(samplePackets()["dbd_init"].AppendTo(nil), make([]byte, 10)...), 42), kind: KindBadLength, offset: 2},
		{name: "LSR partial entry", in: trunc(samplePackets()["lsr"].AppendTo(nil), 30), kind: KindBadLength, offset: 2},
		{name: "LSAck partial header", in: trunc(samplePackets()["lsack"].AppendTo(nil), 50), kind: KindBadLength, offset: 2},
		{name: "LSU without count", in: trunc(lsuOf(), 26), kind: KindBadLength, offset: 2},
		{name: "LSU count > LSAs", in: fix(mod(lsuOf(router), func(b []byte) { b[27] = 2 })), kind: KindTruncated, offset: 28 + len(router)},
		{name: "LSU LSA length past end", in: fix(mod(lsuOf(router), func(b []byte) { b[28+19] += 4 })), kind: KindBadLength, offset: 28 + 18, lsa: LSARouter},
		{name: "LSU LSA length < 20", in: fix(mod(lsuOf(router), func(b []byte) { b[28+18], b[28+19] = 0, 19 })), kind: KindBadLength, offset: 28 + 18, lsa: LSARouter},
		{name: "LSU bytes after last LSA", in: fix(mod(lsuOf(router, router), func(b []byte) { b[27] = 1 })), kind: KindBadLength, offset: 2},
		{name: "router LSA: more links announced than sent", in: lsuOf(router, badRouter), kind: KindBadLSA,
			offset: 28 + len(router) + 20 + 68, lsa: LSARouter,
			msg: "ospf: LSU: LSA type 1: offset 204: bad_lsa: router link 6 of 6: 0 bytes left, want 12"},
		{name: "router LSA: TOS count past end", in: lsuOf(rawLSA(LSARouter, "1.1.1.1", 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 2, 0, 10)), kind: KindBadLSA,
			offset: 28 + 20 + 4 + 9, lsa: LSARouter},
		{name: "router LSA: trailing bytes", in: lsuOf(rawLSA(LSARouter, "1.1.1.1", 0, 0, 0, 0, 9)), kind: KindBadLSA, offset: 28 + 24, lsa: LSARouter},
		{name: "network LSA body 6 bytes", in: lsuOf(rawLSA(LSANetwork, "1.1.1.1", 255, 255, 255, 0, 1, 2)), kind: KindBadLSA, offset: 48, lsa: LSANetwork},
		{name: "summary LSA body 4 bytes", in: lsuOf(rawLSA(LSASummary, "1.1.1.1", 255, 255, 255, 0)), kind: KindBadLSA, offset: 48, lsa: LSASummary},
		{name: "external LSA body 12 bytes", in: lsuOf(rawLSA(LSAExternal, "1.1.1.1", make([]byte, 12)...)), kind: KindBadLSA, offset: 48, lsa: LSAExternal},
		{name: "TE LSA: TLV past the LSA", in: lsuOf(rawLSA(LSAOpaqueArea, "1.0.0.1", 0, 1, 0, 100, 10, 0, 0, 1)), kind: KindBadTLV, offset: 48, lsa: LSAOpaqueArea, tlv: 1},
		{name: "TE LSA: padding past the LSA", in: lsuOf(rawLSA(LSAOpaqueArea, "1.0.0.1", 0, 1, 0, 4, 10, 0, 0, 1, 0, 2, 0, 1, 7)), kind: KindBadTLV, offset: 56, lsa: LSAOpaqueArea, tlv: 2},
		{name: "ext prefix LSA: stray bytes after TLVs", in: lsuOf(rawLSA(LSAOpaqueArea, "7.0.0.1", 0, 9, 0, 0, 1, 2)), kind: KindBadTLV, offset: 52, lsa: LSAOpaqueArea},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decode(c.in)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, %v; want a *DecodeError", p, err)
			}
			if de.Kind != c.kind || de.Offset != c.offset || de.LSAType != c.lsa || de.TLV != c.tlv {
				t.Errorf("got %s at %d (LSA %d TLV %d): %v; want %s at %d (LSA %d TLV %d)",
					de.Kind, de.Offset, de.LSAType, de.TLV, err, c.kind, c.offset, c.lsa, c.tlv)
			}
			if c.msg != "" && err.Error() != c.msg {
				t.Errorf("message %q\n        want %q", err.Error(), c.msg)
			}
		})
	}
}

// Unknown things inside an LSU are kept, not errors.
func TestDecodeKeepsUnknown(t *testing.T) {
	router := sampleLSAs()["router"]
	unknownType := rawLSA(99, "1.2.3.4", 1, 2, 3, 4, 5)
	notTLVs := rawLSA(LSAOpaqueArea, "200.0.0.1", 1, 2, 3)                 // opaque type 200, body not TLVs
	tlvs := rawLSA(LSAOpaqueAS, "201.0.0.1", 0, 7, 0, 2, 0xaa, 0xbb, 0, 0) // opaque type 201, a TLV list
	in := lsuOf(router.Raw, unknownType, notTLVs, tlvs)
	p, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	u := p.(*LSU)
	if len(u.LSAs) != 4 || u.LSAs[1].Body != nil || u.LSAs[1].Type != 99 || string(u.LSAs[1].Raw) != string(unknownType) {
		t.Fatalf("unknown LSA type not kept: %+v", u.LSAs)
	}
	if u.LSAs[2].Body != nil || string(u.LSAs[2].Raw) != string(notTLVs) {
		t.Errorf("unknown opaque non-TLV body: %+v", u.LSAs[2])
	}
	if o, ok := u.LSAs[3].Body.(*OpaqueLSA); !ok || o.OpaqueType != 201 || o.OpaqueID != 1 || len(o.TLVs) != 1 || o.TLVs[0].Type != 7 {
		t.Errorf("unknown opaque TLV body: %+v", u.LSAs[3].Body)
	}
	if string(u.AppendTo(nil)) != string(in) {
		t.Error("re-encoding differs")
	}
	d := Describe(&u.LSAs[1], DefaultPathBandwidthSubTLV)
	if d["type_name"] != "unknown" || d["body"].(map[string]any)["hex"] != "0102030405" || d["checksum_ok"] != true {
		t.Errorf("describe unknown %v", d)
	}
	// A known LSA with a bad Fletcher checksum still decodes: dropping it
	// is the flooding code's call (RFC 2328 §13 (1)).
	bad := append([]byte{}, router.Raw...)
	bad[len(bad)-1] ^= 0xff
	p, err = Decode(lsuOf(bad))
	if err != nil || LSAChecksumOK(p.(*LSU).LSAs[0].Raw) {
		t.Errorf("bad LSA checksum: %v", err)
	}
}

func TestDecodeLSAErrors(t *testing.T) {
	router := sampleLSAs()["router"].Raw
	cases := []struct {
		name   string
		in     []byte
		kind   ErrKind
		offset int
	}{
		{"short", router[:10], KindTruncated, 10},
		{"length 19", func() []byte { b := append([]byte{}, router...); b[18], b[19] = 0, 19; return b }(), KindBadLength, 18},
		{"length past buffer", router[:len(router)-1], KindBadLength, 18},
		{"network body", rawLSA(LSANetwork, "1.1.1.1", 1, 2), KindBadLSA, 20},
	}
	for _, c := range cases {
		_, n, err := DecodeLSA(c.in)
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != c.kind || de.Offset != c.offset || n != 0 {
			t.Errorf("%s: %v (n %d), want %s at %d", c.name, err, n, c.kind, c.offset)
		}
	}
}

// Malformed TE and Extended Prefix contents: the LSA decodes (and floods),
// the helpers report where it is wrong.
func TestHelperErrors(t *testing.T) {
	link := func(subs ...TLV) TLV { return TLV{Type: TETLVLink, Value: AppendTLVs(nil, subs)} }
	rtr := TERouterTLV(ip("10.0.0.1"))
	cases := []struct {
		name   string
		o      *OpaqueLSA
		f      func(*OpaqueLSA) error
		offset int
		tlv    uint16
		sub    uint16
	}{
		// LSA header 20, router TLV 8, link TLV header 4, link type 8: the
		// Max BW sub-TLV is at 40.
		{"TE max BW length 3", &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{rtr, link(TLV{Type: TESubLinkType, Value: []byte{1}}, TLV{Type: TESubMaxBW, Value: []byte{0, 0, 0}})}},
			teErr, 40, TETLVLink, TESubMaxBW},
		{"TE link type length 4", &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{link(TLV{Type: TESubLinkType, Value: []byte{1, 0, 0, 0}})}},
			teErr, 24, TETLVLink, TESubLinkType},
		{"TE local address length 6", &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{link(TLV{Type: TESubLocalAddr, Value: make([]byte, 6)})}},
			teErr, 24, TETLVLink, TESubLocalAddr},
		{"TE unreserved BW length 28", &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{link(TLV{Type: TESubUnrsvBW, Value: make([]byte, 28)})}},
			teErr, 24, TETLVLink, TESubUnrsvBW},
		{"TE sub-TLV past the link TLV", &OpaqueLSA{OpaqueType: OpaqueTE, TLVs: []TLV{{Type: TETLVLink, Value: []byte{0, 6, 0, 100, 1, 2, 3, 4}}}},
			teErr, 24, TETLVLink, TESubMaxBW},
		{"ext prefix length 33", &OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{{Type: ExtPrefixTLVType, Value: []byte{1, 33, 0, 0, 10, 0, 0, 1, 0, 0, 0, 0}}}},
			epErr, 25, ExtPrefixTLVType, 0},
		{"ext prefix AF 1", &OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{{Type: ExtPrefixTLVType, Value: []byte{1, 32, 1, 0, 10, 0, 0, 1}}}},
			epErr, 26, ExtPrefixTLVType, 0},
		{"ext prefix no room for the prefix", &OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{{Type: 9, Value: []byte{1}}, {Type: ExtPrefixTLVType, Value: []byte{1, 24, 0, 0}}}},
			epErr, 28, ExtPrefixTLVType, 0},
		{"ext prefix short", &OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{{Type: ExtPrefixTLVType, Value: []byte{1, 24}}}},
			epErr, 20, ExtPrefixTLVType, 0},
		{"ext prefix sub-TLV overflow", &OpaqueLSA{OpaqueType: OpaqueExtPrefix, TLVs: []TLV{{Type: ExtPrefixTLVType, Value: []byte{1, 32, 0, 0, 10, 0, 0, 1, 0x80, 2, 0, 8, 0, 0, 0, 0}}}},
			epErr, 32, ExtPrefixTLVType, DefaultPathBandwidthSubTLV},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Decode accepts the LSA.
			l := NewLSA(opaqueHdr("10.255.0.1"), c.o)
			p, err := Decode(lsuOf(l.Raw))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			o := p.(*LSU).LSAs[0].Body.(*OpaqueLSA)
			err = c.f(o)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v", err)
			}
			if de.Kind != KindBadTLV || de.Offset != c.offset || de.TLV != c.tlv || de.SubTLV != c.sub {
				t.Errorf("got %s at %d TLV %d sub %d (%v), want bad_tlv at %d TLV %d sub %d", de.Kind, de.Offset, de.TLV, de.SubTLV, err, c.offset, c.tlv, c.sub)
			}
			// Describe shows the error next to the raw bytes.
			d := Describe(&p.(*LSU).LSAs[0], DefaultPathBandwidthSubTLV)
			found := false
			for _, tl := range d["body"].(map[string]any)["tlvs"].([]map[string]any) {
				if _, ok := tl["error"]; ok {
					found = true
				}
			}
			if !found {
				t.Errorf("Describe shows no error: %v", d)
			}
		})
	}
}

func teErr(o *OpaqueLSA) error { _, err := TELinks(o); return err }
func epErr(o *OpaqueLSA) error { _, err := ExtPrefixes(o); return err }

func TestErrKindNames(t *testing.T) {
	want := []string{"", "truncated", "bad_version", "bad_length", "bad_checksum", "auth", "bad_type", "bad_lsa", "bad_tlv"}
	for k := KindTruncated; k <= KindBadTLV; k++ {
		if k.String() != want[k] {
			t.Errorf("%d: %q", k, k.String())
		}
	}
	if ErrKind(99).String() != "kind_99" {
		t.Error(ErrKind(99).String())
	}
}
