package interop

import (
	"strings"
	"testing"
)

// FRR nodes' prefixes are advertised (a passive interface holding them),
// and what a node kind cannot do is refused at its line, never ignored.
func TestNodeKindRefusesWhatItCannotDo(t *testing.T) {
	_, err := ParseTopology([]byte(`name: t
nodes:
  r1: {kind: frr, prefixes: [10.98.3.0/24,
    {prefix: 10.98.4.0/24, path-bandwidth: 40G},
    "2001:db8::/64"]}
  f1: {kind: fared, protocol: ospf, prefixes: ["2001:db8:1::/64"]}
  f2: {kind: fared, te: false}
  f3: {kind: fared, protocol: ospf, level: "1"}
`))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"line 4: node r1: prefix 10.98.4.0/24: path-bandwidth: an FRR node cannot advertise a Path Bandwidth",
		"line 5: node r1: prefix 2001:db8::/64: farelab gives FRR nodes IPv4 prefixes only",
		"line 6: node f1: prefix 2001:db8:1::/64: OSPFv2 carries IPv4 only",
		"line 7: node f2: te: only FRR nodes have a TE switch",
		"line 8: node f3: level: an OSPF node has no IS-IS level",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "10.98.3.0/24") {
		t.Errorf("a plain IPv4 prefix on an FRR node refused: %v", err)
	}
}

func TestRenderFRRPrefixes(t *testing.T) {
	for _, proto := range []string{"isis", "ospf"} {
		l := planLab(t, "name: t\nprotocol: "+proto+"\nnodes:\n  r1: {kind: frr, prefixes: [10.98.3.0/24, 10.98.5.7/32]}\n  f1: {kind: fared}\nlinks:\n  - {a: r1, b: f1}\n", Options{Name: "t1", RunDir: "/run/x"})
		n := l.Node("r1")
		conf := renderFRRProtocol(n, l.Topo.Defaults)
		want := "interface pfx.a\n ip router isis fabric\n isis passive\n isis metric 0\nexit\n"
		if proto == "ospf" {
			want = "interface pfx.a\n ip ospf area 0.0.0.0\n ip ospf passive\nexit\n"
		}
		if !strings.Contains(conf, want) {
			t.Errorf("%s: no prefix block %q in:\n%s", proto, want, conf)
		}
		if got := renderFRRPrefixes(l.Node("f1")); got != "" {
			t.Errorf("fared node got an FRR prefix block: %q", got)
		}
		if a := frrPrefixAddr(n.Prefixes[0].Prefix).String(); a != "10.98.3.1/24" {
			t.Errorf("address for 10.98.3.0/24: %s", a)
		}
		if a := frrPrefixAddr(n.Prefixes[1].Prefix).String(); a != "10.98.5.7/32" {
			t.Errorf("address for 10.98.5.7/32: %s", a)
		}
	}
}

// The vtysh commands that add a link's interface to an FRR node are the
// rendered blocks, line by line; removal takes it out of the protocol.
func TestFRRIfaceCommands(t *testing.T) {
	l := demoLab(t)
	n := l.Node("spine1")
	f := n.Interfaces[0]
	add := strings.Join(frrIfaceCommands(n, l.Topo.Defaults, f, true), "\n")
	for _, want := range []string{
		"configure terminal\ninterface leaf1-1\nlink-params\nenable\nmax-bw 1.25e+10",
		"exit-link-params\nexit\ninterface leaf1-1\nip router isis fabric\nisis circuit-type level-2-only\nisis network point-to-point\n",
		"isis metric 10\nexit",
	} {
		if !strings.Contains(add, want) {
			t.Errorf("add commands lack %q:\n%s", want, add)
		}
	}
	del := strings.Join(frrIfaceCommands(n, l.Topo.Defaults, f, false), "\n")
	if del != "configure terminal\ninterface leaf1-1\nno ip router isis fabric\nexit" {
		t.Errorf("del commands:\n%s", del)
	}
}
