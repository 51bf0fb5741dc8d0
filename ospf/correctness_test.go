package ospf

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

// Regression tests of issue 16 ("Protocol correctness"), OSPF engine.

// tapEvent is one LSA header seen on a wire, in an LSU or an LSAck.
type tapEvent struct {
	src  netip.Addr
	kind string // lsu | lsack
	h    packet.LSAHeader
	raw  []byte // LSU only
}

// tap records the LSU and LSAck contents crossing a wire, in order.
type tap struct {
	mu sync.Mutex
	ev []tapEvent
}

func tapWire(w *wire) *tap {
	tp := &tap{}
	w.drop = func(src netip.Addr, b []byte) bool {
		p, err := packet.Decode(b)
		if err != nil {
			return false
		}
		tp.mu.Lock()
		defer tp.mu.Unlock()
		switch p := p.(type) {
		case *packet.LSU:
			for _, l := range p.LSAs {
				tp.ev = append(tp.ev, tapEvent{src: src, kind: "lsu", h: l.LSAHeader, raw: append([]byte(nil), l.Raw...)})
			}
		case *packet.LSAck:
			for _, h := range p.LSAs {
				tp.ev = append(tp.ev, tapEvent{src: src, kind: "lsack", h: h})
			}
		}
		return false
	}
	return tp
}

// mark is the number of events recorded so far.
func (tp *tap) mark() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return len(tp.ev)
}

func (tp *tap) events() []tapEvent {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]tapEvent(nil), tp.ev...)
}

// teLinkKey is r1's TE Link LSA on its first interface (opaque type 1,
// id 1): the LSA a bandwidth change re-originates.
var teLinkKey = lsaKey{typ: packet.LSAOpaqueArea, id: netip.MustParseAddr("1.0.0.1"), adv: netip.MustParseAddr("10.255.0.1")}

// setOwnSeq rewrites the sequence number of one of m's own LSAs in place
// (checksum recomputed), as if it had been re-originated that often; with
// flood, the rewritten instance is flooded too.
func setOwnSeq(t *testing.T, m *memNode, k lsaKey, seq int32, flood bool) {
	t.Helper()
	var err error
	qerr := m.in.Query(context.Background(), func() {
		e := m.in.areas[0].db[k]
		if e == nil || !e.own {
			err = fmt.Errorf("no own LSA %s", lsaName(k))
			return
		}
		raw := append([]byte(nil), e.lsa.Raw...)
		binary.BigEndian.PutUint32(raw[12:16], uint32(seq))
		binary.BigEndian.PutUint16(raw[16:18], 0)
		binary.BigEndian.PutUint16(raw[16:18], packet.LSAChecksum(raw))
		l, _, derr := packet.DecodeLSA(raw)
		if derr != nil {
			err = derr
			return
		}
		e.lsa = l
		if flood {
			e.age0, e.at = 0, m.in.opt.Now()
			m.in.flood(m.in.areas[0], e, nil, e.at)
		}
	})
	if qerr != nil || err != nil {
		t.Fatal(qerr, err)
	}
}

// lsaAt reads one LSA's header from m's area database.
func lsaAt(m *memNode, k lsaKey) (packet.LSAHeader, bool) {
	var h packet.LSAHeader
	ok := false
	m.in.Query(context.Background(), func() {
		if e := m.in.areas[0].db[k]; e != nil {
			h, ok = e.header(m.in.opt.Now()), true
		}
	})
	return h, ok
}

// liveSeq succeeds when m holds k live at sequence number seq.
func liveSeq(m *memNode, k lsaKey, seq int32) func() error {
	return func() error {
		h, ok := lsaAt(m, k)
		if !ok || h.Age >= MaxAge || h.Seq != seq {
			return fmt.Errorf("%s holds %s: present %v seq %s age %d, want live at %s", m.in.rid, lsaName(k), ok, seqHex(h.Seq), h.Age, seqHex(seq))
		}
		return nil
	}
}

