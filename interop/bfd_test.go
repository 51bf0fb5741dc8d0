package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
)

func TestBFDNodeOption(t *testing.T) {
	for _, proto := range []string{"isis", "ospf"} {
		l := planLab(t, `name: b
protocol: `+proto+`
nodes:
  f1: {kind: fared, bfd: {interval: 50ms, multiplier: 3}}
  r1: {kind: frr, bfd: {interval: 100ms}}
  r2: {kind: frr}
links:
  - {a: f1, b: r1}
  - {a: f1, b: r2}
`, Options{Name: "t1", RunDir: "/run/x"})
		r1, r2, f1 := l.Node("r1"), l.Node("r2"), l.Node("f1")
		if got := frrDaemons(r1); strings.Join(got, " ") != "zebra bfdd "+frrDaemon(r1) {
			t.Errorf("%s: r1 daemons %v", proto, got)
		}
		if got := frrDaemons(r2); len(got) != 2 {
			t.Errorf("%s: r2 without bfd starts %v", proto, got)
		}
		want := "bfd\n profile farelab\n  detect-multiplier 3\n  receive-interval 100\n  transmit-interval 100\n exit\n !\nexit\n"
		if got := RenderBFDd(r1); !strings.Contains(got, want) {
			t.Errorf("%s: bfdd.conf\n%s\nwant\n%s", proto, got, want)
		}
		conf := renderFRRProtocol(r1, l.Topo.Defaults)
		line := map[string]string{"isis": " isis bfd\n isis bfd profile farelab\n", "ospf": " ip ospf bfd\n ip ospf bfd profile farelab\n"}[proto]
		if !strings.Contains(conf, line) {
			t.Errorf("%s: r1 config lacks %q:\n%s", proto, line, conf)
		}
		if strings.Contains(renderFRRProtocol(r2, l.Topo.Defaults), "bfd") {
			t.Errorf("%s: r2 without the option renders bfd", proto)
		}
		// fared's rendered config parses with BFD on every interface.
		c, _ := renderParsed(t, l, f1)
		if proto == "ospf" {
			sec := ospf.Section(c).BFD
			for _, it := range ospf.Section(c).Interfaces {
				if eff := config.EffectiveBFD(sec, it.BFD); eff == nil || eff.Interval != 50*time.Millisecond || eff.Multiplier != 3 {
					t.Errorf("ospf %s: %+v", it.Name, eff)
				}
			}
			continue
		}
		sec := isis.Section(c).BFD
		for _, it := range isis.Section(c).Interfaces {
			if eff := config.EffectiveBFD(sec, it.BFD); eff == nil || eff.Interval != 50*time.Millisecond || eff.Multiplier != 3 {
				t.Errorf("isis %s: %+v", it.Name, eff)
			}
		}
	}
}

func TestBFDNodeOptionErrors(t *testing.T) {
	for _, tc := range []struct{ bfd, want string }{
		{"{interval: 5ms}", "line 3: node f1: bfd: interval 5ms: want whole milliseconds, 10ms..60s"},
		{"{multiplier: 1}", "line 3: node f1: bfd: multiplier must be an integer 2..255"},
		{"{every: 1s}", `node f1: bfd`},
		{"yes", "node f1: bfd: want a mapping"},
		{"{interval: 50ms}}\n  h1: {kind: host, bfd: {interval: 50ms}", "node h1: bfd: a host runs no IGP adjacency"},
	} {
		_, err := ParseTopology([]byte("name: b\nnodes:\n  f1: {kind: fared, bfd: " + tc.bfd + "}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bfd %s: %v, want %q", tc.bfd, err, tc.want)
		}
	}
}

func TestParseBFDPeers(t *testing.T) {
	out := `Session count: 2
SessionId  LocalAddress                             PeerAddress                             Status
=========  ============                             ===========                             ======
2318430137 10.254.0.1                               10.254.0.0                              up
3826139862 10.254.0.3                               10.254.0.2                              down
`
	ps := parseBFDPeers(out)
	if len(ps) != 2 || ps[0] != (BFDPeer{Local: "10.254.0.1", Peer: "10.254.0.0", Status: "up"}) || ps[1].Status != "down" {
		t.Fatalf("%+v", ps)
	}
}

// BFD keys: fared's config carries them (and parses), BIRD's protocol bfd
// too (bird -p checks it), FRR's bfdd has no authentication (refused).
func TestBFDAuthOption(t *testing.T) {
	l := planLab(t, `name: b
protocol: ospf
nodes:
  f1: {kind: fared, bfd: {interval: 100ms, multiplier: 5, auth: [{id: 1, algorithm: meticulous-keyed-sha1, secret: s3cret}]}}
  b1: {kind: bird, bfd: {interval: 100ms, multiplier: 5, auth: [{id: 1, algorithm: meticulous-keyed-sha1, secret: s3cret}, {id: 2, algorithm: meticulous-keyed-sha1, secret: next}]}}
links:
  - {a: f1, b: b1}
`, Options{Name: "t2", RunDir: "/run/x"})
	c, b := renderParsed(t, l, l.Node("f1"))
	if a := ospf.Section(c).Interfaces[0].BFD.Authentication; a == nil || a.Keys[0].Algorithm != "meticulous-keyed-sha1" || a.Keys[0].Secret != "s3cret" {
		t.Fatalf("fared's bfd authentication: %+v\n%s", a, b)
	}
	conf, err := RenderBIRD(l.Node("b1"), l.Topo.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bfd yes;", "authentication meticulous keyed sha1;", `password "s3cret" { id 1; };`, `password "next" { id 2; };`, "min rx interval 100 ms;", "multiplier 5;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("bird.conf lacks %q:\n%s", want, conf)
		}
	}
	if _, err := exec.LookPath("bird"); err == nil {
		f := filepath.Join(t.TempDir(), "bird.conf")
		// The log path is the lab's: point it somewhere that exists.
		os.WriteFile(f, []byte(strings.ReplaceAll(conf, l.Node("b1").Dir, t.TempDir())), 0o600)
		if out, err := exec.Command("bird", "-p", "-c", f).CombinedOutput(); err != nil {
			t.Errorf("bird -p: %v\n%s\n%s", err, out, conf)
		}
	}
	for _, bad := range []struct{ node, want string }{
		{"r1: {kind: frr, bfd: {auth: [{id: 1, algorithm: keyed-sha1, secret: x}]}}", "FRR 8.4's bfdd has no authentication"},
		{"b1: {kind: bird, bfd: {auth: [{id: 1, algorithm: keyed-sha1, secret: x}, {id: 2, algorithm: keyed-md5, secret: y}]}}", "one authentication type per interface"},
		{"f1: {kind: fared, bfd: {auth: [{id: 1, algorithm: hmac-sha-256, secret: x}]}}", "not a BFD one"},
	} {
		_, err := ParseTopology([]byte("name: b\nprotocol: ospf\nnodes:\n  " + bad.node + "\n"))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.node, err, bad.want)
		}
	}
	rows := ParseBIRDBFDSessions("bfd1:\nIP address                Interface  State      Since         Interval  Timeout\n10.254.0.0                f1-1       Up         10:20:30.123    0.100    0.500\n")
	if len(rows) != 1 || rows[0] != (BIRDBFDSession{Address: "10.254.0.0", Interface: "f1-1", State: "Up"}) {
		t.Errorf("parsed %+v", rows)
	}
}
