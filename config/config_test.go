package config

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := Parse("t.yaml", []byte("router-id: 192.168.1.2\n"))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	want := &Config{
		File:     "t.yaml",
		Hostname: host,
		RouterID: netip.MustParseAddr("192.168.1.2"),
		SystemID: [6]byte{0x19, 0x21, 0x68, 0x00, 0x10, 0x02}, // 1921.6800.1002
		LogLevel: slog.LevelInfo,
		Socket:   DefaultSocket,
		FIB:      FIB{Enabled: true, Metric: 20, OnShutdown: "keep"},
		RIB:      defaultRIB(), // every registered routing section's distance
	}
	// The toy routing sections (render_test.go) are among them.
	if d := c.RIB.Distance; d["alpha"] != 100 || d["beta"] != 120 {
		t.Errorf("distances %v", d)
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestValid(t *testing.T) {
	base := "router-id: 10.255.0.1\n"
	for _, tc := range []struct {
		yaml  string
		check func(*Config) bool
	}{
		{"system-id: 0000.0000.00aB\n", func(c *Config) bool { return c.SystemID == [6]byte{0, 0, 0, 0, 0, 0xab} }},
		{"log-level: DEBUG\n", func(c *Config) bool { return c.LogLevel == slog.LevelDebug }},
	} {
		c, err := Parse("t.yaml", []byte(tc.yaml+base))
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
		} else if !tc.check(c) {
			t.Errorf("%q: wrong result %+v", tc.yaml, c)
		}
	}
}

func TestSystemIDFromRouterID(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want [6]byte
	}{
		{"10.255.0.1", [6]byte{0x01, 0x02, 0x55, 0x00, 0x00, 0x01}},
		{"1.2.3.4", [6]byte{0x00, 0x10, 0x02, 0x00, 0x30, 0x04}},
		{"255.255.255.255", [6]byte{0x25, 0x52, 0x55, 0x25, 0x52, 0x55}},
	} {
		if got := SystemIDFromRouterID(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("%s: got %x, want %x", tc.ip, got, tc.want)
		}
	}
}

func TestBandwidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Bandwidth
		str  string
	}{
		{"100G", 100e9, "100G"},
		{"40g", 40e9, "40G"},
		{"10G", 10e9, "10G"},
		{"1.5G", 1.5e9, "1.5G"},
		{"100M", 100e6, "100M"},
		{"800K", 800e3, "800K"},
		{"1T", 1e12, "1T"},
		{"2500 M", 2.5e9, "2.5G"},
		{"12345", 12345, "12.345K"},
		{"999", 999, "999"},
	} {
		got, err := ParseBandwidth(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseBandwidth(%q) = %v (%s), %v; want %v (%s)", tc.in, float64(got), got, err, float64(tc.want), tc.str)
		}
	}
	for _, in := range []string{"", "G", "0", "0G", "-1G", "abc", "10X", "inf", "NaN", "1e40T", "1e999"} {
		if b, err := ParseBandwidth(in); err == nil {
			t.Errorf("ParseBandwidth(%q) = %v, want error", in, b)
		}
	}
	if got := Bandwidth(100e9).BytesPerSec(); got != 1.25e10 {
		t.Errorf("100G.BytesPerSec() = %v, want 1.25e10", got)
	}
}

func TestMultipleErrors(t *testing.T) {
	in := `router-id: 10.255.0.1
fib:
  metric: -1
  on-shutdown: maybe
bogus: 1
`
	_, err := Parse("fared.yaml", []byte(in))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("got %T %v, want 3 Errors", err, err)
	}
	want := "fared.yaml:3: metric: -1 out of range 0..4294967295\n" +
		"fared.yaml:4: on-shutdown: must be keep or flush\n" +
		"fared.yaml:5: unknown key \"bogus\""
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if errs[0].File != "fared.yaml" || errs[0].Line != 3 {
		t.Errorf("first error %+v", errs[0])
	}

	_, err = Parse("fared.yaml", nil)
	var e *Error
	if !errors.As(err, &e) || e.Error() != `fared.yaml:1: missing required key "router-id"` {
		t.Errorf("empty file: got %T %v", err, err)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fared.yaml")
	if err := os.WriteFile(path, []byte("hostname: leaf1\nrouter-id: 10.255.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.File != path || c.Hostname != "leaf1" {
		t.Errorf("Load: %+v, %v", c, err)
	}
	if _, err := Load(path + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load missing file: %v", err)
	}
}

func TestFIBAndSPFSections(t *testing.T) {
	c, err := Parse("f.yaml", []byte("router-id: 10.0.0.1\nrib:\n  ecmp-only: true\n  spf: {initial-delay: 10ms, holddown: 2s}\nfib:\n  metric: 30\n  on-shutdown: flush\n  resilient: {buckets: 64, idle-timer: 5s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := FIB{Enabled: true, Metric: 30, OnShutdown: "flush", Resilient: &Resilient{Buckets: 64, IdleTimer: 5 * time.Second}}
	if !reflect.DeepEqual(c.FIB, want) || !c.Routing("").ECMPOnly || c.RIB.SPF.InitialDelay != 10*time.Millisecond || c.RIB.SPF.Holddown != 2*time.Second {
		t.Fatalf("got %+v %+v %+v", c.FIB, c.FIB.Resilient, c.RIB.SPF)
	}
	_, err = Parse("f.yaml", []byte("router-id: 10.0.0.1\nfib:\n  on-shutdown: maybe\n"))
	if err == nil || err.Error() != "f.yaml:3: on-shutdown: must be keep or flush" {
		t.Fatalf("err %v", err)
	}
}

// rib.capacity-damping: what is set reaches every protocol's Routing, the
// rest stays unset (the rib's defaults); a max-hold under the hold is
// refused at its section's line; what is set renders and parses back.
func TestCapacityDamping(t *testing.T) {
	c, err := Parse("f.yaml", []byte("router-id: 10.0.0.1\nrib:\n  capacity-damping: {changes: 8, max-hold: 10s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Routing("isis").Damping; got != (Damping{Changes: 8, MaxHold: 10 * time.Second}) {
		t.Fatalf("damping %+v", got)
	}
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	if c2, err := Parse("r.yaml", out); err != nil || c2.RIB.CapacityDamping != c.RIB.CapacityDamping {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	_, err = Parse("f.yaml", []byte("router-id: 10.0.0.1\nrib:\n  capacity-damping:\n    max-hold: 500ms\n    changes: 0\n"))
	if err == nil || err.Error() != "f.yaml:3: capacity-damping: max-hold 500ms is shorter than hold 1s\nf.yaml:5: changes: 0 out of range 1..1000" {
		t.Fatalf("err %v", err)
	}
}
