package rocev2

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/fared/fared/internal/testvec"
)

// randPacket fills every header field with random values; only the
// headers the opcode carries survive a round trip.
func randPacket(r *rand.Rand, op Opcode, payload int) Packet {
	p := Packet{
		BTH: BTH{Opcode: op, Solicited: r.IntN(2) == 0, MigReq: r.IntN(2) == 0, PKey: uint16(r.Uint32()),
			FECN: r.IntN(2) == 0, BECN: r.IntN(2) == 0, DestQP: r.Uint32() & 0xFFFFFF, AckReq: r.IntN(2) == 0, PSN: r.Uint32() & PSNMask},
		DETH:         DETH{QKey: r.Uint32(), SrcQP: r.Uint32() & 0xFFFFFF},
		RETH:         RETH{VA: r.Uint64(), RKey: r.Uint32(), Length: r.Uint32()},
		AtomicETH:    AtomicETH{VA: r.Uint64(), RKey: r.Uint32(), SwapAdd: r.Uint64(), Compare: r.Uint64()},
		AETH:         AETH{Syndrome: uint8(r.Uint32()), MSN: r.Uint32() & 0xFFFFFF},
		AtomicAckETH: AtomicAckETH{Orig: r.Uint64()},
		ImmDt:        ImmDt{Data: r.Uint32()},
		IETH:         IETH{RKey: r.Uint32()},
	}
	p.Payload = make([]byte, payload)
	for i := range p.Payload {
		p.Payload[i] = byte(r.Uint32())
	}
	if op == CNP {
		p.Payload = make([]byte, CNPLen)
	}
	return p
}

// expect is what Decode should return for p: the headers of its opcode
// only, with their Has flags, and the pad count AppendTo chose.
func expect(p Packet) Packet {
	h := opTable[p.BTH.Opcode].hdrs
	q := Packet{BTH: p.BTH, Payload: p.Payload}
	q.BTH.PadCount = uint8((4 - len(p.Payload)%4) % 4)
	if p.BTH.Opcode == CNP {
		q.BTH.PadCount = 0
	}
	if h&hasDETH != 0 {
		q.HasDETH, q.DETH = true, p.DETH
	}
	if h&hasRETH != 0 {
		q.HasRETH, q.RETH = true, p.RETH
	}
	if h&hasAtomicETH != 0 {
		q.HasAtomicETH, q.AtomicETH = true, p.AtomicETH
	}
	if h&hasAETH != 0 {
		q.HasAETH, q.AETH = true, p.AETH
	}
	if h&hasAtomicAckETH != 0 {
		q.HasAtomicAckETH, q.AtomicAckETH = true, p.AtomicAckETH
	}
	if h&hasImmDt != 0 {
		q.HasImmDt, q.ImmDt = true, p.ImmDt
	}
	if h&hasIETH != 0 {
		q.HasIETH, q.IETH = true, p.IETH
	}
	return q
}

// TestRoundTripEveryOpcode: every known opcode, with payload lengths that
// need 0 to 3 pad bytes, survives AppendTo → Decode and IP framing →
// DecodeIP (ICRC verified) for IPv4 and IPv6.
func TestRoundTripEveryOpcode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	frames := []Frame{
		{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), TOS: 0x68, TTL: 9, ID: 4242, DF: true, SrcPort: 0xC001},
		{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2"), TOS: 0x68, TTL: 9, Flow: 0x12345, SrcPort: 0xC001},
	}
	n := 0
	for op := range 256 {
		o := Opcode(op)
		if !o.Known() {
			continue
		}
		n++
		for _, pl := range []int{0, 1, 2, 3, 4, 1021} {
			p := randPacket(r, o, pl)
			want := expect(p)
			b := p.AppendTo(nil)
			if len(b) != o.HeaderLen()+len(want.Payload)+int(want.BTH.PadCount)+ICRCLen {
				t.Fatalf("%s: length %d", o, len(b))
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("%s payload %d: %v", o, pl, err)
			}
			got.ICRC = 0
			if len(got.Payload) == 0 {
				got.Payload = want.Payload
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s payload %d:\n got %+v\nwant %+v", o, pl, got, want)
			}
			for _, f := range frames {
				ip := f.Append(nil, &p)
				gf, gp, err := DecodeIP(ip)
				if err != nil {
					t.Fatalf("%s over %s: %v", o, f.Src, err)
				}
				gp.ICRC = 0
				if len(gp.Payload) == 0 {
					gp.Payload = want.Payload
				}
				if !reflect.DeepEqual(gp, want) {
					t.Fatalf("%s over %s: %+v", o, f.Src, gp)
				}
				f.DstPort = UDPPort
				if gf != f {
					t.Fatalf("frame %+v, want %+v", gf, f)
				}
			}
		}
	}
	if n != 23+12+2+1 { // RC 23 (0x00-0x17 but 0x15), UC 12, UD 2, CNP
		t.Errorf("%d known opcodes", n)
	}
}

