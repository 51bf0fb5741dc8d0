package isis

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/isis/packet"
)

// lanHelloFrom is a level-2 LAN IIH from a (possibly spoofed) system that
// lists the given SNPAs.
func lanHelloFrom(sys packet.SystemID, prio uint8, snpas ...[6]byte) []byte {
	tlvs := packet.TLVs{&packet.AreaAddresses{Areas: [][]byte{{0x49, 0, 1}}}, &packet.ProtocolsSupported{NLPIDs: []uint8{packet.NLPIDIPv4}}}
	if len(snpas) > 0 {
		tlvs = append(tlvs, &packet.ISNeighbors{SNPAs: snpas})
	}
	h := &packet.LANHello{Header: packet.Header{Type: packet.TypeL2LANHello}, CircuitType: packet.CircuitL2, SourceID: sys,
		HoldTime: 30, Priority: prio, LANID: packet.MakeNodeID(sys, 1), TLVs: tlvs}
	return h.AppendTo(nil)
}

func spoofMAC(i int) [6]byte { return [6]byte{0x02, 0x5f, 0, 0, byte(i >> 8), byte(i)} }

// TestLANHelloManyNeighborsSplitsTLV6: 60 systems heard on a LAN. A
// single IS Neighbours TLV holds at most 42 MACs; the old encoder panicked
// on the 43rd ("TLV 6 value is 258 bytes") and, unrecovered, killed the
// daemon — one host sending 43 spoofed hellos was enough. Now r1 lists all
// 60 in several TLV 6s, within the MTU, and keeps running.
func TestLANHelloManyNeighborsSplitsTLV6(t *testing.T) {
	w := &wire{}
	r1 := startMem(t, 1, []memIf{{name: "lan0", typ: "lan", w: w, addr: netip.MustParsePrefix("10.253.0.1/24")}})
	inj := w.port([6]byte{0x02, 0xee, 0, 0, 0, 1})
	igptest.Poll(t, 5*time.Second, "r1's interface up", func() error {
		ifs, err := r1.in.Interfaces(context.Background())
		if err != nil || ifs[0].State != "up" {
			return fmt.Errorf("%v %v", ifs, err)
		}
		return nil
	})
	const n = 60
	for i := range n {
		inj.mac = spoofMAC(i) // one port, many source MACs: what a raw socket can do
		inj.Send(MACAllL2ISs, lanHelloFrom(packet.SystemID{0, 0, 0, 0, 0x5f, byte(i)}, 0))
	}
	var last *packet.LANHello
	igptest.Poll(t, 10*time.Second, "r1's hello lists all 60", func() error {
		for {
			select {
			case f := <-inj.rx:
				p, err := packet.Decode(f.pdu)
				if err != nil {
					return fmt.Errorf("r1 sent an undecodable PDU: %v", err)
				}
				if h, ok := p.(*packet.LANHello); ok {
					last = h
					if len(f.pdu)+len(llc) > 1500 {
						return fmt.Errorf("hello of %d bytes exceeds the MTU", len(f.pdu))
					}
				}
				continue
			default:
			}
			break
		}
		if last == nil {
			return fmt.Errorf("no hello from r1")
		}
		got := map[[6]byte]bool{}
		for _, m := range last.TLVs.SNPAs() {
			got[m] = true
		}
		for i := range n {
			if !got[spoofMAC(i)] {
				return fmt.Errorf("hello lists %d MACs, %s missing", len(got), macString(spoofMAC(i)))
			}
		}
		return nil
	})
	n6 := 0
	for _, tl := range last.TLVs {
		if _, ok := tl.(*packet.ISNeighbors); ok {
			n6++
		}
	}
	if n6 != 2 {
		t.Errorf("%d TLV 6s for 60 neighbours, want 2 (42 + 18)", n6)
	}
	if _, err := r1.in.Interfaces(context.Background()); err != nil {
		t.Fatalf("instance no longer answers: %v", err)
	}
}

