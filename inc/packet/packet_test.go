package packet

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/fared/fared/rocev2"
)

var frame = rocev2.Frame{Src: netip.MustParseAddr("10.1.0.2"), Dst: netip.MustParseAddr("10.255.0.3"), ID: 77, SrcPort: 50000}

// TestHeaderBytes: the documented layout, field by field.
func TestHeaderBytes(t *testing.T) {
	h := Header{Flags: FlagResult, Collective: AllReduce, DType: FP16, Op: Max, Tree: 0x0102, Slot: 0x00ff, Msg: 0xdeadbeef, Rank: 7, Count: 512}
	want, _ := hex.DecodeString(strings.ReplaceAll("11 01 01 03 01 02 00 ff de ad be ef 00 07 02 00", " ", ""))
	got := h.AppendTo(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("header % x, want % x", got, want)
	}
	back, err := DecodeHeader(got)
	if err != nil || back != h {
		t.Fatalf("decoded %+v %v", back, err)
	}
}

// TestParseKinds: INC data, ring data, ACK and NACK survive encode/parse
// with a valid ICRC, and land where docs/inc.md says.
func TestParseKinds(t *testing.T) {
	d := Data{DestQP: 0x1234, PSN: 99, VA: 4096, RKey: 5,
		Hdr:     Header{Collective: AllReduce, DType: FP16, Op: Sum, Tree: 3, Slot: 9, Msg: 265, Rank: 1, Count: 3},
		Payload: []byte{1, 2, 3, 4, 5, 6}}
	ip := AppendINC(nil, &frame, rocev2.DefaultPKey, &d)
	var p Parsed
	if err := Parse(ip, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindINC || p.Hdr != d.Hdr || !bytes.Equal(p.Payload, d.Payload) || p.RoCE.BTH.DestQP != 0x1234 || p.PSN() != 99 ||
		p.RoCE.RETH.VA != 4096 || p.RoCE.RETH.Length != 16+6 || p.RoCE.ImmDt.Data != 265 || p.RoCE.BTH.PadCount != 2 {
		t.Fatalf("parsed %+v", p)
	}
	// The INC header sits right after BTH, RETH and ImmDt.
	if off := 20 + 8 + 12 + 16 + 4; ip[off]>>4 != Version || ip[off+2] != byte(FP16) {
		t.Fatalf("INC header not at %d: % x", off, ip[off:off+4])
	}

	ip = AppendRing(nil, &frame, rocev2.DefaultPKey, 7, 1000, 64, 2, []byte("ring"))
	if err := Parse(ip, &p); err != nil || p.Kind != KindRing || string(p.Payload) != "ring" || p.RoCE.RETH.VA != 64 || p.PSN() != 1000 {
		t.Fatalf("ring %+v %v", p, err)
	}
	ip = AppendACK(nil, &frame, rocev2.DefaultPKey, 7, 41)
	if err := Parse(ip, &p); err != nil || p.Kind != KindACK || p.PSN() != 41 {
		t.Fatalf("ack %+v %v", p, err)
	}
	ip = AppendNACK(nil, &frame, rocev2.DefaultPKey, 7, 42, 45)
	if err := Parse(ip, &p); err != nil || p.Kind != KindNACK || p.PSN() != 42 || p.Trigger() != 45 {
		t.Fatalf("nack %+v %v", p, err)
	}
}

// TestRETHWholeMessage: the RETH DMA length of INC data is the whole
// RDMA message of the WRITE Only, the 16-byte INC header and the elements
// (not the pad), as IBTA defines it; the generic RoCEv2 decoder (what an
// RNIC sees) finds exactly that many payload bytes, and Parse refuses the
// old meaning (elements only). Ring data's message is its payload.
func TestRETHWholeMessage(t *testing.T) {
	for _, c := range []struct {
		dt    DType
		count int
	}{{FP32, 256}, {FP16, 3}, {FP64, 1}} {
		d := Data{DestQP: 9, PSN: 1, VA: 128, RKey: 5, Hdr: Header{Collective: AllReduce, DType: c.dt, Op: Sum, Count: uint16(c.count)},
			Payload: make([]byte, c.count*c.dt.Size())}
		want := 16 + c.count*c.dt.Size() // INC header + elements, by hand
		ip := AppendINC(nil, &frame, rocev2.DefaultPKey, &d)
		if got := binary.BigEndian.Uint32(ip[20+8+12+12:]); int(got) != want {
			t.Errorf("%s×%d: RETH DMA length on the wire %d, want %d", c.dt, c.count, got, want)
		}
		_, rp, err := rocev2.DecodeIP(ip)
		if err != nil || int(rp.RETH.Length) != want || len(rp.Payload) != want {
			t.Errorf("%s×%d: RoCEv2 view: DMA length %d, payload %d bytes, %v; want %d", c.dt, c.count, rp.RETH.Length, len(rp.Payload), err, want)
		}
		var p Parsed
		if err := Parse(ip, &p); err != nil || int(p.RoCE.RETH.Length) != want || len(p.Payload) != c.count*c.dt.Size() {
			t.Errorf("%s×%d: Parse %v, DMA length %d", c.dt, c.count, err, p.RoCE.RETH.Length)
		}
		// The old meaning, elements only, is a length error.
		binary.BigEndian.PutUint32(ip[20+8+12+12:], uint32(len(d.Payload)))
		if err := rocev2.PutICRC(ip); err != nil {
			t.Fatal(err)
		}
		if err := Parse(ip, &p); KindOf(err) != KindLength {
			t.Errorf("%s×%d: DMA length of the elements only: %v, want a length error", c.dt, c.count, err)
		}
	}
	ip := AppendRing(nil, &frame, rocev2.DefaultPKey, 7, 1, 64, 2, []byte("hello"))
	var p Parsed
	if err := Parse(ip, &p); err != nil || p.RoCE.RETH.Length != 5 || binary.BigEndian.Uint32(ip[20+8+12+12:]) != 5 {
		t.Errorf("ring: %v, DMA length %d, want 5", err, p.RoCE.RETH.Length)
	}
}

// TestBadPackets: typed errors with offsets from the IP header.
func TestBadPackets(t *testing.T) {
	d := Data{DestQP: 1, Hdr: Header{Collective: AllReduce, DType: FP32, Op: Sum, Count: 2}, Payload: make([]byte, 8)}
	inc := 20 + 8 + 12 + 16 + 4
	for _, c := range []struct {
		name string
		mod  func(b []byte)
		kind ErrKind
		off  int
	}{
		{"version", func(b []byte) { b[inc] = 0x20 }, KindVersion, inc},
		{"flags", func(b []byte) { b[inc] |= 0x8 }, KindFlags, inc},
		{"collective", func(b []byte) { b[inc+1] = 9 }, KindCollective, inc + 1},
		{"dtype", func(b []byte) { b[inc+2] = 0 }, KindDType, inc + 2},
		{"op", func(b []byte) { b[inc+3] = 4 }, KindOp, inc + 3},
		{"count", func(b []byte) { b[inc+15] = 3 }, KindLength, inc + 14},
		{"RETH length", func(b []byte) { b[20+8+12+15] = 9 }, KindLength, 20 + 8 + 12 + 12},
		{"opcode", func(b []byte) { b[28] = byte(rocev2.UCSendOnly) }, KindOpcode, 28},
	} {
		ip := AppendINC(nil, &frame, rocev2.DefaultPKey, &d)
		c.mod(ip)
		if err := rocev2.PutICRC(ip); err != nil {
			t.Fatal(err)
		}
		var p Parsed
		err := Parse(ip, &p)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Offset != c.off {
			t.Errorf("%s: %v, want %s at %d", c.name, err, c.kind, c.off)
		}
	}
	// A bad ICRC is the rocev2 codec's error.
	ip := AppendINC(nil, &frame, rocev2.DefaultPKey, &d)
	ip[len(ip)-5] ^= 1
	var p Parsed
	if err := Parse(ip, &p); !errors.Is(err, rocev2.ErrBadICRC) {
		t.Errorf("bad ICRC: %v", err)
	}
	if _, err := DecodeHeader(make([]byte, 15)); KindOf(err) != KindTruncated {
		t.Errorf("short header: %v", err)
	}
}

func BenchmarkAppendINC(b *testing.B) {
	d := Data{DestQP: 1, Hdr: Header{Collective: AllReduce, DType: FP32, Op: Sum, Count: 256}, Payload: make([]byte, 1024)}
	buf := make([]byte, 0, 2048)
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendINC(buf[:0], &frame, rocev2.DefaultPKey, &d)
	}
}

func BenchmarkParse(b *testing.B) {
	d := Data{DestQP: 1, Hdr: Header{Collective: AllReduce, DType: FP32, Op: Sum, Count: 256}, Payload: make([]byte, 1024)}
	ip := AppendINC(nil, &frame, rocev2.DefaultPKey, &d)
	var p Parsed
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		if err := Parse(ip, &p); err != nil {
			b.Fatal(err)
		}
	}
}
