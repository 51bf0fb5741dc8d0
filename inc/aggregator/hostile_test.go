package aggregator

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

const testKey = 0x5EC12E7

// inject runs one packet with R_Key rkey through the codec into the switch
// and returns Handle's answer (payloads copied).
func inject(t *testing.T, s *Switch, src netip.Addr, qp, rkey uint32, h packet.Header, payload []byte) ([]Out, error) {
	t.Helper()
	return injectIf(t, s, src, qp, rkey, 0, h, payload)
}

// injectIf is inject for a packet that came in on interface ifindex.
func injectIf(t *testing.T, s *Switch, src netip.Addr, qp, rkey uint32, ifindex int, h packet.Header, payload []byte) ([]Out, error) {
	t.Helper()
	return injectWire(t, s, rocev2.DefaultPKey, src, qp, rkey, ifindex, h, payload)
}

// injectWire encodes a packet with P_Key pkey, parses it as the data
// plane does, and hands it to the switch.
func injectWire(t *testing.T, s *Switch, pkey uint16, src netip.Addr, qp, rkey uint32, ifindex int, h packet.Header, payload []byte) ([]Out, error) {
	t.Helper()
	f := rocev2.Frame{Src: src, Dst: swAddr, ID: 1}
	ip := packet.AppendINC(nil, &f, pkey, &packet.Data{DestQP: qp, PSN: h.Msg, RKey: rkey, Hdr: h, Payload: payload})
	var p packet.Parsed
	if err := packet.Parse(ip, &p); err != nil {
		t.Fatal(err)
	}
	p.IfIndex = ifindex
	out, err := s.Handle(&p)
	cp := make([]Out, len(out))
	for i, o := range out {
		cp[i] = o
		cp[i].Data.Payload = append([]byte(nil), o.Data.Payload...)
	}
	return cp, err
}

