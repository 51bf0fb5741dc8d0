package config_test

// The routing protocols' sections through config's generic hooks: the
// rib overrides (RoutingSection), BFD inherited from the top level
// (Section.Check), key chains under each protocol's rules, and a whole
// file rendered and parsed back.

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/config/configtest"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
)

// clearLines zeroes the file and line bookkeeping, which a rendered file
// does not keep.
func clearLines(c *config.Config) {
	c.File = ""
	if is := isis.Section(c); is != nil {
		for i := range is.Interfaces {
			is.Interfaces[i].Line = 0
		}
		for i := range is.Prefixes {
			is.Prefixes[i].Line = 0
		}
	}
	if o := ospf.Section(c); o != nil {
		for i := range o.Interfaces {
			o.Interfaces[i].Line = 0
		}
		for i := range o.Prefixes {
			o.Prefixes[i].Line = 0
		}
	}
}

const authYAML = `router-id: 10.0.0.1
isis:
  areas: [49.0001]
  level: 1-2
  authentication:
    level-1:
      keys:
        - {id: 1, algorithm: md5, secret: area-secret}
    level-2:
      keys:
        - {id: 1, algorithm: hmac-sha-256, secret: old, send-until: "2030-01-01T00:00:00Z", accept-until: "2030-01-02T00:00:00Z"}
        - {id: 2, algorithm: hmac-sha-256, secret: new, send-from: "2030-01-01T00:00:00Z"}
  interfaces:
    - name: eth0
      type: p2p
      authentication:
        keys: [{id: 5, algorithm: md5, secret: hello-secret, preferred: true}, {id: 6, algorithm: md5, secret: other}]
ospf:
  interfaces:
    - name: eth1
      authentication:
        keys: [{id: 1, algorithm: md5, secret: frr}, {id: 2, algorithm: hmac-sha-256, secret: bird}]
    - name: eth2
      authentication:
        keys: [{id: 0, algorithm: clear, secret: pass}]
`

func TestAuthParse(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(authYAML))
	if err != nil {
		t.Fatal(err)
	}
	l2 := isis.Section(c).Authentication.Level(2)
	if l2 == nil || len(l2.Keys) != 2 || l2.Keys[1].Secret != "new" || l2.Keys[0].SendUntil != time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) {
		t.Fatalf("level-2: %+v", l2)
	}
	if a := isis.Section(c).Authentication.Level(1); a == nil || a.Keys[0].Algorithm != "md5" {
		t.Fatalf("level-1: %+v", a)
	}
	if a := isis.Section(c).Interfaces[0].Authentication; a == nil || !a.Keys[0].Preferred {
		t.Fatalf("hello auth: %+v", a)
	}
	if a := ospf.Section(c).Interfaces[1].Authentication; a == nil || a.Keys[0].Algorithm != "clear" {
		t.Fatalf("ospf eth2: %+v", a)
	}
	// Rollover: key 1 sends until 2030, then key 2; key 1 is still
	// accepted for a day.
	before, after := time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC)
	if k, _ := l2.SendKey(before); k.ID != 1 {
		t.Fatalf("send before rollover: key %d", k.ID)
	}
	if k, _ := l2.SendKey(after); k.ID != 2 {
		t.Fatalf("send after rollover: key %d", k.ID)
	}
	if n := len(l2.AcceptKeys(after)); n != 2 {
		t.Fatalf("%d keys accepted just after the rollover", n)
	}
	if ks := l2.AcceptKeys(after.Add(48 * time.Hour)); len(ks) != 1 || ks[0].ID != 2 {
		t.Fatalf("accepted two days later: %+v", ks)
	}
	// The preferred key wins over a later send-from.
	if k, _ := isis.Section(c).Interfaces[0].Authentication.SendKey(before); k.ID != 5 {
		t.Fatalf("preferred key not sent: %d", k.ID)
	}
	// Without preferred and lifetimes: the highest id.
	if k, _ := ospf.Section(c).Interfaces[0].Authentication.SendKey(before); k.ID != 2 {
		t.Fatalf("highest id not sent: %d", k.ID)
	}
	var none *config.Auth
	if _, ok := none.SendKey(before); ok || none.AcceptKeys(before) != nil {
		t.Fatal("nil chain sends or accepts")
	}
}

