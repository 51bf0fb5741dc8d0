package isis

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/config/configtest"
)

// contrib/fared.yaml, the example config the package ships, parses to
// what it says.
func TestParseExample(t *testing.T) {
	b, err := os.ReadFile("../contrib/fared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse("example.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	// The example states most defaults; what it leaves out is the
	// packages' (TestDefaults pins them).
	is := Defaults()
	is.Areas = [][]byte{{0x49, 0x00, 0x01}}
	is.Interfaces = []Interface{
		{Name: "eth0", Type: "p2p", Metric: 10, Bandwidth: 100e9, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64, Level: 2, Line: 21},
		{Name: "eth1", Type: "p2p", Metric: 10, Bandwidth: 40e9, HelloInterval: time.Second, HelloMultiplier: 4, Priority: 64, Level: 2, Line: 25},
		{Name: "lo", Type: "lan", Metric: 10, Passive: true, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64, Level: 2, Line: 30},
	}
	is.Prefixes = []Prefix{
		{Prefix: netip.MustParsePrefix("10.10.1.0/24"), PathBandwidth: 40e9, Line: 34},
		{Prefix: netip.MustParsePrefix("2001:db8:1::/48"), Line: 37},
	}
	want := config.Defaults()
	want.File, want.Hostname, want.RouterID = "example.yaml", "leaf1", netip.MustParseAddr("10.255.0.1")
	want.SystemID = [6]byte{0x01, 0x02, 0x55, 0x00, 0x00, 0x01} // 0102.5500.0001
	want.Metrics = &config.Metrics{Listen: "127.0.0.1:9342", Path: "/metrics"}
	want.Sections = map[string]any{Key: is}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\n%+v\nwant %+v\n%+v", c, Section(c), want, Section(want))
	}
	if got := Section(c).Interfaces[0].Bandwidth.BytesPerSec(); got != 1.25e10 {
		t.Errorf("100G = %v bytes/s, want 1.25e10", got)
	}
}

// The example in docs/config.md must stay valid.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Skip(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml block in docs/config.md")
	}
	c, err := config.Parse("config.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if c.SystemID != [6]byte{0, 0, 0, 0, 0, 1} || Section(c).Prefixes[0].PathBandwidth != 40e9 {
		t.Errorf("got %+v %+v", c, Section(c))
	}
}

func TestDefaults(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`router-id: 192.168.1.2
isis:
  areas: [49.0001]
  interfaces:
    - name: eth0
  prefixes:
    - prefix: 2001:db8::/32
`))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	want := &config.Config{
		File:     "t.yaml",
		Hostname: host,
		RouterID: netip.MustParseAddr("192.168.1.2"),
		SystemID: [6]byte{0x19, 0x21, 0x68, 0x00, 0x10, 0x02}, // 1921.6800.1002
		LogLevel: slog.LevelInfo,
		Socket:   config.DefaultSocket,
		FIB:      config.FIB{Enabled: true, Metric: 20, OnShutdown: "keep"},
		RIB:      config.RIB{Distance: map[string]uint8{"isis": 115}}, // the only routing protocol of this test binary
		Sections: map[string]any{"isis": &Config{
			Areas:               [][]byte{{0x49, 0x00, 0x01}},
			Level:               2,
			PathBandwidthSubTLV: 200,
			LSPLifetime:         1200 * time.Second,
			LSPRefresh:          900 * time.Second,
			LSPGenInterval:      500 * time.Millisecond,
			CSNPInterval:        10 * time.Second,
			PSNPInterval:        2 * time.Second,
			LSPPacing:           33 * time.Millisecond, // ISO 10589's minimumBroadcastLSPTransmissionInterval
			LSPMTU:              1492,
			HelloPadding:        true,
			AttachedBit:         true,
			ReadvertiseHold:     time.Second,
			FloodingReflooders:  1,
			Interfaces:          []Interface{{Name: "eth0", Type: "lan", Metric: 10, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64, Level: 2, Line: 5}},
			Prefixes:            []Prefix{{Prefix: netip.MustParsePrefix("2001:db8::/32"), Line: 7}},
		}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\n%+v\nwant %+v\n%+v", c, Section(c), want, Section(want))
	}

	c, err = config.Parse("t.yaml", []byte("router-id: 10.0.0.1\n"))
	if err != nil || Section(c) != nil || Spec.Configured(c) {
		t.Errorf("no isis section: got %v, %v; want no isis section", c, err)
	}
}

