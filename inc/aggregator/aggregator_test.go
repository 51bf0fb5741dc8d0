package aggregator

import (
	"encoding/binary"
	"math"
	"net/netip"
	"reflect"
	"testing"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

var (
	swAddr   = netip.MustParseAddr("10.255.0.1")
	rootAddr = netip.MustParseAddr("10.255.0.9")
)

func host(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 1, byte(i), 2}) }

// flat is a root with n client children (rank i at host(i), QP 100+i).
func flat(n, slots int, ordered bool) TreeConfig {
	c := TreeConfig{ID: 1, QP: 7, RKey: testKey, Slots: slots, Root: true, Ordered: ordered}
	for i := range n {
		c.Children = append(c.Children, Child{Peer: Peer{Addr: host(i), QP: uint32(100 + i)}, Client: true})
	}
	return c
}

func newSwitch(t *testing.T, trees ...TreeConfig) *Switch {
	t.Helper()
	s := New(DefaultLimits)
	if err := s.SetTrees(trees); err != nil {
		t.Fatal(err)
	}
	return s
}

// send runs one packet with the trees' key through the wire codec into
// the switch, which must take it.
func send(t *testing.T, s *Switch, src netip.Addr, qp uint32, h packet.Header, payload []byte) []Out {
	t.Helper()
	out, err := inject(t, s, src, qp, testKey, h, payload)
	if err != nil {
		t.Fatalf("handle: %v", err)
	}
	return out
}

func hdr(dt packet.DType, op packet.Op, msg uint32, slots int, rank, count int) packet.Header {
	return packet.Header{Collective: packet.AllReduce, DType: dt, Op: op, Tree: 1, Msg: msg, Slot: uint16(msg % uint32(slots)), Rank: uint16(rank), Count: uint16(count)}
}

func enc(dt packet.DType, v ...float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case packet.FP16:
			binary.LittleEndian.PutUint16(b[2*i:], F32To16(float32(x)))
		case packet.FP32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		case packet.FP64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
	}
	return b
}

