package ospf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

// kif is an interface of the in-memory "kernel" of a live-reload test.
type kif struct {
	w     *wire // nil: no link (a passive lo)
	addrs []netip.Prefix
	speed func() float64 // bits/s; nil: unknown
}

type liveNode struct{ *memNode }

// liveYAML renders router n's config with router id rid (default
// 10.255.0.n); body goes under ospf:.
func liveYAML(n int, rid, body string) string {
	if rid == "" {
		rid = fmt.Sprintf("10.255.0.%d", n)
	}
	return fmt.Sprintf("hostname: r%d\nrouter-id: %s\nospf:\n  lsa-gen-interval: 50ms\n  min-ls-arrival: 0s\n  retransmit-interval: 1s\n%s", n, rid, body)
}

func oif(name, typ, area, extra string) string {
	return fmt.Sprintf("    - {name: %s, type: %s, area: %s, hello-interval: 1s, dead-interval: 3s, bandwidth: 10G%s}\n", name, typ, area, extra)
}

func startLive(t testing.TB, y string, kernel map[string]kif) *liveNode {
	t.Helper()
	return startLiveLog(t, y, kernel, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func startLiveLog(t testing.TB, y string, kernel map[string]kif, log *slog.Logger) *liveNode {
	t.Helper()
	return startLiveOpts(t, y, kernel, Options{Logger: log})
}

// startLiveOpts starts an instance with opts, its interfaces and ports
// from kernel.
func startLiveOpts(t testing.TB, y string, kernel map[string]kif, opts Options) *liveNode {
	t.Helper()
	in, err := New(parse(t, y), Options{
		Logger:  opts.Logger,
		OnGraph: opts.OnGraph,
		Now:     opts.Now,
		Interfaces: func(name string) (*IfaceInfo, error) {
			k, ok := kernel[name]
			if !ok {
				return nil, errors.New("no such interface")
			}
			info := &IfaceInfo{Iface: net.Interface{Index: 10 + len(name), MTU: 1500, Name: name}, Running: true, Addrs: k.addrs}
			if k.speed != nil {
				info.SpeedBps = k.speed()
			}
			return info, nil
		},
		OpenPort: func(ifi *net.Interface, addr netip.Addr) (Port, error) {
			k := kernel[ifi.Name]
			if k.w == nil {
				return nil, errors.New("no link")
			}
			return k.w.port(addr), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &memNode{in: in, stop: igptest.Go(t, in.Run)}
	return &liveNode{m}
}

func (l *liveNode) reload(t testing.TB, y string) Report {
	t.Helper()
	return igptest.Reload(t, l.in, parse(t, y))
}

// nbrs lists m's neighbours as "rid=state@iface/area".
func nbrs(m *memNode) []string {
	ns, _ := m.in.Neighbors(context.Background())
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s=%s@%s/%s", n.RouterID, n.State, n.Interface, n.Area))
	}
	return out
}

func wantNbrs(m *memNode, want ...string) func() error {
	return func() error {
		if got := nbrs(m); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("neighbours %v, want %v", got, want)
		}
		return nil
	}
}

func noFlaps(t *testing.T, m *memNode) {
	t.Helper()
	ns, _ := m.in.Neighbors(context.Background())
	for _, n := range ns {
		if n.Flaps != 0 {
			t.Fatalf("neighbour %s on %s flapped %d times", n.RouterID, n.Interface, n.Flaps)
		}
	}
}

func p2(a string) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(a)} }

// TestReloadAddRemoveInterface: a new interface comes up and reaches Full;
// a removed one sends a last hello without neighbours, so the neighbour
// drops the adjacency at once (1-WayReceived: Init), long before its
// 40-second dead interval could.
func TestReloadAddRemoveInterface(t *testing.T) {
	w12, w13 := &wire{}, &wire{}
	slow := func(name string) string {
		return fmt.Sprintf("    - {name: %s, type: p2p, area: 0, hello-interval: 1s, dead-interval: 40s, bandwidth: 10G}\n", name)
	}
	k1 := map[string]kif{"e0": {w: w12, addrs: p2("10.254.0.0/31")}, "e1": {w: w13, addrs: p2("10.254.0.2/31")}}
	one := "  interfaces:\n" + slow("e0")
	r1 := startLive(t, liveYAML(1, "", one), k1)
	r2 := startLive(t, liveYAML(2, "", "  interfaces:\n"+slow("e0")), map[string]kif{"e0": {w: w12, addrs: p2("10.254.0.1/31")}})
	r3 := startLive(t, liveYAML(3, "", "  interfaces:\n"+slow("e0")), map[string]kif{"e0": {w: w13, addrs: p2("10.254.0.3/31")}})
	igptest.Poll(t, 10*time.Second, "r1 Full with r2", fullCount(r1.memNode, 1))
	rep := r1.reload(t, liveYAML(1, "", one+slow("e1")))
	if err := igptest.HasLine(rep, "interface e1: added (area 0.0.0.0)"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "r1 Full with both", fullCount(r1.memNode, 2))
	igptest.Poll(t, 10*time.Second, "r3 Full with r1", wantNbrs(r3.memNode, "10.255.0.1=Full@e0/0.0.0.0"))
	noFlaps(t, r2.memNode)

	rep = r1.reload(t, liveYAML(1, "", one))
	if err := igptest.HasLine(rep, "interface e1: removed (final hello without neighbours sent"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 5*time.Second, "r3 drops r1 on the goodbye hello", wantNbrs(r3.memNode, "10.255.0.1=Init@e0/0.0.0.0"))
	igptest.Poll(t, 10*time.Second, "r2 no longer sees r1 linked to r3", func() error {
		g := r2.in.Graph("0.0.0.0")
		if g == nil {
			return errors.New("no graph")
		}
		for _, l := range g.LinksOf(g.Lookup("10.255.0.1")) {
			if g.Nodes[l.To].ID == "10.255.0.3" {
				return errors.New("r1 still linked to r3")
			}
		}
		return nil
	})
	noFlaps(t, r2.memNode)
}

// TestReloadHelloBothSides: hello and dead intervals changed on both
// ends within the old dead interval keep the adjacency: nothing flaps.
func TestReloadHelloBothSides(t *testing.T) {
	w := &wire{}
	long := func(h, d string) string {
		return "  interfaces:\n    - {name: e0, type: p2p, area: 0, hello-interval: " + h + ", dead-interval: " + d + ", bandwidth: 10G}\n"
	}
	r1 := startLive(t, liveYAML(1, "", long("1s", "10s")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.0/31")}})
	r2 := startLive(t, liveYAML(2, "", long("1s", "10s")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r1.memNode, 1))
	rep := r1.reload(t, liveYAML(1, "", long("2s", "12s")))
	if err := igptest.HasLine(rep, "interface e0: hello-interval 1s -> 2s (applied at the next hello"); err != nil {
		t.Fatal(err)
	}
	if err := igptest.HasLine(rep, "interface e0: dead-interval 10s -> 12s"); err != nil {
		t.Fatal(err)
	}
	r2.reload(t, liveYAML(2, "", long("2s", "12s")))
	igptest.Poll(t, 10*time.Second, "r2 hears r1's new intervals", func() error {
		ns, _ := r1.in.Neighbors(context.Background())
		if len(ns) != 1 || ns[0].DeadIn <= 10 {
			return fmt.Errorf("neighbours %+v", ns)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // a few of the new hellos
	if err := fullCount(r1.memNode, 1)(); err != nil {
		t.Fatal(err)
	}
	noFlaps(t, r1.memNode)
	noFlaps(t, r2.memNode)
}

// TestReloadAreaMove: moving the link (and the prefixes) from area 0 to
// area 1 on both ends restarts that interface in the new area; the old
// area is left and its graph retired.
func TestReloadAreaMove(t *testing.T) {
	w := &wire{}
	body := func(n int, area string) string {
		return "  interfaces:\n" + oif("e0", "p2p", area, "") + fmt.Sprintf("  prefixes:\n    - {prefix: 10.255.0.%d/32, area: %s}\n", n, area)
	}
	r1 := startLive(t, liveYAML(1, "", body(1, "0")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.0/31")}})
	r2 := startLive(t, liveYAML(2, "", body(2, "0")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "Full in area 0", wantNbrs(r1.memNode, "10.255.0.2=Full@e0/0.0.0.0"))
	rep := r1.reload(t, liveYAML(1, "", body(1, "1")))
	if err := igptest.HasLine(rep, "interface e0: area 0.0.0.0 -> 0.0.0.1 (interface restarted)"); err != nil {
		t.Fatal(err)
	}
	if err := igptest.HasLine(rep, "area 0.0.0.0: left"); err != nil {
		t.Fatal(err)
	}
	r2.reload(t, liveYAML(2, "", body(2, "1")))
	igptest.Poll(t, 15*time.Second, "Full in area 1", wantNbrs(r1.memNode, "10.255.0.2=Full@e0/0.0.0.1"))
	igptest.Poll(t, 10*time.Second, "r1 routes to r2's loopback in area 1", func() error {
		if r1.in.Graph("0.0.0.0") != nil {
			return errors.New("area 0 graph still there")
		}
		g := r1.in.Graph("0.0.0.1")
		if g == nil {
			return errors.New("no area 1 graph")
		}
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "10.255.0.2/32" {
				return nil
			}
		}
		return fmt.Errorf("prefixes %+v", g.Prefixes)
	})
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1.memNode, r2.memNode))
}

// liveLSAs lists the live LSAs a node holds by advertising router.
func liveLSAs(m *memNode) map[string]int {
	v, _ := m.in.Database(context.Background(), DatabaseQuery{})
	out := map[string]int{}
	for _, e := range v {
		if e.Age < MaxAge {
			out[e.AdvRouter]++
		}
	}
	return out
}

// TestReloadRouterID: a new router id flushes our LSAs and re-forms the
// adjacency under the new id; afterwards the neighbour holds our LSAs
// once, under the new id only. The second half loses every packet of the
// change (the flush and the goodbye): the old LSAs come back in the next
// database exchange and we flush them then (RFC 2328 §13.4).
func TestReloadRouterID(t *testing.T) {
	w := &wire{}
	body := "  interfaces:\n" + oif("e0", "p2p", "0", "") + "  prefixes:\n    - {prefix: 10.255.0.1/32}\n"
	r1 := startLive(t, liveYAML(1, "", body), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.0/31")}})
	r2 := startLive(t, liveYAML(2, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r2.memNode, 1))
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(9, r1.memNode, r2.memNode))
	before := liveLSAs(r2.memNode)["10.255.0.1"]
	rep := r1.reload(t, liveYAML(1, "10.255.0.11", body))
	if err := igptest.HasLine(rep, fmt.Sprintf("router-id 10.255.0.1 -> 10.255.0.11 (instance restarted: %d own LSAs flushed", before)); err != nil {
		t.Fatal(err)
	}
	// Router, TE router address, TE link, Extended Prefix of the loopback
	// and of the link subnet.
	const ours = 5
	onlyNew := func(old, nu string) func() error {
		return func() error {
			l := liveLSAs(r2.memNode)
			if l[old] != 0 || l[nu] != ours {
				return fmt.Errorf("r2 holds %d live LSAs of %s and %d of %s, want 0 and %d", l[old], old, l[nu], nu, ours)
			}
			return wantNbrs(r2.memNode, nu+"=Full@e0/0.0.0.0")()
		}
	}
	igptest.Poll(t, 15*time.Second, "r2: only the new id's LSAs, Full with it", onlyNew("10.255.0.1", "10.255.0.11"))
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1.memNode, r2.memNode))

	// Lose everything r1 sends while it changes id again.
	w.mu.Lock()
	w.drop = func(src netip.Addr, _ []byte) bool { return src == netip.MustParseAddr("10.254.0.0") }
	w.mu.Unlock()
	r1.reload(t, liveYAML(1, "10.255.0.12", body))
	time.Sleep(200 * time.Millisecond) // the flush and goodbye are gone
	w.mu.Lock()
	w.drop = nil
	w.mu.Unlock()
	igptest.Poll(t, 20*time.Second, "r2: the lost flush repaired, only 10.255.0.12's LSAs", onlyNew("10.255.0.11", "10.255.0.12"))
}

// TestReloadReportsEverySetting: each key of the ospf section and of an
// interface, changed on its own, is reported, and none is refused.
func TestReloadReportsEverySetting(t *testing.T) {
	w := &wire{}
	e := igptest.EverySetting{
		Head: "hostname: r1\nrouter-id: 10.255.0.1\nospf:\n",
		Keys: map[string][2]string{
			"router-id": {"10.255.0.1", "10.255.0.9"}, "path-bandwidth-subtlv": {"32770", "32771"},
			"lsa-refresh": {"1800s", "1700s"}, "lsa-gen-interval": {"50ms", "60ms"}, "min-ls-arrival": {"0s", "1s"},
			"retransmit-interval": {"1s", "2s"}, "ecmp-only": {"false", "true"},
			"bfd": {"{interval: 100ms, multiplier: 3}", "{interval: 200ms, multiplier: 4}"},
		},
		Iface: map[string][2]string{
			"area": {"0.0.0.0", "0.0.0.1"}, "type": {"broadcast", "p2p"}, "cost": {"10", "20"}, "bandwidth": {"10G", "20G"},
			"hello-interval": {"1s", "2s"}, "dead-interval": {"4s", "5s"}, "priority": {"1", "2"}, "passive": {"false", "true"},
			"authentication": {"{keys: [{id: 1, algorithm: md5, secret: a}]}", "{keys: [{id: 2, algorithm: md5, secret: b}]}"},
			"bfd":            {"{interval: 100ms, multiplier: 3}", "{interval: 200ms, multiplier: 4}"},
		},
		Tail: "  prefixes:\n    - {prefix: 10.255.0.1/32}\n",
		Fix: func(k, y string) string {
			if k == "area" { // the prefix follows its interface
				return strings.Replace(y, "{prefix: 10.255.0.1/32}", "{prefix: 10.255.0.1/32, area: 0.0.0.1}", 1)
			}
			return y
		},
		Section: Config{}, Interface: Interface{},
		Skip: []string{"Interfaces", "Prefixes", "SPF", "Name", "Line"},
	}
	r1 := startLive(t, e.Render(e.Base(), "", ""), map[string]kif{"e0": {w: w, addrs: p2("10.253.0.1/24")}})
	e.Reload = func(y string) Report { return r1.reload(t, y) }
	e.Run(t)
}

// TestBandwidthOverrideAcrossReloads: igptest.BandwidthOverrideAcrossReloads,
// as in IS-IS.
func TestBandwidthOverrideAcrossReloads(t *testing.T) {
	w := &wire{}
	y := func(bw string) string {
		return liveYAML(1, "", "  interfaces:\n    - {name: e0, type: p2p, area: 0, bandwidth: "+bw+"}\n")
	}
	log := &igptest.LogBuf{}
	r1 := startLiveLog(t, y("10G"), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.0/31")}}, slog.New(slog.NewTextHandler(log, nil)))
	igptest.BandwidthOverrideAcrossReloads(t, igptest.Overridable{
		YAML: y, Reload: func(y string) Report { return r1.reload(t, y) }, Set: r1.in.SetBandwidth, Log: log,
		BW: e0Bandwidth(r1.in),
	})
}

// TestClearNeighbor: clearing drops the neighbour; it comes back Full
// through a new exchange, and the other side saw it go (a flap).
func TestClearNeighbor(t *testing.T) {
	w := &wire{}
	r1 := startLive(t, liveYAML(1, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.0/31")}})
	r2 := startLive(t, liveYAML(2, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r2.memNode, 1))
	if _, err := r1.in.ClearNeighbors(context.Background(), "10.9.9.9"); !errors.As(err, new(ErrNotFound)) {
		t.Fatalf("unknown neighbour: %v", err)
	}
	if _, err := r1.in.ClearNeighbors(context.Background(), "x"); !errors.As(err, new(ErrBadQuery)) {
		t.Fatalf("bad router id: %v", err)
	}
	if n, err := r1.in.ClearNeighbors(context.Background(), "10.255.0.2"); err != nil || n != 1 {
		t.Fatalf("cleared %d, %v", n, err)
	}
	igptest.Poll(t, 10*time.Second, "r2 saw it go and came back", func() error {
		ns, _ := r2.in.Neighbors(context.Background())
		if len(ns) != 1 || ns[0].Flaps != 1 || ns[0].State != "Full" {
			return fmt.Errorf("neighbours %+v", ns)
		}
		return nil
	})
	igptest.Poll(t, 10*time.Second, "r1 Full again", fullCount(r1.memNode, 1))
}

// TestConfiguredPrefixWinsOverPassive is issue 17's case: 10.10.2.1/24 on
// a passive lo and a config entry for 10.10.2.0/24 with metric 5 and Path
// Bandwidth 100G. The Router LSA stub carries metric 5, the Extended
// Prefix LSA 100G (12.5e9 bytes/s), and lo's 127.0.0.1/8 is nowhere.
func TestConfiguredPrefixWinsOverPassive(t *testing.T) {
	w := &wire{}
	k1 := map[string]kif{
		"lo": {addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("10.10.2.1/24"), netip.MustParsePrefix("10.255.0.1/32")}},
		"e0": {w: w, addrs: p2("10.254.0.0/31")},
	}
	body := "  interfaces:\n    - {name: lo, area: 0, passive: true}\n" + oif("e0", "p2p", "0", "") +
		"  prefixes:\n    - {prefix: 10.10.2.0/24, metric: 5, path-bandwidth: 100G}\n"
	startLive(t, liveYAML(1, "", body), k1)
	r2 := startLive(t, liveYAML(2, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")), map[string]kif{"e0": {w: w, addrs: p2("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r2.memNode, 1))
	igptest.Poll(t, 10*time.Second, "r2's graph: 10.10.2.0/24 metric 5, PB 100G; no 127/8", func() error {
		g := r2.in.Graph("0.0.0.0")
		if g == nil {
			return errors.New("no graph")
		}
		found := false
		for _, p := range g.Prefixes {
			switch p.Prefix.String() {
			case "127.0.0.0/8":
				return errors.New("127.0.0.0/8 advertised")
			case "10.10.2.0/24":
				if p.Metric != 5 || !p.HasPathBW || p.PathBW != 12.5e9 {
					return fmt.Errorf("10.10.2.0/24: %+v", p)
				}
				found = true
			case "10.255.0.1/32":
				if p.Metric != 0 || p.PathBW != MaxPathBandwidth {
					return fmt.Errorf("loopback from passive lo: %+v", p)
				}
			}
		}
		if !found {
			return fmt.Errorf("10.10.2.0/24 missing: %+v", g.Prefixes)
		}
		return nil
	})
	db, _ := r2.in.Database(context.Background(), DatabaseQuery{Type: "router", Detail: true})
	for _, e := range db {
		if s := fmt.Sprint(e); strings.Contains(s, "127.0.0.0") {
			t.Fatalf("a Router LSA carries 127.0.0.0: %s", s)
		}
	}
}

// TestReloadLeftAreaWithdrawsRoutes: the rib gets an empty graph for an
// area we leave, so the routes learnt there go (here r3's loopback, only
// known in area 1), while area 0's stay.
func TestReloadLeftAreaWithdrawsRoutes(t *testing.T) {
	w12, w13 := &wire{}, &wire{}
	m := rib.New(rib.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Ready: func() bool { return true },
		Default: rib.Routing{Delay: spf.DelayConfig{InitialDelay: 10 * time.Millisecond, ShortDelay: 10 * time.Millisecond,
			LongDelay: 100 * time.Millisecond, TimeToLearn: 100 * time.Millisecond, Holddown: 200 * time.Millisecond}, Distance: 110}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	k1 := map[string]kif{"e0": {w: w12, addrs: p2("10.254.0.0/31")}, "e1": {w: w13, addrs: p2("10.254.0.2/31")}}
	both := "  interfaces:\n" + oif("e0", "p2p", "0", "") + oif("e1", "p2p", "1", "") + "  prefixes:\n    - {prefix: 10.255.0.1/32, area: 0}\n"
	r1 := startLiveOpts(t, liveYAML(1, "", both), k1, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnGraph: func(area string, g *lsdb.Graph) { m.Submit(g, "ospf area "+area) }})
	startLive(t, liveYAML(2, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")+"  prefixes:\n    - {prefix: 10.255.0.2/32}\n"),
		map[string]kif{"e0": {w: w12, addrs: p2("10.254.0.1/31")}})
	startLive(t, liveYAML(3, "", "  interfaces:\n"+oif("e0", "p2p", "1", "")+"  prefixes:\n    - {prefix: 10.255.0.3/32}\n"),
		map[string]kif{"e0": {w: w13, addrs: p2("10.254.0.3/31")}})
	has := func(p string) bool {
		for _, r := range m.Snapshot().Routes {
			if r.Prefix.String() == p {
				return true
			}
		}
		return false
	}
	igptest.Poll(t, 15*time.Second, "routes to r2 and r3", func() error {
		if !has("10.255.0.2/32") || !has("10.255.0.3/32") {
			return fmt.Errorf("routes %+v", m.Snapshot().Routes)
		}
		return nil
	})
	rep := r1.reload(t, liveYAML(1, "", "  interfaces:\n"+oif("e0", "p2p", "0", "")+"  prefixes:\n    - {prefix: 10.255.0.1/32, area: 0}\n"))
	if err := igptest.HasLine(rep, "area 0.0.0.1: left"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 15*time.Second, "r3's route withdrawn, r2's kept", func() error {
		if !has("10.255.0.2/32") || has("10.255.0.3/32") {
			return fmt.Errorf("routes %+v", m.Snapshot().Routes)
		}
		return nil
	})
}

// TestSpeedChangeByLinkEvent: igptest.SpeedChangeByLinkEvent, as in IS-IS.
func TestSpeedChangeByLinkEvent(t *testing.T) {
	igptest.SpeedChangeByLinkEvent(t, func(speed func() float64, now func() time.Time) (func(netif.Event), func() (float32, error)) {
		kernel := map[string]kif{"e0": {w: &wire{}, addrs: p2("10.254.0.0/31"), speed: speed}}
		r1 := startLiveOpts(t, liveYAML(1, "", "  interfaces:\n    - {name: e0, type: p2p, area: 0}\n"), kernel, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: now})
		return r1.in.LinkEvent, e0Bandwidth(r1.in)
	})
}

// e0Bandwidth reads the bandwidth in force on e0, bytes/s.
func e0Bandwidth(in *Instance) func() (float32, error) {
	return igptest.FirstBandwidth(in.Interfaces, func(i InterfaceView) float32 { return i.BandwidthBytes })
}
