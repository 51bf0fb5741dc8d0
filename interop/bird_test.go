package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBIRDTopology: a bird node plans like any other; what BIRD cannot do
// is refused at its line.
func TestBIRDTopology(t *testing.T) {
	good := `name: b
protocol: ospf
nodes:
  f1: {kind: fared}
  b1: {kind: bird, priority: 100, prefixes: [10.10.1.0/24], auth: [{id: 3, algorithm: hmac-sha-256, secret: s}]}
links:
  - {a: f1, b: b1, metric: 20}
  - {lan: seg, nodes: [f1, b1], area: 1}
`
	l := planLab(t, good, Options{RunDir: "/run/x"})
	conf, err := RenderBIRD(l.Node("b1"), l.Topo.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"router id 10.255.0.2;",
		`log "/run/x/b/b1/bird.log" all;`,
		"protocol kernel {\n  ipv4 { import none; export all; };\n  merge paths yes;\n}",
		"  area 0.0.0.0 {\n    stubnet 10.10.1.0/24;\n    interface \"lo\" { stub yes; };\n    interface \"f1-1\" {\n      type ptp;\n      hello 1;\n      dead 3;\n      retransmit 2;\n      cost 20;\n      authentication cryptographic;\n      password \"s\" { id 3; algorithm hmac sha256; };\n    };\n  };",
		"  area 0.0.0.1 {\n    interface \"seg\" {\n      type broadcast;\n      hello 1;\n      dead 3;\n      retransmit 2;\n      cost 10;\n      priority 100;\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("bird.conf lacks %q:\n%s", want, conf)
		}
	}

	for _, tc := range []struct{ topo, want string }{
		{"name: b\nnodes:\n  f1: {kind: fared}\n  b1: {kind: bird}\n",
			`t.yaml:4: node b1: kind bird runs OSPFv2 only (BIRD has no IS-IS), but the topology's protocol is "isis": set protocol: ospf`},
		{"name: b\nprotocol: ospf\nnodes:\n  b1:\n    kind: bird\n    protocol: isis\n",
			`t.yaml:6: node b1: kind bird runs OSPFv2 only (BIRD has no IS-IS), got protocol "isis"`},
		{"name: b\nprotocol: ospf\nnodes:\n  b1: {kind: bird, te: false}\n", "t.yaml:4: node b1: te: BIRD originates no TE LSAs"},
		{"name: b\nprotocol: ospf\nnodes:\n  b1: {kind: bird, level: 1}\n", "t.yaml:4: node b1: level is an IS-IS setting"},
		{"name: b\nprotocol: ospf\nnodes:\n  b1: {kind: bird, prefixes: [{prefix: 10.1.0.0/16, path-bandwidth: 1G}]}\n",
			"t.yaml:4: node b1: prefix 10.1.0.0/16: BIRD cannot advertise a path-bandwidth"},
		{"name: b\nprotocol: ospf\nnodes:\n  b1: {kind: bird, config: {qos: {}}}\n", "t.yaml:4: node b1: config is for fared nodes"},
		{"name: b\nprotocol: ospf\nnodes:\n  b1: {kind: birds}\n", `t.yaml:4: node b1: kind "birds": want frr, fared, bird or host`},
	} {
		p := filepath.Join(t.TempDir(), "t.yaml")
		if err := os.WriteFile(p, []byte(tc.topo), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTopology(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.topo, err, tc.want)
		}
	}
}

func TestParseBIRDLSADB(t *testing.T) {
	// birdc show ospf lsadb of BIRD 2.0.12 (area rows from a farelab lab
	// of fared, BIRD and FRR; the AS-scope "Global" block is written in
	// the same shape, our labs have no external LSAs).
	out := `BIRD 2.0.12 ready.

Area 0.0.0.0

 Type   LS ID           Router          Sequence   Age  Checksum
 000a  1.0.0.0         10.255.0.1       80000001    11    44b5
 0001  10.255.0.2      10.255.0.2       80000003     0    f7f2
 0002  10.253.0.4      10.255.0.4       80000002     6    54bf

Global

 Type   LS ID           Router          Sequence   Age  Checksum
 0005  10.1.0.0        10.255.0.4       80000001     2    1234
`
	rows, err := ParseBIRDLSADB(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []BIRDLSA{
		{"0.0.0.0", 10, "1.0.0.0", "10.255.0.1", 11, 0x80000001, 0x44b5},
		{"0.0.0.0", 1, "10.255.0.2", "10.255.0.2", 0, 0x80000003, 0xf7f2},
		{"0.0.0.0", 2, "10.253.0.4", "10.255.0.4", 6, 0x80000002, 0x54bf},
		{"", 5, "10.1.0.0", "10.255.0.4", 2, 0x80000001, 0x1234},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	if _, err := ParseBIRDLSADB(" 0001  10.0.0.1  10.0.0.1  zz  1  ffff\n"); err == nil {
		t.Error("bad sequence number: no error")
	}
}

func TestParseBIRDNeighbors(t *testing.T) {
	out := "BIRD 2.0.12 ready.\nlab:\nRouter ID   \tPri\t     State     \tDTime\tInterface  Router IP\n" +
		"10.255.0.3  \t  0\tFull/PtP  \t 2.974\tf2-1       10.254.0.3\n" +
		"10.255.0.3  \t  1\tFull/BDR  \t 2.975\tseg        10.253.0.3\n"
	got := ParseBIRDNeighbors(out)
	want := []BIRDNeighbor{{"10.255.0.3", "Full/PtP", "f2-1", "10.254.0.3"}, {"10.255.0.3", "Full/BDR", "seg", "10.253.0.3"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("%+v", got)
	}
}

func TestParseUpInterfaces(t *testing.T) {
	out := "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n" +
		"2: is1-1@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000\\    link/ether 3a:1f:6e:2b:6a:0e brd ff:ff:ff:ff:ff:ff link-netns x-is1\n" +
		"3: is2-1@if3: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN mode DEFAULT group default qlen 1000\\    link/ether 3a:1f:6e:2b:6a:0f brd ff:ff:ff:ff:ff:ff link-netns x-is2\n" +
		"4: is3-1@if4: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue state DOWN mode DEFAULT group default qlen 1000\\    link/ether 3a:1f:6e:2b:6a:10 brd ff:ff:ff:ff:ff:ff link-netns x-is3\n"
	up := parseUpInterfaces(out)
	if len(up) != 2 || !up["is1-1"] || !up["lo"] {
		t.Fatalf("%v", up)
	}
}