func TestValid(t *testing.T) {
	base := "router-id: 10.255.0.1\nisis:\n  areas: [49.0001]\n"
	for _, tc := range []struct {
		yaml  string
		check func(*config.Config) bool
	}{
		{"  level: 1-2\n", func(c *config.Config) bool { return Section(c).Level == 3 }},
		{"  level: 1\n", func(c *config.Config) bool { return Section(c).Level == 1 }},
		{"  level: \"2\"\n", func(c *config.Config) bool { return Section(c).Level == 2 }},
		{"system-id: 0000.0000.00aB\n", func(c *config.Config) bool { return c.SystemID == [6]byte{0, 0, 0, 0, 0, 0xab} }},
		{"log-level: DEBUG\n", func(c *config.Config) bool { return c.LogLevel == slog.LevelDebug }},
		{"  csnp-interval: 7\n", func(c *config.Config) bool { return Section(c).CSNPInterval == 7*time.Second }},
		{"  lsp-gen-interval: 0\n", func(c *config.Config) bool { return Section(c).LSPGenInterval == 0 }},
		{"  lsp-lifetime: 65535\n  lsp-refresh: 65474s\n", func(c *config.Config) bool { return Section(c).LSPRefresh == 65474*time.Second }},
		{"  path-bandwidth-subtlv: 255\n", func(c *config.Config) bool { return Section(c).PathBandwidthSubTLV == 255 }},
		{"  overload: true\n  hello-padding: false\n", func(c *config.Config) bool { return Section(c).Overload && !Section(c).HelloPadding }},
		{"  multi-topology: true\n", func(c *config.Config) bool { return Section(c).MultiTopology }},
		{"  areas: [49, 39.752F.0100.0014.0000.0000.0001]\n", func(c *config.Config) bool {
			return len(Section(c).Areas) == 2 && len(Section(c).Areas[0]) == 1 && len(Section(c).Areas[1]) == 13
		}},
		{"  interfaces:\n    - {name: e1, bandwidth: 1000000000, metric: 16777214, priority: 0, hello-interval: 100ms, hello-multiplier: 10}\n",
			func(c *config.Config) bool {
				i := Section(c).Interfaces[0]
				return i.Bandwidth == 1e9 && i.Metric == 16777214 && i.Priority == 0 && i.HelloInterval == 100*time.Millisecond
			}},
		{"  prefixes:\n    - {prefix: 0.0.0.0/0, metric: 4261412864, path-bandwidth: 1.5e9}\n", func(c *config.Config) bool {
			p := Section(c).Prefixes[0]
			return p.Metric == 0xFE000000 && p.PathBandwidth == 1.5e9 && p.Prefix.Bits() == 0
		}},
	} {
		// Keys given twice in base+yaml would be duplicates: put the
		// areas override in place of the base one.
		in := base + tc.yaml
		if strings.HasPrefix(tc.yaml, "  areas:") {
			in = strings.Replace(base, "  areas: [49.0001]\n", tc.yaml, 1)
		} else if !strings.HasPrefix(tc.yaml, "  ") {
			in = tc.yaml + base
		}
		c, err := config.Parse("t.yaml", []byte(in))
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
		} else if !tc.check(c) {
			t.Errorf("%q: wrong result %+v %+v", tc.yaml, c, Section(c))
		}
	}
}