// TestHeaderBytes: hand-assembled bytes for each extension header, so the
// round trip is not only our encoder agreeing with our decoder.
func TestHeaderBytes(t *testing.T) {
	bth := BTH{Opcode: UCWriteOnlyImm, Solicited: true, PadCount: 3, PKey: 0x8012, BECN: true, DestQP: 0x123456, AckReq: true, PSN: 0x000abc}
	if got := bth.AppendTo(nil); !bytes.Equal(got, testvec.Hex(t, "2b b0 80 12 40 12 34 56 80 00 0a bc")) {
		t.Errorf("BTH % x", got)
	}
	reth := RETH{VA: 0x0102030405060708, RKey: 0x0a0b0c0d, Length: 4096}
	if got := reth.AppendTo(nil); !bytes.Equal(got, testvec.Hex(t, "01 02 03 04 05 06 07 08 0a 0b 0c 0d 00 00 10 00")) {
		t.Errorf("RETH % x", got)
	}
	aeth := AETH{Syndrome: SyndromeNAK | NAKPSNSeqError, MSN: 0x00beef}
	if got := aeth.AppendTo(nil); !bytes.Equal(got, testvec.Hex(t, "60 00 be ef")) || !aeth.IsNAK() {
		t.Errorf("AETH % x", got)
	}
	imm := ImmDt{Data: 0xdeadbeef}
	if got := imm.AppendTo(nil); !bytes.Equal(got, testvec.Hex(t, "de ad be ef")) {
		t.Errorf("ImmDt % x", got)
	}
	deth := DETH{QKey: 0x80010000, SrcQP: 1}
	if got := deth.AppendTo(nil); !bytes.Equal(got, testvec.Hex(t, "80 01 00 00 00 00 00 01")) {
		t.Errorf("DETH % x", got)
	}
	// A whole UC RDMA WRITE Only with Immediate, decoded from bytes.
	b := testvec.Hex(t, "2b 00 ff ff 00 00 00 07 00 00 00 05  00 00 00 00 00 00 10 00 00 00 00 2a 00 00 00 04  00 00 00 63  01 02 03 04  11 22 33 44")
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.BTH.DestQP != 7 || p.BTH.PSN != 5 || p.RETH.VA != 0x1000 || p.RETH.RKey != 42 || p.RETH.Length != 4 ||
		p.ImmDt.Data != 99 || !bytes.Equal(p.Payload, []byte{1, 2, 3, 4}) || p.ICRC != 0x44332211 {
		t.Fatalf("decoded %+v", p)
	}
}

