package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fared/fared/config"
	"github.com/fared/fared/inof"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/isis"
)

const inofTopo = `name: inof
inof: {password: labpw}
zones:
  z1: [h1, tgt]
  z2: [h2, extra-host]
nodes:
  spine1: {kind: fared, inof: reflector}
  spine2: {kind: fared, inof: reflector}
  leaf1:  {kind: fared, inof: switch}
  leaf2:  {kind: fared, inof: switch}
  far:    {kind: fared, inof: switch}
  h1:     {kind: host, inof: host, hook: /bin/true}
  h2:     {kind: host, inof: host, role: target, nqn: nqn.2014-08.org.example:h2}
  tgt:    {kind: host, agent: lldpd, nqn: nqn.2014-08.org.example:tgt}
  plain:  {kind: host, agent: none}
  inc1:   {kind: host, config: {inc: {role: client}}}
links:
  - {a: leaf1, b: spine1}
  - {a: leaf1, b: spine2}
  - {a: leaf2, b: spine1}
  - {a: leaf2, b: spine2}
  - {a: far, b: leaf1}
  - {a: h1, b: leaf1}
  - {a: h1, b: leaf2}
  - {a: h2, b: leaf2}
  - {a: tgt, b: leaf1}
  - {a: plain, b: leaf2}
  - {a: inc1, b: leaf2}
`

func planINOF(t *testing.T) *Lab {
	t.Helper()
	l := planLab(t, inofTopo, Options{RunDir: "/run/x"})
	return l
}

// parseRendered runs fared's own config parser (with the inof section
// registered) on what farelab renders.
func parseRendered(t *testing.T, l *Lab, node string) *config.Config {
	t.Helper()
	b, err := l.renderNodeConfig(l.Node(node))
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(node+".yaml", b)
	if err != nil {
		t.Fatalf("fared refuses the rendered config of %s: %v\n%s", node, err, b)
	}
	return c
}

func TestINOFTopology(t *testing.T) {
	l := planINOF(t)
	h1 := l.Node("h1")
	if h1.Kind != "host" || h1.Agent != AgentFared || h1.HostRole != "initiator" || h1.HostID != "h1" || h1.Socket == "" {
		t.Fatalf("h1 %+v", h1)
	}
	if tgt := l.Node("tgt"); tgt.Agent != AgentLLDPD || tgt.INOF != "host" || tgt.HostRole != "target" || tgt.Socket != "" {
		t.Fatalf("tgt %+v", tgt)
	}
	// The leaf's interfaces toward hosts are edges; toward spines not.
	var edges []string
	for _, f := range l.Node("leaf1").Interfaces {
		if f.Edge {
			edges = append(edges, f.Name)
		}
	}
	if strings.Join(edges, ",") != "h1-1,tgt-1" {
		t.Fatalf("leaf1 edges %v", edges)
	}
	if z := l.Zones(); !slices.Equal(z["z2"], []string{"h2", "extra-host"}) {
		t.Fatalf("zones %v", z)
	}
}

