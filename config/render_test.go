package config_test

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/config/configtest"
)

// toyRoute is a routing protocol's section, as a protocol package writes
// one: registered with a distance, overriding the rib section
// (RoutingSection), naming interfaces (InterfaceLister), and taking BFD
// from the top level in its Check. Two of them (alpha, beta) exercise
// the hooks without a real protocol.
type toyRoute struct {
	ECMPOnly   *bool
	SPF        config.SPF  `render:",omitzero"`
	BFD        *config.BFD `render:",omitzero"`
	Interfaces []toyIface
}

type toyIface struct {
	Name string
	BFD  *config.BFD `render:",omitzero"`
	Line int
}

func (r *toyRoute) RIBOverrides() (*bool, *config.SPF) { return r.ECMPOnly, &r.SPF }

func (r *toyRoute) InterfaceRefs() []config.IfaceRef {
	var out []config.IfaceRef
	for _, i := range r.Interfaces {
		out = append(out, config.IfaceRef{Name: i.Name, Line: i.Line})
	}
	return out
}

func parseToyRoute(w *config.Walker, k, v *yaml.Node) any {
	if !w.IsMapping(k, v) {
		return nil
	}
	r := &toyRoute{}
	w.Mapping(v, map[string]config.Field{
		"ecmp-only": w.BoolPtr(&r.ECMPOnly),
		"spf":       w.SPF(&r.SPF),
		"bfd":       w.BFD(&r.BFD),
		"interfaces": w.List(func(v *yaml.Node) {
			it := toyIface{Line: v.Line}
			w.Mapping(v, map[string]config.Field{"name": w.Str(&it.Name, nil), "bfd": w.BFD(&it.BFD)})
			r.Interfaces = append(r.Interfaces, it)
		}),
	})
	return r
}

func checkToyRoute(w *config.Walker, c *config.Config, section any) {
	r := section.(*toyRoute)
	r.BFD = w.SectionBFD(r.BFD)
	for i := range r.Interfaces {
		r.Interfaces[i].BFD = config.InheritBFD(r.BFD, r.Interfaces[i].BFD)
	}
}

func init() {
	config.Register(config.Section{Key: "alpha", Parse: parseToyRoute, Check: checkToyRoute, Distance: 100})
	config.Register(config.Section{Key: "beta", Parse: parseToyRoute, Check: checkToyRoute, Distance: 120})
}

const toyFile = `router-id: 10.0.0.1
hostname: h
rib:
  ecmp-only: true
  spf: {initial-delay: 20ms, long-delay: 3s}
  distance: {beta: 90}
beta:
  interfaces: [{name: b0}]
alpha:
  ecmp-only: false
  spf: {initial-delay: 5ms}
  bfd: {multiplier: 5}
  interfaces:
    - {name: a0}
    - {name: a1, bfd: off}
bfd: {interval: 50ms}
`

// A routing section's overrides win over the rib section's, key by key;
// distances default to the registered ones; config.BFD comes from the top level
// (wherever it stands) through the section to the interfaces.
func TestRoutingSections(t *testing.T) {
	c, err := config.Parse("r.yaml", []byte(toyFile))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Routing("alpha"), c.Routing("beta")
	if a.ECMPOnly || a.SPF.InitialDelay != 5*time.Millisecond || a.SPF.LongDelay != 3*time.Second || a.Distance != 100 {
		t.Errorf("alpha %+v", a)
	}
	if !b.ECMPOnly || b.SPF.InitialDelay != 20*time.Millisecond || b.Distance != 90 {
		t.Errorf("beta %+v", b)
	}
	if r := c.Routing(""); !r.ECMPOnly || r.SPF.InitialDelay != 20*time.Millisecond || r.Distance != 0 {
		t.Errorf("rib default %+v", r)
	}
	al := c.Sections["alpha"].(*toyRoute)
	if got := config.EffectiveBFD(al.BFD, al.Interfaces[0].BFD); got == nil || *got != (config.BFD{Interval: 50 * time.Millisecond, Multiplier: 5}) {
		t.Errorf("alpha a0 bfd %+v", got)
	}
	if got := config.EffectiveBFD(al.BFD, al.Interfaces[1].BFD); got != nil {
		t.Errorf("alpha a1 bfd off: %+v", got)
	}
	refs := c.InterfaceRefs()
	if len(refs) != 3 || refs[0] != (config.IfaceRef{Name: "a0", Section: "alpha", Line: 14}) || refs[2] != (config.IfaceRef{Name: "b0", Section: "beta", Line: 8}) {
		t.Errorf("interface refs %+v", refs)
	}
	if w := c.MissingInterfaces(func(n string) bool { return n != "a1" }); len(w) != 1 || w[0] != `r.yaml:15: warning: alpha interface "a1" does not exist (yet) on this host` {
		t.Errorf("missing %q", w)
	}
	// RFC 8405 §6, checked at the section's spf line as the protocol
	// will run it (its override over the rib's over the defaults).
	_, err = config.Parse("s.yaml", []byte("router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s, holddown: 30s}\nalpha:\n  spf: {holddown: 1s}\n"))
	if err == nil || err.Error() != "s.yaml:5: alpha spf: holddown 1s must be longer than time-to-learn 20s (RFC 8405 §6)" {
		t.Errorf("alpha spf: %v", err)
	}
}

// What running-config writes parses back to the same configuration: the
// core's keys and the sections, the routing protocols' first.
func TestRenderRoundTrip(t *testing.T) {
	c1, err := config.Parse("a.yaml", []byte("log-level: debug\nsocket-group: \"\"\nfib: {metric: 30, on-shutdown: flush, resilient: {buckets: 64}}\n"+
		"metrics: {listen: \"127.0.0.1:9342\"}\n"+toyFile))
	if err != nil {
		t.Fatal(err)
	}
	out := configtest.RoundTrip(t, c1, func(c *config.Config) {
		for _, k := range []string{"alpha", "beta"} {
			for i := range c.Sections[k].(*toyRoute).Interfaces {
				c.Sections[k].(*toyRoute).Interfaces[i].Line = 0
			}
		}
	})
	for _, want := range []string{"system-id: 0100.0000.0001\n", "    initial-delay: 20ms\n", "  on-shutdown: flush\n", "distance:\n        alpha: 100\n        beta: 90\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if i, j := strings.Index(string(out), "\nalpha:"), strings.Index(string(out), "\nbeta:"); i < 0 || j < i {
		t.Errorf("sections out of order:\n%s", out)
	}
}
