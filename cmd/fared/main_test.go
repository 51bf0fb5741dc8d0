package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/api/client"
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
