package interop

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
)

func demoLab(t *testing.T) *Lab {
	t.Helper()
	return planLab(t, demoTopo, Options{Name: "t1", RunDir: "/run/x"})
}

// renderParsed renders n's fared.yaml and parses it with fared's own
// parser, failing the test if fared rejects it; it returns both.
func renderParsed(t *testing.T, l *Lab, n *Node) (*config.Config, []byte) {
	t.Helper()
	b, err := RenderFared(n, l.Topo.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(n.Name+".yaml", b)
	if err != nil {
		t.Fatalf("fared rejects the rendered config of %s: %v\n%s", n.Name, err, b)
	}
	return c, b
}

// planLab parses a topology and plans it under o; an error of either
// fails the test.
func planLab(t *testing.T, topoYAML string, o Options) *Lab {
	t.Helper()
	topo, err := ParseTopology([]byte(topoYAML))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Plan(topo, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The golden configs were checked by hand against FRR 8.4.4: loaded into
// a lab, `show running-config` lists every line and the LSP carries the
// bandwidths.
func TestRenderZebra(t *testing.T) {
	l := demoLab(t)
	want := `! rendered by farelab for node spine2
hostname spine2
!
interface seg1
 link-params
  enable
  max-bw 1.25e+09
  max-rsv-bw 1.25e+09
  unrsv-bw 0 1.25e+09
  unrsv-bw 1 1.25e+09
  unrsv-bw 2 1.25e+09
  unrsv-bw 3 1.25e+09
  unrsv-bw 4 1.25e+09
  unrsv-bw 5 1.25e+09
  unrsv-bw 6 1.25e+09
  unrsv-bw 7 1.25e+09
 exit-link-params
exit
!
`
	if got := RenderZebra(l.Node("spine2")); got != want {
		t.Errorf("zebra.conf:\n%s\nwant:\n%s", got, want)
	}
	// spine1: two parallel p2p links (100G, 40G) then the LAN.
	got := RenderZebra(l.Node("spine1"))
	for _, s := range []string{"interface leaf1-1\n link-params\n  enable\n  max-bw 1.25e+10\n",
		"interface leaf1-2\n link-params\n  enable\n  max-bw 5e+09\n", "interface seg1\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("spine1 zebra.conf lacks %q:\n%s", s, got)
		}
	}
}

func TestRenderISISd(t *testing.T) {
	l := demoLab(t)
	want := `! rendered by farelab for node spine1
hostname spine1
log timestamp precision 3
!
router isis fabric
 lsp-gen-interval 1
 spf-interval 1
 net 49.0001.0000.0000.0001.00
 is-type level-2-only
 metric-style wide
 mpls-te on
 mpls-te router-address 10.255.0.1
 log-adjacency-changes
exit
!
interface lo
 ip router isis fabric
 isis passive
 isis metric 0
exit
!
interface leaf1-1
 ip router isis fabric
 isis circuit-type level-2-only
 isis network point-to-point
 isis hello-interval 1
 isis hello-multiplier 3
 isis metric 10
exit
!
interface leaf1-2
 ip router isis fabric
 isis circuit-type level-2-only
 isis network point-to-point
 isis hello-interval 1
 isis hello-multiplier 3
 isis metric 20
exit
!
interface seg1
 ip router isis fabric
 isis circuit-type level-2-only
 isis hello-interval 1
 isis hello-multiplier 3
 isis metric 10
exit
!
`
	if got := RenderISISd(l.Node("spine1"), l.Topo.Defaults); got != want {
		t.Errorf("isisd.conf:\n%s\nwant:\n%s", got, want)
	}
	// spine2 sets a LAN priority; timers round up to whole seconds.
	d := l.Topo.Defaults
	d.HelloInterval, d.LSPGenInterval = 1500*time.Millisecond, 200*time.Millisecond
	got := RenderISISd(l.Node("spine2"), d)
	for _, s := range []string{" isis priority 100\n", " isis hello-interval 2\n", " lsp-gen-interval 1\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("spine2 isisd.conf lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "point-to-point") {
		t.Errorf("LAN interface rendered as point-to-point:\n%s", got)
	}
	n := *l.Node("spine1")
	n.Level = "1-2"
	n.Interfaces = append([]Iface(nil), n.Interfaces...)
	n.Interfaces[0].Level = "1"
	n.Interfaces[1].Level = "1-2"
	got = RenderISISd(&n, d)
	for _, s := range []string{" is-type level-1-2\n", "interface " + n.Interfaces[0].Name + "\n ip router isis fabric\n isis circuit-type level-1\n",
		"interface " + n.Interfaces[1].Name + "\n ip router isis fabric\n isis circuit-type level-1-2\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("level 1-2: lacks %q:\n%s", s, got)
		}
	}
}

// TestCommonLevel: a p2p link runs the levels both ends run, level 1 only
// within one area.
func TestCommonLevel(t *testing.T) {
	for _, tc := range []struct{ la, aa, lb, ab, want string }{
		{"1", "49.0001", "1-2", "49.0001", "1"},
		{"1-2", "49.0001", "2", "49.0100", "2"},
		{"1-2", "49.0001", "1-2", "49.0002", "2"},
		{"1-2", "49.0001", "1-2", "49.0001", "1-2"},
		{"1", "49.0001", "1", "49.0002", ""},
	} {
		got, err := commonLevel(&Node{Level: tc.la, Area: tc.aa}, &Node{Level: tc.lb, Area: tc.ab})
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("%+v: %q, %v", tc, got, err)
		}
	}
}