// linkBW succeeds when m's graph shows r1's link with bandwidth bw (bytes/s).
func linkBW(m *memNode, bw float32) func() error {
	return func() error {
		g := m.in.Graph("0.0.0.0")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		ls := g.LinksOf(g.Lookup("10.255.0.1"))
		if len(ls) != 1 || ls[0].MaxBW != bw {
			return fmt.Errorf("r1 links %+v, want max bandwidth %g", ls, bw)
		}
		return nil
	}
}

// noReserved fails the test if the reserved sequence number 0x80000000
// (RFC 2328 §12.1.6) crossed the wire.
func noReserved(t *testing.T, tp *tap) {
	t.Helper()
	for _, e := range tp.events() {
		if uint32(e.h.Seq) == 0x80000000 {
			t.Errorf("%s from %s carries the reserved sequence number 0x80000000: %s", e.kind, e.src, lsaName(keyOf(e.h)))
		}
	}
}

// checkWrapOrder checks §12.1.6 on the wire: the instance at
// MaxSequenceNumber was flushed (MaxAge), the neighbour acknowledged that
// flush, and only then did the instance at InitialSequenceNumber appear
// (events from index since on).
func checkWrapOrder(t *testing.T, tp *tap, since int, k lsaKey, from, nbr netip.Addr) {
	t.Helper()
	flushed, acked := -1, -1
	for i, e := range tp.events() {
		if i < since || keyOf(e.h) != k {
			continue
		}
		switch {
		case e.kind == "lsu" && e.src == from && e.h.Seq == packet.MaxSequenceNumber && e.h.Age >= MaxAge && flushed < 0:
			flushed = i
		case e.kind == "lsack" && e.src == nbr && e.h.Seq == packet.MaxSequenceNumber && e.h.Age >= MaxAge && flushed >= 0 && acked < 0:
			acked = i
		case e.kind == "lsu" && e.src == from && e.h.Seq == packet.InitialSequenceNumber:
			if flushed < 0 || acked < 0 {
				t.Fatalf("%s sent at 0x80000001 (event %d) before its flush at 0x7fffffff was acknowledged (flush %d, ack %d)", lsaName(k), i, flushed, acked)
			}
			return
		}
	}
	t.Fatalf("%s: no instance at 0x80000001 on the wire (flush %d, ack %d)", lsaName(k), flushed, acked)
}

// TestSeqNumberMaxFlushesThenRestarts: RFC 2328 §12.1.6. An LSA at
// 0x7FFFFFFE is re-originated at 0x7FFFFFFF (a valid sequence number,
// not a wrap); the next change flushes the 0x7FFFFFFF instance, waits for
// the neighbour's acknowledgement, and only then originates 0x80000001,
// which the neighbour installs at once with the new content.
func TestSeqNumberMaxFlushesThenRestarts(t *testing.T) {
	w := &wire{}
	tp := tapWire(w)
	r1, r2 := startP2PPair(t, w)
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))

	setOwnSeq(t, r1, teLinkKey, packet.MaxSequenceNumber-1, false)
	if err := r1.in.SetBandwidth(context.Background(), "e0", config.Bandwidth(20e9)); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "r2 holds the TE link LSA at 0x7fffffff", liveSeq(r2, teLinkKey, packet.MaxSequenceNumber))
	igptest.Poll(t, 10*time.Second, "r2 sees 20G", linkBW(r2, 2.5e9))

	since := tp.mark()
	if err := r1.in.SetBandwidth(context.Background(), "e0", config.Bandwidth(30e9)); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "r2 holds the new instance at 0x80000001", liveSeq(r2, teLinkKey, packet.InitialSequenceNumber))
	igptest.Poll(t, 10*time.Second, "r2 sees 30G", linkBW(r2, 3.75e9))
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	checkWrapOrder(t, tp, since, teLinkKey, addr("10.254.0.0"), addr("10.254.0.1"))
	noReserved(t, tp)
}

