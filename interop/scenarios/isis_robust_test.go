package scenarios

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/isis/packet"
)

// TestISISLANSpoofedNeighborsWithFRR: 60 spoofed systems (distinct MACs,
// distinct system ids) send L2 LAN IIHs onto a bridge where fared and FRR
// 8.4.4 hold an adjacency. One IS Neighbours TLV holds 42 MACs, and the old
// encoder panicked on the 43rd neighbour: fared died. Now fared stays up,
// its hellos list all 61 neighbours over several TLV 6s (read off the
// bridge with a raw socket and decoded with isis/packet), and FRR's
// adjacency with fared stays Up. FRR only keeps a LAN adjacency Up while
// it finds its own MAC in our IIH (ISO 10589 three-way rule; 8.4.4's
// process_lan_hello re-checks every IIH), and the spoofed MACs are chosen
// to sort before FRR's, so FRR's MAC is in our second TLV 6: FRR parses
// several.
func TestISISLANSpoofedNeighborsWithFRR(t *testing.T) {
	const topo = `name: lanspoof
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, level: 2}
  r1: {kind: frr, te: false, level: 2}
links:
  - {lan: seg1, nodes: [f1, r1], bandwidth: 10G}
`
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 40*time.Second, "fared–FRR adjacency Up", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))

	var ifs []isis.InterfaceView
	if err := l.FarectlJSON(ctx, "f1", &ifs, "isis", "interfaces"); err != nil {
		t.Fatal(err)
	}
	faredMAC, err := net.ParseMAC(ifs[0].MAC)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Exec(ctx, "r1", "cat", "/sys/class/net/"+l.Node("r1").Interfaces[0].Name+"/address")
	if err != nil {
		t.Fatal(err)
	}
	frrMAC, err := net.ParseMAC(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	spoofed := make([][6]byte, n)
	for i := range spoofed {
		// Locally administered, and below any random veth MAC but one in
		// 16384 (which the check below reports rather than misreads).
		spoofed[i] = [6]byte{0x02, 0x00, 0x00, 0x5f, 0x00, byte(i + 1)}
	}
	if bytes.Compare(frrMAC, spoofed[n-1][:]) <= 0 {
		t.Fatalf("FRR's MAC %s sorts among the spoofed ones; the TLV 6 position check needs it above 02:00:00:5f:00:3c", frrMAC)
	}

	lan := l.Links[0]
	sock, err := interop.OpenPacketSocket(lan.Netns, lan.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	area, err := packet.ParseArea(l.Node("f1").Area)
	if err != nil {
		t.Fatal(err)
	}
	frames := make([][]byte, n)
	for i := range frames {
		sys := packet.SystemID{0x00, 0x00, 0x00, 0x5f, 0x00, byte(i + 1)}
		h := &packet.LANHello{Header: packet.Header{Type: packet.TypeL2LANHello}, CircuitType: packet.CircuitL2, SourceID: sys,
			HoldTime: 10, Priority: 0, LANID: packet.MakeNodeID(sys, 1),
			TLVs: packet.TLVs{&packet.AreaAddresses{Areas: [][]byte{area}}, &packet.ProtocolsSupported{NLPIDs: []uint8{packet.NLPIDIPv4}}}}
		frames[i] = llcFrame(isis.MACAllL2ISs, spoofed[i], h.AppendTo(nil))
	}
	// The flood: one round of 60 hellos a second, at most 45 rounds
	// (2,700 frames), stopped early when the test ends.
	floodCtx, stopFlood := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var sent atomic.Int64
	var sendErr atomic.Pointer[error]
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for round := 0; round < 45; round++ {
			for _, f := range frames {
				if err := sock.Send(f); err != nil {
					sendErr.Store(&err)
					return
				}
				sent.Add(1)
			}
			select {
			case <-floodCtx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	t.Cleanup(func() { stopFlood(); wg.Wait() })

	// fared's hellos, as they cross the bridge.
	buf := make([]byte, 9216)
	var multi int // consecutive fared hellos with FRR's MAC outside the first TLV 6
	var last *packet.LANHello
	poll(t, ctx, 40*time.Second, "fared hellos list the 60 spoofed systems and FRR over several TLV 6s", func() error {
		deadline := time.Now().Add(2 * time.Second)
		for {
			if d, err := l.Daemons("f1"); err != nil || d["fared"] == 0 {
				return interop.Permanent(fmt.Errorf("fared died under the spoofed hellos; see %s", l.FaredLog("f1")))
			}
			m, err := sock.Recv(buf, deadline)
			if err != nil {
				if e := sendErr.Load(); e != nil {
					return interop.Permanent(fmt.Errorf("spoofing: %v", *e))
				}
				if multi > 0 {
					return fmt.Errorf("%d good hellos so far; last TLV 6s %v", multi, tlv6Sizes(last))
				}
				return fmt.Errorf("no fared hello with all neighbours yet (%v); last TLV 6s %v", err, tlv6Sizes(last))
			}
			h := faredHello(buf[:m], faredMAC)
			if h == nil {
				continue
			}
			last = h
			var groups [][][6]byte
			union := map[[6]byte]bool{}
			for _, tl := range h.TLVs {
				if x, ok := tl.(*packet.ISNeighbors); ok {
					groups = append(groups, x.SNPAs)
					for _, s := range x.SNPAs {
						union[s] = true
					}
				}
			}
			ok := len(groups) >= 2 && union[[6]byte(frrMAC)] && !slices.Contains(groups[0], [6]byte(frrMAC))
			for _, s := range spoofed {
				ok = ok && union[s]
			}
			if !ok {
				multi = 0
				continue
			}
			// Three in a row: FRR has had time to process at least two.
			if multi++; multi >= 3 {
				return nil
			}
		}
	})
	t.Logf("fared hello: %d bytes, TLV 6 sizes %v, after %d spoofed frames", last.TLVs.Len()+packet.LANHelloHeaderLen, tlv6Sizes(last), sent.Load())

	// fared is alive and answers; FRR keeps its adjacency with fared Up.
	d, err := l.Daemons("f1")
	if err != nil || d["fared"] == 0 {
		t.Fatalf("fared is not running (%v %v); log:\n%s", d, err, l.FaredLog("f1"))
	}
	var nbrs []isis.NeighborView
	if err := l.FarectlJSON(ctx, "f1", &nbrs, "isis", "neighbors"); err != nil {
		t.Fatalf("fared's API does not answer: %v", err)
	}
	if len(nbrs) < n+1 {
		t.Errorf("fared knows %d neighbours, want %d", len(nbrs), n+1)
	}
	adjs, err := l.ISISNeighbors(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	snpa := fmt.Sprintf("%02x%02x.%02x%02x.%02x%02x", faredMAC[0], faredMAC[1], faredMAC[2], faredMAC[3], faredMAC[4], faredMAC[5])
	if !slices.ContainsFunc(adjs, func(a interop.ISISAdj) bool { return a.SNPA == snpa && a.State == "Up" }) {
		t.Fatalf("FRR's adjacency with fared (%s) is not Up while fared lists FRR in its second TLV 6: %+v", snpa, adjs)
	}
	fup, err := faredUp(ctx, l, "f1")
	if err != nil || len(fup) != 1 || !strings.HasPrefix(fup[0], "r1@") {
		t.Fatalf("fared's Up adjacencies: %v %v", fup, err)
	}
	var cnt []isis.InterfaceView
	if err := l.FarectlJSON(ctx, "f1", &cnt, "isis", "interfaces"); err != nil {
		t.Fatal(err)
	}
	if p := cnt[0].Counters["rx_panics"]; p != 0 {
		t.Errorf("rx_panics=%d", p)
	}
	stopFlood()
	wg.Wait()
	t.Logf("FIGURE lan spoof: %d spoofed LAN IIHs sent, fared alive, FRR adjacency Up", sent.Load())
}

// llcFrame wraps an IS-IS PDU in 802.3 + LLC (FE FE 03), padded to 60 bytes.
func llcFrame(dst, src [6]byte, pdu []byte) []byte {
	f := make([]byte, 0, max(17+len(pdu), 60))
	f = append(f, dst[:]...)
	f = append(f, src[:]...)
	f = binary.BigEndian.AppendUint16(f, uint16(3+len(pdu)))
	f = append(f, 0xfe, 0xfe, 0x03)
	f = append(f, pdu...)
	for len(f) < 60 {
		f = append(f, 0)
	}
	return f
}

// faredHello decodes an L2 LAN IIH sent by src, or returns nil.
func faredHello(f []byte, src net.HardwareAddr) *packet.LANHello {
	if len(f) < 17 || !bytes.Equal(f[6:12], src) || !bytes.Equal(f[:6], isis.MACAllL2ISs[:]) || f[14] != 0xfe || f[15] != 0xfe {
		return nil
	}
	n := int(binary.BigEndian.Uint16(f[12:14]))
	if n < 3 || 14+n > len(f) {
		return nil
	}
	p, err := packet.Decode(f[17 : 14+n])
	if err != nil {
		return nil
	}
	h, _ := p.(*packet.LANHello)
	return h
}

func tlv6Sizes(h *packet.LANHello) []int {
	if h == nil {
		return nil
	}
	var s []int
	for _, tl := range h.TLVs {
		if x, ok := tl.(*packet.ISNeighbors); ok {
			s = append(s, len(x.SNPAs))
		}
	}
	return s
}

// TestISISPurgeOriginatorWithFRR: RFC 6232 TLV 13 both ways. fared
// stops needing its LSP fragment 1 (prefixes removed by a reload) and
// purges it with a Purge Originator Identification TLV naming itself: FRR
// decodes it. FRR, DIS of the LAN with `purge-originator`, resigns and
// purges its pseudonode LSP with TLV 13: fared decodes it and keeps it as
// FRR sent it (a purge that already names its originator gets no second
// one). (A purge of fared's own pseudonode would not do for the first
// half: FRR, on becoming DIS, purges the old DIS's pseudonode itself, and
// whichever equal purge arrives first stays.)
func TestISISPurgeOriginatorWithFRR(t *testing.T) {
	var pfx []string
	for i := range 120 {
		pfx = append(pfx, fmt.Sprintf("10.100.%d.0/24", i))
	}
	topo := fmt.Sprintf(`name: poi
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, level: 2, prefixes: [%s]}
  r1: {kind: frr, te: false, level: 2, priority: 100}
links:
  - {lan: seg1, nodes: [f1, r1], bandwidth: 10G}
`, strings.Join(pfx, ", "))
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 40*time.Second, "adjacency Up", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	// 120 prefixes with their Path Bandwidth sub-TLVs need two fragments.
	poll(t, ctx, 30*time.Second, "fared's fragment 1 at FRR", func() error {
		db, err := frrDB(ctx, l, "r1")
		if err != nil {
			return err
		}
		if db["f1.00-01"].Lifetime == 0 {
			return fmt.Errorf("f1.00-01 not live at r1: %v", db)
		}
		return nil
	})
	keepPrefixes(t, l, "f1", 5)
	if err := l.KillNode(ctx, "f1", syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// FRR prints TLV 13 of the stored purge as "Generator: <system id>".
	var out string
	poll(t, ctx, 30*time.Second, "FRR shows fared's purge of f1.00-01 with its POI", func() error {
		var err error
		out, err = l.Vtysh(ctx, "r1", "show isis database detail f1.00-01")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "Purge Originator Identification") || !strings.Contains(out, "Generator: "+sysID(l, "f1")) {
			return fmt.Errorf("no POI naming f1 in:\n%s", out)
		}
		return nil
	})
	t.Logf("FRR's view of fared's purge:\n%s", out)

	pseudo := pseudoOf(t, ctx, l, "r1")
	ifname := l.Node("r1").Interfaces[0].Name
	if _, err := l.Vtysh(ctx, "r1", "configure terminal", "router isis fabric", "purge-originator", "exit",
		"interface "+ifname, "isis priority 0"); err != nil {
		t.Fatal(err)
	}
	var raw string
	poll(t, ctx, 30*time.Second, "fared holds FRR's purge of "+pseudo+" with FRR's POI", func() error {
		var v []isis.LSPView
		if err := l.FarectlJSON(ctx, "f1", &v, "isis", "database", pseudo, "--detail"); err != nil {
			return err
		}
		if len(v) != 1 || v[0].Lifetime != 0 {
			return fmt.Errorf("%s: %+v", pseudo, v)
		}
		for _, tl := range v[0].TLVs {
			if tl["name"] == "purge_originator" {
				if tl["generator"] != sysID(l, "r1") || tl["received_from"] != nil {
					return interop.Permanent(fmt.Errorf("POI %v, want generator %s only", tl, sysID(l, "r1")))
				}
				raw = v[0].Raw
				return nil
			}
		}
		return fmt.Errorf("no TLV 13 in %+v", v[0].TLVs)
	})
	t.Logf("FRR's purge with POI as fared stores it: %s", raw)
}

// keepPrefixes cuts the prefix list of a fared node's config to its first
// n entries (the reload itself is the caller's SIGHUP).
func keepPrefixes(t *testing.T, l *interop.Lab, node string, n int) {
	t.Helper()
	rewriteFared(t, l, node, fmt.Sprintf("prefix list longer than %d", n), func(m *yaml.Node) bool {
		ps := yget(m, "prefixes")
		if ps == nil || ps.Kind != yaml.SequenceNode || len(ps.Content) <= n {
			return false
		}
		ps.Content = ps.Content[:n]
		return true
	})
}
