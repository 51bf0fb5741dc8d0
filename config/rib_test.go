package config

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The rib section sets ecmp-only, SPF timers and distances for every
// protocol; a protocol section overrides only what it sets.
func TestRoutingResolution(t *testing.T) {
	c, err := Parse("r.yaml", []byte(`router-id: 10.0.0.1
rib:
  ecmp-only: true
  spf: {initial-delay: 20ms, long-delay: 3s}
  distance: {isis: 100}
isis:
  areas: [49.0001]
  spf: {initial-delay: 5ms}
ospf:
  ecmp-only: false
  interfaces: [{name: e0}]
`))
	if err != nil {
		t.Fatal(err)
	}
	is, os := c.Routing("isis"), c.Routing("ospf")
	// isis: ecmp-only from rib, initial delay its own, long delay from rib.
	if !is.ECMPOnly || is.SPF.InitialDelay != 5*time.Millisecond || is.SPF.LongDelay != 3*time.Second || is.Distance != 100 {
		t.Errorf("isis %+v", is)
	}
	// ospf: its own ecmp-only (false beats the rib's true), rib's timers,
	// default distance 110.
	if os.ECMPOnly || os.SPF.InitialDelay != 20*time.Millisecond || os.Distance != 110 {
		t.Errorf("ospf %+v", os)
	}
	if got := c.Protocols(); strings.Join(got, ",") != "isis,ospf" {
		t.Errorf("protocols %v", got)
	}
}

func TestRIBErrors(t *testing.T) {
	for in, want := range map[string]string{
		"router-id: 10.0.0.1\nrib:\n  distance: {bgp: 20}\n": `r.yaml:3: unknown key "bgp"`,
		"router-id: 10.0.0.1\nrib:\n  distance: {isis: 0}\n": `r.yaml:3: isis: 0 out of range 1..255`,
		"router-id: 10.0.0.1\nrib:\n  ecmp: true\n":          `r.yaml:3: unknown key "ecmp"`,
		"router-id: 10.0.0.1\nrib:\n  spf: {holddown: 1h}\n": `r.yaml:3: holddown: 1h out of range 0s..600s`,
	} {
		_, err := Parse("r.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

// A module section registered from outside the package is parsed with the
// same walker, reported at file:line, and absent keys stay absent.
func TestRegisteredSection(t *testing.T) {
	type toy struct{ Count int }
	Register(Section{Key: "toy-test", Parse: func(w *Walker, k, v *yaml.Node) any {
		out := &toy{}
		if !w.IsMapping(k, v) {
			return out
		}
		w.Mapping(v, map[string]Field{"count": SetInt(w, &out.Count, 1, 10)})
		return out
	}})
	c, err := Parse("m.yaml", []byte("router-id: 10.0.0.1\ntoy-test: {count: 3}\n"))
	if err != nil || c.Sections["toy-test"].(*toy).Count != 3 {
		t.Fatalf("%+v %v", c, err)
	}
	_, err = Parse("m.yaml", []byte("router-id: 10.0.0.1\ntoy-test:\n  count: 11\n  colour: red\n"))
	if err == nil || err.Error() != "m.yaml:3: count: 11 out of range 1..10\nm.yaml:4: unknown key \"colour\"" {
		t.Fatalf("err %v", err)
	}
	c, _ = Parse("m.yaml", []byte("router-id: 10.0.0.1\n"))
	if _, ok := c.Sections["toy-test"]; ok {
		t.Fatal("absent section present")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a core key did not panic")
		}
	}()
	Register(Section{Key: "isis"})
}

// RFC 8405 §6: holddown must be longer than time-to-learn, as the
// protocol will run them (its override over the rib's over the defaults).
func TestSPFTimersChecked(t *testing.T) {
	for in, want := range map[string]string{
		"router-id: 10.0.0.1\nrib:\n  spf: {holddown: 100ms}\n":                                                       "s.yaml:3: rib spf: holddown 100ms must be longer than time-to-learn 500ms (RFC 8405 §6)",
		"router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s}\nisis:\n  areas: [49.0001]\n  spf: {holddown: 30s}\n": "s.yaml:3: rib spf: holddown 10s must be longer than time-to-learn 20s (RFC 8405 §6)",
	} {
		_, err := Parse("s.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
	// A protocol's override is checked with the rib's other timers: here
	// isis's 1s holddown meets the rib's 20s time-to-learn.
	if _, err := Parse("s.yaml", []byte("router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s, holddown: 30s}\nisis:\n  areas: [49.0001]\n  spf: {holddown: 1s}\n")); err == nil || err.Error() != "s.yaml:6: isis spf: holddown 1s must be longer than time-to-learn 20s (RFC 8405 §6)" {
		t.Errorf("isis override: %v", err)
	}
}