func TestINOFRender(t *testing.T) {
	l := planINOF(t)
	rr := inof.Section(parseRendered(t, l, "spine1"))
	if rr.Role != inof.RoleReflector || rr.ClusterID.String() != "10.255.255.1" || !rr.Zones.AutoAdd ||
		!slices.Equal(rr.Zones.Zones["z1"], []string{"h1", "tgt"}) {
		t.Fatalf("reflector %+v", rr)
	}
	// Its clients: leaf1 and leaf2 over the link addresses (single-hop
	// BFD), far over loopbacks (not linked: no BFD). Never the other
	// reflector.
	var got []string
	for _, n := range rr.Neighbors {
		got = append(got, n.Address.String()+"/"+n.LocalAddress.String()+"/"+map[bool]string{true: "bfd", false: "-"}[n.BFD]+"/"+n.Password)
	}
	leaf1, spine1 := l.Node("leaf1"), l.Node("spine1")
	want := []string{
		leaf1.Iface("spine1-1").Addr.Addr().String() + "/" + spine1.Iface("leaf1-1").Addr.Addr().String() + "/bfd/labpw",
		l.Node("leaf2").Iface("spine1-1").Addr.Addr().String() + "/" + spine1.Iface("leaf2-1").Addr.Addr().String() + "/bfd/labpw",
		l.Node("far").Loopback.String() + "/" + spine1.Loopback.String() + "/-/labpw",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reflector neighbors\n got %v\nwant %v", got, want)
	}
	sw := inof.Section(parseRendered(t, l, "leaf1"))
	if sw.Role != inof.RoleSwitch || len(sw.Neighbors) != 2 || !slices.Equal(sw.Interfaces, []string{"h1-1", "tgt-1"}) || sw.Zones != nil {
		t.Fatalf("switch %+v", sw)
	}
	// The leaf's IS-IS runs passive toward hosts (their subnets reach the
	// fabric), with adjacencies toward the spines.
	c := parseRendered(t, l, "leaf1")
	for _, f := range isis.Section(c).Interfaces {
		if f.Passive != strings.HasPrefix(f.Name, "h1-") && f.Passive != strings.HasPrefix(f.Name, "tgt-") {
			t.Fatalf("leaf1 isis interface %s passive=%v", f.Name, f.Passive)
		}
	}
	h := inof.Section(parseRendered(t, l, "h2"))
	if h.Role != inof.RoleHost || h.ID != "h2" || h.HostRole != l2.RoleTarget || h.NQN != "nqn.2014-08.org.example:h2" ||
		!slices.Equal(h.Interfaces, []string{"leaf2-1"}) {
		t.Fatalf("host %+v", h)
	}
	hc := parseRendered(t, l, "h1")
	if hc.FIB.Enabled || isis.Section(hc) != nil || inof.Section(hc).Hook != "/bin/true" || len(inof.Section(hc).Interfaces) != 2 {
		t.Fatalf("h1 config %+v", hc)
	}
	// A fared host without inof carries its other sections (unknown to
	// this build's parser: the text is what is checked).
	b, _ := l.renderNodeConfig(l.Node("inc1"))
	if !bytes.Contains(b, []byte("inc:\n    role: client")) || bytes.Contains(b, []byte("inof:")) {
		t.Fatalf("inc1 config:\n%s", b)
	}
}

// The lldpd host's TLV, as farelab writes it for lldpcli, decodes with the
// switch's decoder (two independent encoders of docs/inof.md).
func TestLLDPInfoMatchesDecoder(t *testing.T) {
	l := planINOF(t)
	tgt := l.Node("tgt")
	h, err := l2.DecodeLLDPInfo(LLDPInfo(tgt))
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != "tgt" || h.Role != l2.RoleTarget || h.NQN != tgt.NQN || len(h.Addrs) != 1 || h.Addrs[0] != tgt.Interfaces[0].Addr.Addr() {
		t.Fatalf("%+v", h)
	}
	conf := l.renderLLDPD(tgt)
	if !strings.Contains(conf, "configure lldp custom-tlv oui 02,46,44 subtype 1 oui-info 01,03,74,67,74,02,01,02,") ||
		!strings.Contains(conf, "configure lldp tx-interval 1") {
		t.Fatalf("lldpd.conf:\n%s", conf)
	}
	argv := strings.Join(l.LLDPDCommand(tgt), " ")
	if !strings.Contains(argv, "lldpd -d -u "+filepath.Join(tgt.Dir, "lldpd.sock")+" -I leaf1-1 ") {
		t.Fatal(argv)
	}
}

