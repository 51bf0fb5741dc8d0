package isis

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

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/isis/packet"
)

// kif is an interface of the in-memory "kernel" of a live-reload test:
// what exists, whether or not the config runs IS-IS on it.
type kif struct {
	w     *wire // nil: no link (a passive lo)
	addrs []netip.Prefix
	speed func() float64 // bits/s; nil: unknown
}

// liveNode is an instance whose config a test rewrites.
type liveNode struct {
	*memNode
	n    int
	head string // top-level keys
}

// liveYAML renders router n's config: body goes under isis:.
func liveYAML(n int, sys string, body string) string {
	if sys == "" {
		sys = fmt.Sprintf("0000.0000.%04x", n)
	}
	return fmt.Sprintf("hostname: r%d\nrouter-id: 10.255.0.%d\nsystem-id: %s\nisis:\n  areas: [49.0001]\n  lsp-gen-interval: 50ms\n  csnp-interval: 1s\n  psnp-interval: 200ms\n%s",
		n, n, sys, body)
}

func ifLine(name, typ string, extra string) string {
	return fmt.Sprintf("    - {name: %s, type: %s, hello-interval: 1s, hello-multiplier: 3, bandwidth: 10G%s}\n", name, typ, extra)
}

func parseCfg(t testing.TB, y string) *config.Config {
	t.Helper()
	c, err := config.Parse("live.yaml", []byte(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return c
}

// startLive starts router n with config y over the given kernel interfaces.
func startLive(t testing.TB, n int, y string, kernel map[string]kif) *liveNode {
	t.Helper()
	return startLiveLog(t, n, y, kernel, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func startLiveLog(t testing.TB, n int, y string, kernel map[string]kif, log *slog.Logger) *liveNode {
	t.Helper()
	return startLiveOpts(t, n, y, kernel, Options{Logger: log})
}

// startLiveOpts starts router n with opts' logger and clock.
func startLiveOpts(t testing.TB, n int, y string, kernel map[string]kif, opts Options) *liveNode {
	t.Helper()
	cfg := parseCfg(t, y)
	macs := map[string][6]byte{}
	i := 0
	for name := range kernel {
		macs[name] = [6]byte{0x02, 0, 0, 1, byte(n), byte(i)}
		i++
	}
	in, err := New(cfg, Options{
		Logger: opts.Logger,
		Now:    opts.Now,
		Interfaces: func(name string) (*IfaceInfo, error) {
			k, ok := kernel[name]
			if !ok {
				return nil, errors.New("no such interface")
			}
			mac := macs[name]
			info := &IfaceInfo{Iface: net.Interface{Index: 10 + len(name), MTU: 1500, Name: name, HardwareAddr: mac[:]}, Running: true, Addrs: k.addrs}
			if k.speed != nil {
				info.SpeedBps = k.speed()
			}
			return info, nil
		},
		OpenPort: func(ifi *net.Interface) (Port, error) {
			k := kernel[ifi.Name]
			if k.w == nil {
				return nil, errors.New("no link")
			}
			p := k.w.port(macs[ifi.Name])
			p.mtu = 1500
			return p, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &memNode{in: in, stop: igptest.Go(t, in.Run)}
	return &liveNode{memNode: m, n: n}
}

func (l *liveNode) reload(t testing.TB, y string) Report {
	t.Helper()
	return igptest.Reload(t, l.in, parseCfg(t, y))
}

// upOn lists the Up adjacencies of m as "sysid@iface".
func upOn(m *memNode) ([]string, error) {
	ns, err := m.in.Neighbors(context.Background())
	if err != nil {
		return nil, err
	}
	var up []string
	for _, n := range ns {
		if n.State == "Up" {
			up = append(up, n.SystemID+"@"+n.Interface)
		}
	}
	return up, nil
}

func wantUp(m *memNode, want ...string) func() error {
	return func() error {
		up, err := upOn(m)
		if err != nil {
			return err
		}
		if fmt.Sprint(up) != fmt.Sprint(want) {
			return fmt.Errorf("%s: up %v, want %v", m.in.cfg.Hostname, up, want)
		}
		return nil
	}
}

// wantLinks succeeds once node (a system id) lists exactly want (node
// ids) in its LSP, as m sees it.
func wantLinks(m *memNode, level int, node string, want ...string) func() error {
	return func() error {
		g := m.in.Graph(level)
		if g == nil {
			return errors.New("no graph")
		}
		i := g.Lookup(node + ".00")
		if i < 0 {
			return fmt.Errorf("%s not in the graph", node)
		}
		var links []string
		for _, l := range g.LinksOf(i) {
			links = append(links, g.Nodes[l.To].ID)
		}
		if fmt.Sprint(links) != fmt.Sprint(want) {
			return fmt.Errorf("%s's links %v, want %v", node, links, want)
		}
		return nil
	}
}

// TestReloadAddRemoveInterface: a new interface in the config comes up and
// forms an adjacency without touching the others; a removed one takes its
// adjacency down and its link out of our LSP at once.
func TestReloadAddRemoveInterface(t *testing.T) {
	w12, w13 := &wire{}, &wire{}
	k1 := map[string]kif{"e0": {w: w12, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}},
		"e1": {w: w13, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.2/31")}}}
	one := "  interfaces:\n" + ifLine("e0", "p2p", "")
	both := one + ifLine("e1", "p2p", "")
	r1 := startLive(t, 1, liveYAML(1, "", one), k1)
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w12, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	r3 := startLive(t, 3, liveYAML(3, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w13, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.3/31")}}})
	igptest.Poll(t, 10*time.Second, "r1-r2 up", wantUp(r1.memNode, "0000.0000.0002@e0"))

	rep := r1.reload(t, liveYAML(1, "", both))
	if err := igptest.HasLine(rep, "interface e1: added"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "r1 up with r2 and r3", wantUp(r1.memNode, "0000.0000.0002@e0", "0000.0000.0003@e1"))
	igptest.Poll(t, 10*time.Second, "r2 sees r1 linked to r3", wantLinks(r2.memNode, 2, "0000.0000.0001", "0000.0000.0002.00", "0000.0000.0003.00"))
	assertNoFlap(t, r2.memNode)

	rep = r1.reload(t, liveYAML(1, "", one))
	if err := igptest.HasLine(rep, "interface e1: removed"); err != nil {
		t.Fatal(err)
	}
	if up, _ := upOn(r1.memNode); fmt.Sprint(up) != "[0000.0000.0002@e0]" {
		t.Fatalf("after removal r1 has %v up", up)
	}
	igptest.Poll(t, 10*time.Second, "r2 sees r1's link to r3 gone", wantLinks(r2.memNode, 2, "0000.0000.0001", "0000.0000.0002.00"))
	igptest.Poll(t, 10*time.Second, "r3 times r1 out", wantUp(r3.memNode))
	assertNoFlap(t, r2.memNode)
}

// assertNoFlap fails if any adjacency of m ever went down.
func assertNoFlap(t *testing.T, m *memNode) {
	t.Helper()
	ns, err := m.in.Neighbors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Flaps != 0 {
			t.Fatalf("%s: adjacency with %s on %s flapped %d times", m.in.cfg.Hostname, n.SystemID, n.Interface, n.Flaps)
		}
	}
}

// TestReloadHelloKeepsAdjacency: a new hello interval and multiplier go
// out in the next hello (the neighbour sees the new hold time) and no
// adjacency drops, on a LAN and on a p2p link.
func TestReloadHelloKeepsAdjacency(t *testing.T) {
	for _, typ := range []string{"p2p", "lan"} {
		t.Run(typ, func(t *testing.T) {
			w := &wire{}
			r1 := startLive(t, 1, liveYAML(1, "", "  interfaces:\n"+ifLine("e0", typ, "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.253.0.1/24")}}})
			r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", typ, "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.253.0.2/24")}}})
			igptest.Poll(t, 10*time.Second, "up", wantUp(r2.memNode, "0000.0000.0001@e0"))
			y := liveYAML(1, "", "  interfaces:\n    - {name: e0, type: "+typ+", hello-interval: 2s, hello-multiplier: 4, bandwidth: 10G}\n")
			rep := r1.reload(t, y)
			if err := igptest.HasLine(rep, "interface e0: hello-interval 1s -> 2s (applied at the next hello)"); err != nil {
				t.Fatal(err)
			}
			if err := igptest.HasLine(rep, "interface e0: hello-multiplier 3 -> 4"); err != nil {
				t.Fatal(err)
			}
			igptest.Poll(t, 10*time.Second, "r2 holds r1 for 8s", func() error {
				ns, err := r2.in.Neighbors(context.Background())
				if err != nil {
					return err
				}
				// The DIS announces a third of its hold time (ISO 10589 §8.4.5).
				if len(ns) != 1 || (ns[0].HoldTime != 8 && ns[0].HoldTime != 2) {
					return fmt.Errorf("neighbours %+v", ns)
				}
				return nil
			})
			// Over three of the old hold times nothing may flap.
			time.Sleep(3 * time.Second)
			assertNoFlap(t, r1.memNode)
			assertNoFlap(t, r2.memNode)
		})
	}
}

// TestReloadCircuitLevelRestartsOnlyIt: on an L1L2 router, an interface
// going from level 2 to 1-2 restarts that circuit (now with an L1 and an
// L2 adjacency); the other circuit keeps its adjacency.
func TestReloadCircuitLevelRestartsOnlyIt(t *testing.T) {
	wa, wb := &wire{}, &wire{}
	k1 := map[string]kif{"e0": {w: wa, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}},
		"e1": {w: wb, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.2/31")}}}
	body := func(l0 string) string {
		return "  level: 1-2\n  interfaces:\n" + ifLine("e0", "p2p", ", level: "+l0) + ifLine("e1", "p2p", "")
	}
	r1 := startLive(t, 1, liveYAML(1, "", body("2")), k1)
	r2 := startLive(t, 2, liveYAML(2, "", "  level: 1-2\n  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: wa, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	r3 := startLive(t, 3, liveYAML(3, "", "  level: 1-2\n  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: wb, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.3/31")}}})
	levelOf := func(m *memNode, want string) func() error {
		return func() error {
			ns, err := m.in.Neighbors(context.Background())
			if err != nil {
				return err
			}
			if len(ns) != 1 || ns[0].State != "Up" || ns[0].Level != want {
				return fmt.Errorf("neighbours %+v, want one Up at %s", ns, want)
			}
			return nil
		}
	}
	igptest.Poll(t, 10*time.Second, "r2 adjacent at L2 only", levelOf(r2.memNode, "L2"))
	igptest.Poll(t, 10*time.Second, "r3 adjacent at L1L2", levelOf(r3.memNode, "L1L2"))
	rep := r1.reload(t, liveYAML(1, "", body("1-2")))
	if err := igptest.HasLine(rep, "interface e0: level 2 -> 1-2 (circuit restarted)"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 10*time.Second, "r2 adjacent at L1L2", levelOf(r2.memNode, "L1L2"))
	assertNoFlap(t, r3.memNode)

	// Back to an L2-only instance: L1 goes (its graph with it), every
	// circuit now runs L2 only.
	rep = r1.reload(t, liveYAML(1, "", "  interfaces:\n"+ifLine("e0", "p2p", "")+ifLine("e1", "p2p", "")))
	if err := igptest.HasLine(rep, "level 1-2 -> 2 (levels added: [], removed: [1]"); err != nil {
		t.Fatal(err)
	}
	if g := r1.in.Graph(1); g != nil {
		t.Fatalf("level-1 graph still there: %+v", g)
	}
	igptest.Poll(t, 10*time.Second, "r2 adjacent at L2", levelOf(r2.memNode, "L2"))
	igptest.Poll(t, 10*time.Second, "r3 adjacent at L2", levelOf(r3.memNode, "L2"))
}

// TestReloadSystemID: a new system id purges our LSPs and re-originates
// them under the new id; the neighbour ends with exactly one live LSP of
// ours (the new one) and the old one purged, and an adjacency with the new
// id. The process is the same instance throughout.
func TestReloadSystemID(t *testing.T) {
	w := &wire{}
	body := "  interfaces:\n" + ifLine("e0", "p2p", "") + "  prefixes:\n    - {prefix: 10.255.0.1/32}\n"
	r1 := startLive(t, 1, liveYAML(1, "", body), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}}})
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	igptest.Poll(t, 10*time.Second, "up", wantUp(r2.memNode, "0000.0000.0001@e0"))
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1.memNode, r2.memNode))
	rep := r1.reload(t, liveYAML(1, "0000.0000.00a1", body))
	if err := igptest.HasLine(rep, "system-id 0000.0000.0001 -> 0000.0000.00a1 (instance restarted: 1 own LSPs purged"); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 15*time.Second, "r2 adjacent to the new id", wantUp(r2.memNode, "0000.0000.00a1@e0"))
	igptest.Poll(t, 15*time.Second, "r2: one live LSP of r1, the old one purged", func() error {
		v, err := r2.in.Database(context.Background(), DatabaseQuery{})
		if err != nil {
			return err
		}
		var live, purgedOld []string
		for _, l := range v {
			switch {
			case strings.HasPrefix(l.LSPID, "0000.0000.0001.") && l.Lifetime == 0:
				purgedOld = append(purgedOld, l.LSPID)
			case strings.HasPrefix(l.LSPID, "0000.0000.0001."):
				return fmt.Errorf("old LSP %s still live (lifetime %d)", l.LSPID, l.Lifetime)
			case strings.HasPrefix(l.LSPID, "0000.0000.00a1.") && l.Lifetime > 0:
				live = append(live, l.LSPID)
			}
		}
		if fmt.Sprint(live) != "[0000.0000.00a1.00-00]" {
			return fmt.Errorf("live LSPs of r1: %v", live)
		}
		return nil
	})
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1.memNode, r2.memNode))
	igptest.Poll(t, 10*time.Second, "r2 routes to r1's loopback through the new id", func() error {
		g := r2.in.Graph(2)
		if g == nil {
			return errors.New("no graph")
		}
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "10.255.0.1/32" && g.Nodes[p.Node].ID == "0000.0000.00a1.00" {
				return nil
			}
		}
		return fmt.Errorf("prefixes %+v", g.Prefixes)
	})
}

// TestReloadReportsEverySetting: each key of the isis section and of an
// interface, changed on its own, is reported by name (nothing a reload
// changes goes unmentioned), and none is refused.
func TestReloadReportsEverySetting(t *testing.T) {
	w := &wire{}
	e := igptest.EverySetting{
		Head: "hostname: r1\nrouter-id: 10.255.0.1\nsystem-id: 0000.0000.0001\nisis:\n",
		Keys: map[string][2]string{
			"level": {"2", "1-2"}, "path-bandwidth-subtlv": {"200", "201"}, "lsp-lifetime": {"1200s", "1300s"},
			"lsp-refresh": {"900s", "800s"}, "lsp-gen-interval": {"50ms", "100ms"}, "csnp-interval": {"1s", "2s"},
			"psnp-interval": {"200ms", "300ms"}, "lsp-mtu": {"1492", "1400"}, "hello-padding": {"true", "false"},
			"overload": {"false", "true"}, "ecmp-only": {"false", "true"}, "attached-bit": {"true", "false"},
			"leak-l2-to-l1": {"[]", "[10.0.0.0/8]"}, "readvertise-hold": {"1s", "2s"}, "flooding-reduction": {"false", "true"},
			"flooding-reflooders": {"1", "2"}, "lsp-pacing": {"33ms", "10ms"}, "areas": {"[49.0001]", "[49.0002]"},
			"multi-topology": {"false", "true"},
			"authentication": {"{level-2: {keys: [{id: 1, algorithm: md5, secret: a}]}}", "{level-2: {keys: [{id: 2, algorithm: hmac-sha-256, secret: b}]}}"},
			"bfd":            {"{interval: 100ms, multiplier: 3}", "{interval: 200ms, multiplier: 4}"},
		},
		Iface: map[string][2]string{
			"metric": {"10", "20"}, "bandwidth": {"10G", "20G"}, "passive": {"false", "true"}, "hello-interval": {"1s", "2s"},
			"hello-multiplier": {"3", "4"}, "priority": {"64", "65"}, "type": {"lan", "p2p"}, "lsp-pacing": {"33ms", "0s"},
			"authentication": {"{keys: [{id: 1, algorithm: md5, secret: a}]}", "{keys: [{id: 2, algorithm: md5, secret: b}]}"},
			"bfd":            {"{interval: 100ms, multiplier: 3}", "{interval: 200ms, multiplier: 4}"},
		},
		Tail:    "  prefixes:\n    - {prefix: 10.255.0.1/32}\n",
		Section: Config{}, Interface: Interface{},
		Skip: []string{"Interfaces", "Prefixes", "SPF", "Name", "Line", "Level"},
	}
	r1 := startLive(t, 1, e.Render(e.Base(), "", ""), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.253.0.1/24")}}})
	e.Reload = func(y string) Report { return r1.reload(t, y) }
	e.Run(t)
}

// TestBandwidthOverrideAcrossReloads: igptest.BandwidthOverrideAcrossReloads
// on a p2p interface.
func TestBandwidthOverrideAcrossReloads(t *testing.T) {
	w := &wire{}
	y := func(bw string) string {
		return liveYAML(1, "", "  interfaces:\n    - {name: e0, type: p2p, hello-interval: 1s, bandwidth: "+bw+"}\n")
	}
	log := &igptest.LogBuf{}
	r1 := startLiveLog(t, 1, y("10G"), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}}},
		slog.New(slog.NewTextHandler(log, nil)))
	igptest.BandwidthOverrideAcrossReloads(t, igptest.Overridable{
		YAML: y, Reload: func(y string) Report { return r1.reload(t, y) }, Set: r1.in.SetBandwidth, Log: log,
		BW: e0Bandwidth(r1.in),
	})
}

