package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// toyRoute is a routing protocol's section, as a protocol package writes
// one: registered with a distance, overriding the rib section
// (RoutingSection), naming interfaces (InterfaceLister), and taking BFD
// from the top level in its Check. Two of them (alpha, beta) exercise
// the hooks without a real protocol.
type toyRoute struct {
	ECMPOnly   *bool
	SPF        SPF  `render:",omitzero"`
	BFD        *BFD `render:",omitzero"`
	Interfaces []toyIface
}

type toyIface struct {
	Name string
	BFD  *BFD `render:",omitzero"`
	Line int
}

func (r *toyRoute) RIBOverrides() (*bool, *SPF) { return r.ECMPOnly, &r.SPF }

func (r *toyRoute) InterfaceRefs() []IfaceRef {
	var out []IfaceRef
	for _, i := range r.Interfaces {
		out = append(out, IfaceRef{Name: i.Name, Line: i.Line})
	}
	return out
}

func parseToyRoute(w *Walker, k, v *yaml.Node) any {
	if !w.IsMapping(k, v) {
		return nil
	}
	r := &toyRoute{}
	w.Mapping(v, map[string]Field{
		"ecmp-only": w.BoolPtr(&r.ECMPOnly),
		"spf":       w.SPF(&r.SPF),
		"bfd":       w.BFD(&r.BFD),
		"interfaces": w.List(func(v *yaml.Node) {
			it := toyIface{Line: v.Line}
			w.Mapping(v, map[string]Field{"name": w.Str(&it.Name, nil), "bfd": w.BFD(&it.BFD)})
			r.Interfaces = append(r.Interfaces, it)
		}),
	})
	return r
}

func checkToyRoute(w *Walker, c *Config, section any) {
	r := section.(*toyRoute)
	r.BFD = w.SectionBFD(r.BFD)
	for i := range r.Interfaces {
		r.Interfaces[i].BFD = InheritBFD(r.BFD, r.Interfaces[i].BFD)
	}
}

func init() {
	Register(Section{Key: "alpha", Parse: parseToyRoute, Check: checkToyRoute, Distance: 100})
	Register(Section{Key: "beta", Parse: parseToyRoute, Check: checkToyRoute, Distance: 120})
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
// distances default to the registered ones; BFD comes from the top level
// (wherever it stands) through the section to the interfaces.
func TestRoutingSections(t *testing.T) {
	c, err := Parse("r.yaml", []byte(toyFile))
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
	if got := EffectiveBFD(al.BFD, al.Interfaces[0].BFD); got == nil || *got != (BFD{Interval: 50 * time.Millisecond, Multiplier: 5}) {
		t.Errorf("alpha a0 bfd %+v", got)
	}
	if got := EffectiveBFD(al.BFD, al.Interfaces[1].BFD); got != nil {
		t.Errorf("alpha a1 bfd off: %+v", got)
	}
	refs := c.InterfaceRefs()
	if len(refs) != 3 || refs[0] != (IfaceRef{Name: "a0", Section: "alpha", Line: 14}) || refs[2] != (IfaceRef{Name: "b0", Section: "beta", Line: 8}) {
		t.Errorf("interface refs %+v", refs)
	}
	if w := c.MissingInterfaces(func(n string) bool { return n != "a1" }); len(w) != 1 || w[0] != `r.yaml:15: warning: alpha interface "a1" does not exist (yet) on this host` {
		t.Errorf("missing %q", w)
	}
	// RFC 8405 §6, checked at the section's spf line as the protocol
	// will run it (its override over the rib's over the defaults).
	_, err = Parse("s.yaml", []byte("router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s, holddown: 30s}\nalpha:\n  spf: {holddown: 1s}\n"))
	if err == nil || err.Error() != "s.yaml:5: alpha spf: holddown 1s must be longer than time-to-learn 20s (RFC 8405 §6)" {
		t.Errorf("alpha spf: %v", err)
	}
}

// What running-config writes parses back to the same configuration: the
// core's keys and the sections, the routing protocols' first.
func TestRenderRoundTrip(t *testing.T) {
	c1, err := Parse("a.yaml", []byte("log-level: debug\nsocket-group: \"\"\nfib: {metric: 30, on-shutdown: flush, resilient: {buckets: 64}}\n"+
		"metrics: {listen: \"127.0.0.1:9342\"}\n"+toyFile))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(c1)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("b.yaml", out)
	if err != nil {
		t.Fatalf("rendered config does not parse: %v\n%s", err, out)
	}
	for _, c := range []*Config{c1, c2} {
		c.File = ""
		for _, k := range []string{"alpha", "beta"} {
			for i := range c.Sections[k].(*toyRoute).Interfaces {
				c.Sections[k].(*toyRoute).Interfaces[i].Line = 0
			}
		}
	}
	// The rendered file states the default SPF timers the rib applies.
	c1.RIB.SPF = c1.RIB.SPF.Over(DefaultSPF)
	if !reflect.DeepEqual(c1, c2) {
		t.Errorf("round trip differs: %v\n%s", Diff(c1, c2), out)
	}
	for _, want := range []string{"system-id: 0100.0000.0001\n", "    initial-delay: 20ms\n", "  on-shutdown: flush\n", "distance:\n        alpha: 100\n        beta: 90\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if i, j := strings.Index(string(out), "\nalpha:"), strings.Index(string(out), "\nbeta:"); i < 0 || j < i {
		t.Errorf("sections out of order:\n%s", out)
	}
}