func TestINOFTopologyErrors(t *testing.T) {
	base := "name: x\nnodes:\n  s: {kind: fared, inof: switch}\n"
	for _, tc := range []struct{ in, want string }{
		{base + "  h: {kind: host, agent: bird}\n", `line 4: node h: agent "bird": want fared, lldpd or none`},
		{base + "  h: {kind: host, level: 1}\n", `line 4: node h: level is not a setting of a host`},
		{base + "  h: {kind: host, role: boss}\n", `node h: role "boss": want initiator, target or both`},
		{base + "  h: {kind: frr, role: target}\n", `node h: role is a setting of kind host`},
		{base + "  h: {kind: frr, inof: switch}\n", `node h: inof runs on fared nodes`},
		{base + "  h: {kind: fared, inof: host}\n", `node h: inof "host": want switch or reflector`},
		{base + "  h: {kind: host, agent: none, inof: host}\n", `agent none runs nothing`},
		{base + "  h: {kind: host, agent: lldpd, hook: /x}\n", `hook needs agent fared`},
		{base + "  h: {kind: host, config: {inof: {role: host}}, inof: host}\n", `config: inof is rendered by farelab`},
		{base + "  h: {kind: host}\n  g: {kind: host}\nlinks:\n  - {a: h, b: g}\n", `link 0: two hosts (h, g): hosts attach to switches`},
		{base + "zones: {z: [a]}\n", `zones: no node has inof: reflector`},
		{base + "zones: {default: [a]}\n", `zone name "default"`},
		{base + "inof: {lldp-oui: zz}\n", `lldp-oui "zz"`},
		{base + "  t: {kind: fared, inof: switch}\n  h: {kind: host}\nlinks:\n  - {lan: seg, nodes: [s, t, h]}\n",
			`lan "seg" with hosts is a shared switch port: it needs exactly one fared node`},
	} {
		if _, err := ParseTopology([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// A LAN with hosts is a shared switch port: the switch's side faces hosts
// (iNOF runs there, the IGP is passive), the bridge forwards the
// nearest-bridge group, and the hosts route through the switch.
func TestINOFSharedPort(t *testing.T) {
	l := planLab(t, `name: shp
inof: {max-hosts-per-port: 9}
nodes:
  rr:   {kind: fared, inof: reflector}
  leaf: {kind: fared, inof: switch}
  ini:  {kind: host, inof: host}
  evil: {kind: host, agent: none}
links:
  - {a: leaf, b: rr}
  - {lan: seg, nodes: [leaf, ini, evil]}
`, Options{RunDir: "/run/x"})
	if lk := l.Link(1); !lk.Shared || lk.LAN != "seg" {
		t.Fatalf("link %+v", lk)
	}
	if f := l.Node("leaf").Iface("seg"); f == nil || !f.Edge {
		t.Fatalf("leaf's LAN interface %+v", f)
	}
	if f := l.Node("rr").Iface("leaf-1"); f.Edge {
		t.Fatal("a switch link is an edge")
	}
	sw := inof.Section(parseRendered(t, l, "leaf"))
	if !slices.Equal(sw.Interfaces, []string{"seg"}) || sw.MaxHostsPerPort != 9 {
		t.Fatalf("leaf inof %+v", sw)
	}
	c := parseRendered(t, l, "leaf")
	for _, f := range isis.Section(c).Interfaces {
		if f.Name == "seg" && !f.Passive {
			t.Fatal("IS-IS not passive on the shared port")
		}
	}
	if h := inof.Section(parseRendered(t, l, "ini")); !slices.Equal(h.Interfaces, []string{"seg"}) {
		t.Fatalf("ini inof %+v", h)
	}
}

// TestZoneHostsRunAgent: a zone member that is a lab host without an iNOF
// agent (kind host without inof: host) would never register; the
// topology is refused at the member's file:line, naming the host and the
// fix. Hosts with inof: host (or agent lldpd, which implies it) and ids
// of hosts that exist only in a test's traffic stay allowed.
func TestZoneHostsRunAgent(t *testing.T) {
	const head = "name: z\nnodes:\n  r: {kind: fared, inof: reflector}\n  s: {kind: fared, inof: switch}\n" +
		"  ok: {kind: host, inof: host}\n  tgt: {kind: host, agent: lldpd}\n"
	// line 7 on: further nodes, then the zones.
	file := filepath.Join(t.TempDir(), "topo.yaml")
	for _, tc := range []struct{ nodes, zones, want string }{
		{"  h: {kind: host}\n", "zones:\n  z1: [ok,\n    h]\n",
			file + ":10: zones: z1: host h runs no iNOF agent (kind host without inof: host), so it would never register: add inof: host to it"},
		{"  h: {kind: host, id: store-7}\n", "zones:\n  z1: [ok]\n  z2: [tgt, store-7]\n",
			file + ":10: zones: z2: host h runs no iNOF agent"},
		{"  h: {kind: host, agent: none}\n", "zones:\n  z1: [h]\n",
			file + ":9: zones: z1: host h runs no iNOF agent (kind host without inof: host), so it would never register: give it agent fared or lldpd and inof: host"},
		{"  h: {kind: host}\n", "zones:\n  z1: [ok, tgt, traffic-only]\n", ""},
		{"  h: {kind: host, inof: host, id: store-7}\n", "zones:\n  z1: [ok, store-7, h]\n", ""},
	} {
		in := head + tc.nodes + tc.zones
		if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTopology(file)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want it accepted", in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", in, err, tc.want)
		}
	}
}
