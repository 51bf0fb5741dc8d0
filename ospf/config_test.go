package ospf

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
)

func TestOSPFParse(t *testing.T) {
	y := `router-id: 10.255.0.1
hostname: leaf1
ospf:
  path-bandwidth-subtlv: 32771
  lsa-refresh: 10m
  interfaces:
    - {name: eth0, area: 0.0.0.0, type: p2p, cost: 20, bandwidth: 100G, hello-interval: 1s, dead-interval: 4s}
    - {name: eth1, area: 1, priority: 0}
    - {name: lo, area: 0.0.0.0, passive: true}
  prefixes:
    - {prefix: 10.10.1.0/24, area: 0.0.0.1, path-bandwidth: 40G}
    - {prefix: 192.0.2.0/24, external: true, metric: 20}
`
	c, err := config.Parse("t.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		PathBandwidthSubTLV: 32771,
		LSARefresh:          10 * time.Minute,
		LSAGenInterval:      time.Second,
		MinLSArrival:        time.Second,
		RetransmitInterval:  5 * time.Second,
		Interfaces: []Interface{
			{Name: "eth0", Area: 0, Type: "p2p", Cost: 20, Bandwidth: 100e9, HelloInterval: time.Second, DeadInterval: 4 * time.Second, Priority: 1, Line: 7},
			{Name: "eth1", Area: 1, Type: "broadcast", Cost: 10, HelloInterval: 10 * time.Second, DeadInterval: 40 * time.Second, Priority: 0, Line: 8},
			{Name: "lo", Area: 0, Type: "broadcast", Cost: 10, HelloInterval: 10 * time.Second, DeadInterval: 40 * time.Second, Priority: 1, Passive: true, Line: 9},
		},
		Prefixes: []Prefix{
			{Prefix: netip.MustParsePrefix("10.10.1.0/24"), Area: 1, PathBandwidth: 40e9, Line: 11},
			{Prefix: netip.MustParsePrefix("192.0.2.0/24"), Metric: 20, External: true, Line: 12},
		},
	}
	if !reflect.DeepEqual(Section(c), want) {
		t.Errorf("got  %+v\nwant %+v", Section(c), want)
	}
	if RouterID(c) != netip.MustParseAddr("10.255.0.1") {
		t.Errorf("router id %v", RouterID(c))
	}
	if got := Section(c).Areas(); !reflect.DeepEqual(got, []uint32{0, 1}) {
		t.Errorf("areas %v", got)
	}
}

func TestOSPFDefaults(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte("router-id: 10.0.0.1\nhostname: x\nospf:\n  router-id: 10.9.9.9\n  interfaces: [{name: e0, area: 0.0.0.2}]\n  prefixes: [{prefix: 10.0.0.1/32}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if RouterID(c).String() != "10.9.9.9" {
		t.Errorf("router id %v", RouterID(c))
	}
	// A prefix without an area goes to the only area.
	if Section(c).Prefixes[0].Area != 2 || config.AreaString(2) != "0.0.0.2" {
		t.Errorf("prefix area %d", Section(c).Prefixes[0].Area)
	}
	if Section(c).Interfaces[0].DeadInterval != 40*time.Second || Section(c).PathBandwidthSubTLV != 32770 {
		t.Errorf("defaults %+v", Section(c))
	}
}

func TestOSPFErrors(t *testing.T) {
	for _, tc := range []struct{ y, want string }{
		{"ospf:\n  interfaces: [{name: e0, type: nbma}]\n", "t.yaml:4: type: must be p2p or broadcast"},
		{"ospf:\n  interfaces: [{name: e0, area: 1.2.3}]\n", "t.yaml:4: area: invalid area"},
		{"ospf:\n  interfaces: [{name: e0, hello-interval: 10s, dead-interval: 5s}]\n", "t.yaml:4: interface e0: dead-interval 5s must be longer"},
		{"ospf:\n  interfaces: [{name: e0, hello-interval: 1500ms}]\n", "must be whole seconds"},
		{"ospf:\n  path-bandwidth-subtlv: 2\n", "t.yaml:4: path-bandwidth-subtlv: codepoint 2 is assigned (Prefix SID)"},
		{"ospf:\n  prefixes: [{prefix: 2001:db8::/32}]\n", "t.yaml:4: prefix: 2001:db8::/32 is not IPv4"},
		{"ospf:\n  interfaces: [{name: e0, area: 0}, {name: e1, area: 1}]\n  prefixes:\n    - {prefix: 10.0.0.0/8}\n", "t.yaml:6: prefix 10.0.0.0/8: area required"},
		{"ospf:\n  interfaces: [{name: e0, area: 0}]\n  prefixes:\n    - {prefix: 10.0.0.0/8, area: 3}\n", "t.yaml:6: prefix 10.0.0.0/8: area 0.0.0.3 has no interface"},
		{"ospf:\n  prefixes:\n    - {prefix: 10.0.0.0/8, external: true, area: 0}\n", "an external prefix has no area"},
		{"ospf:\n  interfaces: [{name: e0, cost: 0}]\n", "t.yaml:4: cost: 0 out of range 1..65535"},
		{"ospf:\n  bogus: 1\n", "t.yaml:4: unknown key \"bogus\""},
	} {
		_, err := config.Parse("t.yaml", []byte("router-id: 10.0.0.1\nhostname: x\n"+tc.y))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.y, err, tc.want)
		}
	}
}