// TestPSNDiff: 24-bit wrap-around.
func TestPSNDiff(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		d    int32
	}{{5, 3, 2}, {3, 5, -2}, {0, PSNMask, 1}, {PSNMask, 0, -1}, {1 << 22, 0, 1 << 22}} {
		if d := PSNDiff(c.a, c.b); d != c.d {
			t.Errorf("PSNDiff(%d,%d) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// TestPKeyMatch: IBTA's partition key matching, case by case (the
// expectations are the rule applied by hand: same low 15 bits, not 0, at
// least one full member).
func TestPKeyMatch(t *testing.T) {
	for _, c := range []struct {
		pkt, own uint16
		want     bool
	}{
		{0xFFFF, 0xFFFF, true},  // the default partition, both full
		{0x7FFF, 0xFFFF, true},  // limited sender, full receiver
		{0xFFFF, 0x7FFF, true},  // full sender, limited receiver
		{0x7FFF, 0x7FFF, false}, // two limited members
		{0x8012, 0x8012, true},  // the seed's example partition
		{0x0012, 0x8012, true},
		{0x8012, 0xFFFF, false}, // another partition
		{0x8013, 0x8012, false},
		{0x0000, 0x0000, false}, // the invalid P_Key never matches
		{0x8000, 0x8000, false},
		{0x8000, 0x0000, false},
	} {
		if got := PKeyMatch(c.pkt, c.own); got != c.want {
			t.Errorf("PKeyMatch(%#04x, %#04x) = %v, want %v", c.pkt, c.own, got, c.want)
		}
	}
	if !ValidPKey(DefaultPKey) || ValidPKey(0x8000) || ValidPKey(0) || !ValidPKey(1) {
		t.Error("ValidPKey")
	}
}

// TestBadInput: truncated headers, unknown opcodes, bad version and pad,
// bad ICRC and bad framing give typed errors with their offset, and are
// counted by kind; nothing panics.
func TestBadInput(t *testing.T) {
	good := func() []byte {
		f := Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1}
		p := Packet{BTH: BTH{Opcode: UCWriteOnlyImm, PKey: 0xFFFF, DestQP: 1}, Payload: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
		return f.Append(nil, &p)
	}
	var counts ErrorCounts
	cases := []struct {
		name   string
		ip     func() []byte
		udp    []byte // decoded with Decode instead when set
		kind   error
		header string
		off    int
	}{
		{name: "empty BTH", udp: []byte{}, kind: ErrTruncated, header: "BTH", off: 0},
		{name: "truncated BTH", udp: []byte{0x2b, 0, 0xff, 0xff, 0, 0, 0}, kind: ErrTruncated, header: "BTH"},
		{name: "unknown opcode", udp: testvec.Hex(t, "1f 00 ff ff 00 00 00 01 00 00 00 00 00 00 00 00"), kind: ErrUnknownOpcode, header: "BTH"},
		{name: "RD opcode", udp: testvec.Hex(t, "44 00 ff ff 00 00 00 01 00 00 00 00 00 00 00 00"), kind: ErrUnknownOpcode, header: "BTH"},
		{name: "version", udp: testvec.Hex(t, "24 01 ff ff 00 00 00 01 00 00 00 00 00 00 00 00"), kind: ErrBadVersion, header: "BTH", off: 1},
		{name: "truncated RETH", udp: testvec.Hex(t, "2a 00 ff ff 00 00 00 01 00 00 00 00 00 00 00 00 00 00"), kind: ErrTruncated, header: "RETH", off: 12},
		{name: "no room for ICRC", udp: testvec.Hex(t, "24 00 ff ff 00 00 00 01 00 00 00 00 00 00"), kind: ErrTruncated, header: "ICRC", off: 12},
		{name: "short CNP", udp: testvec.Hex(t, "81 00 ff ff 40 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00"), kind: ErrTruncated, header: "CNP", off: 12},
		{name: "pad past payload", udp: testvec.Hex(t, "24 30 ff ff 00 00 00 01 00 00 00 00 aa bb 00 00 00 00"), kind: ErrBadPad, header: "BTH", off: 1},
		{name: "bad ICRC", ip: func() []byte { b := good(); b[len(b)-1] ^= 0x80; return b }, kind: ErrBadICRC, header: "ICRC", off: 68},
		{name: "payload bit flipped", ip: func() []byte { b := good(); b[70] ^= 1; return b }, kind: ErrBadICRC, header: "ICRC", off: 68},
		{name: "IP total length too big", ip: func() []byte { b := good(); b[3] += 10; return b }, kind: ErrBadIP, header: "IPv4", off: 2},
		{name: "UDP length", ip: func() []byte { b := good(); b[25]--; return b }, kind: ErrBadIP, header: "UDP", off: 24},
		{name: "not UDP", ip: func() []byte { b := good(); b[9] = 6; return b }, kind: ErrBadIP, header: "IPv4", off: 9},
		{name: "IPv4 options", ip: func() []byte { b := good(); b[0] = 0x46; return b }, kind: ErrBadIP, header: "IPv4"},
		{name: "other port", ip: func() []byte { b := good(); b[23] = 0x53; return b }, kind: ErrBadIP, header: "UDP", off: 22},
		{name: "fragment", ip: func() []byte { b := good(); b[6] = 0x20; return b }, kind: ErrBadIP, header: "IPv4", off: 6},
		{name: "truncated IPv4", ip: func() []byte { return good()[:25] }, kind: ErrTruncated, header: "IPv4"},
		{name: "IP version 5", ip: func() []byte { b := good(); b[0] = 0x55; return b }, kind: ErrBadIP, header: "IP"},
		{name: "BTH truncated inside IP", ip: func() []byte {
			b := good()[:34]
			b[2], b[3] = 0, 34
			b[24], b[25] = 0, 14
			return b
		}, kind: ErrTruncated, header: "BTH", off: 28},
	}
	for _, c := range cases {
		var err error
		if c.ip != nil {
			_, _, err = DecodeIP(c.ip())
		} else {
			_, err = Decode(c.udp)
		}
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, c.kind) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.kind)
			continue
		}
		if de.Header != c.header || de.Offset != c.off {
			t.Errorf("%s: at %s offset %d, want %s offset %d (%v)", c.name, de.Header, de.Offset, c.header, c.off, err)
		}
		counts.Add(err)
	}
	if counts.Get(KindTruncated) != 7 || counts.Get(KindBadICRC) != 2 || counts.Get(KindUnknownOpcode) != 2 || counts.Get(KindBadIP) != 7 {
		t.Errorf("counts %v", counts.Map())
	}
	counts.Add(errors.New("foreign"))
	counts.Add(nil)
	if len(counts.Map()) != 6 {
		t.Errorf("counts %v", counts.Map())
	}
}

