package packet

import (
	"encoding/binary"
	"errors"
	"testing"
)

// lspWith encodes an L2 LSP whose only TLVs are tl (raw Unknowns let the
// test write malformed known TLVs). Its first TLV starts at offset 27.
func lspWith(tl ...TLV) []byte {
	l := &LSP{Header: l2(TypeL2LSP), Lifetime: 1200, ID: MakeLSPID(sys(1), 0, 0), Seq: 1, Flags: 3, TLVs: tl}
	return l.AppendTo(nil)
}

func raw(t uint8, v ...byte) TLV { return &Unknown{T: t, Value: v} }

func TestDecodeErrors(t *testing.T) {
	good := lspWith(&Hostname{Name: "r1"}, &Hostname{Name: "r2"})
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	nbr := []byte{0, 0, 0, 0, 0, 2, 0, 0, 0, 10} // neighbour id + metric, sub-TLV length follows
	cases := []struct {
		name   string
		in     []byte
		kind   ErrKind
		offset int
		tlv    uint8
		sub    uint8
		msg    string // exact Error() when set
	}{
		{name: "empty", in: nil, kind: KindTruncated},
		{name: "short common header", in: good[:5], kind: KindTruncated, offset: 5},
		{name: "short fixed header", in: good[:20], kind: KindTruncated, offset: 20},
		{name: "IRPD", in: mod(func(b []byte) []byte { b[0] = 0x82; return b }), kind: KindBadHeader, offset: 0},
		{name: "length indicator", in: mod(func(b []byte) []byte { b[1] = 20; return b }), kind: KindBadHeader, offset: 1},
		{name: "version/proto ext", in: mod(func(b []byte) []byte { b[2] = 2; return b }), kind: KindBadHeader, offset: 2},
		{name: "version", in: mod(func(b []byte) []byte { b[5] = 2; return b }), kind: KindBadHeader, offset: 5},
		{name: "ID length 4", in: mod(func(b []byte) []byte { b[3] = 4; return b }), kind: KindIDLength, offset: 3},
		{name: "max area 5", in: mod(func(b []byte) []byte { b[7] = 5; return b }), kind: KindMaxArea, offset: 7},
		{name: "PDU type 19", in: mod(func(b []byte) []byte { b[4] = 19; return b }), kind: KindBadPDUType, offset: 4},
		{name: "PDU length > buffer", in: good[:len(good)-3], kind: KindBadLength, offset: 8,
			msg: "isis: L2 LSP: offset 8: PDU length 35, longer than the 32 bytes received"},
		{name: "PDU length < header", in: mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[8:], 26); return b }), kind: KindBadLength, offset: 8},
		{name: "hello PDU length > buffer", in: func() []byte {
			b := samplePDUs(t)["p2p_iih"].AppendTo(nil)
			return b[:len(b)-1]
		}(), kind: KindBadLength, offset: 17},
		{name: "TLV length past end", in: mod(func(b []byte) []byte { b[32] = 3; return b }), kind: KindTLVOverflow, offset: 31, tlv: 137},
		{name: "lone TLV type byte", in: mod(func(b []byte) []byte {
			b = append(b, 99)
			binary.BigEndian.PutUint16(b[8:], uint16(len(b)))
			return b
		}), kind: KindTLVOverflow, offset: 35, tlv: 99},
		{name: "TLV 135 prefix length 33", in: lspWith(&Hostname{Name: "r1"}, raw(135, 0, 0, 0, 10, 33, 10, 0, 0, 0, 1)), kind: KindBadTLV, offset: 31, tlv: 135},
		{name: "TLV 135 prefix bytes past end", in: lspWith(raw(135, 0, 0, 0, 10, 24, 10, 0)), kind: KindBadTLV, offset: 27, tlv: 135},
		{name: "TLV 135 sub-TLV past block", in: lspWith(raw(135, 0, 0, 0, 10, 0x40|8, 10, 3, 200, 4, 0, 0)), kind: KindBadTLV, offset: 27, tlv: 135, sub: 200},
		{name: "TLV 135 sub-TLV block past TLV", in: lspWith(raw(135, 0, 0, 0, 10, 0x40|8, 10, 9, 200, 4)), kind: KindBadTLV, offset: 27, tlv: 135},
		{name: "TLV 135 short entry", in: lspWith(raw(135, 0, 0, 0)), kind: KindBadTLV, offset: 27, tlv: 135},
		{name: "TLV 236 prefix length 129", in: lspWith(raw(236, 0, 0, 0, 10, 0, 129)), kind: KindBadTLV, offset: 27, tlv: 236},
		{name: "TLV 22 sub-TLV past neighbor block", in: lspWith(raw(22, append(nbr, 4, 9, 4, 0, 0)...)), kind: KindBadTLV, offset: 27, tlv: 22, sub: 9},
		{name: "TLV 22 sub-TLV 9 length 3", in: lspWith(raw(22, append(nbr, 5, 9, 3, 0, 0, 0)...)), kind: KindBadTLV, offset: 27, tlv: 22, sub: 9,
			msg: "isis: L2 LSP: TLV 22 at offset 27: sub-TLV 9 length 3, want 4"},
		{name: "TLV 22 block past TLV", in: lspWith(raw(22, append(nbr, 6, 9, 4)...)), kind: KindBadTLV, offset: 27, tlv: 22},
		{name: "TLV 22 short neighbor", in: lspWith(raw(22, nbr...)), kind: KindBadTLV, offset: 27, tlv: 22},
		{name: "TLV 240 length 7", in: lspWith(raw(240, 0, 0, 0, 0, 0, 0, 0)), kind: KindBadTLV, offset: 27, tlv: 240},
		{name: "TLV 240 empty", in: lspWith(raw(240)), kind: KindBadTLV, offset: 27, tlv: 240},
		{name: "TLV 134 length 3", in: lspWith(raw(134, 1, 2, 3)), kind: KindBadTLV, offset: 27, tlv: 134},
		{name: "TLV 132 length 5", in: lspWith(raw(132, 1, 2, 3, 4, 5)), kind: KindBadTLV, offset: 27, tlv: 132},
		{name: "TLV 232 length 15", in: lspWith(raw(232, make([]byte, 15)...)), kind: KindBadTLV, offset: 27, tlv: 232},
		{name: "TLV 9 length 15", in: lspWith(raw(9, make([]byte, 15)...)), kind: KindBadTLV, offset: 27, tlv: 9},
		{name: "TLV 6 length 5", in: lspWith(raw(6, make([]byte, 5)...)), kind: KindBadTLV, offset: 27, tlv: 6},
		{name: "TLV 1 area past end", in: lspWith(raw(1, 3, 0x49, 0)), kind: KindBadTLV, offset: 27, tlv: 1},
		{name: "TLV 1 zero-length area", in: lspWith(raw(1, 0)), kind: KindBadTLV, offset: 27, tlv: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decode(c.in)
			if err == nil {
				t.Fatalf("decoded %#v", p)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v", err, err)
			}
			if de.Kind != c.kind || de.Offset != c.offset || de.TLV != c.tlv || de.SubTLV != c.sub {
				t.Errorf("got kind %v offset %d TLV %d sub %d (%v), want %v %d %d %d", de.Kind, de.Offset, de.TLV, de.SubTLV, err, c.kind, c.offset, c.tlv, c.sub)
			}
			if c.msg != "" && err.Error() != c.msg {
				t.Errorf("message %q, want %q", err.Error(), c.msg)
			}
			if c.kind != KindTruncated && c.kind != KindBadPDUType && de.PDUType != TypeL2LSP && de.PDUType != TypeP2PHello {
				t.Errorf("PDU type %d", de.PDUType)
			}
		})
	}
}