// helloCircuit is circuit 0 of an offline instance made to look running
// with the given neighbours and addresses; extra is testConfig's.
func helloCircuit(t testing.TB, typ string, mtu int, extra ...string) *circuit {
	in, err := New(testConfig(t, 1, "2", []memIf{{name: "e0", typ: typ}}, extra...), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c := in.circuits[0]
	c.running, c.mtu, c.mac = true, mtu, [6]byte{2, 0, 0, 0, 1, 0}
	c.ifi.Index = 7
	return c
}

// TestHelloManyAddressesSplit: the IPv4 address TLV of a hello held at
// most 63 addresses and the IPv6 link-local one 15; more panicked the
// encoder (an interface with many secondary addresses was enough). Both
// hello kinds now carry every address over several TLVs.
func TestHelloManyAddressesSplit(t *testing.T) {
	for _, typ := range []string{"lan", "p2p"} {
		c := helloCircuit(t, typ, 1500)
		for i := range 64 {
			c.addrs4 = append(c.addrs4, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, 0, byte(i)}), 24))
		}
		for i := range 16 {
			c.ll6 = append(c.ll6, netip.AddrFrom16([16]byte{0xfe, 0x80, 15: byte(i + 1)}))
		}
		c.addrs6 = []netip.Prefix{netip.MustParsePrefix("2001:db8::1/64")} // IPv6 on: link-locals go in hellos
		var pdu packet.PDU = c.p2pHello()
		if typ == "lan" {
			pdu = c.lanHello(2)
		}
		b := pdu.AppendTo(nil)
		if len(b)+len(llc) != 1500 {
			t.Errorf("%s: hello of %d bytes, want padded to 1497", typ, len(b))
		}
		p, err := packet.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		tl := packet.TLVsOf(p)
		if n := len(tl.IPv4Addrs()); n != 64 {
			t.Errorf("%s: %d IPv4 addresses, want 64", typ, n)
		}
		if n := len(tl.IPv6Addrs()); n != 16 {
			t.Errorf("%s: %d IPv6 link-local addresses, want 16", typ, n)
		}
	}
}

// TestLANHelloTruncatesToMTUUpFirst: 400 neighbours cannot fit a
// 1500-byte hello. It stays within the MTU, the Up adjacency is listed
// first of all (a flood of spoofed hellos cannot push a working neighbour
// out), the cut is counted and logged once.
func TestLANHelloTruncatesToMTUUpFirst(t *testing.T) {
	c := helloCircuit(t, "lan", 1500)
	ll := c.lan[1]
	up := [6]byte{0xfe, 0, 0, 0, 0, 1} // sorts after every spoofed MAC
	ll.adjs[up] = &adjacency{snpa: up, state: AdjUp, level: 2}
	for i := range 400 {
		m := spoofMAC(i)
		ll.adjs[m] = &adjacency{snpa: m, state: AdjInit, level: 2}
	}
	b := c.lanHello(2).AppendTo(nil)
	if len(b)+len(llc) > 1500 {
		t.Fatalf("hello of %d bytes", len(b))
	}
	p, err := packet.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	snpas := p.(*packet.LANHello).TLVs.SNPAs()
	if len(snpas) < 200 || !bytes.Equal(snpas[len(snpas)-1][:], up[:]) {
		t.Errorf("%d neighbours listed, last %x; want the Up one among them", len(snpas), snpas[len(snpas)-1])
	}
	if c.counters["tx_hello_truncated"] != 1 || !c.logged["hello_truncated"] {
		t.Errorf("truncation not counted/logged: %v", c.counters)
	}
}

