// Package testns gives a test its own network namespace: a per-run unique
// name, loopback up, removed in t.Cleanup even when the test fails. Kernel
// tests skip without root, except in CI (CI=true), where a skipped kernel
// test would hide breakage: there they fail.
package testns

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fared/fared/internal/nsenter"
)

// RequireRoot skips the test unless it runs as root; with CI=true it fails
// instead.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("kernel tests need root (CI=true: not skipping)")
	}
	t.Skip("kernel tests need root")
}

// NS is one test's namespace.
type NS struct {
	T      testing.TB
	Name   string
	Handle netns.NsHandle
}

// New creates a namespace named prefix plus random hex.
func New(t testing.TB, prefix string) *NS {
	t.Helper()
	RequireRoot(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := prefix + hex.EncodeToString(r[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	n := &NS{T: t, Name: name}
	t.Cleanup(func() {
		if n.Handle.IsOpen() {
			n.Handle.Close()
		}
		_ = exec.Command("ip", "netns", "del", name).Run()
	})
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("netns %s: %v", name, err)
	}
	n.Handle = h
	n.IP("link", "set", "lo", "up")
	return n
}

// IP runs `ip -n NS args...` and returns its output; a failure fails the
// test.
func (n *NS) IP(args ...string) string {
	n.T.Helper()
	out, err := exec.Command("ip", append([]string{"-n", n.Name}, args...)...).CombinedOutput()
	if err != nil {
		n.T.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Exec runs a command inside the namespace and returns its combined output.
func (n *NS) Exec(name string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...).CombinedOutput()
	return string(out), err
}

// Sysctl sets key=val inside the namespace.
func (n *NS) Sysctl(key, val string) {
	n.T.Helper()
	if out, err := n.Exec("sysctl", "-qw", key+"="+val); err != nil {
		n.T.Fatalf("sysctl %s: %v: %s", key, err, out)
	}
}

// Ifindex returns the index of a link in the namespace.
func (n *NS) Ifindex(name string) int {
	n.T.Helper()
	h, err := netlink.NewHandleAt(n.Handle)
	if err != nil {
		n.T.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		n.T.Fatalf("link %s: %v", name, err)
	}
	return l.Attrs().Index
}

// Do runs f with the calling goroutine's thread in the namespace: sockets
// f opens live there afterwards.
func (n *NS) Do(f func()) {
	n.T.Helper()
	In(n.T, n.Handle, f)
}

// In runs f with the calling goroutine's thread in namespace h (one the
// test did not make with New) and puts the thread back afterwards. f runs
// on the test's goroutine, so it may call t.Fatal (nsenter.Here).
func In(t testing.TB, h netns.NsHandle, f func()) {
	t.Helper()
	if err := nsenter.Here(h, func() error { f(); return nil }); err != nil {
		t.Fatal(err)
	}
}