// Secrets never show in a reload report; the rendered config keeps them
// and parses back to the same chains.
func TestAuthRenderAndDiff(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(authYAML))
	if err != nil {
		t.Fatal(err)
	}
	out, err := config.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := config.Parse("r.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	chains := func(c *config.Config) []*config.Auth {
		out := []*config.Auth{isis.Section(c).Authentication.Level1, isis.Section(c).Authentication.Level2, isis.Section(c).Interfaces[0].Authentication,
			ospf.Section(c).Interfaces[0].Authentication, ospf.Section(c).Interfaces[1].Authentication}
		for _, a := range out {
			for i := range a.Keys {
				a.Keys[i].Line = 0
			}
		}
		return out
	}
	if a, b := chains(c), chains(c2); !reflect.DeepEqual(a, b) {
		t.Fatalf("render round trip:\n%s", out)
	}
	ospf.Section(c2).Interfaces[0].Authentication.Keys[0].Secret = "changed"
	d := strings.Join(config.Diff(ospf.Section(c), ospf.Section(c2)), "\n")
	if !strings.Contains(d, "secret") || strings.Contains(d, "changed") || strings.Contains(d, "frr") {
		t.Fatalf("diff: %s", d)
	}
}

func TestAuthErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication: {keys: []}\n", "t.yaml:5: authentication: need at least one key"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: hmac-sha-224, secret: x}]\n",
			`does not support algorithm "hmac-sha-224"`},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 256, algorithm: md5, secret: x}]\n", "id: 256 out of range 0..255"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5, secret: 12345678901234567}]\n",
			"md5 key has at most 16 bytes"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: clear, secret: 123456789}]\n",
			"clear password has at most 8 bytes"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: clear, secret: a}, {id: 2, algorithm: md5, secret: b}]\n",
			"cannot mix a clear password"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5, secret: a}, {id: 1, algorithm: md5, secret: b}]\n",
			"key id 1 at line 6 repeats"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5}]\n", `missing required key "secret"`},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-2:\n      keys: [{id: 1, algorithm: md5, secret: a, send-from: yesterday}]\n",
			`send-from: invalid time "yesterday"`},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-2:\n      keys: [{id: 1, algorithm: md5, secret: a, preferred: true}, {id: 2, algorithm: md5, secret: b, preferred: true}]\n",
			"2 keys are preferred"},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-3: {keys: [{id: 1, algorithm: md5, secret: a}]}\n", "level-3"},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-1:\n      keys: [{id: 1, algorithm: md5, secret: a, send-from: \"2030-01-02T00:00:00Z\", send-until: \"2030-01-01T00:00:00Z\"}]\n",
			"send-until 2030-01-01T00:00:00Z is not after send-from"},
	} {
		wantParseError(t, "t.yaml", "router-id: 10.0.0.1\n"+tc.yaml, tc.want)
	}
}

// wantParseError: parsing in as file fails with an error containing want.
func wantParseError(t *testing.T, file, in, want string) {
	t.Helper()
	_, err := config.Parse(file, []byte(in))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("config:\n%s\ngot  %v\nwant %q", in, err, want)
	}
}