// TestSeqNumberNeverReserved: a restarted router gets its own LSA back at
// 0x7FFFFFFF in the database exchange (§13.4). max(seq)+1 would be the
// reserved 0x80000000; it must flush the 0x7FFFFFFF copy, wait for the
// acknowledgement and originate 0x80000001 (§12.1.6).
func TestSeqNumberNeverReserved(t *testing.T) {
	w := &wire{}
	tp := tapWire(w)
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	r1 := startMem(t, 1, ifs1)
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	setOwnSeq(t, r1, teLinkKey, packet.MaxSequenceNumber, true) // as if originated that often
	igptest.Poll(t, 10*time.Second, "r2 holds the TE link LSA at 0x7fffffff", liveSeq(r2, teLinkKey, packet.MaxSequenceNumber))

	since := tp.mark()
	r1.stop()
	w.mu.Lock()
	for i, p := range w.ports {
		if p.addr.String() == "10.254.0.0" {
			w.ports = append(w.ports[:i], w.ports[i+1:]...)
			break
		}
	}
	w.mu.Unlock()
	r1 = startMem(t, 1, ifs1)
	igptest.Poll(t, 15*time.Second, "Full again", fullCount(r1, 1))
	noReserved(t, tp)
	igptest.Poll(t, 15*time.Second, "r2 holds the TE link LSA at 0x80000001", liveSeq(r2, teLinkKey, packet.InitialSequenceNumber))
	igptest.Poll(t, 10*time.Second, "r2 sees 10G", linkBW(r2, 1.25e9))
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	checkWrapOrder(t, tp, since, teLinkKey, addr("10.254.0.0"), addr("10.254.0.1"))
	noReserved(t, tp)
}

