package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBFDParseAndInherit(t *testing.T) {
	c, err := Parse("a.yaml", []byte(`router-id: 10.0.0.1
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
	is := c.ISIS
	want := []*BFD{{Interval: 100 * time.Millisecond, Multiplier: 4}, {Interval: 50 * time.Millisecond, Multiplier: 4}, nil}
	for i, w := range want {
		if got := EffectiveBFD(is.BFD, is.Interfaces[i].BFD); !reflect.DeepEqual(got, w) {
			t.Errorf("isis %s: %+v, want %+v", is.Interfaces[i].Name, got, w)
		}
	}
	o := c.OSPF
	want = []*BFD{nil, {Interval: 300 * time.Millisecond, Multiplier: 3}, {Interval: 300 * time.Millisecond, Multiplier: 5}}
	for i, w := range want {
		if got := EffectiveBFD(o.BFD, o.Interfaces[i].BFD); !reflect.DeepEqual(got, w) {
			t.Errorf("ospf %s: %+v, want %+v", o.Interfaces[i].Name, got, w)
		}
	}
	// running-config writes it back, `off` included.
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("b.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	clearLines(c)
	clearLines(c2)
	c.RIB.SPF = c.RIB.SPF.Over(DefaultSPF)
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip differs: %v\n%s", Diff(c, c2), out)
	}
}

func TestBFDErrors(t *testing.T) {
	for _, tc := range []struct{ bfd, want string }{
		{"{interval: 5ms}", "a.yaml:5: interval: 5ms out of range 10ms..60s"},
		{"{interval: 10000500ns}", "a.yaml:5: interval: 10.0005ms is not a whole number of microseconds"},
		{"{multiplier: 1}", "a.yaml:5: multiplier"},
		{"{interval: 100ms, jitter: 1}", `a.yaml:5: bfd: unknown key "jitter"`},
		{"sometimes", `a.yaml:5: bfd: want a mapping {interval, multiplier}, or on/off, got "sometimes"`},
		{"[1]", "a.yaml:5: bfd: want a mapping"},
	} {
		in := "router-id: 10.0.0.1\nsystem-id: 0000.0000.0001\nisis:\n  areas: [49.0001]\n  bfd: " + tc.bfd + "\n"
		_, err := Parse("a.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bfd: %s: got %v, want %q", tc.bfd, err, tc.want)
		}
	}
}

// A top-level bfd (as farebench appends one) reaches both protocols'
// interfaces, wherever it stands in the file; sections and interfaces
// still override it.
func TestBFDTopLevel(t *testing.T) {
	c, err := Parse("a.yaml", []byte(`router-id: 10.0.0.1
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
	if got := EffectiveBFD(c.ISIS.BFD, c.ISIS.Interfaces[0].BFD); got == nil || *got != (BFD{Interval: 50 * time.Millisecond, Multiplier: 3}) {
		t.Errorf("isis e0: %+v", got)
	}
	if got := EffectiveBFD(c.ISIS.BFD, c.ISIS.Interfaces[1].BFD); got == nil || *got != (BFD{Interval: 50 * time.Millisecond, Multiplier: 5}) {
		t.Errorf("isis e1: %+v", got)
	}
	if got := EffectiveBFD(c.OSPF.BFD, c.OSPF.Interfaces[0].BFD); got != nil {
		t.Errorf("ospf o0 under bfd: off: %+v", got)
	}
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("b.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	clearLines(c)
	clearLines(c2)
	c.RIB.SPF = c.RIB.SPF.Over(DefaultSPF)
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip differs: %v\n%s", Diff(c, c2), out)
	}
}

// BFD authentication (RFC 5880 §6.7): a key chain in a bfd setting,
// inherited from the top level through the section to the interfaces like
// the timers; it renders and parses back.
func TestBFDAuthentication(t *testing.T) {
	c, err := Parse("a.yaml", []byte(`router-id: 10.0.0.1
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
	e0 := EffectiveBFD(c.ISIS.BFD, c.ISIS.Interfaces[0].BFD)
	if e0 == nil || e0.Authentication == nil || len(e0.Authentication.Keys) != 2 || e0.Authentication.Keys[0].Algorithm != "meticulous-keyed-sha1" {
		t.Fatalf("e0 inherits the top level's chain: %+v", e0)
	}
	e1 := EffectiveBFD(c.ISIS.BFD, c.ISIS.Interfaces[1].BFD)
	if e1 == nil || e1.Interval != 50*time.Millisecond || e1.Authentication == nil || e1.Authentication.Keys[0].ID != 9 {
		t.Fatalf("e1 has its own chain and the top level's interval: %+v", e1)
	}
	if k, _ := e0.Authentication.SendKey(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)); k.ID != 2 {
		t.Fatalf("rollover: key %d", k.ID)
	}
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("b.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, x := range []*Config{c, c2} {
		clearLines(x)
		for _, b := range []*BFD{x.ISIS.BFD, x.ISIS.Interfaces[0].BFD, x.ISIS.Interfaces[1].BFD} {
			for i := range b.Authentication.Keys {
				b.Authentication.Keys[i].Line = 0
			}
		}
	}
	c.RIB.SPF = c.RIB.SPF.Over(DefaultSPF)
	if !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip differs: %v\n%s", Diff(c, c2), out)
	}
	if strings.Contains(strings.Join(Diff(c.ISIS, &ISIS{}), " "), "abcdefghijklmnopqrst") {
		t.Error("a reload report shows a BFD secret")
	}
}

func TestBFDAuthenticationErrors(t *testing.T) {
	for _, tc := range []struct{ keys, want string }{
		{"[{id: 1, algorithm: hmac-sha-256, secret: x}]", `a.yaml:5: algorithm: BFD does not support algorithm "hmac-sha-256" (want one of simple, keyed-md5, meticulous-keyed-md5, keyed-sha1 or meticulous-keyed-sha1)`},
		{"[{id: 256, algorithm: keyed-sha1, secret: x}]", "id: 256 out of range 0..255"},
		{"[{id: 1, algorithm: keyed-sha1, secret: abcdefghijklmnopqrstu}]", "key id 1: a BFD keyed-sha1 key has at most 20 bytes, got 21"},
		{"[{id: 1, algorithm: meticulous-keyed-md5, secret: abcdefghijklmnopq}]", "at most 16 bytes, got 17"},
		{"[{id: 1, algorithm: simple, secret: abcdefghijklmnopq}]", "a BFD simple key has at most 16 bytes"},
		{"[]", "authentication: need at least one key"},
	} {
		in := "router-id: 10.0.0.1\nsystem-id: 0000.0000.0001\nisis:\n  areas: [49.0001]\n  bfd: {authentication: {keys: " + tc.keys + "}}\n"
		_, err := Parse("a.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keys %s: got %v, want %q", tc.keys, err, tc.want)
		}
	}
}
