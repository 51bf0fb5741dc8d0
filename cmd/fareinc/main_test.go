package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/manager"
)

func runFareinc(t *testing.T, args ...string) (string, error) {
	t.Helper()
	for _, e := range []string{envCA, envToken, envTokenFile} {
		t.Setenv(e, "")
	}
	cmd := root()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// TestWithoutCredentials: outside a lab, a client without a CA or a token
// is told what it lacks before it sends anything.
func TestWithoutCredentials(t *testing.T) {
	dir := t.TempDir()
	ca, _ := auth.NewCA("t", time.Hour)
	ca.WriteCA(dir)
	base := []string{"allreduce", "--manager", "10.0.0.1:7791", "--group", "g", "--rank", "0", "--ranks", "2"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{nil, "no CA to verify the INC manager"},
		{[]string{"--ca", filepath.Join(dir, "ca.pem")}, "no join token"},
		{[]string{"--ca", filepath.Join(dir, "nope.pem")}, "INC CA: open"},
		{[]string{"--plaintext"}, "plaintext only towards a manager on loopback"},
		{[]string{"--token-file", filepath.Join(dir, "nope")}, "join token: open"},
	} {
		start := time.Now()
		_, err := runFareinc(t, append(base, c.extra...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.extra, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: took %v", c.extra, d)
		}
	}
	if _, err := runFareinc(t, "allreduce", "--group", "g", "--ranks", "2"); err == nil || !strings.Contains(err.Error(), "--manager is required") {
		t.Errorf("without --manager: %v", err)
	}
}

// TestTokenCommands: token-key makes a key, token mints one the manager
// accepts for the group.
func TestTokenCommands(t *testing.T) {
	key := filepath.Join(t.TempDir(), "inc.key")
	if _, err := runFareinc(t, "token-key", key); err != nil {
		t.Fatal(err)
	}
	if _, err := runFareinc(t, "token-key", key); err == nil || !strings.Contains(err.Error(), "not overwriting") {
		t.Fatalf("second token-key: %v", err)
	}
	out, err := runFareinc(t, "token", "--key-file", key, "--group", "job-1/*", "--ttl", "1h", "--subject", "sched")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := auth.LoadKeys(key)
	c, err := auth.Verify(keys, strings.TrimSpace(out), time.Now())
	if err != nil || c.Group != "job-1/*" || c.Subject != "sched" || c.Expires-c.Issued != 3600 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := runFareinc(t, "token", "--key-file", key, "--group", "a*b"); err == nil {
		t.Fatal("minted a bad pattern")
	}
}

// TestRefusedJoinExplained: against a real manager (TLS, client-auth) on
// loopback, a token for another group or a CA that did not sign the
// manager's certificate give a clear error, not a hang.
func TestRefusedJoinExplained(t *testing.T) {
	dir := t.TempDir()
	ca, _ := auth.NewCA("lab", time.Hour)
	ca.WriteCA(dir)
	leaf, _ := ca.Issue("mgr", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil, time.Hour)
	files, _ := leaf.Write(dir, "mgr")
	mat, err := auth.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "k")
	auth.NewKeyFile(keyFile)
	keys, _ := auth.LoadKeys(keyFile)
	m := manager.New(manager.Config{}, slog.New(slog.DiscardHandler), nil)
	m.SetSecurity(manager.Security{TLS: mat, TokenKeys: keys})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	go m.Serve(ctx, l)

	tok, _ := auth.Mint(keys[0], auth.Claims{Group: "other", Expires: time.Now().Add(time.Hour).Unix()}, time.Now())
	args := []string{"allreduce", "--manager", l.Addr().String(), "--group", "g", "--rank", "0", "--ranks", "2",
		"--ca", filepath.Join(dir, "ca.pem"), "--token", tok}
	if _, err := runFareinc(t, args...); err == nil || !strings.Contains(err.Error(), "PermissionDenied") ||
		!strings.Contains(err.Error(), "not for this group") {
		t.Fatalf("token of another group: %v", err)
	}
	other, _ := auth.NewCA("other", time.Hour)
	odir := t.TempDir()
	other.WriteCA(odir)
	args[len(args)-3] = filepath.Join(odir, "ca.pem")
	start := time.Now()
	_, err = runFareinc(t, args...)
	if err == nil || !strings.Contains(err.Error(), "Unavailable") || !strings.Contains(err.Error(), "signed by your CA") {
		t.Fatalf("wrong CA: %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("wrong CA: took %v", d)
	}
}
