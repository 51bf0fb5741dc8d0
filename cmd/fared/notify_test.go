package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/internal/scrape"
	"github.com/fared/fared/internal/testns"
)

// TestSystemdNotify plays systemd for a Type=notify service: a unixgram
// socket as $NOTIFY_SOCKET, fared started in its own namespace. fared says
// READY=1 once it serves (the API and the metrics listener answer at
// once, without waiting), RELOADING=1 (with MONOTONIC_USEC) then READY=1
// around a SIGHUP reload, and STOPPING=1 on SIGTERM, then exits 0.
func TestSystemdNotify(t *testing.T) {
	bin := build(t)
	n := testns.New(t, "fdn")
	dir := t.TempDir()
	sockPath := filepath.Join(dir, "notify")
	nsock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer nsock.Close()
	recv := func(what string) string {
		t.Helper()
		buf := make([]byte, 4096)
		nsock.SetReadDeadline(time.Now().Add(15 * time.Second))
		k, _, err := nsock.ReadFromUnix(buf)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return string(buf[:k])
	}

	cfg := filepath.Join(dir, "f.yaml")
	os.WriteFile(cfg, []byte("hostname: t1\nrouter-id: 10.0.0.1\nfib: {on-shutdown: flush}\nmetrics: {listen: 127.0.0.1:9342}\n"+
		"isis:\n  areas: [49.0001]\n  interfaces:\n    - {name: lo, passive: true}\n"), 0o644)
	sock := filepath.Join(dir, "f.sock")
	cmd := exec.Command("ip", "netns", "exec", n.Name, bin, "-c", cfg, "--socket", sock)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sockPath)
	var log syncBuf
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("fared log:\n%s", log.String())
		}
	})

	msg := recv("READY=1")
	if !strings.HasPrefix(msg, "READY=1\n") || !strings.Contains(msg, "STATUS=running: isis") {
		t.Fatalf("first notification %q, want READY=1 with a status", msg)
	}
	// Ready means serving: no retry here.
	ctx := context.Background()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("READY=1 before the API socket: %v", err)
	}
	f, body, err := scrape.Scrape(ctx, n.Name, "http://127.0.0.1:9342/metrics")
	if err != nil {
		t.Fatalf("READY=1 before the metrics listener: %v\n%s", err, body)
	}
	if v, _ := f.Sum("fared_module_up", "module", "isis"); v != 1 {
		t.Fatalf("isis not up at READY=1: %v", f.Series("fared_module_up"))
	}

	// SIGHUP: RELOADING=1 with the monotonic clock, then READY=1.
	os.WriteFile(cfg, []byte("hostname: t1\nrouter-id: 10.0.0.1\nlog-level: debug\nfib: {on-shutdown: flush}\nmetrics: {listen: 127.0.0.1:9342}\n"+
		"isis:\n  areas: [49.0001]\n  interfaces:\n    - {name: lo, passive: true}\n"), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	msg = recv("RELOADING=1")
	usec, ok := strings.CutPrefix(msg, "RELOADING=1\nMONOTONIC_USEC=")
	if v, err := strconv.ParseInt(usec, 10, 64); !ok || err != nil || v <= 0 {
		t.Fatalf("reload notification %q, want RELOADING=1 and MONOTONIC_USEC", msg)
	}
	if msg = recv("READY=1 after the reload"); msg != "READY=1" {
		t.Fatalf("after the reload %q, want READY=1", msg)
	}
	igptest.Poll(t, 10*time.Second, "reload applied", func() error { return logHas(&log, `msg="configuration reloaded"`) })

	// SIGTERM: STOPPING=1, then a clean exit.
	cmd.Process.Signal(syscall.SIGTERM)
	if msg = recv("STOPPING=1"); msg != "STOPPING=1" {
		t.Fatalf("on SIGTERM %q, want STOPPING=1", msg)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("fared did not exit after SIGTERM")
	}
}