// Each case has one or more lines marked "# <-"; the errors must be exactly
// want, in order, at the marked lines.
func TestErrors(t *testing.T) {
	const isis = "router-id: 10.255.0.1\nisis:\n  areas: [49.0001]\n"
	const ifs = isis + "  interfaces:\n    - name: eth0\n    - name: eth1\n      metric: 20\n    - name: eth2\n      type: p2p\n"
	const pfx = isis + "  prefixes:\n    - prefix: 10.0.0.0/8\n    - prefix: 2001:db8::/32\n"
	configtest.Errors(t, []configtest.ErrorCase{
		// isis
		{"router-id: 10.0.0.1\nisis: # <-\n", []string{`isis: expected a mapping, got no value`}},
		{"router-id: 10.0.0.1\nisis: {} # <-\n", []string{`isis: missing required key "areas" (or an FRR-style "net")`}},
		{isis + "  lsp-life: 1200s # <-\n", []string{`unknown key "lsp-life"`}},
		{"router-id: 10.0.0.1\nisis:\n  areas: [] # <-\n", []string{`areas: need 1..3 area addresses, got 0`}},
		{"router-id: 10.0.0.1\nisis:\n  areas: [49.0001, 49.0002, 49.0003, 49.0004] # <-\n", []string{`areas: need 1..3 area addresses, got 4`}},
		{"router-id: 10.0.0.1\nisis:\n  areas: [49.001] # <-\n", []string{`areas: invalid area address "49.001" (want 1..13 bytes of dotted hex, e.g. 49.0001)`}},
		{"router-id: 10.0.0.1\nisis:\n  areas: [49.0001.0203.0405.0607.0809.0a0b.0c] # <-\n", []string{`areas: invalid area address "49.0001.0203.0405.0607.0809.0a0b.0c" (want 1..13 bytes of dotted hex, e.g. 49.0001)`}},
		{"router-id: 10.0.0.1\nisis:\n  areas:\n    - 49.0001\n    - 49.zz # <-\n", []string{`areas: invalid area address "49.zz" (want 1..13 bytes of dotted hex, e.g. 49.0001)`}},
		{"router-id: 10.0.0.1\nisis:\n  areas:\n    - 49.0001\n    - 49.0001 # <-\n", []string{`areas: duplicate area address "49.0001"`}},
		{isis + "  level: 3 # <-\n", []string{`level: must be 1, 2 or 1-2, got "3"`}},
		{isis + "  path-bandwidth-subtlv: 4 # <-\n", []string{`path-bandwidth-subtlv: codepoint 4 is assigned (Prefix Attribute Flags)`}},
		{isis + "  path-bandwidth-subtlv: 22 # <-\n", []string{`path-bandwidth-subtlv: codepoint 22 is assigned (IPv6 Source Prefix)`}},
		{isis + "  path-bandwidth-subtlv: 0 # <-\n", []string{`path-bandwidth-subtlv: 0 out of range 1..255`}},
		{isis + "  path-bandwidth-subtlv: 256 # <-\n", []string{`path-bandwidth-subtlv: 256 out of range 1..255`}},
		{isis + "  lsp-lifetime: 300s # <-\n", []string{`lsp-lifetime: 300s out of range 350s..65535s`}},
		{isis + "  lsp-lifetime: 1200s\n  lsp-refresh: 1140s # <-\n", []string{`lsp-refresh 1140s must be less than lsp-lifetime - 60s = 1140s`}},
		{isis + "  lsp-lifetime: 400 # <-\n", []string{`lsp-refresh 900s must be less than lsp-lifetime - 60s = 340s`}},
		{isis + "  lsp-gen-interval: 1.5 # <-\n", []string{`lsp-gen-interval: expected a duration (e.g. 3s, 500ms, or integer seconds), got "1.5"`}},
		{isis + "  csnp-interval: -1s # <-\n", []string{`csnp-interval: -1s out of range 1s..65535s`}},
		{isis + "  lsp-mtu: 100 # <-\n", []string{`lsp-mtu: 100 out of range 512..9000`}},
		{isis + "  hello-padding: yes # <-\n", []string{`hello-padding: expected true or false, got "yes"`}},
		// interfaces: the third one is eth2
		{ifs + "      metric: 16777215 # <-\n", []string{`metric: 16777215 out of range 1..16777214`}},
		{ifs + "      metric: 0 # <-\n", []string{`metric: 0 out of range 1..16777214`}},
		{ifs + "      metric: ten # <-\n", []string{`metric: expected an integer, got "ten"`}},
		{ifs + "      metric: \"10\" # <-\n", []string{`metric: expected an integer, got "10"`}},
		{ifs + "      metrc: 10 # <-\n", []string{`unknown key "metrc"`}},
		{ifs + "      priority: 128 # <-\n", []string{`priority: 128 out of range 0..127`}},
		{ifs + "      passive: 1 # <-\n", []string{`passive: expected true or false, got "1"`}},
		{ifs + "      bandwidth: 0 # <-\n", []string{`bandwidth: invalid bandwidth "0": must be > 0 and finite`}},
		{ifs + "      bandwidth: fast # <-\n", []string{`bandwidth: invalid bandwidth "fast" (want bits/s with optional K, M, G or T suffix, e.g. 100G)`}},
		{ifs + "      hello-interval: 50ms # <-\n", []string{`hello-interval: 50ms out of range 100ms..65535s`}},
		{ifs + "      hello-multiplier: 1 # <-\n", []string{`hello-multiplier: 1 out of range 2..100`}},
		{ifs + "    - name: eth3 # <-\n      hello-interval: 100ms\n", []string{`interface eth3: hold time hello-interval * hello-multiplier = 300ms, must be 1s..65535s`}},
		{ifs + "    - name: eth3\n      type: ptp # <-\n", []string{`type: must be p2p or lan, got "ptp"`}},
		{ifs + "    - type: p2p # <-\n", []string{`missing required key "name"`}},
		{ifs + "    - name: eth0 # <-\n", []string{`duplicate interface "eth0" (first at line 5)`}},
		{ifs + "    - name: this-is-too-long0 # <-\n", []string{`name: invalid interface name "this-is-too-long0"`}},
		{ifs + "    - eth3 # <-\n", []string{`interfaces: expected a mapping, got "eth3"`}},
		{isis + "  interfaces: eth0 # <-\n", []string{`interfaces: expected a list, got "eth0"`}},
		// prefixes
		{pfx + "    - prefix: 10.10.1.1/24 # <-\n", []string{`prefix: host bits set, did you mean 10.10.1.0/24`}},
		{pfx + "    - prefix: 10.10.1.0 # <-\n", []string{`prefix: invalid prefix "10.10.1.0"`}},
		{pfx + "    - prefix: 2001:0db8::/32 # <-\n", []string{`duplicate prefix 2001:db8::/32 (first at line 6)`}},
		{pfx + "      metric: 4261412865 # <-\n", []string{`metric: 4261412865 out of range 0..4261412864`}},
		{pfx + "      path-bandwidth: -1G # <-\n", []string{`path-bandwidth: invalid bandwidth "-1G": must be > 0 and finite`}},
		{pfx + "    - metric: 1 # <-\n", []string{`missing required key "prefix"`}},
		// several problems, reported in line order
		{"isis:\n  areas: [49.0001]\n  level: 4 # <-\n  interfaces:\n    - name: eth0\n      metric: -1 # <-\n" +
			"hostname: leaf1\nrouter-id: 10.0.0.1.1 # <-\n",
			[]string{`level: must be 1, 2 or 1-2, got "4"`, `metric: -1 out of range 1..16777214`, `router-id: invalid IPv4 address "10.0.0.1.1"`}},
	})
}