// originateLink originates a link-scope opaque LSA (type 9, opaque type
// 200, unassigned) on one interface of m, as a Grace LSA would be.
func originateLink(t *testing.T, m *memNode, ifname string, oid uint32, val string) {
	t.Helper()
	err := m.in.Query(context.Background(), func() {
		a := m.in.scopeOf(m.in.iface(ifname), packet.LSAOpaqueLink)
		w := opaqueWant(packet.LSAOpaqueLink, 200, oid, []packet.TLV{{Type: 1, Value: []byte(val)}})
		a.own[w.key(m.in.rid)] = true
		m.in.newOwn(a, w, packet.InitialSequenceNumber, m.in.opt.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// linkLSAs returns the live type-9 LSAs m holds for an interface, as
// "id/adv" -> value of their first TLV.
func linkLSAs(m *memNode, ifname string) map[string]string {
	out := map[string]string{}
	m.in.Query(context.Background(), func() {
		now := m.in.opt.Now()
		for k, e := range m.in.scopeOf(m.in.iface(ifname), packet.LSAOpaqueLink).db {
			if k.typ != packet.LSAOpaqueLink || e.age(now) >= MaxAge {
				continue
			}
			v := "?"
			if o, ok := opaqueBody(e.lsa.Body); ok && len(o.TLVs) > 0 {
				v = string(o.TLVs[0].Value)
			}
			out[k.id.String()+"/"+k.adv.String()] = v
		}
	})
	return out
}

// holdsLink succeeds when m holds exactly want as type-9 LSAs on ifname.
func holdsLink(m *memNode, ifname string, want map[string]string) func() error {
	return func() error {
		got := linkLSAs(m, ifname)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s %s link-scope LSAs %v, want %v", m.in.rid, ifname, got, want)
		}
		return nil
	}
}

// noType9 fails the test if a type-9 LSA crossed the wire.
func noType9(t *testing.T, tp *tap, what string) {
	t.Helper()
	for _, e := range tp.events() {
		if e.h.Type == packet.LSAOpaqueLink {
			t.Errorf("%s: %s from %s carries %s", what, e.kind, e.src, lsaName(keyOf(e.h)))
		}
	}
}

// TestLinkLocalOpaqueScopedToLink: RFC 5250 §3. A type-9 LSA r3
// originates on a LAN reaches every router of that LAN (r4, a DROther,
// only through the DR's re-flooding), is stored against the LAN
// interface, and never leaves the LAN: not onto r2's P2P link to r5.
func TestLinkLocalOpaqueScopedToLink(t *testing.T) {
	lan, p2p := &wire{}, &wire{}
	tp := tapWire(p2p)
	r1 := startLAN(t, 1, lan, 10)
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "broadcast", w: lan, addr: pfx("10.253.0.2/24"), prio: 5},
		{name: "e1", typ: "p2p", w: p2p, addr: pfx("10.254.0.0/31")}})
	r3 := startLAN(t, 3, lan, 1)
	r4 := startLAN(t, 4, lan, 1)
	r5 := startMem(t, 5, []memIf{{name: "e0", typ: "p2p", w: p2p, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 20*time.Second, "DR Full with all", fullCount(r1, 3))
	igptest.Poll(t, 20*time.Second, "BDR Full with all", fullCount(r2, 4))
	igptest.Poll(t, 20*time.Second, "sync", sameDB(r1, r2, r3, r4, r5))
	ifs, _ := r4.in.Interfaces(context.Background())
	if ifs[0].State != "DROther" {
		t.Fatalf("r4 is %s, want DROther", ifs[0].State)
	}

	originateLink(t, r3, "e0", 1, "lan3")
	want := map[string]string{"200.0.0.1/10.255.0.3": "lan3"}
	for _, m := range []*memNode{r1, r2, r4} {
		igptest.Poll(t, 10*time.Second, "on the LAN", holdsLink(m, "e0", want))
	}
	// Let r2 flood whatever it would flood, then check nothing left the LAN.
	igptest.Poll(t, 10*time.Second, "area databases unchanged", sameDB(r2, r5))
	for _, c := range []struct {
		m   *memNode
		ifn string
	}{{r2, "e1"}, {r5, "e0"}} {
		if err := holdsLink(c.m, c.ifn, map[string]string{})(); err != nil {
			t.Error(err)
		}
	}
	noType9(t, tp, "r2-r5 link")
}

// TestLinkLocalOpaqueInDatabaseExchange: a newcomer on a LAN learns the
// link's type-9 LSAs in the database exchange with the DR and BDR (here
// originated by a DROther it is not adjacent to), requests them and
// reaches Full without a BadLSReq or any other exchange restart.
func TestLinkLocalOpaqueInDatabaseExchange(t *testing.T) {
	lan := &wire{}
	r1, r2, r3 := startLANOfThree(t, lan)
	originateLink(t, r3, "e0", 1, "lan3")
	want := map[string]string{"200.0.0.1/10.255.0.3": "lan3"}
	igptest.Poll(t, 10*time.Second, "DR holds it", holdsLink(r1, "e0", want))
	igptest.Poll(t, 10*time.Second, "BDR holds it", holdsLink(r2, "e0", want))
	base := map[*memNode]uint64{}
	for _, m := range []*memNode{r1, r2} {
		base[m] = ifCounter(t, m, "e0", "seq_mismatch")
	}

	r4 := startLAN(t, 4, lan, 0)
	igptest.Poll(t, 20*time.Second, "newcomer Full with DR and BDR", fullCount(r4, 2))
	igptest.Poll(t, 10*time.Second, "newcomer holds r3's link-scope LSA", holdsLink(r4, "e0", want))
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2, r3, r4))
	for _, c := range []string{"seq_mismatch", "rx_bad_lsreq"} {
		if n := ifCounter(t, r4, "e0", c); n != 0 {
			t.Errorf("newcomer %s = %d", c, n)
		}
	}
	for _, m := range []*memNode{r1, r2} {
		if n := ifCounter(t, m, "e0", "seq_mismatch") - base[m]; n != 0 {
			t.Errorf("%s: %d exchange restarts with the newcomer", m.in.rid, n)
		}
	}
	if st := nbrState(r4, "10.255.0.3"); st != "" && st != "2-Way" {
		t.Fatalf("newcomer and r3 in %s, want 2-Way (so r3's LSA came through the DR and BDR)", st)
	}
}

