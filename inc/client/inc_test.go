package client

import (
	"encoding/binary"
	"log/slog"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/rocev2"
)

const (
	opKey = 0x5EC12E7
	opQP  = 0x4242
)

var opSwitch = netip.MustParseAddr("10.255.0.3")

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// newOp is an operation of two messages of two fp32 elements each (input
// [1 2 | 3 4]), both sent, on tree 5 at opSwitch.
func newOp(t *testing.T) (*incOp, *Stats) {
	t.Helper()
	var st Stats
	snd := transport.NewSender(transport.DefaultConfig, 2)
	snd.Poll(time.Unix(1, 0), func(int, bool) {})
	op := &incOp{a: &protos.TreeAssignment{TreeId: 5, GroupKey: opKey, SwitchAddress: opSwitch.String(), SwitchQpn: 0x101},
		sw: opSwitch, qpn: opQP, buf: f32s(1, 2, 3, 4), dt: packet.FP32, per: 2, n: 4, base: 10, snd: snd, st: &st}
	return op, &st
}

// result is a result packet for message 10+i as it would be received.
func result(src netip.Addr, rkey, qp uint32, i int, v ...float32) *packetView {
	return &packetView{kind: packet.KindINC, result: true, tree: 5, msg: uint32(10 + i), count: len(v), dtype: packet.FP32,
		psn: uint32(10 + i), src: src, qp: qp, rkey: rkey, payload: f32s(v...)}
}

// TestResultsOnlyFromParent: results from another source than the tree's
// switch, with another key, or to another QP are refused and counted, and
// leave the buffer and the sender as they were; the real result is then
// taken, and a forged one after it changes nothing either. NACKs are
// taken from the parent only.
func TestResultsOnlyFromParent(t *testing.T) {
	op, st := newOp(t)
	var reasons []string
	op.refused = func(r string, _ *packetView) { reasons = append(reasons, r) }
	attacker := netip.MustParseAddr("10.1.1.66")
	for _, p := range []*packetView{
		result(attacker, opKey, opQP, 0, 1e30, 1e30),                          // a non-parent with the right key
		result(netip.MustParseAddr("10.255.0.4"), opKey, opQP, 0, 1e30, 1e30), // another switch
		result(opSwitch, 0xBAD, opQP, 0, 1e30, 1e30),                          // the parent's address, a guessed key
		result(opSwitch, 0, opQP, 0, 1e30, 1e30),                              // key zero
		result(opSwitch, opKey, opQP+1, 0, 1e30, 1e30),                        // another QP
		{kind: packet.KindNACK, psn: 10, trig: 11, src: attacker, qp: opQP},   // a forged NACK
	} {
		op.receive(p, time.Unix(2, 0))
	}
	want := []string{"source", "source", "rkey", "rkey", "qp", "source"}
	if st.Refused != 6 || len(reasons) != 6 {
		t.Fatalf("refused %d, reasons %v; want 6", st.Refused, reasons)
	}
	for i := range want {
		if reasons[i] != want[i] {
			t.Fatalf("reasons %v, want %v", reasons, want)
		}
	}
	if got := dec32(op.buf); got != [4]float32{1, 2, 3, 4} || op.snd.Acked() != 0 || op.snd.Stats().NACKs != 0 {
		t.Fatalf("after forged packets: buffer %v, acked %d, NACKs %d", got, op.snd.Acked(), op.snd.Stats().NACKs)
	}
	op.receive(result(opSwitch, opKey, opQP, 0, 4, 6), time.Unix(2, 0))
	op.receive(result(attacker, opKey, opQP, 0, 1e30, 1e30), time.Unix(2, 0))
	op.receive(result(opSwitch, opKey, opQP, 1, 8, 10), time.Unix(2, 0))
	if got := dec32(op.buf); got != [4]float32{4, 6, 8, 10} || !op.snd.Done() || st.Refused != 7 {
		t.Fatalf("buffer %v, done %v, refused %d", got, op.snd.Done(), st.Refused)
	}
	// A second copy of a result from the parent itself is stale, not
	// copied again.
	op.receive(result(opSwitch, opKey, opQP, 1, 99, 99), time.Unix(2, 0))
	if got := dec32(op.buf); got != [4]float32{4, 6, 8, 10} || st.Stale != 1 {
		t.Fatalf("duplicate result: buffer %v, stale %d", got, st.Stale)
	}
}

// TestResultForUnsentMessage: a result (even a well-formed one) for a
// message not sent yet is not copied: that chunk of the buffer is still
// the input the client is about to send.
func TestResultForUnsentMessage(t *testing.T) {
	var st Stats
	snd := transport.NewSender(transport.Config{Window: 1}, 2) // only message 0 goes out
	snd.Poll(time.Unix(1, 0), func(int, bool) {})
	op := &incOp{a: &protos.TreeAssignment{TreeId: 5, GroupKey: opKey}, sw: opSwitch, qpn: opQP, buf: f32s(1, 2, 3, 4),
		dt: packet.FP32, per: 2, n: 4, base: 10, snd: snd, st: &st}
	op.receive(result(opSwitch, opKey, opQP, 1, 1e30, 1e30), time.Unix(2, 0))
	if got := dec32(op.buf); got != [4]float32{1, 2, 3, 4} || st.Stale != 1 {
		t.Fatalf("buffer %v, stale %d", got, st.Stale)
	}
}