func TestMultipleErrors(t *testing.T) {
	in := `router-id: 10.255.0.1
isis:
  areas: [49.0001]
  interfaces:
    - name: eth0
    - name: eth1
      metric: 20
    - name: eth2
      metric: 16777215
  prefixes:
    - prefix: 10.10.1.1/24
bogus: 1
`
	_, err := config.Parse("fared.yaml", []byte(in))
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("got %T %v, want 3 Errors", err, err)
	}
	want := "fared.yaml:9: metric: 16777215 out of range 1..16777214\n" +
		"fared.yaml:11: prefix: host bits set, did you mean 10.10.1.0/24\n" +
		"fared.yaml:12: unknown key \"bogus\""
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if errs[0].File != "fared.yaml" || errs[0].Line != 9 {
		t.Errorf("first error %+v", errs[0])
	}

	_, err = config.Parse("fared.yaml", nil)
	var e *config.Error
	if !errors.As(err, &e) || e.Error() != `fared.yaml:1: missing required key "router-id"` {
		t.Errorf("empty file: got %T %v", err, err)
	}
}

// The isis section's ecmp-only and spf override the rib section.
func TestRIBOverrides(t *testing.T) {
	c, err := config.Parse("f.yaml", []byte("router-id: 10.0.0.1\nisis:\n  areas: [49.0001]\n  ecmp-only: true\n  spf: {initial-delay: 10ms, holddown: 2s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if is := Section(c); !c.Routing("isis").ECMPOnly || is.SPF.InitialDelay != 10*time.Millisecond || is.SPF.Holddown != 2*time.Second ||
		c.Routing("isis").SPF.Holddown != 2*time.Second || c.Routing("isis").Distance != 115 {
		t.Fatalf("got %+v %+v", is.SPF, c.Routing("isis"))
	}
}

func TestLevelsAndLeaking(t *testing.T) {
	c, err := config.Parse("l.yaml", []byte("router-id: 10.0.0.1\nisis:\n  areas: [49.0001]\n  level: 1-2\n  attached-bit: false\n  leak-l2-to-l1: [10.0.0.0/8]\n  readvertise-hold: 3s\n  interfaces:\n    - {name: e0}\n    - {name: e1, level: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	is := Section(c)
	if is.Level != 3 || is.AttachedBit || is.ReadvertiseHold != 3*time.Second || len(is.LeakL2ToL1) != 1 || is.Interfaces[0].Level != 3 || is.Interfaces[1].Level != 1 {
		t.Fatalf("%+v", is)
	}
	_, err = config.Parse("l.yaml", []byte("router-id: 10.0.0.1\nisis:\n  areas: [49.0001]\n  level: 1\n  interfaces:\n    - {name: e0, level: 2}\n"))
	if err == nil || err.Error() != "l.yaml:6: interface e0: level 2 is not run by this instance (level 1)" {
		t.Fatalf("err %v", err)
	}
}
