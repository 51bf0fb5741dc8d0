package inof

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/inof/l2"
)

func load(t *testing.T, text string) (*Config, error) {
	t.Helper()
	c, err := config.Parse("fared.yaml", []byte("router-id: 10.255.0.1\nhostname: sw\n"+text))
	if err != nil {
		return nil, err
	}
	return Section(c), nil
}

func TestConfigReflector(t *testing.T) {
	c, err := load(t, `inof:
  role: reflector
  cluster-id: 10.255.255.1
  neighbors:
    - {address: 10.254.0.1, local-address: 10.254.0.0, password: s3cret, ttl-security: 1}
    - {address: 10.255.0.9, bfd: false, port: 1179}
  interfaces: [h1-1]
  graceful-restart: {restart-time: 8s}
  zones:
    z1: [h1, h2]
    empty:
  default-zone: {auto-add: true, members: [h9]}
  filters:
    - {direction: export, neighbors: [10.254.0.1], zones: [z1]}
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Role != RoleReflector || c.ClusterID != netip.MustParseAddr("10.255.255.1") || c.Restart != 8*time.Second || c.ASN != 65000 {
		t.Fatalf("%+v", c)
	}
	if n := c.Neighbors[0]; n.Password != "s3cret" || n.TTLSecurity != 1 || !n.BFD || n.LocalAddress != netip.MustParseAddr("10.254.0.0") {
		t.Fatalf("neighbor %+v", n)
	}
	if n := c.Neighbors[1]; n.BFD || n.Port != 1179 {
		t.Fatalf("neighbor %+v", n)
	}
	if !c.Zones.AutoAdd || !slices.Equal(c.Zones.Zones["z1"], []string{"h1", "h2"}) || len(c.Zones.Zones) != 3 ||
		!slices.Equal(c.Zones.Zones["default"], []string{"h9"}) {
		t.Fatalf("zones %+v", c.Zones)
	}
	if _, ok := c.Zones.Zones["empty"]; !ok {
		t.Fatal("empty zone missing")
	}
	if len(c.Filters) != 1 || c.Filters[0].Direction != "export" || c.Filters[0].Zones[0] != "z1" {
		t.Fatalf("filters %+v", c.Filters)
	}
}

func TestConfigHost(t *testing.T) {
	c, err := load(t, `inof: {role: host, interfaces: [leaf1-1, leaf2-1], host-role: target, nqn: nqn.2014-08.org.example:t1, hook: /bin/true, hold: 2s}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.HostRole != l2.RoleTarget || c.HostHold != 2*time.Second || c.Hook != "/bin/true" || len(c.Interfaces) != 2 {
		t.Fatalf("%+v", c)
	}
}

// Every mistake, with its line, at once.
func TestConfigErrors(t *testing.T) {
	_, err := load(t, `inof:
  role: switch
  cluster-id: 10.0.0.1
  zones: {z1: [a]}
  neighbors:
    - {address: nope}
    - {local-address: 10.0.0.1}
  hook: /bin/true
  lldp-oui: 1:2
  filters:
    - {direction: sideways, zones: [z1], switches: [10.0.0.1]}
  host-hold: {min: 20s, max: 10s}
`)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`fared.yaml:5: inof: cluster-id is set on a reflector`,
		`fared.yaml:6: inof: zones is set on a reflector`,
		`fared.yaml:8: address: invalid address "nope"`,
		`fared.yaml:9: neighbor: missing required key "address"`,
		`fared.yaml:10: inof: hook is not a setting of role switch`,
		`fared.yaml:11: lldp-oui: OUI "1:2"`,
		`fared.yaml:13: direction: must be import or export`,
		`fared.yaml:13: filter: set zones or switches (one of them)`,
		`fared.yaml:14: inof: host-hold min 20s is above max 10s`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"inof: {interfaces: [a]}", `fared.yaml:3: inof: missing required key "role"`},
		{"inof: {role: reflector}", "a reflector needs cluster-id"},
		{"inof: {role: host}", "a host needs interfaces"},
		{"inof: {role: reflector, cluster-id: 1.1.1.1, zones: {default: [a]}}", "the default zone is configured under default-zone"},
		{"inof: {role: reflector, cluster-id: 1.1.1.1, zones: {\"bad zone\": [a]}}", `zone name "bad zone"`},
		{"inof: {role: host, interfaces: [a], nqn: foo}", "want an NVMe qualified name"},
	} {
		if _, err := load(t, tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// Host identity keys: a switch's caps, binding hold, static bindings and
// host keys; a host's identity MAC and key; their mistakes with lines.
func TestConfigIdentity(t *testing.T) {
	c, err := load(t, `inof:
  role: switch
  max-hosts-per-port: 8
  binding-hold: 0s
  notify: {attempts: 3}
  bindings:
    - {id: tgt1, ports: [tgt1-1, tgt1-2], mac: "02:00:00:00:00:07"}
    - {id: lldp1, ports: [lldp1-1]}
  host-keys:
    - {id: tgt1, key-id: 1, secret: 0123456789abcdef}
    - {id: tgt1, key-id: 2, secret: fedcba9876543210}
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxHostsPerPort != 8 || c.BindingHold != 0 || c.NotifyAttempts != 3 || len(c.Bindings) != 2 ||
		c.Bindings[0].MAC.String() != "02:00:00:00:00:07" || !slices.Equal(c.Bindings[0].Ports, []string{"tgt1-1", "tgt1-2"}) ||
		len(c.HostKeys) != 2 || c.HostKeys[1].KeyID != 2 {
		t.Fatalf("%+v", c)
	}
	fc := c.fabricConfig(netip.MustParseAddr("10.255.0.1"), "sw")
	if fc.BindingHold >= 0 || len(fc.Keys["tgt1"]) != 2 || string(fc.Keys["tgt1"][0].Secret) != "0123456789abcdef" || len(fc.Static) != 2 {
		t.Fatalf("fabric config %+v", fc)
	}
	d, err := load(t, "inof: {role: switch}")
	if err != nil || d.MaxHostsPerPort != 4 || d.BindingHold != 24*time.Hour || d.NotifyAttempts != 6 {
		t.Fatalf("defaults %+v %v", d, err)
	}
	h, err := load(t, `inof: {role: host, interfaces: [a], mac: "02:00:00:00:00:09", key: {id: 1, secret: 0123456789abcdef}}`)
	if err != nil || h.HostMAC.String() != "02:00:00:00:00:09" || h.Key == nil || h.Key.ID != 1 || string(h.Key.Secret) != "0123456789abcdef" {
		t.Fatalf("host %+v %v", h, err)
	}
	if r := redacted(h); string(r.Key.Secret) != "(secret)" || string(h.Key.Secret) != "0123456789abcdef" {
		t.Fatal("redacted")
	}

	_, err = load(t, `inof:
  role: switch
  max-hosts-per-port: 0
  bindings:
    - {id: tgt1, ports: [tgt1-1], mac: nope}
    - {id: tgt1, ports: [x]}
    - {ports: [y]}
  host-keys:
    - {id: tgt1, key-id: 1, secret: short}
    - {id: tgt1, key-id: 70000, secret: 0123456789abcdef}
  key: {id: 1, secret: 0123456789abcdef}
`)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"fared.yaml:5: max-hosts-per-port: 0 out of range",
		`fared.yaml:7: binding: mac: want a MAC address like 02:00:00:00:00:01, got "nope"`,
		"fared.yaml:9: binding: needs id and ports",
		"fared.yaml:6: inof: bindings: tgt1 twice",
		"fared.yaml:11: secret: 5 bytes, want 16..255",
		"fared.yaml:12: key-id: 70000 out of range",
		"fared.yaml:13: inof: key is not a setting of role switch",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if _, err := load(t, "inof: {role: host, interfaces: [a], host-keys: []}"); err == nil || !strings.Contains(err.Error(), "host-keys is not a setting of role host") {
		t.Errorf("host-keys on a host: %v", err)
	}
}

// The BGP sessions' BFD takes a key chain (RFC 5880 §6.7), BFD's rules.
func TestConfigBFDAuthentication(t *testing.T) {
	c, err := load(t, `inof:
  role: switch
  neighbors: [{address: 10.254.0.1}]
  bfd:
    min-tx: 200ms
    authentication: {keys: [{id: 3, algorithm: meticulous-keyed-sha1, secret: bgp-bfd}]}
`)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.BFDAuth; a == nil || len(a.Keys) != 1 || a.Keys[0].ID != 3 || a.Keys[0].Algorithm != "meticulous-keyed-sha1" || c.BFDTx != 200*time.Millisecond {
		t.Fatalf("bfd: %+v %v", a, c.BFDTx)
	}
	if d := strings.Join(config.Diff(redacted(c), redacted(&Config{})), " "); strings.Contains(d, "bgp-bfd") {
		t.Fatalf("a reload report shows the secret: %s", d)
	}
	_, err = load(t, "inof:\n  role: switch\n  bfd:\n    authentication: {keys: [{id: 1, algorithm: md5, secret: x}]}\n")
	if err == nil || !strings.Contains(err.Error(), `fared.yaml:6: algorithm: BFD does not support algorithm "md5"`) {
		t.Fatalf("got %v", err)
	}
}

// dual-home-window: 60 s by default, 0 means any time (the fabric's -1).
func TestConfigDualHomeWindow(t *testing.T) {
	d, err := load(t, "inof: {role: switch}")
	if err != nil || d.DualHomeWindow != time.Minute {
		t.Fatalf("default %v %v", d.DualHomeWindow, err)
	}
	if fc := d.fabricConfig(netip.MustParseAddr("10.255.0.1"), "sw"); fc.DualHomeWindow != time.Minute {
		t.Fatalf("fabric %v", fc.DualHomeWindow)
	}
	c, err := load(t, "inof: {role: switch, dual-home-window: 0s}")
	if err != nil || c.fabricConfig(netip.MustParseAddr("10.255.0.1"), "sw").DualHomeWindow >= 0 {
		t.Fatalf("0s: %v", err)
	}
	if _, err := load(t, "inof: {role: host, interfaces: [a], dual-home-window: 5s}"); err == nil || !strings.Contains(err.Error(), "not a setting of role host") {
		t.Fatalf("host: %v", err)
	}
}