// TestLinkLocalOpaqueParallelLinks: r2 has two P2P links to r1 and
// originates one type-9 LSA (same key) on each with different content.
// r1 holds both, each against its own link, and neither instance is ever
// sent onto the other link.
func TestLinkLocalOpaqueParallelLinks(t *testing.T) {
	wa, wb := &wire{}, &wire{}
	ta, tb := tapWire(wa), tapWire(wb)
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: wa, addr: pfx("10.254.0.0/31")}, {name: "e1", typ: "p2p", w: wb, addr: pfx("10.254.0.2/31")}})
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: wa, addr: pfx("10.254.0.1/31")}, {name: "e1", typ: "p2p", w: wb, addr: pfx("10.254.0.3/31")}})
	igptest.Poll(t, 10*time.Second, "Full on both links", fullCount(r1, 2))
	igptest.Poll(t, 10*time.Second, "Full on both links", fullCount(r2, 2))
	originateLink(t, r2, "e0", 1, "lnkA")
	originateLink(t, r2, "e1", 1, "lnkB")
	for _, m := range []*memNode{r1, r2} {
		igptest.Poll(t, 10*time.Second, "link A's instance on link A", holdsLink(m, "e0", map[string]string{"200.0.0.1/10.255.0.2": "lnkA"}))
		igptest.Poll(t, 10*time.Second, "link B's instance on link B", holdsLink(m, "e1", map[string]string{"200.0.0.1/10.255.0.2": "lnkB"}))
	}
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	// Both are acknowledged on their link: nothing left to retransmit.
	igptest.Poll(t, 10*time.Second, "acknowledged", func() error {
		ns, _ := r2.in.Neighbors(context.Background())
		for _, n := range ns {
			if n.Retransmit != 0 {
				return fmt.Errorf("%s: %d LSAs awaiting acknowledgement", n.Interface, n.Retransmit)
			}
		}
		return nil
	})
	check := func(tp *tap, wire, other string) {
		n := 0
		for _, e := range tp.events() {
			if e.kind != "lsu" || e.h.Type != packet.LSAOpaqueLink {
				continue
			}
			n++
			if strings.Contains(string(e.raw), other) {
				t.Errorf("link %s carried the other link's instance (%q) from %s", wire, other, e.src)
			}
		}
		if n == 0 {
			t.Errorf("link %s: no type-9 LSU seen", wire)
		}
	}
	check(ta, "A", "lnkB")
	check(tb, "B", "lnkA")
}