func dec32(b []byte) (v [4]float32) {
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestFromParent: the check itself, including what it leaves to others.
func TestFromParent(t *testing.T) {
	for _, c := range []struct {
		name string
		p    packetView
		want string
	}{
		{"result from the parent", packetView{kind: packet.KindINC, src: opSwitch, qp: opQP, rkey: opKey}, ""},
		{"NACK from the parent (no key in an ACK)", packetView{kind: packet.KindNACK, src: opSwitch, qp: opQP}, ""},
		{"ring data: the ring checks it", packetView{kind: packet.KindRing, src: netip.MustParseAddr("10.9.9.9")}, ""},
		{"result from elsewhere", packetView{kind: packet.KindINC, src: netip.MustParseAddr("10.9.9.9"), qp: opQP, rkey: opKey}, "source"},
		{"result with another key", packetView{kind: packet.KindINC, src: opSwitch, qp: opQP, rkey: opKey ^ 1}, "rkey"},
		{"NACK to another QP", packetView{kind: packet.KindNACK, src: opSwitch, qp: 7}, "qp"},
		{"ACK from elsewhere", packetView{kind: packet.KindACK, src: netip.MustParseAddr("10.9.9.9")}, ""},
	} {
		if got := fromParent(opSwitch, opKey, opQP, &c.p); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestWireResultsAndPKey: results as they come off the wire (encoded,
// parsed, admitted): the RETH DMA length is the whole message (INC
// header + elements) and they fill the buffer; a result or NACK whose
// P_Key does not match the client's partition is dropped before the
// operation, counted as refused, and changes nothing (IBTA matching: a
// limited member of the client's partition is taken, another partition
// or a P_Key of partition 0 is not).
func TestWireResultsAndPKey(t *testing.T) {
	op, st := newOp(t)
	c := &Client{log: slog.New(slog.DiscardHandler), pkey: rocev2.DefaultPKey}
	f := rocev2.Frame{Src: opSwitch, Dst: netip.MustParseAddr("10.1.0.2"), ID: 1}
	wire := func(pkey uint16, i int, v ...float32) *packet.Parsed {
		d := packet.Data{DestQP: opQP, PSN: uint32(10 + i), VA: uint64(8 * i), RKey: opKey,
			Hdr: packet.Header{Flags: packet.FlagResult, Collective: packet.AllReduce, DType: packet.FP32, Op: packet.Sum, Tree: 5,
				Slot: uint16(10 + i), Msg: uint32(10 + i), Count: uint16(len(v))},
			Payload: f32s(v...)}
		var p packet.Parsed
		if err := packet.Parse(packet.AppendINC(nil, &f, pkey, &d), &p); err != nil {
			t.Fatal(err)
		}
		if p.RoCE.RETH.Length != uint32(16+4*len(v)) {
			t.Fatalf("RETH DMA length %d, want %d", p.RoCE.RETH.Length, 16+4*len(v))
		}
		return &p
	}
	deliver := func(p *packet.Parsed) bool {
		v, ok := c.admit(p, st)
		if ok {
			op.receive(&v, time.Unix(2, 0))
		}
		return ok
	}
	for _, k := range []uint16{0x8012, 0x0000, 0x8000} {
		if deliver(wire(k, 0, 1e30, 1e30)) {
			t.Fatalf("P_Key %#04x admitted by a client of the default partition", k)
		}
	}
	var nack packet.Parsed
	if err := packet.Parse(packet.AppendNACK(nil, &f, 0x8012, opQP, 10, 11), &nack); err != nil || deliver(&nack) {
		t.Fatalf("NACK of another partition: %v", err)
	}
	if st.Refused != 4 || op.snd.Stats().NACKs != 0 || dec32(op.buf) != [4]float32{1, 2, 3, 4} {
		t.Fatalf("refused %d, NACKs %d, buffer %v", st.Refused, op.snd.Stats().NACKs, dec32(op.buf))
	}
	if !deliver(wire(rocev2.DefaultPKey, 0, 4, 6)) || !deliver(wire(0x7FFF, 1, 8, 10)) {
		t.Fatal("results of the client's partition not admitted")
	}
	if got := dec32(op.buf); got != [4]float32{4, 6, 8, 10} || !op.snd.Done() || st.Refused != 4 {
		t.Fatalf("buffer %v, done %v, refused %d", got, op.snd.Done(), st.Refused)
	}
}
