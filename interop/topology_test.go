package interop

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const demoTopo = `name: demo
protocol: isis
defaults: {hello-interval: 1s}
nodes:
  spine1: {kind: frr}
  spine2: {kind: frr, priority: 100}
  leaf1:  {kind: fared, prefixes: [10.10.1.0/24, {prefix: 10.10.2.0/24, path-bandwidth: 40G}]}
links:
  - {a: leaf1, b: spine1, bandwidth: 100G}
  - {a: leaf1, b: spine1, bandwidth: 40G, metric: 20}
  - {lan: seg1, nodes: [leaf1, spine1, spine2], bandwidth: 10G}
`

func TestParseDemo(t *testing.T) {
	topo, err := ParseTopology([]byte(demoTopo))
	if err != nil {
		t.Fatal(err)
	}
	if topo.Name != "demo" || topo.Protocol != "isis" {
		t.Errorf("name/protocol = %q/%q", topo.Name, topo.Protocol)
	}
	var names []string
	for _, n := range topo.Nodes {
		names = append(names, n.Name+":"+n.Kind)
	}
	if got := strings.Join(names, " "); got != "spine1:frr spine2:frr leaf1:fared" {
		t.Errorf("nodes in file order = %s", got)
	}
	if d := topo.Defaults; d.HelloInterval != time.Second || d.HelloMultiplier != 3 || d.LSPGenInterval != 500*time.Millisecond {
		t.Errorf("defaults = %+v", d)
	}
	leaf := topo.Node("leaf1")
	if leaf.Level != "2" || leaf.Area != "49.0001" || leaf.Priority != -1 {
		t.Errorf("leaf1 defaults = %+v", leaf)
	}
	want := []PrefixSpec{{Prefix: netip.MustParsePrefix("10.10.1.0/24")}, {Prefix: netip.MustParsePrefix("10.10.2.0/24"), PathBandwidth: 40e9}}
	if len(leaf.Prefixes) != 2 || leaf.Prefixes[0] != want[0] || leaf.Prefixes[1] != want[1] {
		t.Errorf("leaf1 prefixes = %+v", leaf.Prefixes)
	}
	if topo.Node("spine2").Priority != 100 {
		t.Errorf("spine2 priority = %d", topo.Node("spine2").Priority)
	}
	l := topo.Links
	if len(l) != 3 || l[0].Bandwidth != 100e9 || l[0].Metric != 10 || l[1].Bandwidth != 40e9 || l[1].Metric != 20 ||
		!l[2].IsLAN() || l[2].LAN != "seg1" || strings.Join(l[2].Nodes, ",") != "leaf1,spine1,spine2" {
		t.Errorf("links = %+v", l)
	}
}

func TestLoadTopologyErrorHasFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(p, []byte("name: x\nnodes:\n  a: {kind: frr}\nlinks:\n  - {a: a, b: zz}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTopology(p)
	if err == nil || err.Error() != p+`:5: link 0: unknown node "zz"` {
		t.Errorf("err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	nodes := "nodes:\n  a: {kind: frr}\n  b: {kind: frr}\n"
	for _, tc := range []struct{ name, in, want string }{
		{"unknown node", "name: x\n" + nodes + "links:\n  - {a: a, b: c}\n",
			`line 6: link 0: unknown node "c"`},
		{"bad bandwidth", "name: x\n" + nodes + "links:\n  - {a: a, b: b, bandwidth: 100X}\n",
			`line 6: link 0: bad bandwidth "100X" (want bits/s > 0 with optional K, M, G or T suffix, e.g. 100G)`},
		{"duplicate node", "name: x\nnodes:\n  a: {kind: frr}\n  a: {kind: fared}\n",
			`line 4: duplicate node "a"`},
		{"lan name clashes with node", "name: x\n" + nodes + "links:\n  - {lan: a, nodes: [a, b]}\n",
			`line 6: link 0: lan name "a" already used by a node`},
		{"bad node name", "name: x\nnodes:\n  Leaf_1: {kind: frr}\n",
			`line 3: node name "Leaf_1": must be 1..11 characters of [a-z0-9-], starting with a letter`},
		{"node name too long", "name: x\nnodes:\n  abcdefghijkl: {kind: frr}\n",
			`line 3: node name "abcdefghijkl": must be 1..11 characters of [a-z0-9-], starting with a letter`},
		{"lab name too long", "name: abcdefghijklmnopq\nnodes:\n  a: {kind: frr}\n",
			`line 1: lab name "abcdefghijklmnopq": must be 1..16 characters of [a-z0-9-], starting with a letter`},
		{"missing name", "nodes:\n  a: {kind: frr}\n",
			`line 1: missing required key "name"`},
		{"bad kind", "name: x\nnodes:\n  a: {kind: quagga}\n",
			`line 3: node a: kind "quagga": want frr, fared, bird or host`},
		{"unknown key", "name: x\nnodes:\n  a: {kind: frr, colour: red}\n",
			`line 3: node a: unknown key "colour"`},
		{"self link", "name: x\n" + nodes + "links:\n  - {a: a, b: a}\n",
			`line 6: link 0: link from "a" to itself`},
		{"lan twice", "name: x\n" + nodes + "links:\n  - {lan: s, nodes: [a, b, a]}\n",
			`line 6: link 0: node "a" listed twice on lan "s"`},
		{"bad prefix", "name: x\nnodes:\n  a: {kind: fared, prefixes: [10.0.0.1/24]}\n",
			`line 3: node a: prefix "10.0.0.1/24" has host bits set (want 10.0.0.0/24)`},
		{"bad level", "name: x\nnodes:\n  a: {kind: frr, level: 3}\n",
			`line 3: node a: level "3": want 1, 2 or 1-2`},
		{"bad protocol", "name: x\nprotocol: rip\nnodes:\n  a: {kind: frr}\n",
			`line 1: protocol "rip" not supported (want isis or ospf)` + "\n" + `line 4: node a: protocol "rip" not supported (want isis or ospf)`},
		{"bad flooding", "name: x\nflooding: sparse\nnodes:\n  a: {kind: frr}\n",
			`line 2: flooding "sparse": must be full or reduced`},
		{"bad duration", "name: x\ndefaults: {hello-interval: fast}\nnodes:\n  a: {kind: frr}\n",
			`line 2: defaults: hello-interval: bad duration "fast" (want e.g. 1s or 500ms)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTopology([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestBandwidth(t *testing.T) {
	for s, want := range map[string]float64{"100G": 100e9, "40g": 40e9, "2.5G": 2.5e9, "800K": 800e3, "1T": 1e12, "1000": 1000} {
		got, err := ParseBandwidth(s)
		if err != nil || got != want {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "100X", "-1G", "0", "1e40T"} {
		if _, err := ParseBandwidth(s); err == nil {
			t.Errorf("ParseBandwidth(%q): no error", s)
		}
	}
	for bw, want := range map[float64]string{100e9: "100G", 40e9: "40G", 2.5e9: "2500M", 1e12: "1T", 1500: "1500", 999: "999"} {
		if got := FormatBandwidth(bw); got != want {
			t.Errorf("FormatBandwidth(%v) = %q, want %q", bw, got, want)
		}
	}
	if got := frrBandwidth(100e9); got != "1.25e+10" {
		t.Errorf("frrBandwidth(100G) = %q", got)
	}
}

func TestPlan(t *testing.T) {
	l := demoLab(t)
	if got := strings.Join(l.Netns, " "); got != "t1-spine1 t1-spine2 t1-leaf1 t1-seg1" {
		t.Errorf("netns = %s", got)
	}
	leaf := l.Node("leaf1")
	if leaf.Index != 3 || leaf.Loopback.String() != "10.255.0.3" || leaf.SystemID != "0000.0000.0003" ||
		leaf.NET() != "49.0001.0000.0000.0003.00" || leaf.Socket != "/run/x/t1/leaf1/fared.sock" || leaf.FRRName != "" {
		t.Errorf("leaf1 = %+v", leaf)
	}
	if s := l.Node("spine1"); s.FRRName != "t1-spine1" || s.Dir != "/run/x/t1/spine1" || s.Socket != "" {
		t.Errorf("spine1 = %+v", s)
	}
	var ifs []string
	for _, f := range leaf.Interfaces {
		ifs = append(ifs, f.Name+"="+f.Addr.String()+">"+f.Peer+"/"+f.PeerIface)
	}
	want := "spine1-1=10.254.0.0/31>spine1/leaf1-1 spine1-2=10.254.0.2/31>spine1/leaf1-2 seg1=10.253.0.3/24>seg1/"
	if got := strings.Join(ifs, " "); got != want {
		t.Errorf("leaf1 interfaces:\n got %s\nwant %s", got, want)
	}
	lk := l.Link(1)
	if lk.A != "leaf1" || lk.IfA != "spine1-2" || lk.IfB != "leaf1-2" || lk.AddrA.String() != "10.254.0.2/31" ||
		lk.AddrB.String() != "10.254.0.3/31" || lk.Bandwidth != 40e9 || lk.Metric != 20 {
		t.Errorf("link 1 = %+v", lk)
	}
	lan := l.Link(2)
	if lan.LAN != "seg1" || lan.Netns != "t1-seg1" || lan.Subnet.String() != "10.253.0.0/24" || len(lan.Members) != 3 ||
		lan.Members[1] != (Member{Node: "spine1", Iface: "seg1", Port: "spine1", Addr: netip.MustParsePrefix("10.253.0.1/24")}) {
		t.Errorf("lan = %+v", lan)
	}
	if l.Link(3) != nil || l.Node("nope") != nil {
		t.Error("out of range lookups should be nil")
	}
	// Node 200 gets system id ...00c8, not decimal digits.
	if got := addOffset(loopbackBase, 200).String(); got != "10.255.0.200" {
		t.Errorf("addOffset = %s", got)
	}
	// Link 200 crosses into the next /24 of 10.254/16.
	if got := addOffset(p2pBase, 2*200+1).String(); got != "10.254.1.145" {
		t.Errorf("p2p addr of link 200 B = %s", got)
	}
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName("demo"), UniqueName("demo")
	if a == b || len(a) != 8 || !strings.HasPrefix(a, "demo") || checkName("lab", a, MaxLabName) != nil {
		t.Errorf("UniqueName: %q %q", a, b)
	}
	if n := UniqueName("averyveryverylongprefix"); len(n) != MaxLabName {
		t.Errorf("long prefix: %q", n)
	}
}

func TestOurs(t *testing.T) {
	claimed := map[string]bool{"a-b-x": true, "prefix:a-c-": true}
	for ns, want := range map[string]bool{"a-leaf1": true, "a-b-x": false, "a-c-leaf1": false, "ab-leaf1": false, "b-a-x": false} {
		if got := ours(ns, "a", claimed); got != want {
			t.Errorf("ours(%q) = %v", ns, got)
		}
	}
}
