package inc

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/manager"
)

const base = "router-id: 10.255.0.3\n"

// creds writes a CA, a node certificate and a token key into a temp dir
// and returns it; the inc section names them relative to the config
// file, which lives there too.
func creds(t *testing.T) string {
	dir := t.TempDir()
	ca, err := auth.NewCA("t", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ca.WriteCA(dir)
	leaf, _ := ca.Issue("n", []netip.Addr{netip.MustParseAddr("10.255.0.3")}, []string{"n"}, time.Hour)
	if _, err := leaf.Write(dir, "node"); err != nil {
		t.Fatal(err)
	}
	if err := auth.NewKeyFile(filepath.Join(dir, "token.key")); err != nil {
		t.Fatal(err)
	}
	return dir
}

const tlsKeys = "  tls: {ca: ca.pem, cert: node.pem, key: node.key}\n  client-auth: {key-file: token.key}\n"

func TestConfig(t *testing.T) {
	dir := creds(t)
	file := filepath.Join(dir, "fared.yaml")
	c, err := config.Parse(file, []byte(base+"inc:\n  role: switch\n  manager: 10.255.0.6:7791\n  slots: 128\n  address: 10.255.0.3\n"+
		"  tls: {ca: ca.pem, cert: node.pem, key: "+filepath.Join(dir, "node.key")+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := sectionOf(c)
	if s.Role != RoleSwitch || s.Manager != "10.255.0.6:7791" || s.Slots != 128 || s.Ranks != 64 || s.Address != netip.MustParseAddr("10.255.0.3") ||
		s.Heartbeat != 300*time.Millisecond || !s.isSwitch() || s.isManager() {
		t.Fatalf("%+v", s)
	}
	if s.TLS == nil || s.TLS.CA != filepath.Join(dir, "ca.pem") || s.TLS.material == nil || len(s.TLS.Sum) != 16 {
		t.Fatalf("tls %+v", s.TLS)
	}
	c, err = config.Parse(file, []byte(base+"inc:\n  role: both\n  ordered: true\n  heartbeat: 100ms\n  dead-after: 1s\n"+tlsKeys+
		"  max-groups: 10\n  max-groups-per-token: 2\n  max-group-size: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	s = sectionOf(c)
	if !s.isSwitch() || !s.isManager() || !s.Ordered || s.DeadAfter != time.Second || s.Listen != "0.0.0.0:7791" ||
		s.ClientAuth == nil || len(s.ClientAuth.keys) != 1 || s.MaxGroups != 10 || s.MaxGroupsPerToken != 2 || s.MaxGroupSize != 8 {
		t.Fatalf("%+v", s)
	}
	// Without tls: loopback only, default caps.
	c, err = config.Parse(file, []byte(base+"inc: {role: both}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := sectionOf(c); s.Listen != "127.0.0.1:7791" || s.TLS != nil || s.MaxGroups != 1024 || s.MaxGroupsPerToken != 32 || s.MaxGroupSize != 1024 {
		t.Fatalf("%+v", s)
	}
	if c, _ := config.Parse("f.yaml", []byte(base)); sectionOf(c) != nil || Spec.Configured(c) {
		t.Fatal("no inc section, yet configured")
	}
}

// TestConfigErrors: every mistake is reported at its line.
func TestConfigErrors(t *testing.T) {
	for in, want := range map[string]string{
		"inc: {slots: 4}\n":                                       "f.yaml:2: inc: role is required",
		"inc:\n  role: switch\n":                                  "f.yaml:3: inc: a switch needs manager",
		"inc:\n  role: spine\n":                                   `f.yaml:3: role: must be manager, switch or both, got "spine"`,
		"inc:\n  role: manager\n  manager: 10.0.0.1:1\n":          "f.yaml:4: inc: manager is for switches",
		"inc:\n  role: both\n  address: fd00::1\n":                "f.yaml:4: address: want an IPv4 address",
		"inc:\n  role: both\n  listen: nowhere\n":                 "f.yaml:4: listen: want address:port",
		"inc:\n  role: both\n  slots: 0\n":                        "f.yaml:4: slots: 0 out of range 1..65535",
		"inc:\n  role: both\n  colour: red\n":                     `f.yaml:4: unknown key "colour"`,
		"inc:\n  role: both\n  heartbeat: 1s\n  dead-after: 1s\n": "f.yaml:3: inc: dead-after (1s) must be longer than heartbeat (1s)",
		// The service is never exposed unauthenticated.
		"inc:\n  role: both\n  listen: 0.0.0.0:7791\n":              "f.yaml:4: inc: listen 0.0.0.0:7791 without tls would let any host reach the manager unauthenticated",
		"inc:\n  role: switch\n  manager: 10.255.0.6:7791\n":        "f.yaml:4: inc: a switch reaches a remote manager over tls only",
		"inc:\n  role: both\n  tls: {ca: ca.pem, cert: node.pem}\n": "f.yaml:4: inc: tls: key is required",
		"inc:\n  role: both\n  max-group-size: 5000\n":              "f.yaml:4: max-group-size: 5000 out of range 1..4096",
		"inc:\n  role: both\n  client-auth: {}\n":                   "f.yaml:4: inc: client-auth: key-file is required",
	} {
		_, err := config.Parse("f.yaml", []byte(base+in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

// TestConfigFileErrors: TLS and key files that cannot be used are
// reported at the line naming them.
func TestConfigFileErrors(t *testing.T) {
	dir := creds(t)
	file := filepath.Join(dir, "fared.yaml")
	other := creds(t)
	os.WriteFile(filepath.Join(dir, "open.key"), []byte(strings.Repeat("k", 40)), 0o644)
	for in, want := range map[string]string{
		"  tls: {ca: ca.pem, cert: node.pem, key: node.key}\n":                                                   ":4: inc: a manager with tls needs client-auth",
		"  tls:\n    ca: nope.pem\n    cert: node.pem\n    key: node.key\n" + ca():                               ":5: ca: open " + filepath.Join(dir, "nope.pem"),
		"  tls:\n    ca: ca.pem\n    cert: node.key\n    key: node.key\n" + ca():                                 ":6: cert, key: tls: failed to find",
		"  tls:\n    ca: " + filepath.Join(other, "ca.pem") + "\n    cert: node.pem\n    key: node.key\n" + ca(): ":6: cert: cert " + filepath.Join(dir, "node.pem") + " is not signed by ca",
		"  tls: {ca: ca.pem, cert: node.pem, key: node.key}\n  client-auth: {key-file: open.key}\n":              ":5: key-file: " + filepath.Join(dir, "open.key") + ": mode -rw-r--r--",
	} {
		_, err := config.Parse(file, []byte(base+"inc:\n  role: both\n"+in))
		if err == nil || !strings.Contains(err.Error(), file+want) {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
}

func ca() string { return "  client-auth: {key-file: token.key}\n" }

// TestCheckTLSAtStartOnly: adding or removing tls needs a restart; new
// files for the same keys are a change a reload applies.
func TestCheckTLSAtStartOnly(t *testing.T) {
	dir := creds(t)
	file := filepath.Join(dir, "fared.yaml")
	parse := func(s string) *config.Config {
		c, err := config.Parse(file, []byte(base+s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain := parse("inc: {role: both}\n")
	withTLS := parse("inc:\n  role: both\n" + tlsKeys)
	m := &module{cfg: sectionOf(plain)}
	if err := m.Check(withTLS); err == nil || !strings.Contains(err.Error(), "tls applies at start only") {
		t.Fatalf("adding tls: %v", err)
	}
	m.cfg = sectionOf(withTLS)
	if err := m.Check(plain); err == nil {
		t.Fatal("removing tls accepted")
	}
	// The same keys, a new certificate: a change (reload reports it).
	leafCA, _ := auth.LoadCAFiles(dir)
	leaf, _ := leafCA.Issue("n2", []netip.Addr{netip.MustParseAddr("10.255.0.3")}, nil, time.Hour)
	leaf.Write(dir, "node")
	rotated := parse("inc:\n  role: both\n" + tlsKeys)
	if err := m.Check(rotated); err != nil {
		t.Fatal(err)
	}
	if d := config.Diff(*sectionOf(withTLS), *sectionOf(rotated)); len(d) != 1 || !strings.HasPrefix(d[0], "tls.sum:") {
		t.Fatalf("diff %v", d)
	}
	// A reload hands the manager the new material.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.mgr = manager.New(managerConfig(m.cfg), slog.New(slog.DiscardHandler), nil)
	m.mgr.SetSecurity(security(m.cfg))
	go m.mgr.Run(ctx)
	if _, err := m.Reconfigure(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	if v, err := m.mgr.Security(ctx); err != nil || v.TLSSum != sectionOf(rotated).TLS.Sum || v.TLSSum == sectionOf(withTLS).TLS.Sum {
		t.Fatalf("after the reload: %+v %v", v, err)
	}
}

// ingress-check is strict unless set off; anything else is refused at
// its line; a reload turns it off and on in the running data plane.
func TestIngressCheckKey(t *testing.T) {
	c, err := config.Parse("f.yaml", []byte(base+"inc: {role: switch, manager: 127.0.0.1:7791}\n"))
	if err != nil || sectionOf(c).IngressCheck != IngressStrict {
		t.Fatalf("default: %v %+v", err, c)
	}
	c, err = config.Parse("f.yaml", []byte(base+"inc: {role: switch, manager: 127.0.0.1:7791, ingress-check: off}\n"))
	if err != nil || sectionOf(c).IngressCheck != IngressOff {
		t.Fatalf("off: %v", err)
	}
	_, err = config.Parse("f.yaml", []byte(base+"inc:\n  role: switch\n  manager: 127.0.0.1:7791\n  ingress-check: loose\n"))
	if err == nil || !strings.Contains(err.Error(), "f.yaml:5:") {
		t.Fatalf("loose: %v, want an error at f.yaml:5", err)
	}
	d := newDataPlane(slog.New(slog.DiscardHandler), "h", &Config{Manager: "127.0.0.1:7791", IngressCheck: IngressOff}, netip.MustParseAddr("10.0.0.1"))
	if !d.ingressOff.Load() {
		t.Fatal("ingress-check off not taken")
	}
	d.setIngressCheck(IngressStrict)
	if d.ingressOff.Load() || len(d.routesMoved) != 1 {
		t.Fatal("a reload to strict did not reach the data plane")
	}
}

// p-key is 0xFFFF unless set; a P_Key of partition 0 (0x8000, the invalid
// P_Key) or beyond 16 bits is refused at its line; the data plane takes it.
func TestPKeyKey(t *testing.T) {
	c, err := config.Parse("f.yaml", []byte(base+"inc: {role: switch, manager: 127.0.0.1:7791}\n"))
	if err != nil || sectionOf(c).PKey != 0xFFFF {
		t.Fatalf("default: %v %+v", err, c)
	}
	c, err = config.Parse("f.yaml", []byte(base+"inc: {role: switch, manager: 127.0.0.1:7791, p-key: 0x8012}\n"))
	if err != nil || sectionOf(c).PKey != 0x8012 {
		t.Fatalf("0x8012: %v", err)
	}
	for _, bad := range []string{"0x8000", "0", "0x10000"} {
		_, err = config.Parse("f.yaml", []byte(base+"inc:\n  role: switch\n  manager: 127.0.0.1:7791\n  p-key: "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "f.yaml:5:") {
			t.Fatalf("p-key %s: %v, want an error at f.yaml:5", bad, err)
		}
	}
	d := newDataPlane(slog.New(slog.DiscardHandler), "h", sectionOf(c), netip.MustParseAddr("10.0.0.1"))
	if d.pkey != 0x8012 {
		t.Fatalf("data plane P_Key %#04x", d.pkey)
	}
}
