package isis

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/spf"
)

func sysN(n byte) packet.SystemID { return packet.SystemID{0, 0, 0, 0, 0, n} }

// putLSP stores fragment 0 of sys's LSP, as received, in level lv.
func putLSP(t *testing.T, lv *level, sys packet.SystemID, now time.Time, tlvs ...packet.TLV) {
	t.Helper()
	p := &packet.LSP{Header: packet.Header{Type: lspType(lv.n)}, Lifetime: 1200, ID: packet.MakeLSPID(sys, 0, 0), Seq: 1, Flags: 3, TLVs: tlvs}
	raw := p.AppendTo(nil)
	d, err := packet.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	lv.db[p.ID] = &lspEntry{raw: raw, lsp: d.(*packet.LSP), rcvd: now, expires: now.Add(1200 * time.Second), received: true}
}

func isLink(to packet.SystemID, metric uint32) packet.TLV {
	return &packet.ExtISReach{Neighbors: []packet.ExtISNeighbor{{ID: packet.MakeNodeID(to, 0), Metric: metric}}}
}

func ipReach(p string, metric uint32) packet.TLV {
	return &packet.ExtIPReach{Prefixes: []packet.ExtIPPrefix{{Metric: metric, Prefix: netip.MustParsePrefix(p)}}}
}

// offlineInstance is an instance that is never run: its databases are
// filled by hand and its functions called directly, with explicit times.
func offlineInstance(t *testing.T, n int) (*Instance, *level) {
	t.Helper()
	in, err := New(testConfig(t, n, "2", []memIf{{name: "e0", typ: "p2p"}}), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return in, in.levels[1]
}

func routesOf(in *Instance, lv *level, now time.Time) map[netip.Prefix]uint64 {
	out := map[netip.Prefix]uint64{}
	for _, r := range spf.Routes(spf.Run(in.buildGraph(lv, now))) {
		out[r.Prefix] = r.Metric
	}
	return out
}

// TestMaxMetricLinkNotUsed: RFC 5305 §3 — a link advertised at the
// maximum metric 2^24-1 "MUST NOT be considered during the normal SPF
// computation". r1—r2 at 0xFFFFFF is r1's only way to r2, so r2's prefix
// has no route; r1—r3 at 0xFFFFFE (the largest usable metric) is used.
func TestMaxMetricLinkNotUsed(t *testing.T) {
	in, lv := offlineInstance(t, 1)
	now := time.Now()
	r1, r2, r3 := sysN(1), sysN(2), sysN(3)
	putLSP(t, lv, r1, now, isLink(r2, 0xFFFFFF), isLink(r3, 0xFFFFFE))
	putLSP(t, lv, r2, now, isLink(r1, 0xFFFFFF), ipReach("10.2.0.0/24", 0))
	putLSP(t, lv, r3, now, isLink(r1, 0xFFFFFE), ipReach("10.3.0.0/24", 0))
	g := in.buildGraph(lv, now)
	if n := g.Lookup(packet.MakeNodeID(r1, 0).String()); len(g.LinksOf(n)) != 1 || g.LinksOf(n)[0].Metric != 0xFFFFFE {
		t.Errorf("r1's links in the graph: %+v, want only the one to r3", g.LinksOf(n))
	}
	rs := routesOf(in, lv, now)
	if m, ok := rs[netip.MustParsePrefix("10.2.0.0/24")]; ok {
		t.Errorf("route to 10.2.0.0/24 through the max-metric link, metric %#x", m)
	}
	if m := rs[netip.MustParsePrefix("10.3.0.0/24")]; m != 0xFFFFFE {
		t.Errorf("route to 10.3.0.0/24: metric %#x, want 0xfffffe", m)
	}
}

// TestMaxMetricPrefixNotInstalled: RFC 5305 §4 (TLV 135) and RFC 5308 §2
// (TLV 236) — a prefix with a metric above MAX_PATH_METRIC 0xFE000000
// "MUST NOT be considered during the normal SPF computation": it is not in
// the graph. One at exactly 0xFE000000 is in the graph, but reached over a
// link of metric 10 its path costs more than MAX_PATH_METRIC, and like
// FRR's SPF (which drops such vertices) fared installs no route for it;
// 0xFE000000 - 10 is the largest prefix metric that still routes here.
func TestMaxMetricPrefixNotInstalled(t *testing.T) {
	in, lv := offlineInstance(t, 1)
	now := time.Now()
	r1, r2 := sysN(1), sysN(2)
	putLSP(t, lv, r1, now, isLink(r2, 10))
	putLSP(t, lv, r2, now, isLink(r1, 10),
		ipReach("10.8.0.0/24", 0xFE000000-10), ipReach("10.9.0.0/24", 0xFE000001), ipReach("10.10.0.0/24", 0xFFFFFFFF),
		ipReach("10.11.0.0/24", 0xFE000000),
		&packet.IPv6Reach{Prefixes: []packet.IPv6Prefix{
			{Metric: 0xFE000000, Prefix: netip.MustParsePrefix("2001:db8:8::/64")},
			{Metric: 0xFE000001, Prefix: netip.MustParsePrefix("2001:db8:9::/64")},
		}})
	rs := routesOf(in, lv, now)
	g := in.buildGraph(lv, now)
	inGraph := map[string]bool{}
	for _, p := range g.Prefixes {
		inGraph[p.Prefix.String()] = true
	}
	for p, want := range map[string]bool{"10.8.0.0/24": true, "10.9.0.0/24": false, "10.10.0.0/24": false, "10.11.0.0/24": true,
		"2001:db8:8::/64": true, "2001:db8:9::/64": false} {
		if inGraph[p] != want {
			t.Errorf("%s: in the graph %v, want %v", p, inGraph[p], want)
		}
	}
	for p, want := range map[string]bool{"10.8.0.0/24": true, "10.9.0.0/24": false, "10.10.0.0/24": false, "10.11.0.0/24": false,
		"2001:db8:8::/64": false, "2001:db8:9::/64": false} {
		if _, ok := rs[netip.MustParsePrefix(p)]; ok != want {
			t.Errorf("%s: installed %v, want %v", p, ok, want)
		}
	}
	if m := rs[netip.MustParsePrefix("10.8.0.0/24")]; m != 0xFE000000 {
		t.Errorf("10.8.0.0/24 metric %#x", m)
	}
}

// The same database gives the same graph, node for node: only then does
// the rib see "same topology" after a bandwidth change and skip Dijkstra
// (route-only recompute). Go's map order differs between iterations, so
// 30 LSPs built 20 times catch an order taken from the map.
func TestGraphOrderStable(t *testing.T) {
	in, lv := offlineInstance(t, 2)
	now := time.Now()
	const n = 30
	for i := 1; i <= n; i++ {
		var tlvs []packet.TLV
		for j := 1; j <= n; j++ {
			if j != i {
				tlvs = append(tlvs, isLink(sysN(byte(j)), 10))
			}
		}
		tlvs = append(tlvs, ipReach(fmt.Sprintf("10.%d.0.0/24", i), 0))
		putLSP(t, lv, sysN(byte(i)), now, tlvs...)
	}
	first := in.buildGraph(lv, now)
	for k := 0; k < 20; k++ {
		if g := in.buildGraph(lv, now); !spf.SameTopology(first, g) {
			t.Fatalf("build %d: the same database gave another node/link order", k)
		}
	}
}