// TestReceivePanicRecovered: a panic while processing one received PDU
// is contained — counted (rx_panics), logged once with a stack, the PDU
// dropped — and the instance goes on. The panic is provoked by corrupting
// the circuit's state from inside the loop (a nil adjacency map, so the
// next LAN hello from a new system writes to a nil map); the old code let
// it kill the instance goroutine and the process.
func TestReceivePanicRecovered(t *testing.T) {
	w := &wire{}
	logs := &igptest.LogBuf{}
	r1 := startMemLog(t, 1, []memIf{{name: "lan0", typ: "lan", w: w, addr: netip.MustParsePrefix("10.253.0.1/24")}}, slog.New(slog.NewTextHandler(logs, nil)))
	inj := w.port([6]byte{0x02, 0xee, 0, 0, 0, 1})
	ctx := context.Background()
	var saved map[[6]byte]*adjacency
	if err := r1.in.Query(ctx, func() {
		ll := r1.in.circuits[0].lan[1]
		saved, ll.adjs = ll.adjs, nil
	}); err != nil {
		t.Fatal(err)
	}
	hello := lanHelloFrom(packet.SystemID{0, 0, 0, 0, 0, 0x42}, 0)
	inj.Send(MACAllL2ISs, hello)
	inj.Send(MACAllL2ISs, hello)
	igptest.Poll(t, 5*time.Second, "two panics counted", func() error {
		if n := counter(t, r1, "rx_panics"); n != 2 {
			return fmt.Errorf("rx_panics=%d", n)
		}
		return nil
	})
	if n := logs.Count("BUG: panic"); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
	if !strings.Contains(logs.String(), "assignment to entry in nil map") || !strings.Contains(logs.String(), "rxLANHello") ||
		!strings.Contains(logs.String(), `site="rx lan0"`) {
		t.Errorf("log lacks the panic or its stack:\n%s", logs.String())
	}
	// The instance is alive and, its state repaired, processes hellos again.
	if err := r1.in.Query(ctx, func() { r1.in.circuits[0].lan[1].adjs = saved }); err != nil {
		t.Fatal(err)
	}
	inj.Send(MACAllL2ISs, hello)
	igptest.Poll(t, 5*time.Second, "hello processed after the panics", func() error {
		ns, err := r1.in.Neighbors(ctx)
		if err != nil {
			return err
		}
		if len(ns) != 1 || ns[0].SystemID != "0000.0000.0042" {
			return fmt.Errorf("neighbours %+v", ns)
		}
		return nil
	})
}

// upP2P makes circuit 0 of an offline instance run with an Up P2P
// adjacency to sys at level 2, so rxLSP accepts LSPs on it.
func upP2P(in *Instance, sys packet.SystemID) *circuit {
	c := in.circuits[0]
	c.running = true
	c.p2p = &adjacency{sysID: sys, state: AdjUp, level: 2}
	return c
}

func lspBytes(id packet.LSPID, seq uint32, life uint16, tlvs ...packet.TLV) (*packet.LSP, []byte) {
	p := &packet.LSP{Header: packet.Header{Type: packet.TypeL2LSP}, Lifetime: life, ID: id, Seq: seq, Flags: 3, TLVs: tlvs}
	var b []byte
	if life == 0 {
		b = p.AppendToKeepChecksum(nil)
	} else {
		b = p.AppendTo(nil)
	}
	d, _ := packet.Decode(b)
	return d.(*packet.LSP), b
}