func TestBFDParseAndInherit(t *testing.T) {
	c, err := config.Parse("a.yaml", []byte(`router-id: 10.0.0.1
system-id: 0000.0000.0001
isis:
  areas: [49.0001]
  bfd: {interval: 100ms, multiplier: 4}
  interfaces:
    - {name: e0}
    - {name: e1, bfd: {interval: 50ms}}
    - {name: e2, bfd: off}
ospf:
  interfaces:
    - {name: o0, area: 0}
    - {name: o1, area: 0, bfd: on}
    - {name: o2, area: 0, bfd: {multiplier: 5}}
`))
	if err != nil {
		t.Fatal(err)
	}
	is := isis.Section(c)
	want := []*config.BFD{{Interval: 100 * time.Millisecond, Multiplier: 4}, {Interval: 50 * time.Millisecond, Multiplier: 4}, nil}
	for i, w := range want {
		if got := config.EffectiveBFD(is.BFD, is.Interfaces[i].BFD); !reflect.DeepEqual(got, w) {
			t.Errorf("isis %s: %+v, want %+v", is.Interfaces[i].Name, got, w)
		}
	}
	o := ospf.Section(c)
	want = []*config.BFD{nil, {Interval: 300 * time.Millisecond, Multiplier: 3}, {Interval: 300 * time.Millisecond, Multiplier: 5}}
	for i, w := range want {
		if got := config.EffectiveBFD(o.BFD, o.Interfaces[i].BFD); !reflect.DeepEqual(got, w) {
			t.Errorf("ospf %s: %+v, want %+v", o.Interfaces[i].Name, got, w)
		}
	}
	// running-config writes it back, `off` included.
	configtest.RoundTrip(t, c, clearLines)
}

// TestBFDErrors: bad timers, shapes and key chains of a bfd setting.
func TestBFDErrors(t *testing.T) {
	for _, tc := range []struct{ bfd, want string }{
		{"{interval: 5ms}", "a.yaml:5: interval: 5ms out of range 10ms..60s"},
		{"{interval: 10000500ns}", "a.yaml:5: interval: 10.0005ms is not a whole number of microseconds"},
		{"{multiplier: 1}", "a.yaml:5: multiplier"},
		{"{interval: 100ms, jitter: 1}", `a.yaml:5: bfd: unknown key "jitter"`},
		{"sometimes", `a.yaml:5: bfd: want a mapping {interval, multiplier}, or on/off, got "sometimes"`},
		{"[1]", "a.yaml:5: bfd: want a mapping"},
		// authentication (RFC 5880 §6.7): BFD's own algorithms and key sizes
		{"{authentication: {keys: [{id: 1, algorithm: hmac-sha-256, secret: x}]}}", `a.yaml:5: algorithm: BFD does not support algorithm "hmac-sha-256" (want one of simple, keyed-md5, meticulous-keyed-md5, keyed-sha1 or meticulous-keyed-sha1)`},
		{"{authentication: {keys: [{id: 256, algorithm: keyed-sha1, secret: x}]}}", "id: 256 out of range 0..255"},
		{"{authentication: {keys: [{id: 1, algorithm: keyed-sha1, secret: abcdefghijklmnopqrstu}]}}", "key id 1: a BFD keyed-sha1 key has at most 20 bytes, got 21"},
		{"{authentication: {keys: [{id: 1, algorithm: meticulous-keyed-md5, secret: abcdefghijklmnopq}]}}", "at most 16 bytes, got 17"},
		{"{authentication: {keys: [{id: 1, algorithm: simple, secret: abcdefghijklmnopq}]}}", "a BFD simple key has at most 16 bytes"},
		{"{authentication: {keys: []}}", "authentication: need at least one key"},
	} {
		wantParseError(t, "a.yaml", "router-id: 10.0.0.1\nsystem-id: 0000.0000.0001\nisis:\n  areas: [49.0001]\n  bfd: "+tc.bfd+"\n", tc.want)
	}
}