func TestBadChecksum(t *testing.T) {
	b := lspWith(&Hostname{Name: "r1"})
	if !LSPChecksumOK(b) {
		t.Fatal("good LSP fails")
	}
	b[len(b)-1] ^= 1
	if LSPChecksumOK(b) {
		t.Error("corrupted LSP passes")
	}
	// Decode does not judge checksums: the flooding code must, to count
	// and drop them (ISO 10589 7.3.14.2), and purges may carry none.
	if _, err := Decode(b); err != nil {
		t.Errorf("decode: %v", err)
	}
	if LSPChecksumOK(b[:20]) {
		t.Error("short buffer passes")
	}
	// Lifetime is outside the checksum.
	c := lspWith(&Hostname{Name: "r1"})
	SetLSPLifetime(c, 1)
	if !LSPChecksumOK(c) {
		t.Error("lifetime change broke the checksum")
	}
}

func TestErrKindNames(t *testing.T) {
	want := map[ErrKind]string{
		KindTruncated: "truncated", KindBadHeader: "bad_header", KindIDLength: "id_length", KindMaxArea: "max_area",
		KindBadPDUType: "bad_pdu_type", KindBadLength: "bad_length", KindTLVOverflow: "tlv_overflow", KindBadTLV: "bad_tlv",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d: %q want %q", k, k.String(), s)
		}
	}
	if ErrKind(0).String() != "kind_0" {
		t.Error(ErrKind(0).String())
	}
}