// TestSeqWrapPurgesAndWaits: ISO 10589 §7.3.16.1. A copy of our own LSP
// at 0xFFFFFFFF comes back. The old code re-originated at 0xFFFFFFFF+1,
// i.e. 1 (install turned 0 into 1); the network's copy at 0xFFFFFFFF then
// outbid it again, for ever (154,192 originations in 2 s in the review).
// Now the LSP is purged at 0xFFFFFFFF and not originated again before
// MaxAge + ZeroAgeLifetime; then it starts again at 1.
func TestSeqWrapPurgesAndWaits(t *testing.T) {
	t.Run("purge and wait", func(t *testing.T) {
		in, lv := offlineInstance(t, 1)
		c := upP2P(in, sysN(2))
		t0 := time.Now()
		in.originate(lv, t0)
		id := packet.MakeLSPID(in.sysID, 0, 0)
		if e := lv.db[id]; e == nil || e.lsp.Seq != 1 {
			t.Fatalf("first origination: %+v", e)
		}
		back, raw := lspBytes(id, math.MaxUint32, 1100, &packet.Hostname{Name: "old"})
		in.rxLSP(c, back, raw, [6]byte{})
		orig := lv.originated
		e := lv.db[id]
		if e.lsp.Seq != math.MaxUint32 || e.purged.IsZero() || e.lsp.Lifetime != 0 {
			t.Fatalf("after the copy at 0xFFFFFFFF: seq %#x purged %v lifetime %d; want a purge at 0xffffffff", e.lsp.Seq, !e.purged.IsZero(), e.lsp.Lifetime)
		}
		if _, ok := c.srm[1][id]; !ok {
			t.Error("purge not flooded")
		}
		// The network keeps returning the copy, the LSP content changes,
		// time passes: nothing is originated for that id during the wait.
		wait := maxAge + zeroAgeLifetime
		for _, dt := range []time.Duration{time.Second, 2 * zeroAgeLifetime, wait - time.Second} {
			now := t0.Add(dt)
			in.rxLSP(c, back, raw, [6]byte{})
			in.ageLevel(lv, now)
			in.originate(lv, now)
			if e := lv.db[id]; e != nil && (e.purged.IsZero() || e.lsp.Seq != math.MaxUint32) {
				t.Fatalf("at +%v: %s seq %#x live %v", dt, id, e.lsp.Seq, e.purged.IsZero())
			}
		}
		if lv.originated != orig {
			t.Errorf("%d originations during the wait", lv.originated-orig)
		}
		// After MaxAge + ZeroAgeLifetime it restarts at 1.
		now := t0.Add(wait + time.Second)
		in.ageLevel(lv, now)
		if !lv.regen {
			t.Fatal("no origination scheduled at the end of the wait")
		}
		in.originate(lv, now)
		if e := lv.db[id]; e == nil || e.lsp.Seq != 1 || !e.purged.IsZero() {
			t.Fatalf("after the wait: %+v", e)
		}
		if lv.seqWraps != 1 || len(lv.seqWait) != 0 {
			t.Errorf("seqWraps %d, waiting %d", lv.seqWraps, len(lv.seqWait))
		}
	})
	t.Run("no origination loop", func(t *testing.T) {
		w := &wire{}
		r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}})
		r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
		igptest.Poll(t, 10*time.Second, "adjacency and sync", func() error {
			if err := neighborsUp(r1, 1); err != nil {
				return err
			}
			if d, _ := dbDigest(r1); strings.Count(d, "/") != 4 {
				return fmt.Errorf("r1 holds %s", d)
			}
			return sameDB(r1, r2)()
		})
		ctx := context.Background()
		before := originated(t, r1)
		// Both r1 and r2 receive r1's LSP at 0xFFFFFFFF: r2 stores it and
		// floods it back to r1 whenever r1 has anything lower.
		id := packet.MakeLSPID(r1.in.sysID, 0, 0)
		_, raw := lspBytes(id, math.MaxUint32, 1200, &packet.AreaAddresses{Areas: [][]byte{{0x49, 0, 1}}})
		w.port([6]byte{0x02, 0xee, 0, 0, 0, 1}).Send(MACAllISs, raw)
		igptest.Poll(t, 10*time.Second, "r1's LSP purged at 0xFFFFFFFF on both", func() error {
			for _, r := range []*memNode{r1, r2} {
				v, err := r.in.Database(ctx, DatabaseQuery{LSPID: id.String()})
				if err != nil {
					return err
				}
				if len(v) != 1 || v[0].Seq != math.MaxUint32 || v[0].Lifetime != 0 {
					ifs, _ := r.in.Interfaces(ctx)
					return fmt.Errorf("%s holds %+v %v", r.in.cfg.Hostname, v, ifs[0].Counters)
				}
			}
			return nil
		})
		// A quiet period, not a wait for convergence: the old code
		// re-originated tens of thousands of times in these 2 s.
		time.Sleep(2 * time.Second)
		if n := originated(t, r1) - before; n > 4 {
			t.Fatalf("%d originations after the copy at 0xFFFFFFFF", n)
		}
		v, _ := r1.in.Database(ctx, DatabaseQuery{LSPID: id.String()})
		if len(v) != 1 || v[0].Seq != math.MaxUint32 || v[0].Lifetime != 0 {
			t.Fatalf("r1 re-originated during the wait: %+v", v)
		}
	})
}