// injectHellos sends, every 200 ms until the test ends, the hello of a
// router 10.255.0.2 at 10.253.0.2 that declares itself DR with no BDR
// (BDR 0.0.0.0) and lists 10.255.0.1 as seen.
func injectHellos(t *testing.T, w *wire, dead uint32) {
	inj := w.port(addr("10.253.0.2"))
	h := &packet.Hello{Header: packet.Header{Version: 2, RouterID: addr("10.255.0.2"), AreaID: addr("0.0.0.0")},
		Mask: addr("255.255.255.0"), HelloInterval: 1, Options: optE, Priority: 1, DeadInterval: dead,
		DR: addr("10.253.0.2"), BDR: addr("0.0.0.0"), Neighbors: []netip.Addr{addr("10.255.0.1")}}
	b := h.AppendTo(nil)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			inj.Send(AllSPFRouters, b)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// TestBackupSeenWithoutBDR: RFC 2328 §10.5 / §9.3. A router in Waiting
// that hears a neighbour declare itself DR with BDR 0.0.0.0 fires
// BackupSeen and elects at once (here: itself as BDR) instead of waiting
// out its wait timer, which is 60 s in this test.
func TestBackupSeenWithoutBDR(t *testing.T) {
	w := &wire{}
	logs := &igptest.LogBuf{}
	ifs := []memIf{{name: "e0", typ: "broadcast", w: w, addr: pfx("10.253.0.1/24"), prio: 1}}
	y := strings.Replace(testYAML(1, ifs, ""), "dead-interval: 3s", "dead-interval: 60s", 1)
	r1 := startMemCfg(t, parse(t, y), ifs, slog.New(slog.NewTextHandler(logs, nil)))
	injectHellos(t, w, 60)
	igptest.Poll(t, 10*time.Second, "BDR well before the 60 s wait timer", func() error {
		ifs, err := r1.in.Interfaces(context.Background())
		if err != nil {
			return err
		}
		if ifs[0].State != "Backup" || ifs[0].DR != "10.253.0.2" || ifs[0].BDR != "10.253.0.1" {
			return fmt.Errorf("state %s DR %q BDR %q", ifs[0].State, ifs[0].DR, ifs[0].BDR)
		}
		return nil
	})
	ns, _ := r1.in.Neighbors(context.Background())
	if len(ns) != 1 || ns[0].DR != "10.253.0.2" || ns[0].BDR != "" {
		t.Fatalf("neighbour as seen %+v: want DR 10.253.0.2 and no BDR", ns)
	}
	if n := logs.Count("event=BackupSeen"); n != 1 {
		t.Errorf("elections on BackupSeen logged %d times, want 1", n)
	}
}

// TestSummaryAtLSInfinitySuppressed: RFC 2328 §12.4.3. r1 (area 0) —
// r2 (ABR) — r3 (area 1). An inter-area route in the backbone is
// summarised into area 1 while its cost is finite; when its cost at r2
// reaches LSInfinity (0xFFFFFF) the Summary LSA is flushed, not capped
// to 0xFFFFFE (which would still claim the route reachable).
func TestSummaryAtLSInfinitySuppressed(t *testing.T) {
	w1, w2 := &wire{}, &wire{}
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.0/31")}})
	if2 := []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.1/31")}, {name: "e1", typ: "p2p", w: w2, addr: pfx("10.254.0.2/31"), area: "0.0.0.1"}}
	r2 := startMemCfg(t, parse(t, testYAML(2, if2, "    - {prefix: 10.255.0.2/32, area: 0.0.0.0}\n")), if2, nil)
	r3 := startMem(t, 3, []memIf{{name: "e0", typ: "p2p", w: w2, addr: pfx("10.254.0.3/31"), area: "0.0.0.1"}})
	igptest.Poll(t, 10*time.Second, "r2 Full with both", fullCount(r2, 2))
	igptest.Poll(t, 10*time.Second, "r1 Full", fullCount(r1, 1))
	igptest.Poll(t, 10*time.Second, "r3 Full", fullCount(r3, 1))

	// A Summary LSA of 10.99.0.0/24 in the backbone, advertised by r1 (as
	// another ABR would), injected from r1's address.
	inj := w1.port(addr("10.254.0.0"))
	send := func(seq int32, metric uint32) {
		l := packet.NewLSA(packet.LSAHeader{Type: packet.LSASummary, ID: addr("10.99.0.0"), AdvRouter: addr("10.255.0.1"), Seq: seq, Options: optE},
			packet.SummaryLSA{Mask: addr("255.255.255.0"), Metric: metric})
		u := &packet.LSU{Header: packet.Header{Version: 2, RouterID: addr("10.255.0.1"), AreaID: addr("0.0.0.0")}, LSAs: []packet.LSA{l}}
		inj.Send(AllSPFRouters, u.AppendTo(nil))
	}
	summaryAt := func(want int64) func() error {
		return func() error {
			v, err := r3.in.Database(context.Background(), DatabaseQuery{Area: "0.0.0.1", Type: "summary", Detail: true})
			if err != nil {
				return err
			}
			for _, e := range v {
				if e.ID != "10.99.0.0" || e.AdvRouter != "10.255.0.2" || e.Age >= MaxAge {
					continue
				}
				m := e.Detail["body"].(map[string]any)["metric"]
				if want < 0 {
					return fmt.Errorf("r3 still holds r2's summary of 10.99.0.0/24 with metric %v", m)
				}
				if fmt.Sprint(m) != fmt.Sprint(want) {
					return fmt.Errorf("metric %v, want %d", m, want)
				}
				return nil
			}
			if want < 0 {
				return nil
			}
			return fmt.Errorf("r3 holds no live summary of 10.99.0.0/24 from r2")
		}
	}
	send(packet.InitialSequenceNumber+10, 100)
	igptest.Poll(t, 10*time.Second, "summary with cost 10+100", summaryAt(110))
	send(packet.InitialSequenceNumber+11, 0xFFFFFE) // r2's cost: 10 + 0xFFFFFE >= LSInfinity
	igptest.Poll(t, 10*time.Second, "summary flushed", summaryAt(-1))
	igptest.Poll(t, 10*time.Second, "not in r3's graph", func() error {
		g := r3.in.Graph("0.0.0.1")
		if g == nil {
			return fmt.Errorf("no graph")
		}
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "10.99.0.0/24" {
				return fmt.Errorf("r3's graph still has 10.99.0.0/24 (metric %d)", p.Metric)
			}
		}
		return nil
	})
	sv, _ := r2.in.Summaries(context.Background())
	for _, s := range sv {
		if s.Prefix == "10.99.0.0/24" {
			t.Errorf("r2 still summarises 10.99.0.0/24: %+v", s)
		}
	}
}