// TestOverloadAtRunTime: the run-time overload bit reaches the neighbour,
// survives a reload that leaves `overload` alone, and goes back to the
// configured value when cleared.
func TestOverloadAtRunTime(t *testing.T) {
	w := &wire{}
	y := liveYAML(1, "", "  interfaces:\n"+ifLine("e0", "p2p", ""))
	r1 := startLive(t, 1, y, map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}}})
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	igptest.Poll(t, 10*time.Second, "up", wantUp(r2.memNode, "0000.0000.0001@e0"))
	ol := func(want bool) func() error {
		return func() error {
			v, err := r2.in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0001.00-00"})
			if err != nil {
				return err
			}
			if len(v) != 1 || v[0].Overload != want {
				return fmt.Errorf("r1's LSP at r2: %+v", v)
			}
			return nil
		}
	}
	igptest.Poll(t, 5*time.Second, "not overloaded", ol(false))
	on := true
	if got, err := r1.in.SetOverload(context.Background(), &on); err != nil || !got {
		t.Fatalf("SetOverload: %v %v", got, err)
	}
	igptest.Poll(t, 5*time.Second, "overloaded at r2", ol(true))
	rep := r1.reload(t, y)
	if err := igptest.HasLine(rep, "overload: run-time override on kept"); err != nil {
		t.Fatal(err)
	}
	if got, _ := r1.in.SetOverload(context.Background(), nil); got {
		t.Fatal("clearing the override kept overload on")
	}
	igptest.Poll(t, 5*time.Second, "back to not overloaded", ol(false))
}