func originated(t *testing.T, m *memNode) uint64 {
	t.Helper()
	v, err := m.in.Levels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v[0].Originated
}

// TestPurgeCarriesPOI: RFC 6232 §3. Purges we generate carry TLV 13 with
// our system id (and our hostname, RFC 6233 allows it): of our own LSP and
// of another router's expired LSP. A purge received without TLV 13 is
// stored and flooded with one naming us and the neighbour it came from; one
// that has it is kept as it is.
func TestPurgeCarriesPOI(t *testing.T) {
	in, lv := offlineInstance(t, 1)
	c := upP2P(in, sysN(2))
	t0 := time.Now()
	poi := func(id packet.LSPID) (packet.PurgeOriginator, string, bool) {
		t.Helper()
		e := lv.db[id]
		if e == nil || e.remaining(t0.Add(2*time.Hour)) != 0 {
			t.Fatalf("%s: not a purge: %+v", id, e)
		}
		d, err := packet.Decode(e.raw) // what goes on the wire
		if err != nil {
			t.Fatal(err)
		}
		p := d.(*packet.LSP)
		h, _ := p.TLVs.Hostname()
		x, ok := p.TLVs.PurgeOriginator()
		return x, h, ok
	}
	// Our own fragment 1, no longer needed, is purged.
	own1 := packet.MakeLSPID(in.sysID, 0, 1)
	in.install(lv, own1, 5, packet.TLVs{&packet.Hostname{Name: "x"}}, t0)
	in.purgeEntry(lv, lv.db[own1], t0)
	if x, h, ok := poi(own1); !ok || x != (packet.PurgeOriginator{Generator: in.sysID}) || h != "r1" {
		t.Errorf("own purge: POI %+v %v, hostname %q", x, ok, h)
	}
	// Another router's LSP expires here.
	other := packet.MakeLSPID(sysN(3), 0, 0)
	p, raw := lspBytes(other, 9, 10, &packet.Hostname{Name: "r3"})
	in.rxLSP(c, p, raw, [6]byte{})
	in.ageLevel(lv, t0.Add(11*time.Second))
	if x, h, ok := poi(other); !ok || x != (packet.PurgeOriginator{Generator: in.sysID}) || h != "r1" {
		t.Errorf("expiry purge: POI %+v %v, hostname %q", x, ok, h)
	}
	// A purge from r2 without TLV 13, of an LSP we hold.
	r4 := packet.MakeLSPID(sysN(4), 0, 0)
	p, raw = lspBytes(r4, 3, 1000)
	in.rxLSP(c, p, raw, [6]byte{})
	p, raw = lspBytes(r4, 4, 0)
	in.rxLSP(c, p, raw, [6]byte{})
	if x, _, ok := poi(r4); !ok || x != (packet.PurgeOriginator{Generator: in.sysID, HasSender: true, Sender: sysN(2)}) {
		t.Errorf("received purge without POI: POI %+v %v, want ours with r2 as sender", x, ok)
	}
	// One that names its generator is stored byte for byte.
	r5 := packet.MakeLSPID(sysN(5), 0, 0)
	p, raw = lspBytes(r5, 3, 1000)
	in.rxLSP(c, p, raw, [6]byte{})
	p, raw = lspBytes(r5, 4, 0, &packet.PurgeOriginator{Generator: sysN(9)})
	in.rxLSP(c, p, raw, [6]byte{})
	if !bytes.Equal(lv.db[r5].raw, raw) {
		t.Errorf("purge with POI changed: %x, want %x", lv.db[r5].raw, raw)
	}
}