// TestRenderFared checks the fared config with fared's own parser.
func TestRenderFared(t *testing.T) {
	l := demoLab(t)
	c, _ := renderParsed(t, l, l.Node("leaf1"))
	if c.Hostname != "leaf1" || c.RouterID != netip.MustParseAddr("10.255.0.3") ||
		c.SystemID != [6]byte{0, 0, 0, 0, 0, 3} || c.Socket != "/run/x/t1/leaf1/fared.sock" {
		t.Errorf("config = %+v", c)
	}
	is := isis.Section(c)
	if is == nil || len(is.Areas) != 1 || string(is.Areas[0]) != "\x49\x00\x01" || is.Level != 2 || is.LSPGenInterval != 500*time.Millisecond {
		t.Fatalf("isis = %+v", is)
	}
	var ifs []string
	for _, f := range is.Interfaces {
		ifs = append(ifs, f.Name+":"+f.Type+":"+f.Bandwidth.String()+":"+f.HelloInterval.String())
		if f.Metric != map[string]uint32{"spine1-2": 20}[f.Name] && f.Metric != 10 {
			t.Errorf("%s metric %d", f.Name, f.Metric)
		}
	}
	if got := strings.Join(ifs, " "); got != "spine1-1:p2p:100G:1s spine1-2:p2p:40G:1s seg1:lan:10G:1s" {
		t.Errorf("interfaces = %s", got)
	}
	var pfx []string
	for _, p := range is.Prefixes {
		pfx = append(pfx, p.Prefix.String()+"/"+p.PathBandwidth.String())
	}
	if got := strings.Join(pfx, " "); got != "10.255.0.3/32/0 10.10.1.0/24/0 10.10.2.0/24/40G" {
		t.Errorf("prefixes = %s", got)
	}
}

// The topology-level flooding key turns IS-IS flooding reduction on for
// fared nodes only; without it fared floods in full.
func TestRenderFloodingReduced(t *testing.T) {
	const topo = "name: fl\nflooding: reduced\nnodes:\n  s1: {kind: fared}\n  l1: {kind: fared}\n  l2: {kind: frr}\n" +
		"links:\n  - {a: l1, b: s1}\n  - {a: l2, b: s1}\n"
	l := planLab(t, topo, Options{Name: "fl", RunDir: "/run/x"})
	for _, name := range []string{"s1", "l1"} {
		c, _ := renderParsed(t, l, l.Node(name))
		if !isis.Section(c).FloodingReduction {
			t.Errorf("%s: flooding-reduction off under flooding: reduced", name)
		}
	}
	if strings.Contains(renderFRRProtocol(l.Node("l2"), l.Topo.Defaults), "flood") {
		t.Error("FRR node l2's isisd.conf mentions flooding")
	}
	l = planLab(t, strings.Replace(topo, "flooding: reduced\n", "", 1), Options{Name: "fl", RunDir: "/run/x"})
	if c, _ := renderParsed(t, l, l.Node("s1")); isis.Section(c).FloodingReduction {
		t.Error("flooding-reduction on without the flooding key")
	}
}

func TestRenderOSPF(t *testing.T) {
	l := planLab(t, `name: o
protocol: ospf
nodes:
  f1: {kind: fared, prefixes: [{prefix: 10.10.1.0/24, path-bandwidth: 40G}]}
  r1: {kind: frr, area: 1}
  r2: {kind: frr, priority: 5}
links:
  - {a: f1, b: r1, bandwidth: 100G, area: 1}
  - {lan: seg1, nodes: [f1, r2]}
`, Options{RunDir: t.TempDir()})
	r1 := RenderOSPFd(l.Node("r1"), l.Topo.Defaults)
	for _, want := range []string{"interface lo\n ip ospf area 0.0.0.1\n", "interface f1-1\n ip ospf area 0.0.0.1\n ip ospf network point-to-point\n ip ospf hello-interval 1\n ip ospf dead-interval 3\n",
		" capability opaque\n mpls-te on\n mpls-te router-address 10.255.0.2\n"} {
		if !strings.Contains(r1, want) {
			t.Errorf("ospfd.conf lacks %q:\n%s", want, r1)
		}
	}
	if r2 := RenderOSPFd(l.Node("r2"), l.Topo.Defaults); !strings.Contains(r2, " ip ospf network broadcast\n") || !strings.Contains(r2, " ip ospf priority 5\n") {
		t.Errorf("r2 ospfd.conf:\n%s", r2)
	}
	cfg, b := renderParsed(t, l, l.Node("f1"))
	o := ospf.Section(cfg)
	if o == nil || isis.Section(cfg) != nil || len(o.Interfaces) != 2 || o.Interfaces[0].Area != 1 || o.Interfaces[0].Type != "p2p" ||
		o.Interfaces[1].Type != "broadcast" || o.Interfaces[1].Area != 0 || o.Interfaces[0].Bandwidth != 100e9 {
		t.Fatalf("fared ospf config %+v\n%s", o, b)
	}
	if len(o.Prefixes) != 2 || o.Prefixes[1].PathBandwidth != 40e9 {
		t.Fatalf("prefixes %+v", o.Prefixes)
	}
}