// TestClearAdjacency: clearing drops our side and, through the three-way
// state in our next hello, the neighbour's; both come back Up.
func TestClearAdjacency(t *testing.T) {
	w := &wire{}
	r1 := startLive(t, 1, liveYAML(1, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}}})
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	igptest.Poll(t, 10*time.Second, "up", wantUp(r2.memNode, "0000.0000.0001@e0"))
	if _, err := r1.in.ClearAdjacencies(context.Background(), "nope"); !errors.As(err, new(ErrNotFound)) {
		t.Fatalf("unknown interface: %v", err)
	}
	// r2's count of adjacencies that went down on e0: the adjacency's own
	// Flaps starts again at 0 if r2 replaces the adjacency (a hold timer
	// that ran out on a loaded test machine, then a new one).
	downs := func() uint64 {
		is, err := r2.in.Interfaces(context.Background())
		if err != nil || len(is) == 0 {
			t.Fatalf("interfaces: %v %+v", err, is)
		}
		return is[0].Counters["adjacency_down"]
	}
	before := downs()
	n, err := r1.in.ClearAdjacencies(context.Background(), "e0")
	if err != nil || n != 1 {
		t.Fatalf("cleared %d, %v", n, err)
	}
	igptest.Poll(t, 10*time.Second, "r2 saw the adjacency go down", func() error {
		if d := downs(); d <= before {
			ns, _ := r2.in.Neighbors(context.Background())
			return fmt.Errorf("adjacency_down %d (before the clear %d); neighbours %+v", d, before, ns)
		}
		return nil
	})
	igptest.Poll(t, 10*time.Second, "up again", wantUp(r2.memNode, "0000.0000.0001@e0"))
	igptest.Poll(t, 10*time.Second, "up again at r1", wantUp(r1.memNode, "0000.0000.0002@e0"))
}