func dec(dt packet.DType, b []byte) []float64 {
	out := make([]float64, len(b)/dt.Size())
	for i := range out {
		switch dt {
		case packet.FP16:
			out[i] = float64(F16To32(binary.LittleEndian.Uint16(b[2*i:])))
		case packet.FP32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case packet.FP64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

// results checks that outs are one result per child of a flat tree,
// each carrying want, and returns nothing.
func results(t *testing.T, outs []Out, n int, dt packet.DType, msg uint32, want []float64) {
	t.Helper()
	if len(outs) != n {
		t.Fatalf("%d packets out, want %d results", len(outs), n)
	}
	for i, o := range outs {
		if o.NACK || !o.Data.Hdr.IsResult() || o.To.Addr != host(i) || o.To.QP != uint32(100+i) || o.Data.DestQP != o.To.QP ||
			int(o.Data.Hdr.Rank) != i || o.Data.Hdr.Msg != msg {
			t.Fatalf("out %d: %+v", i, o)
		}
		if got := dec(dt, o.Data.Payload); !reflect.DeepEqual(got, want) {
			t.Fatalf("result to %d: %v, want %v", i, got, want)
		}
	}
}

// TestEveryTypeAndOp: three clients, every data type with sum, min and
// max; the expected values are worked out by hand.
func TestEveryTypeAndOp(t *testing.T) {
	in := [3][]float64{{1, -2.5, 100, 0.25}, {4, 8, -100, 0.5}, {-3, 0.5, 7, 1}}
	want := map[packet.Op][]float64{
		packet.Sum: {2, 6, 7, 1.75},
		packet.Min: {-3, -2.5, -100, 0.25},
		packet.Max: {4, 8, 100, 1},
	}
	for _, dt := range []packet.DType{packet.FP16, packet.FP32, packet.FP64} {
		for _, op := range []packet.Op{packet.Sum, packet.Min, packet.Max} {
			s := newSwitch(t, flat(3, 4, false))
			var outs []Out
			for r := range 3 {
				outs = send(t, s, host(r), 7, hdr(dt, op, 0, 4, r, 4), enc(dt, in[r]...))
				if r < 2 && len(outs) != 0 {
					t.Fatalf("%s %s: output before all ranks arrived: %+v", dt, op, outs)
				}
			}
			results(t, outs, 3, dt, 0, want[op])
		}
	}
}

// TestFP16AccumulatesInFP32: 2048 + 1 + 1. Summed in fp16 the ones vanish
// (2049 rounds to 2048, twice); in fp32 the sum is 2050, which fp16 holds.
func TestFP16AccumulatesInFP32(t *testing.T) {
	s := newSwitch(t, flat(3, 1, false))
	send(t, s, host(0), 7, hdr(packet.FP16, packet.Sum, 0, 1, 0, 1), enc(packet.FP16, 2048))
	send(t, s, host(1), 7, hdr(packet.FP16, packet.Sum, 0, 1, 1, 1), enc(packet.FP16, 1))
	outs := send(t, s, host(2), 7, hdr(packet.FP16, packet.Sum, 0, 1, 2, 1), enc(packet.FP16, 1))
	results(t, outs, 3, packet.FP16, 0, []float64{2050})
}

// TestDuplicates: a retransmission while the slot collects is counted and
// not added; once the slot is done, it is answered from the shadow.
func TestDuplicates(t *testing.T) {
	s := newSwitch(t, flat(2, 4, false))
	h0 := hdr(packet.FP32, packet.Sum, 0, 4, 0, 1)
	send(t, s, host(0), 7, h0, enc(packet.FP32, 5))
	if outs := send(t, s, host(0), 7, h0, enc(packet.FP32, 5)); len(outs) != 0 {
		t.Fatalf("duplicate produced %+v", outs)
	}
	outs := send(t, s, host(1), 7, hdr(packet.FP32, packet.Sum, 0, 4, 1, 1), enc(packet.FP32, 1))
	results(t, outs, 2, packet.FP32, 0, []float64{6}) // not 11
	// Rank 1 lost its result and retransmits: the shadow answers it alone.
	outs = send(t, s, host(1), 7, hdr(packet.FP32, packet.Sum, 0, 4, 1, 1), enc(packet.FP32, 1))
	if len(outs) != 1 || outs[0].To.Addr != host(1) || dec(packet.FP32, outs[0].Data.Payload)[0] != 6 {
		t.Fatalf("served %+v", outs)
	}
	_, c := s.Stats()
	if c.Duplicates != 2 || c.Served != 1 || c.Completed != 1 || c.Results != 3 {
		t.Fatalf("counters %+v", c)
	}
}

// TestOutOfOrder: messages of different slots interleave and ranks arrive
// in different orders per slot; each slot completes on its own.
func TestOutOfOrder(t *testing.T) {
	s := newSwitch(t, flat(3, 4, false))
	type step struct{ rank, msg int }
	steps := []step{{2, 1}, {0, 3}, {1, 1}, {0, 0}, {2, 3}, {1, 0}, {0, 1}, {1, 3}, {2, 0}}
	done := map[int][]Out{}
	for _, st := range steps {
		v := float64(10*st.msg + st.rank)
		outs := send(t, s, host(st.rank), 7, hdr(packet.FP64, packet.Sum, uint32(st.msg), 4, st.rank, 1), enc(packet.FP64, v))
		var res []Out
		for _, o := range outs {
			if !o.NACK {
				res = append(res, o)
			}
		}
		if len(res) > 0 {
			done[st.msg] = res
		}
	}
	for _, m := range []int{0, 1, 3} {
		results(t, done[m], 3, packet.FP64, uint32(m), []float64{float64(30*m + 3)})
	}
	if len(done) != 3 {
		t.Fatalf("completed %d messages", len(done))
	}
}

// TestSlotReuse: with 2 slots, messages 0..5 go through slots 0,1,0,1,...;
// the shadow keeps the last result of each slot until the next completes,
// and a retransmission older than the shadow is stale.
func TestSlotReuse(t *testing.T) {
	s := newSwitch(t, flat(2, 2, false))
	for m := range 6 {
		send(t, s, host(0), 7, hdr(packet.FP32, packet.Max, uint32(m), 2, 0, 2), enc(packet.FP32, float64(m), 0))
		outs := send(t, s, host(1), 7, hdr(packet.FP32, packet.Max, uint32(m), 2, 1, 2), enc(packet.FP32, 0, float64(-m)))
		results(t, outs, 2, packet.FP32, uint32(m), []float64{float64(m), 0})
	}
	// Message 4's result is still in slot 0's shadow...
	outs := send(t, s, host(1), 7, hdr(packet.FP32, packet.Max, 4, 2, 1, 2), enc(packet.FP32, 0, -4))
	if len(outs) != 1 || dec(packet.FP32, outs[0].Data.Payload)[0] != 4 {
		t.Fatalf("shadow of 4: %+v", outs)
	}
	// ...message 2's is gone: stale, dropped.
	outs = send(t, s, host(1), 7, hdr(packet.FP32, packet.Max, 2, 2, 1, 2), enc(packet.FP32, 0, -2))
	if len(outs) != 0 {
		t.Fatalf("stale 2: %+v", outs)
	}
	// A client cannot be two rounds ahead: message 8 while slot 0 waits
	// for 6 would be taken as 6's successor only if 6 were done.
	send(t, s, host(0), 7, hdr(packet.FP32, packet.Max, 6, 2, 0, 2), enc(packet.FP32, 1, 1))
	outs = send(t, s, host(1), 7, hdr(packet.FP32, packet.Max, 8, 2, 1, 2), enc(packet.FP32, 1, 1))
	_, c := s.Stats()
	if len(outs) != 0 || c.Stale != 1 || c.Unexpected != 1 || c.Served != 1 {
		t.Fatalf("outs %+v counters %+v", outs, c)
	}
}

// TestShadowSurvivesNextMessage: slot 0 has finished m and started m+S
// (one client is fast) when a slow client retransmits m: the shadow, not
// the collecting slot, answers.
func TestShadowSurvivesNextMessage(t *testing.T) {
	s := newSwitch(t, flat(2, 1, false))
	send(t, s, host(0), 7, hdr(packet.FP32, packet.Sum, 0, 1, 0, 1), enc(packet.FP32, 1))
	send(t, s, host(1), 7, hdr(packet.FP32, packet.Sum, 0, 1, 1, 1), enc(packet.FP32, 2))
	send(t, s, host(0), 7, hdr(packet.FP32, packet.Sum, 1, 1, 0, 1), enc(packet.FP32, 10)) // 0 got its result, goes on
	outs := send(t, s, host(1), 7, hdr(packet.FP32, packet.Sum, 0, 1, 1, 1), enc(packet.FP32, 2))
	if len(outs) != 1 || outs[0].Data.Hdr.Msg != 0 || dec(packet.FP32, outs[0].Data.Payload)[0] != 3 {
		t.Fatalf("served %+v", outs)
	}
	outs = send(t, s, host(1), 7, hdr(packet.FP32, packet.Sum, 1, 1, 1, 1), enc(packet.FP32, 20))
	results(t, outs, 2, packet.FP32, 1, []float64{30})
}

// TestMultiLevel: two inner switches of two clients each under a root;
// partials go up, results come down, and losses on each hop are repaired
// by client retransmissions: a lost result to a client (leaf shadow), a
// lost partial or result between leaf and root (partial re-sent, root
// shadow).
func TestMultiLevel(t *testing.T) {
	leafAddr := [2]netip.Addr{netip.MustParseAddr("10.255.0.3"), netip.MustParseAddr("10.255.0.4")}
	var leaves [2]*Switch
	for l := range 2 {
		c := TreeConfig{ID: 1, QP: 20, RKey: testKey, Slots: 4, Parent: Peer{Addr: rootAddr, QP: 30}, ParentRank: uint16(l)}
		for i := range 2 {
			c.Children = append(c.Children, Child{Peer: Peer{Addr: host(2*l + i), QP: uint32(100 + 2*l + i)}, Client: true})
		}
		leaves[l] = newSwitch(t, c)
	}
	root := newSwitch(t, TreeConfig{ID: 1, QP: 30, RKey: testKey, Slots: 4, Root: true, Children: []Child{
		{Peer: Peer{Addr: leafAddr[0], QP: 20}}, {Peer: Peer{Addr: leafAddr[1], QP: 20}}}})
	val := func(r int) []byte { return enc(packet.FP32, float64(r+1), float64(10*(r+1))) }

	// Message 0, no loss.
	var partials [2]Out
	for l := range 2 {
		send(t, leaves[l], host(2*l), 20, hdr(packet.FP32, packet.Sum, 0, 4, 0, 2), val(2*l))
		outs := send(t, leaves[l], host(2*l+1), 20, hdr(packet.FP32, packet.Sum, 0, 4, 1, 2), val(2*l+1))
		if len(outs) != 1 || outs[0].To.Addr != rootAddr || outs[0].Data.DestQP != 30 || outs[0].Data.Hdr.Rank != uint16(l) || outs[0].Data.Hdr.IsResult() {
			t.Fatalf("leaf %d partial: %+v", l, outs)
		}
		if got := dec(packet.FP32, outs[0].Data.Payload); !reflect.DeepEqual(got, []float64{float64(4*l + 3), float64(40*l + 30)}) {
			t.Fatalf("leaf %d partial %v", l, got)
		}
		partials[l] = outs[0]
	}
	send(t, root, leafAddr[0], 30, partials[0].Data.Hdr, partials[0].Data.Payload)
	down := send(t, root, leafAddr[1], 30, partials[1].Data.Hdr, partials[1].Data.Payload)
	if len(down) != 2 {
		t.Fatalf("root results %+v", down)
	}
	for l, r := range down {
		if r.To.Addr != leafAddr[l] || dec(packet.FP32, r.Data.Payload)[0] != 10 {
			t.Fatalf("root result %d: %+v", l, r)
		}
		outs := send(t, leaves[l], rootAddr, 20, r.Data.Hdr, r.Data.Payload)
		if len(outs) != 2 || dec(packet.FP32, outs[1].Data.Payload)[1] != 100 || outs[1].To.Addr != host(2*l+1) {
			t.Fatalf("leaf %d results %+v", l, outs)
		}
	}

	// Message 1: leaf 0's partial is lost on the way up. Client 0 times
	// out and retransmits: leaf 0 re-sends the partial it kept.
	for l := range 2 {
		send(t, leaves[l], host(2*l), 20, hdr(packet.FP32, packet.Sum, 1, 4, 0, 2), val(2*l))
		outs := send(t, leaves[l], host(2*l+1), 20, hdr(packet.FP32, packet.Sum, 1, 4, 1, 2), val(2*l+1))
		partials[l] = outs[0]
	}
	down = send(t, root, leafAddr[1], 30, partials[1].Data.Hdr, partials[1].Data.Payload) // leaf 0's lost
	if len(down) != 0 {
		t.Fatalf("root completed without leaf 0: %+v", down)
	}
	re := send(t, leaves[0], host(0), 20, hdr(packet.FP32, packet.Sum, 1, 4, 0, 2), val(0))
	if len(re) != 1 || re[0].To.Addr != rootAddr || !reflect.DeepEqual(re[0].Data.Payload, partials[0].Data.Payload) {
		t.Fatalf("partial resend %+v", re)
	}
	down = send(t, root, leafAddr[0], 30, re[0].Data.Hdr, re[0].Data.Payload)
	if len(down) != 2 {
		t.Fatalf("root results %+v", down)
	}
	// The result to leaf 1 is lost; client 3 retransmits, leaf 1 re-sends
	// its partial, the root answers leaf 1 from its shadow.
	send(t, leaves[0], rootAddr, 20, down[0].Data.Hdr, down[0].Data.Payload)
	re = send(t, leaves[1], host(3), 20, hdr(packet.FP32, packet.Sum, 1, 4, 1, 2), val(3))
	served := send(t, root, leafAddr[1], 30, re[0].Data.Hdr, re[0].Data.Payload)
	if len(served) != 1 || served[0].To.Addr != leafAddr[1] || dec(packet.FP32, served[0].Data.Payload)[0] != 10 {
		t.Fatalf("root shadow %+v", served)
	}
	outs := send(t, leaves[1], rootAddr, 20, served[0].Data.Hdr, served[0].Data.Payload)
	if len(outs) != 2 {
		t.Fatalf("leaf 1 results %+v", outs)
	}
	// Client 2's result is lost too; its retransmission is served by
	// leaf 1's shadow without bothering the root.
	outs = send(t, leaves[1], host(2), 20, hdr(packet.FP32, packet.Sum, 1, 4, 0, 2), val(2))
	if len(outs) != 1 || outs[0].To.Addr != host(2) || dec(packet.FP32, outs[0].Data.Payload)[1] != 100 {
		t.Fatalf("leaf shadow %+v", outs)
	}
	// A duplicate result from the root is ignored.
	if outs := send(t, leaves[1], rootAddr, 20, served[0].Data.Hdr, served[0].Data.Payload); len(outs) != 0 {
		t.Fatalf("duplicate result forwarded %+v", outs)
	}
	_, lc := leaves[1].Stats()
	_, rc := root.Stats()
	if lc.PartialResends != 1 || lc.Served != 1 || lc.DupResults != 1 || rc.Served != 1 {
		t.Fatalf("leaf 1 %+v root %+v", lc, rc)
	}
}

// TestOrdered: fp32 sums of 1e8, 1, -1e8, 1 depend on the order; with
// Ordered the result is ((x0+x1)+x2)+x3 in fp32 whatever the arrival
// order, and without it the arrival order shows.
func TestOrdered(t *testing.T) {
	x := []float32{1e8, 1, -1e8, 1}
	inOrder := ((x[0] + x[1]) + x[2]) + x[3] // 1e8+1 rounds to 1e8: 0, then +1 = 1
	if inOrder != 1 {
		t.Fatalf("fp32 premise: %g", inOrder)
	}
	orders := [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}}
	seen := map[float64]bool{}
	for _, ordered := range []bool{true, false} {
		for _, ord := range orders {
			s := newSwitch(t, flat(4, 1, ordered))
			var outs []Out
			for _, r := range ord {
				outs = send(t, s, host(r), 7, hdr(packet.FP32, packet.Sum, 0, 1, r, 1), enc(packet.FP32, float64(x[r])))
			}
			got := dec(packet.FP32, outs[0].Data.Payload)[0]
			if ordered && got != float64(inOrder) {
				t.Fatalf("ordered, arrival %v: %g, want %g", ord, got, inOrder)
			}
			if !ordered {
				seen[got] = true
			}
		}
	}
	if len(seen) < 2 {
		t.Fatalf("unordered sums all equal %v: the test does not show order dependence", seen)
	}
}

// TestNACK: a client's messages 0, 2 → NACK(cum 1, trigger 2); then 1
// fills the gap (no NACK); 4 → NACK(3, 4); a retransmitted 2 → none.
func TestNACK(t *testing.T) {
	s := newSwitch(t, flat(2, 8, false))
	nacks := func(outs []Out) [][2]uint32 {
		var n [][2]uint32
		for _, o := range outs {
			if o.NACK {
				if o.To.Addr != host(0) || o.To.QP != 100 {
					t.Fatalf("NACK to %+v", o.To)
				}
				n = append(n, [2]uint32{o.Cum, o.Trig})
			}
		}
		return n
	}
	p := func(m int) []Out {
		return send(t, s, host(0), 7, hdr(packet.FP32, packet.Sum, uint32(m), 8, 0, 1), enc(packet.FP32, 1))
	}
	for _, c := range []struct {
		m    int
		want [][2]uint32
	}{{0, nil}, {2, [][2]uint32{{1, 2}}}, {1, nil}, {4, [][2]uint32{{3, 4}}}, {2, nil}, {3, nil}, {5, nil}} {
		if got := nacks(p(c.m)); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("message %d: NACKs %v, want %v", c.m, got, c.want)
		}
	}
}

// TestRejects: unknown QP, wrong tree, slot, sender, shape: errors and
// counters, never a crash or a contribution. (The checks against forged
// packets have their own tests in hostile_test.go.)
func TestRejects(t *testing.T) {
	s := newSwitch(t, flat(2, 4, false))
	f := rocev2.Frame{Src: host(0), Dst: swAddr, ID: 1}
	try := func(src netip.Addr, qp uint32, h packet.Header, n int) error {
		f.Src = src
		ip := packet.AppendINC(nil, &f, rocev2.DefaultPKey, &packet.Data{DestQP: qp, RKey: testKey, Hdr: h, Payload: make([]byte, n)})
		var p packet.Parsed
		if err := packet.Parse(ip, &p); err != nil {
			t.Fatal(err)
		}
		_, err := s.Handle(&p)
		return err
	}
	good := hdr(packet.FP32, packet.Sum, 0, 4, 0, 1)
	if err := try(host(0), 8, good, 4); err != ErrUnknownTree {
		t.Errorf("unknown QP: %v", err)
	}
	bad := good
	bad.Tree = 2
	if try(host(0), 7, bad, 4) == nil {
		t.Error("wrong tree accepted")
	}
	bad = good
	bad.Slot = 3
	if try(host(0), 7, bad, 4) == nil {
		t.Error("wrong slot accepted")
	}
	if err := try(host(1), 7, good, 4); ReasonOf(err) != ReasonSource { // rank 0 from rank 1's address
		t.Errorf("spoofed rank: %v", err)
	}
	bad = good
	bad.Rank = 5
	if err := try(host(0), 7, bad, 4); ReasonOf(err) != ReasonRank {
		t.Errorf("rank outside the tree: %v", err)
	}
	bad = good
	bad.Flags = packet.FlagResult
	if err := try(host(0), 7, bad, 4); ReasonOf(err) != ReasonSource {
		t.Errorf("result at the root: %v", err)
	}
	if err := try(host(0), 7, good, 4); err != nil {
		t.Fatal(err)
	}
	bad = hdr(packet.FP32, packet.Sum, 0, 4, 1, 2) // count differs from rank 0's
	if err := try(host(1), 7, bad, 8); err != nil {
		t.Fatal(err)
	}
	_, c := s.Stats()
	if c.Mismatch != 2 || c.BadQP != 1 || c.BadSource != 2 || c.BadRank != 1 || s.Unknown != 1 || c.Completed != 0 || c.Packets != 2 {
		t.Fatalf("counters %+v unknown %d", c, s.Unknown)
	}
}

// TestSetTrees: unchanged trees keep their slots, changed ones start over,
// and configurations beyond the limits are refused as a whole.
func TestSetTrees(t *testing.T) {
	a, b := flat(2, 4, false), flat(2, 4, false)
	b.ID, b.QP = 2, 8
	s := newSwitch(t, a, b)
	send(t, s, host(0), 7, hdr(packet.FP32, packet.Sum, 0, 4, 0, 1), enc(packet.FP32, 1))
	hb := hdr(packet.FP32, packet.Sum, 0, 4, 0, 1)
	hb.Tree = 2
	send(t, s, host(0), 8, hb, enc(packet.FP32, 1))
	b2 := b
	b2.Slots = 8
	if err := s.SetTrees([]TreeConfig{a, b2}); err != nil {
		t.Fatal(err)
	}
	ts, _ := s.Stats()
	inUse := map[uint16]int{}
	for _, x := range ts {
		inUse[x.ID] = x.SlotsInUse
	}
	if inUse[1] != 1 || inUse[2] != 0 {
		t.Fatalf("slots in use after reconfiguration %v", inUse)
	}
	big := flat(65, 4, false)
	if err := s.SetTrees([]TreeConfig{a, big}); err == nil {
		t.Fatal("65 ranks accepted")
	}
	noParent := flat(2, 4, false)
	noParent.Root = false
	if err := s.SetTrees([]TreeConfig{noParent}); err == nil {
		t.Fatal("inner node without parent accepted")
	}
	dup := b
	dup.QP = 7
	if err := s.SetTrees([]TreeConfig{a, dup}); err == nil {
		t.Fatal("two trees on one QP accepted")
	}
	if len(s.trees) != 2 {
		t.Fatal("a refused configuration changed the trees")
	}
}
