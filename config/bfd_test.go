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