// TestLoopbackScopeNotAdvertised: a passive lo with 127.0.0.1/8, ::1/128
// and the router's /32 advertises the /32 only: no 127/8 prefix, no
// 127.0.0.1 in TLV 132, no ::1 (and so no IPv6 at all).
func TestLoopbackScopeNotAdvertised(t *testing.T) {
	w := &wire{}
	k1 := map[string]kif{
		"lo": {addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("10.255.0.1/32"), netip.MustParsePrefix("::1/128"),
			netip.MustParsePrefix("169.254.3.4/16")}},
		"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31"), netip.MustParsePrefix("fe80::1/64")}},
	}
	r1 := startLive(t, 1, liveYAML(1, "", "  interfaces:\n    - {name: lo, passive: true, metric: 1}\n"+ifLine("e0", "p2p", "")), k1)
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	igptest.Poll(t, 10*time.Second, "up", wantUp(r2.memNode, "0000.0000.0001@e0"))
	igptest.Poll(t, 10*time.Second, "r1's LSP at r2 carries exactly the global prefixes", func() error {
		v, err := r2.in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0001.00-00", Detail: true})
		if err != nil || len(v) != 1 {
			return fmt.Errorf("%v %+v", err, v)
		}
		var pfx, addrs []string
		for _, tl := range v[0].TLVs {
			s := fmt.Sprint(tl)
			for _, bad := range []string{"127.", "::1", "169.254", "fe80"} {
				if strings.Contains(s, bad) {
					return fmt.Errorf("TLV carries %s: %s", bad, s)
				}
			}
			if strings.Contains(s, "10.255.0.1/32") {
				pfx = append(pfx, s)
			}
			if strings.Contains(s, "10.255.0.1") {
				addrs = append(addrs, s)
			}
		}
		if len(pfx) == 0 {
			return fmt.Errorf("no 10.255.0.1/32 prefix: %+v", v[0].TLVs)
		}
		return nil
	})
	// No IPv6 NLPID: ::1 does not make the router an IPv6 one.
	var nlpids []uint8
	_ = r1.in.Query(context.Background(), func() { nlpids = r1.in.nlpids() })
	if fmt.Sprint(nlpids) != "[204]" {
		t.Fatalf("NLPIDs %v, want IPv4 only", nlpids)
	}
	var tlvs packet.TLVs
	_ = r1.in.Query(context.Background(), func() { tlvs = r1.in.ownTLVs(2) })
	for _, tl := range tlvs {
		if a, ok := tl.(*packet.IPv4Addresses); ok {
			for _, x := range a.Addrs {
				if !advertisable(x) {
					t.Fatalf("TLV 132 carries %s", x)
				}
			}
		}
	}
}

