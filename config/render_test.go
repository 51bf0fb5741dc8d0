package config

import (
	"reflect"
	"strings"
	"testing"
)

// clearLines zeroes the file and line bookkeeping, which a rendered file
// does not keep.
func clearLines(c *Config) {
	c.File = ""
	if c.ISIS != nil {
		for i := range c.ISIS.Interfaces {
			c.ISIS.Interfaces[i].Line = 0
		}
		for i := range c.ISIS.Prefixes {
			c.ISIS.Prefixes[i].Line = 0
		}
	}
	if c.OSPF != nil {
		for i := range c.OSPF.Interfaces {
			c.OSPF.Interfaces[i].Line = 0
		}
		for i := range c.OSPF.Prefixes {
			c.OSPF.Prefixes[i].Line = 0
		}
	}
}

// What running-config writes parses back to the same configuration.
func TestRenderRoundTrip(t *testing.T) {
	for name, in := range map[string]string{
		"example": Example(),
		"both": `hostname: "2"
router-id: 10.0.0.1
log-level: debug
rib:
  ecmp-only: true
  spf: {initial-delay: 20ms}
  distance: {isis: 100}
fib: {metric: 30, on-shutdown: flush, resilient: {buckets: 64}}
isis:
  net: [49.0001.0000.0000.0009.00, 49.0002.0000.0000.0009.00]
  level: 1-2
  ecmp-only: false
  spf: {long-delay: 2s}
  leak-l2-to-l1: [10.0.0.0/8]
  interfaces:
    - {name: e0, type: p2p, level: 1, bandwidth: 25G, hello-interval: 500ms}
  prefixes:
    - {prefix: 10.9.0.0/24, metric: 5, path-bandwidth: 1.5G}
ospf:
  router-id: 10.0.0.9
  interfaces:
    - {name: o0, area: 0.0.0.1, type: p2p, cost: 7, bandwidth: 40G}
    - {name: o1, area: 0, passive: true}
  prefixes:
    - {prefix: 10.8.0.0/24, area: 0, path-bandwidth: 10G}
    - {prefix: 10.7.0.0/24, external: true, metric: 20}
`,
	} {
		c1, err := Parse("a.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := Render(c1)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Parse("b.yaml", out)
		if err != nil {
			t.Fatalf("%s: rendered config does not parse: %v\n%s", name, err, out)
		}
		clearLines(c1)
		clearLines(c2)
		// The rendered file states the default SPF timers the rib applies.
		c1.RIB.SPF = c1.RIB.SPF.Over(DefaultSPF)
		if !reflect.DeepEqual(c1, c2) {
			t.Errorf("%s: round trip differs: %v\n%s", name, Diff(c1, c2), out)
		}
	}
}

func TestRenderShape(t *testing.T) {
	c, err := Parse("a.yaml", []byte("router-id: 10.0.0.1\nhostname: h\nisis:\n  areas: [49.0001]\n  level: 1-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Render(c)
	for _, want := range []string{"system-id: 0100.0000.0001\n", "  level: 1-2\n", "  areas: [49.0001]\n", "  lsp-mtu: 1492\n",
		"    initial-delay: 0s\n", "  on-shutdown: keep\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