// TestGopacketLayers: a frame built with the codec decodes through
// gopacket's UDP port registry into one layer per header, and the same
// headers serialize back through gopacket.
func TestGopacketLayers(t *testing.T) {
	f := Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 9, SrcPort: 5000}
	p := Packet{BTH: BTH{Opcode: UCWriteOnlyImm, PKey: 0xFFFF, DestQP: 0x42, PSN: 7}, RETH: RETH{VA: 1 << 40, RKey: 3, Length: 6},
		ImmDt: ImmDt{Data: 0xabcdef}, Payload: []byte("abcdef")}
	ip := f.Append(nil, &p)
	pkt := gopacket.NewPacket(ip, layers.LayerTypeIPv4, gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatalf("decode error: %v", el.Error())
	}
	var types []string
	for _, l := range pkt.Layers() {
		types = append(types, l.LayerType().String())
	}
	if got := types; !reflect.DeepEqual(got, []string{"IPv4", "UDP", "BTH", "RETH", "ImmDt", "Payload", "ICRC"}) {
		t.Fatalf("layers %v", got)
	}
	bth := pkt.Layer(LayerTypeBTH).(*BTHLayer)
	if bth.DestQP != 0x42 || bth.PSN != 7 || bth.PadCount != 2 {
		t.Fatalf("BTH %+v", bth.BTH)
	}
	if pkt.Layer(LayerTypeImmDt).(*ImmDtLayer).Data != 0xabcdef || string(pkt.ApplicationLayer().Payload()) != "abcdef" {
		t.Fatal("ImmDt or payload")
	}
	icrc := pkt.Layer(LayerTypeICRC).(*ICRCLayer)
	if want, _ := ICRC(ip); icrc.ICRC != want {
		t.Fatalf("ICRC layer %08x, want %08x", icrc.ICRC, want)
	}

	// Serialize the same packet with gopacket's IPv4/UDP and our layers.
	buf := gopacket.NewSerializeBuffer()
	ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: 9, Protocol: layers.IPProtocolUDP, SrcIP: f.Src.AsSlice(), DstIP: f.Dst.AsSlice()}
	udp := &layers.UDP{SrcPort: 5000, DstPort: UDPPort}
	udp.SetNetworkLayerForChecksum(ip4)
	payload := append([]byte("abcdef"), 0, 0)
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip4, udp,
		&BTHLayer{BTH: bth.BTH}, &RETHLayer{RETH: p.RETH}, &ImmDtLayer{ImmDt: p.ImmDt}, gopacket.Payload(payload), &ICRCLayer{})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if err := PutICRC(out); err != nil {
		t.Fatal(err)
	}
	out[26], out[27] = 0, 0 // our IPv4 frames carry UDP checksum 0
	if !bytes.Equal(out, ip) {
		t.Fatalf("gopacket serialization\n got % x\nwant % x", out, ip)
	}

	// A CNP and an ACK through gopacket.
	cnp := NewCNP(0x118)
	ip = f.Append(nil, &cnp)
	pkt = gopacket.NewPacket(ip, layers.LayerTypeIPv4, gopacket.Default)
	if pkt.Layer(LayerTypeCNP) == nil || pkt.ErrorLayer() != nil {
		t.Fatalf("CNP layers %v", pkt.Layers())
	}
	ack := Packet{BTH: BTH{Opcode: RCAcknowledge, PKey: 0xFFFF, DestQP: 1, PSN: 3}, AETH: AETH{Syndrome: SyndromeNAK, MSN: 9}}
	ip = f.Append(nil, &ack)
	pkt = gopacket.NewPacket(ip, layers.LayerTypeIPv4, gopacket.Default)
	if a, ok := pkt.Layer(LayerTypeAETH).(*AETHLayer); !ok || a.MSN != 9 || !a.IsNAK() {
		t.Fatalf("AETH layers %v", pkt.Layers())
	}
	// A bad packet is an error layer, not a panic.
	ip[28] = 0x1f
	pkt = gopacket.NewPacket(ip, layers.LayerTypeIPv4, gopacket.Default)
	if el := pkt.ErrorLayer(); el == nil || !errors.Is(el.Error(), ErrUnknownOpcode) {
		t.Fatalf("unknown opcode through gopacket: %v", pkt.Layers())
	}
}