// TestReceivePanicRecovered: a bug that panics on one packet costs that
// packet: it is counted as rx_rejected_panic, logged once with the
// packet, and the daemon and its adjacency carry on.
func TestReceivePanicRecovered(t *testing.T) {
	w := &wire{}
	logs := &igptest.LogBuf{}
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	r1 := startMemCfg(t, parse(t, testYAML(1, ifs1, "")), ifs1, slog.New(slog.NewTextHandler(logs, nil)))
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(10, r1, r2))
	bug := addr("10.255.0.66").As4()
	r1.in.Query(context.Background(), func() {
		r1.in.rxFault = func(b []byte) {
			if len(b) >= 8 && [4]byte(b[4:8]) == bug {
				var m map[string]int
				m["bug"]++ // nil map write: a stand-in bug
			}
		}
	})
	h := &packet.Hello{Header: packet.Header{Version: 2, RouterID: addr("10.255.0.66"), AreaID: addr("0.0.0.0")},
		Mask: addr("0.0.0.0"), HelloInterval: 1, Options: optE, DeadInterval: 3, DR: addr("0.0.0.0"), BDR: addr("0.0.0.0")}
	pkt := h.AppendTo(nil)
	inj := w.port(addr("10.254.0.1"))
	inj.Send(AllSPFRouters, pkt)
	inj.Send(AllSPFRouters, pkt)
	igptest.Poll(t, 5*time.Second, "both counted", func() error {
		if n := ifCounter(t, r1, "e0", "rx_rejected_panic"); n != 2 {
			return fmt.Errorf("rx_rejected_panic = %d, want 2", n)
		}
		return nil
	})
	if n := logs.Count("BUG: panic"); n != 1 {
		t.Errorf("panic logged %d times, want once", n)
	}
	if n := logs.Count(hex.EncodeToString(pkt)); n != 1 {
		t.Errorf("the packet's bytes logged %d times, want once", n)
	}
	// Still alive and adjacent, and still processing packets.
	if err := fullCount(r1, 1)(); err != nil {
		t.Fatal(err)
	}
	before := ifCounter(t, r1, "e0", "rx_hello")
	igptest.Poll(t, 5*time.Second, "hellos still processed", func() error {
		if ifCounter(t, r1, "e0", "rx_hello") <= before {
			return fmt.Errorf("no hello processed since")
		}
		return nil
	})
	if err := r1.in.SetBandwidth(context.Background(), "e0", config.Bandwidth(20e9)); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "flooding still works", sameDBn(10, r1, r2))
}