// TestLSPSizeFollowsInterfaceMTU: LSPs were cut to lsp-mtu (1492) only;
// on a link with MTU 600 a 1492-byte LSP cannot be sent (the kernel
// answers EMSGSIZE; the in-memory wire does the same) and the neighbour
// never learned r1's prefixes. Now LSPs are cut to min(lsp-mtu, smallest
// running interface MTU - 3), and every fragment crosses.
func TestLSPSizeFollowsInterfaceMTU(t *testing.T) {
	w := &wire{}
	var pfx strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&pfx, "    - {prefix: 10.%d.%d.0/24}\n", 100+i/256, i%256)
	}
	ifs := func(n int) []memIf {
		return []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix(fmt.Sprintf("10.254.0.%d/31", n-1)), mtu: 600}}
	}
	r1 := startMemCfg(t, 1, testConfig(t, 1, "2", ifs(1), "", pfx.String()), ifs(1), nil)
	r2 := startMemCfg(t, 2, testConfig(t, 2, "2", ifs(2)), ifs(2), nil)
	igptest.Poll(t, 15*time.Second, "r2 has all of r1's prefixes", func() error {
		g := r2.in.Graph(2)
		if g == nil {
			return fmt.Errorf("no graph")
		}
		n := 0
		for _, p := range g.Prefixes {
			if g.Nodes[p.Node].ID == "0000.0000.0001.00" {
				n++
			}
		}
		if n != 152 { // 150, the loopback and the link subnet
			return fmt.Errorf("r2 sees %d of r1's 152 prefixes", n)
		}
		return nil
	})
	v, err := r1.in.Database(context.Background(), DatabaseQuery{})
	if err != nil {
		t.Fatal(err)
	}
	frags := 0
	for _, l := range v {
		if strings.HasPrefix(l.LSPID, "0000.0000.0001.00-") && l.Lifetime > 0 {
			frags++
			if l.Length+len(llc) > 600 {
				t.Errorf("%s is %d bytes, over the 600-byte MTU", l.LSPID, l.Length)
			}
		}
	}
	if frags < 4 {
		t.Errorf("%d fragments; 150 prefixes need at least 4 of 597 bytes", frags)
	}
	if n := counter(t, r1, "tx_errors"); n != 0 {
		t.Errorf("tx_errors=%d", n)
	}
}

// TestJumboMTUStaysWithinLLC: on a 9000-byte MTU link, padded hellos of
// 8997 bytes carried an 802.3 length field above 1500 — an EtherType to
// the receiving kernel, which never hands such a frame to IS-IS's 802.2
// socket: adjacencies never came up on jumbo links. IS-IS PDUs now stay
// within 1500 bytes of LLC payload, hellos padded to 1497.
func TestJumboMTUStaysWithinLLC(t *testing.T) {
	w := &wire{}
	ifs := func(n int) []memIf {
		return []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix(fmt.Sprintf("10.254.0.%d/31", n-1)), mtu: 9000}}
	}
	r1 := startMemCfg(t, 1, testConfig(t, 1, "2", ifs(1)), ifs(1), nil)
	r2 := startMemCfg(t, 2, testConfig(t, 2, "2", ifs(2)), ifs(2), nil)
	igptest.Poll(t, 15*time.Second, "adjacency Up on a jumbo link", func() error {
		for _, r := range []*memNode{r1, r2} {
			ns, err := r.in.Neighbors(context.Background())
			if err != nil {
				return err
			}
			if len(ns) != 1 || ns[0].State != "Up" {
				return fmt.Errorf("neighbours %+v", ns)
			}
		}
		return nil
	})
	var max int
	if err := r1.in.Query(context.Background(), func() { max = r1.in.circuits[0].pduMax() }); err != nil || max != 1497 {
		t.Errorf("pduMax %d (%v) on MTU 9000, want 1497", max, err)
	}
}