// A top-level bfd (as farebench appends one) reaches both protocols'
// interfaces, wherever it stands in the file; sections and interfaces
// still override it.
func TestBFDTopLevel(t *testing.T) {
	c, err := config.Parse("a.yaml", []byte(`router-id: 10.0.0.1
system-id: 0000.0000.0001
isis:
  areas: [49.0001]
  interfaces:
    - {name: e0}
    - {name: e1, bfd: {multiplier: 5}}
ospf:
  bfd: off
  interfaces:
    - {name: o0, area: 0}
bfd: {interval: 50ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.EffectiveBFD(isis.Section(c).BFD, isis.Section(c).Interfaces[0].BFD); got == nil || *got != (config.BFD{Interval: 50 * time.Millisecond, Multiplier: 3}) {
		t.Errorf("isis e0: %+v", got)
	}
	if got := config.EffectiveBFD(isis.Section(c).BFD, isis.Section(c).Interfaces[1].BFD); got == nil || *got != (config.BFD{Interval: 50 * time.Millisecond, Multiplier: 5}) {
		t.Errorf("isis e1: %+v", got)
	}
	if got := config.EffectiveBFD(ospf.Section(c).BFD, ospf.Section(c).Interfaces[0].BFD); got != nil {
		t.Errorf("ospf o0 under bfd: off: %+v", got)
	}
	configtest.RoundTrip(t, c, clearLines)
}

// BFD authentication (RFC 5880 §6.7): a key chain in a bfd setting,
// inherited from the top level through the section to the interfaces like
// the timers; it renders and parses back.
func TestBFDAuthentication(t *testing.T) {
	c, err := config.Parse("a.yaml", []byte(`router-id: 10.0.0.1
system-id: 0000.0000.0001
bfd:
  interval: 50ms
  authentication:
    keys:
      - {id: 1, algorithm: meticulous-keyed-sha1, secret: abcdefghijklmnopqrst, send-until: "2030-01-01T00:00:00Z"}
      - {id: 2, algorithm: keyed-md5, secret: sixteen-bytes-ok, send-from: "2030-01-01T00:00:00Z"}
isis:
  areas: [49.0001]
  interfaces:
    - {name: e0}
    - name: e1
      bfd:
        authentication: {keys: [{id: 9, algorithm: simple, secret: pw}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e0 := config.EffectiveBFD(isis.Section(c).BFD, isis.Section(c).Interfaces[0].BFD)
	if e0 == nil || e0.Authentication == nil || len(e0.Authentication.Keys) != 2 || e0.Authentication.Keys[0].Algorithm != "meticulous-keyed-sha1" {
		t.Fatalf("e0 inherits the top level's chain: %+v", e0)
	}
	e1 := config.EffectiveBFD(isis.Section(c).BFD, isis.Section(c).Interfaces[1].BFD)
	if e1 == nil || e1.Interval != 50*time.Millisecond || e1.Authentication == nil || e1.Authentication.Keys[0].ID != 9 {
		t.Fatalf("e1 has its own chain and the top level's interval: %+v", e1)
	}
	if k, _ := e0.Authentication.SendKey(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)); k.ID != 2 {
		t.Fatalf("rollover: key %d", k.ID)
	}
	configtest.RoundTrip(t, c, func(x *config.Config) {
		clearLines(x)
		for _, b := range []*config.BFD{isis.Section(x).BFD, isis.Section(x).Interfaces[0].BFD, isis.Section(x).Interfaces[1].BFD} {
			for i := range b.Authentication.Keys {
				b.Authentication.Keys[i].Line = 0
			}
		}
	})
	if strings.Contains(strings.Join(config.Diff(isis.Section(c), &isis.Config{}), " "), "abcdefghijklmnopqrst") {
		t.Error("a reload report shows a BFD secret")
	}
}

// What running-config writes parses back to the same configuration.
func TestRenderRoundTripSections(t *testing.T) {
	example, err := os.ReadFile("../contrib/fared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"example": string(example),
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
		c1, err := config.Parse("a.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		configtest.RoundTrip(t, c1, clearLines)
	}
}

func TestRenderShape(t *testing.T) {
	c, err := config.Parse("a.yaml", []byte("router-id: 10.0.0.1\nhostname: h\nisis:\n  areas: [49.0001]\n  level: 1-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := config.Render(c)
	for _, want := range []string{"system-id: 0100.0000.0001\n", "  level: 1-2\n", "  areas: [49.0001]\n", "  lsp-mtu: 1492\n",
		"    initial-delay: 0s\n", "  on-shutdown: keep\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// The rib section sets ecmp-only, SPF timers and distances for every
// protocol; a protocol section overrides only what it sets.
func TestRoutingResolution(t *testing.T) {
	c, err := config.Parse("r.yaml", []byte(`router-id: 10.0.0.1
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
	if refs := c.InterfaceRefs(); len(refs) != 1 || refs[0] != (config.IfaceRef{Name: "e0", Section: "ospf", Line: 11}) {
		t.Errorf("interfaces %+v", refs)
	}
}

func TestRIBErrors(t *testing.T) {
	for in, want := range map[string]string{
		"router-id: 10.0.0.1\nrib:\n  distance: {bgp: 20}\n": `r.yaml:3: unknown key "bgp"`,
		"router-id: 10.0.0.1\nrib:\n  distance: {isis: 0}\n": `r.yaml:3: isis: 0 out of range 1..255`,
		"router-id: 10.0.0.1\nrib:\n  ecmp: true\n":          `r.yaml:3: unknown key "ecmp"`,
		"router-id: 10.0.0.1\nrib:\n  spf: {holddown: 1h}\n": `r.yaml:3: holddown: 1h out of range 0s..600s`,
	} {
		_, err := config.Parse("r.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

// RFC 8405 §6: holddown must be longer than time-to-learn, as the
// protocol will run them (its override over the rib's over the defaults).
func TestSPFTimersChecked(t *testing.T) {
	for in, want := range map[string]string{
		"router-id: 10.0.0.1\nrib:\n  spf: {holddown: 100ms}\n":                                                       "s.yaml:3: rib spf: holddown 100ms must be longer than time-to-learn 500ms (RFC 8405 §6)",
		"router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s}\nisis:\n  areas: [49.0001]\n  spf: {holddown: 30s}\n": "s.yaml:3: rib spf: holddown 10s must be longer than time-to-learn 20s (RFC 8405 §6)",
	} {
		_, err := config.Parse("s.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
	// A protocol's override is checked with the rib's other timers: here
	// isis's 1s holddown meets the rib's 20s time-to-learn.
	if _, err := config.Parse("s.yaml", []byte("router-id: 10.0.0.1\nrib:\n  spf: {time-to-learn: 20s, holddown: 30s}\nisis:\n  areas: [49.0001]\n  spf: {holddown: 1s}\n")); err == nil || err.Error() != "s.yaml:6: isis spf: holddown 1s must be longer than time-to-learn 20s (RFC 8405 §6)" {
		t.Errorf("isis override: %v", err)
	}
}

func TestDiff(t *testing.T) {
	a, err := config.Parse("a.yaml", []byte(`router-id: 10.0.0.1
isis:
  areas: [49.0001]
  interfaces:
    - {name: e0, metric: 10}
    - {name: e1}
  prefixes: [{prefix: 10.1.0.0/24}]
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := config.Parse("b.yaml", []byte(`router-id: 10.0.0.1
isis:
  areas: [49.0002]
  ecmp-only: true
  interfaces:
    - {name: e2}
    - {name: e0, metric: 20, bandwidth: 40G}
  prefixes: [{prefix: 10.1.0.0/24, path-bandwidth: 10G}]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(config.Diff(isis.Section(a), isis.Section(b)), "\n")
	want := strings.Join([]string{
		"areas: [490001] -> [490002]",
		"ecmp-only: added",
		"interfaces[e1]: removed",
		"interfaces[e2]: added",
		"interfaces[e0].metric: 10 -> 20",
		"interfaces[e0].bandwidth: 0 -> 40G",
		"prefixes[10.1.0.0/24].path-bandwidth: 0 -> 10G",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if d := config.Diff(isis.Section(a), isis.Section(a)); len(d) != 0 {
		t.Errorf("self diff %v", d)
	}
}
