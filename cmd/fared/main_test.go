package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/internal/testns"
)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fared")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// A bad config line is reported as file:line and fared refuses to start.
func TestBadConfigRefusesToStart(t *testing.T) {
	bin := build(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("router-id: 10.0.0.1\nisis:\n  areas: [49.0001]\n  interfaces:\n    - {name: e0, metric: ten}\n"), 0o644)
	out, err := exec.Command(bin, "-c", cfg, "--socket", filepath.Join(t.TempDir(), "s.sock")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), cfg+":5: ") || !strings.Contains(string(out), "not starting") {
		t.Fatalf("want %s:5: ... and a refusal, got:\n%s", cfg, out)
	}
}

// fared serves its API on the socket given by flag and stops cleanly on
// SIGTERM, removing the socket.
func TestServeAndSIGTERM(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ok.yaml")
	os.WriteFile(cfg, []byte("hostname: t1\nrouter-id: 10.0.0.1\nisis:\n  areas: [49.0001]\n  interfaces:\n    - {name: absent0, type: p2p}\n"), 0o644)
	sock := filepath.Join(dir, "fared.sock")
	cmd := exec.Command(bin, "-c", cfg, "--socket", sock)
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	c := client.New(sock)
	var st map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.GetJSON(context.Background(), "/status", &st)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("API not up: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st["hostname"] != "t1" {
		t.Fatalf("status %v", st)
	}
	// A bad request is a 4xx with the reason.
	if _, err := c.Get(context.Background(), "/isis/database?level=7"); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("bad level: %v", err)
	}
	if _, err := c.Get(context.Background(), "/isis/database?lsp=nosuchhost"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("unknown lsp: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("fared did not stop on SIGTERM\n%s", log.String())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if !strings.Contains(log.String(), "fared stopped") {
		t.Fatalf("no clean stop logged:\n%s", log.String())
	}
}

// $FARED_SOCKET steers farectl only: a daemon whose config names its
// socket serves there even when the variable, exported for farectl, points
// elsewhere (it once made the next start fail with "another daemon is
// serving").
func TestFaredSocketVariableSteersClientsOnly(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "configured.sock")
	other := filepath.Join(dir, "exported.sock")
	cfg := filepath.Join(dir, "ok.yaml")
	os.WriteFile(cfg, []byte("hostname: t2\nrouter-id: 10.0.0.2\nsocket: "+sock+"\nisis:\n  areas: [49.0001]\n  interfaces:\n    - {name: absent0, type: p2p}\n"), 0o644)
	cmd := exec.Command(bin, "-c", cfg)
	cmd.Env = append(os.Environ(), "FARED_SOCKET="+other)
	startServing(t, cmd, sock)
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("the daemon created $FARED_SOCKET's path: %v", err)
	}
	// The client side: with no --socket, the variable wins over the default.
	t.Setenv("FARED_SOCKET", sock)
	var st map[string]any
	if err := client.New(client.SocketPath("")).GetJSON(context.Background(), "/status", &st); err != nil || st["hostname"] != "t2" {
		t.Fatalf("client through $FARED_SOCKET: %v %v", err, st)
	}
}

// fared in a fresh network namespace, as farelab and operators run it:
// it warns that forwarding is off (at start and in status), follows the
// namespace's links (a configured interface that appears and disappears
// is logged), and --check warns about the interface that is not there.
func TestInNamespace(t *testing.T) {
	bin := build(t)
	n := testns.New(t, "fdm")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ns.yaml")
	os.WriteFile(cfg, []byte("hostname: t1\nrouter-id: 10.0.0.1\nfib: {on-shutdown: flush}\nisis:\n  areas: [49.0001]\n  interfaces:\n    - {name: late0, type: p2p}\n"), 0o644)
	out, err := exec.Command("ip", "netns", "exec", n.Name, bin, "-c", cfg, "--check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), cfg+`:7: warning: isis interface "late0" does not exist (yet) on this host`) {
		t.Fatalf("--check: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "f.sock")
	cmd := exec.Command("ip", "netns", "exec", n.Name, bin, "-c", cfg, "--socket", sock)
	var log syncBuf
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	c := client.New(sock)
	var st wire.Status
	igptest.Poll(t, 10*time.Second, "API up", func() error { return c.GetJSON(context.Background(), "/status", &st) })
	if st.Forwarding.IPv4 || !strings.Contains(strings.Join(st.Warnings, "\n"), "net.ipv4.ip_forward=0") {
		t.Fatalf("status: %+v", st)
	}
	n.Sysctl("net.ipv4.ip_forward", "1")
	if err := c.GetJSON(context.Background(), "/status", &st); err != nil || !st.Forwarding.IPv4 {
		t.Fatalf("after sysctl: %+v %v", st, err)
	}
	n.IP("link", "add", "late0", "type", "veth", "peer", "name", "late0p")
	igptest.Poll(t, 10*time.Second, "appearance logged", func() error { return logHas(&log, `msg="configured interface appeared" interface=late0`) })
	n.IP("link", "del", "late0")
	igptest.Poll(t, 10*time.Second, "disappearance logged", func() error { return logHas(&log, `msg="configured interface disappeared" interface=late0`) })
	for _, bad := range []string{"netlink monitor stopped", "panic"} {
		if strings.Contains(log.String(), bad) {
			t.Fatalf("log has %q:\n%s", bad, log.String())
		}
	}
	if !strings.Contains(log.String(), "ip_forward=0") || !strings.Contains(log.String(), `late0\" does not exist`) {
		t.Fatalf("start-up warnings missing:\n%s", log.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startServing starts a fared, to be killed at cleanup, and waits until it
// serves on sock. It returns fared's stderr.
func startServing(t *testing.T, cmd *exec.Cmd, sock string) *syncBuf {
	t.Helper()
	var log syncBuf
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	igptest.Poll(t, 10*time.Second, "serving on "+sock, func() error {
		var st map[string]any
		if err := client.New(sock).GetJSON(context.Background(), "/status", &st); err != nil {
			return fmt.Errorf("%v\n%s", err, log.String())
		}
		return nil
	})
	return &log
}

func logHas(l *syncBuf, s string) error {
	if !strings.Contains(l.String(), s) {
		return fmt.Errorf("not in log: %s\n%s", s, l.String())
	}
	return nil
}