// TestConfiguredPrefixWinsOverPassive is issue 17's case in IS-IS:
// 10.10.2.1/24 on a passive lo (metric 1) and a config entry for
// 10.10.2.0/24 with metric 5 and Path Bandwidth 100G: the LSP carries the
// config's metric and 100G (12.5e9 bytes/s), once.
func TestConfiguredPrefixWinsOverPassive(t *testing.T) {
	w := &wire{}
	k1 := map[string]kif{
		"lo": {addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("10.10.2.1/24")}},
		"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}},
	}
	body := "  interfaces:\n    - {name: lo, passive: true, metric: 1}\n" + ifLine("e0", "p2p", "") +
		"  prefixes:\n    - {prefix: 10.10.2.0/24, metric: 5, path-bandwidth: 100G}\n"
	startLive(t, 1, liveYAML(1, "", body), k1)
	r2 := startLive(t, 2, liveYAML(2, "", "  interfaces:\n"+ifLine("e0", "p2p", "")), map[string]kif{"e0": {w: w, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.1/31")}}})
	igptest.Poll(t, 10*time.Second, "r2's graph: 10.10.2.0/24 once, metric 5, PB 100G", func() error {
		g := r2.in.Graph(2)
		if g == nil {
			return errors.New("no graph")
		}
		n := 0
		for _, p := range g.Prefixes {
			if p.Prefix.String() == "10.10.2.0/24" {
				n++
				if p.Metric != 5 || !p.HasPathBW || p.PathBW != 12.5e9 {
					return fmt.Errorf("10.10.2.0/24: %+v", p)
				}
			}
			if p.Prefix.Addr().IsLoopback() {
				return fmt.Errorf("%s advertised", p.Prefix)
			}
		}
		if n != 1 {
			return fmt.Errorf("10.10.2.0/24 %d times: %+v", n, g.Prefixes)
		}
		return nil
	})
}

// TestPSNPRequestCarriesReportedLifetime: an LSP a CSNP lists and we lack
// is requested with sequence number 0 and the lifetime and checksum the
// CSNP reported (ISO 10589 §7.3.15.2 b.5). An all-zero entry reads as a
// purge to FRR 8.4.4, which then requested the LSP from us instead of
// sending it: after a live level change, level 1 never synchronised.
func TestPSNPRequestCarriesReportedLifetime(t *testing.T) {
	in, err := New(testConfig(t, 1, "2", []memIf{{name: "e0", typ: "p2p"}}), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c := upP2P(in, sysN(2))
	w := &wire{}
	c.port = w.port([6]byte{2, 0, 0, 0, 1, 0})
	peer := w.port([6]byte{2, 0, 0, 0, 2, 0})
	want := packet.MakeLSPID(sysN(2), 0, 0)
	csnp := &packet.CSNP{Header: packet.Header{Type: packet.TypeL2CSNP}, SourceID: packet.MakeNodeID(sysN(2), 0),
		End:  packet.LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		TLVs: packet.TLVs(packet.PackLSPEntries([]packet.LSPEntry{{ID: want, Seq: 5, Lifetime: 1000, Checksum: 0xabcd}}))}
	in.rxCSNP(c, csnp, [6]byte{2, 0, 0, 0, 2, 0})
	c.sendPSNP(2, in.level(2), in.opt.Now())
	_, b, err := peer.Recv(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := packet.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := d.(*packet.PSNP)
	if !ok {
		t.Fatalf("sent %T", d)
	}
	var got []packet.LSPEntry
	for _, tl := range p.TLVs {
		if es, ok := tl.(*packet.LSPEntries); ok {
			got = append(got, es.Entries...)
		}
	}
	if len(got) != 1 || got[0] != (packet.LSPEntry{ID: want, Lifetime: 1000, Checksum: 0xabcd}) {
		t.Fatalf("PSNP entries %+v, want the request {seq 0, lifetime 1000, checksum 0xabcd}", got)
	}
}

// TestSpeedChangeByLinkEvent: igptest.SpeedChangeByLinkEvent on a p2p
// interface without a configured bandwidth.
func TestSpeedChangeByLinkEvent(t *testing.T) {
	igptest.SpeedChangeByLinkEvent(t, func(speed func() float64, now func() time.Time) (func(netif.Event), func() (float32, error)) {
		kernel := map[string]kif{"e0": {w: &wire{}, addrs: []netip.Prefix{netip.MustParsePrefix("10.254.0.0/31")}, speed: speed}}
		r1 := startLiveOpts(t, 1, liveYAML(1, "", "  interfaces:\n    - {name: e0, type: p2p, hello-interval: 1s}\n"), kernel, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: now})
		return r1.in.LinkEvent, e0Bandwidth(r1.in)
	})
}

// e0Bandwidth reads the bandwidth in force on e0, bytes/s.
func e0Bandwidth(in *Instance) func() (float32, error) {
	return igptest.FirstBandwidth(in.Interfaces, func(i InterfaceView) float32 { return i.BandwidthBytes })
}