// TestAttackSpoofedContribution is the attack of issue 25 row 2: a host
// forges rank 0's source address and sends its contribution before rank 0
// does, with a guessed R_Key. Before the per-packet checks the switch took
// it (the first packet per slot and rank wins) and dropped the real one as
// a duplicate: every rank got [1e30 1e30] instead of [4 6].
func TestAttackSpoofedContribution(t *testing.T) {
	c := flat(2, 4, false)
	c.RKey = testKey
	s := newSwitch(t, c)
	h := func(rank int) packet.Header { return hdr(packet.FP32, packet.Sum, 0, 4, rank, 2) }
	if outs, _ := inject(t, s, host(0), 7, 0xBAD, h(0), enc(packet.FP32, 1e30, 1e30)); len(outs) != 0 {
		t.Fatalf("the spoofed packet produced %+v", outs)
	}
	if _, err := inject(t, s, host(0), 7, testKey, h(0), enc(packet.FP32, 1, 2)); err != nil {
		t.Fatal(err)
	}
	outs, err := inject(t, s, host(1), 7, testKey, h(1), enc(packet.FP32, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	results(t, outs, 2, packet.FP32, 0, []float64{4, 6})
}

// forged is one way to forge rank 0's contribution.
type forged struct {
	name    string
	src     netip.Addr
	qp      uint32
	rkey    uint32
	tree    uint16 // INC header tree id
	rank    int
	ifindex int
	want    Reason
}

// Interfaces of the ingress tests: rank 0 (host(0)) is behind interface
// 10, rank 1 behind 11, the parent behind 20 or 21 (two equal paths); an
// attacker's host is behind interface 12.
const ifRank0, ifRank1, ifAttacker, ifParentA, ifParentB = 10, 11, 12, 20, 21

func ingressOf() map[netip.Addr][]int {
	return map[netip.Addr][]int{host(0): {ifRank0}, host(1): {ifRank1}, rootAddr: {ifParentA, ifParentB}}
}

var forgeries = []forged{
	{"guessed key", host(0), 7, 0xBAD, 1, 0, ifRank0, ReasonRKey},
	{"key zero", host(0), 7, 0, 1, 0, ifRank0, ReasonRKey},
	{"rank 0 from rank 1's address", host(1), 7, testKey, 1, 0, ifRank1, ReasonSource},
	{"rank 0 from a non-member", netip.MustParseAddr("10.9.9.9"), 7, testKey, 1, 0, ifAttacker, ReasonSource},
	{"rank outside the tree", host(0), 7, testKey, 1, 2, ifRank0, ReasonRank},
	{"another tree's id on this QP", host(0), 7, testKey, 2, 0, ifRank0, ReasonQP},
	{"right key and source, attacker's interface", host(0), 7, testKey, 1, 0, ifAttacker, ReasonIngress},
	{"right key and source, rank 1's interface", host(0), 7, testKey, 1, 0, ifRank1, ReasonIngress},
	{"right key and source, interface unknown", host(0), 7, testKey, 1, 0, 0, ReasonIngress},
}

// TestForgedFirstThenReal: for every check, a forged contribution for
// rank 0 arrives first, carrying [1e30 1e30]; it is refused with its
// reason and counted, never takes rank 0's bit, and the real packets then
// complete the message with the exact sum [4 6].
func TestForgedFirstThenReal(t *testing.T) {
	for _, f := range forgeries {
		t.Run(f.name, func(t *testing.T) {
			c := flat(2, 4, false)
			s := newSwitch(t, c)
			s.SetIngress(ingressOf())
			h := hdr(packet.FP32, packet.Sum, 0, 4, f.rank, 2)
			h.Tree = f.tree
			outs, err := injectIf(t, s, f.src, f.qp, f.rkey, f.ifindex, h, enc(packet.FP32, 1e30, 1e30))
			if ReasonOf(err) != f.want || len(outs) != 0 {
				t.Fatalf("forged packet: %v (reason %s), %d packets out; want refused for %s", err, ReasonOf(err), len(outs), f.want)
			}
			ts, tot := s.Stats()
			if got := tot.Refusals()[f.want.String()]; got != 1 || tot.Packets != 0 || ts[0].SlotsInUse != 0 {
				t.Fatalf("after the forged packet: %s count %d, packets %d, slots in use %d", f.want, got, tot.Packets, ts[0].SlotsInUse)
			}
			if _, err := injectIf(t, s, host(0), 7, testKey, ifRank0, hdr(packet.FP32, packet.Sum, 0, 4, 0, 2), enc(packet.FP32, 1, 2)); err != nil {
				t.Fatal(err)
			}
			outs, err = injectIf(t, s, host(1), 7, testKey, ifRank1, hdr(packet.FP32, packet.Sum, 0, 4, 1, 2), enc(packet.FP32, 3, 4))
			if err != nil {
				t.Fatal(err)
			}
			results(t, outs, 2, packet.FP32, 0, []float64{4, 6})
			if _, tot := s.Stats(); tot.Duplicates != 0 || tot.Packets != 2 || tot.Completed != 1 {
				t.Fatalf("counters %+v", tot)
			}
		})
	}
}

// TestForgedAfterReal: a forged copy arriving after the real packet (the
// slot collects, and later holds the shadow) changes nothing either.
func TestForgedAfterReal(t *testing.T) {
	s := newSwitch(t, flat(2, 4, false))
	s.SetIngress(ingressOf())
	h0, h1 := hdr(packet.FP32, packet.Sum, 0, 4, 0, 2), hdr(packet.FP32, packet.Sum, 0, 4, 1, 2)
	if _, err := injectIf(t, s, host(0), 7, testKey, ifRank0, h0, enc(packet.FP32, 1, 2)); err != nil {
		t.Fatal(err)
	}
	for _, f := range forgeries {
		if f.rank == 0 && f.tree == 1 {
			if _, err := injectIf(t, s, f.src, f.qp, f.rkey, f.ifindex, h0, enc(packet.FP32, 1e30, 1e30)); ReasonOf(err) != f.want {
				t.Fatalf("%s: %v", f.name, err)
			}
		}
	}
	outs, err := injectIf(t, s, host(1), 7, testKey, ifRank1, h1, enc(packet.FP32, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	results(t, outs, 2, packet.FP32, 0, []float64{4, 6})
	// A forged retransmission after completion is not served from the
	// shadow either (it would tell the attacker the result).
	if outs, err := injectIf(t, s, host(0), 7, testKey, ifAttacker, h0, enc(packet.FP32, 1, 2)); ReasonOf(err) != ReasonIngress || len(outs) != 0 {
		t.Fatalf("forged retransmission: %v, %+v", err, outs)
	}
}

// TestForgedResults: at an inner node, a result is taken only from the
// parent's address, with the key, on an interface of the route to the
// parent (either of its two paths); a forged one never reaches the
// children and the real one is forwarded exact.
func TestForgedResults(t *testing.T) {
	c := TreeConfig{ID: 1, QP: 20, RKey: testKey, Slots: 4, Parent: Peer{Addr: rootAddr, QP: 30}, ParentRank: 1,
		Children: []Child{{Peer: Peer{Addr: host(0), QP: 100}, Client: true}, {Peer: Peer{Addr: host(1), QP: 101}, Client: true}}}
	s := newSwitch(t, c)
	s.SetIngress(ingressOf())
	for r := range 2 {
		outs, err := injectIf(t, s, host(r), 20, testKey, ifRank0+r, hdr(packet.FP32, packet.Sum, 0, 4, r, 2), enc(packet.FP32, 1, 2))
		if err != nil || r == 1 && (len(outs) != 1 || outs[0].To.Addr != rootAddr) {
			t.Fatalf("rank %d: %v %+v", r, err, outs)
		}
	}
	res := hdr(packet.FP32, packet.Sum, 0, 4, 1, 2)
	res.Flags = packet.FlagResult
	bogus := enc(packet.FP32, 1e30, 1e30)
	for _, f := range []forged{
		{"guessed key", rootAddr, 20, 0xBAD, 1, 1, ifParentA, ReasonRKey},
		{"from a child", host(0), 20, testKey, 1, 1, ifRank0, ReasonSource},
		{"from a non-member", netip.MustParseAddr("10.9.9.9"), 20, testKey, 1, 1, ifAttacker, ReasonSource},
		{"parent's address, a host's interface", rootAddr, 20, testKey, 1, 1, ifAttacker, ReasonIngress},
		{"parent's address, interface unknown", rootAddr, 20, testKey, 1, 1, 0, ReasonIngress},
	} {
		if outs, err := injectIf(t, s, f.src, f.qp, f.rkey, f.ifindex, res, bogus); ReasonOf(err) != f.want || len(outs) != 0 {
			t.Fatalf("%s: %v (%s), %+v; want %s", f.name, err, ReasonOf(err), outs, f.want)
		}
	}
	// The real result, over the parent's second path.
	outs, err := injectIf(t, s, rootAddr, 20, testKey, ifParentB, res, enc(packet.FP32, 10, 20))
	if err != nil || len(outs) != 2 {
		t.Fatalf("real result: %v %+v", err, outs)
	}
	for _, o := range outs {
		if got := dec(packet.FP32, o.Data.Payload); !reflect.DeepEqual(got, []float64{10, 20}) {
			t.Fatalf("forwarded %v", got)
		}
	}
	_, tot := s.Stats()
	if tot.BadRKey != 1 || tot.BadSource != 2 || tot.BadIngress != 2 || tot.Results != 2 {
		t.Fatalf("counters %+v", tot)
	}
}

// TestIngressSet: the check follows SetIngress: off with nil (packets
// from anywhere), on for trees programmed later, a peer without a route
// back refused, and a new map replaces the old one.
func TestIngressSet(t *testing.T) {
	s := newSwitch(t)
	h0 := hdr(packet.FP32, packet.Sum, 0, 4, 0, 1)
	s.SetIngress(ingressOf())
	if err := s.SetTrees([]TreeConfig{flat(2, 4, false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := injectIf(t, s, host(0), 7, testKey, ifAttacker, h0, enc(packet.FP32, 1)); ReasonOf(err) != ReasonIngress {
		t.Fatalf("tree programmed after SetIngress: %v", err)
	}
	s.SetIngress(map[netip.Addr][]int{host(1): {ifRank1}}) // rank 0 has no route back
	if _, err := injectIf(t, s, host(0), 7, testKey, ifRank0, h0, enc(packet.FP32, 1)); ReasonOf(err) != ReasonIngress {
		t.Fatalf("no route back: %v", err)
	}
	s.SetIngress(map[netip.Addr][]int{host(0): {ifAttacker}}) // the route moved
	if _, err := injectIf(t, s, host(0), 7, testKey, ifAttacker, h0, enc(packet.FP32, 1)); err != nil {
		t.Fatalf("after the route moved: %v", err)
	}
	s.SetIngress(nil)
	h0.Msg, h0.Slot = 1, 1
	if _, err := injectIf(t, s, host(0), 7, testKey, 0, h0, enc(packet.FP32, 1)); err != nil {
		t.Fatalf("check off: %v", err)
	}
	if got := s.Peers(); !reflect.DeepEqual(got, []netip.Addr{host(0), host(1)}) {
		t.Fatalf("peers %v", got)
	}
}

// TestPKeyMismatch: a packet whose BTH P_Key does not match the switch's
// partition (IBTA matching: same low 15 bits, one side a full member) is
// refused before any other check, counted under pkey, and never sets a
// child's bit; matching ones aggregate as usual, whole-message RETH
// length and all. Expectations worked out by hand: [1 2] + [3 4] = [4 6].
func TestPKeyMismatch(t *testing.T) {
	h := func(rank int) packet.Header { return hdr(packet.FP32, packet.Sum, 0, 4, rank, 2) }
	s := newSwitch(t, flat(2, 4, false)) // the default partition, full member
	for _, k := range []uint16{0x8012, 0x0000, 0x8000, 0x7FFE} {
		outs, err := injectWire(t, s, k, host(0), 7, testKey, 0, h(0), enc(packet.FP32, 1e30, 1e30))
		if ReasonOf(err) != ReasonPKey || len(outs) != 0 {
			t.Fatalf("P_Key %#04x: %v, %d packets out; want refused as pkey", k, err, len(outs))
		}
	}
	if _, err := injectWire(t, s, 0x7FFF, host(0), 7, testKey, 0, h(0), enc(packet.FP32, 1, 2)); err != nil {
		t.Fatalf("a limited member of the default partition to a full member: %v", err)
	}
	outs, err := injectWire(t, s, rocev2.DefaultPKey, host(1), 7, testKey, 0, h(1), enc(packet.FP32, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	results(t, outs, 2, packet.FP32, 0, []float64{4, 6})
	_, c := s.Stats()
	if c.BadPKey != 4 || c.Refusals()["pkey"] != 4 || c.Packets != 2 || c.Completed != 1 {
		t.Fatalf("counters %+v, refusals %v", c, c.Refusals())
	}

	// A switch in partition 0x12 as a full member: the default P_Key is
	// another partition; a limited member of 0x12 is taken.
	s = newSwitch(t, flat(2, 4, false))
	s.SetPKey(0x8012)
	if _, err := injectWire(t, s, rocev2.DefaultPKey, host(0), 7, testKey, 0, h(0), enc(packet.FP32, 1e30, 1e30)); ReasonOf(err) != ReasonPKey {
		t.Fatalf("default P_Key at a switch of partition 0x12: %v", err)
	}
	if _, err := injectWire(t, s, 0x0012, host(0), 7, testKey, 0, h(0), enc(packet.FP32, 1, 2)); err != nil {
		t.Fatal(err)
	}
	outs, err = injectWire(t, s, 0x8012, host(1), 7, testKey, 0, h(1), enc(packet.FP32, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	results(t, outs, 2, packet.FP32, 0, []float64{4, 6})
	if _, c := s.Stats(); c.BadPKey != 1 {
		t.Fatalf("bad_pkey %d, want 1", c.BadPKey)
	}
}
