package fib

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// requireRoot skips kernel tests when not root, except in CI (CI=true),
// where a skipped kernel test would hide a broken FIB: there it fails.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("kernel FIB tests need root (CI=true: not skipping)")
	}
	t.Skip("kernel FIB tests need root")
}

// testNS is a private network namespace for one test.
type testNS struct {
	t    testing.TB
	name string
	h    netns.NsHandle
}

// newNS creates a namespace with a per-run unique name, removed in
// t.Cleanup even when the test fails.
func newNS(t testing.TB) *testNS {
	t.Helper()
	requireRoot(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := "fibt" + hex.EncodeToString(r[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	n := &testNS{t: t, name: name}
	t.Cleanup(func() {
		if n.h.IsOpen() {
			n.h.Close()
		}
		_ = exec.Command("ip", "netns", "del", name).Run()
	})
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("netns %s: %v", name, err)
	}
	n.h = h
	n.ip("link", "set", "lo", "up")
	return n
}

// ip runs `ip -n NS args...` and returns stdout.
func (n *testNS) ip(args ...string) string {
	n.t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", n.name}, args...)...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (n *testNS) sysctl(key, val string) {
	n.t.Helper()
	out, err := exec.Command("ip", "netns", "exec", n.name, "sysctl", "-qw", key+"="+val).CombinedOutput()
	if err != nil {
		n.t.Fatalf("sysctl %s: %v: %s", key, err, out)
	}
}

func (n *testNS) ifindex(name string) int {
	n.t.Helper()
	h, err := netlink.NewHandleAt(n.h)
	if err != nil {
		n.t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		n.t.Fatalf("link %s: %v", name, err)
	}
	return l.Attrs().Index
}

// link is one veth inside the namespace: dev (with 10.K.0.1/24 and
// fd00:K::1/64) whose peer (up, no address) makes the carrier; the
// gateways are 10.K.0.2 and fd00:K::2 on the link.
type link struct {
	dev, peer string
	idx       int
	gw4, gw6  netip.Addr
}

func (n *testNS) veths(count int) []link {
	n.t.Helper()
	var ls []link
	for k := 1; k <= count; k++ {
		l := link{dev: fmt.Sprintf("v%d", k), peer: fmt.Sprintf("v%dp", k)}
		n.ip("link", "add", l.dev, "type", "veth", "peer", "name", l.peer)
		n.ip("link", "set", l.peer, "up")
		n.ip("link", "set", l.dev, "up")
		n.ip("addr", "add", fmt.Sprintf("10.%d.0.1/24", k), "dev", l.dev)
		n.ip("-6", "addr", "add", fmt.Sprintf("fd00:%d::1/64", k), "dev", l.dev, "nodad")
		l.idx = n.ifindex(l.dev)
		l.gw4 = netip.MustParseAddr(fmt.Sprintf("10.%d.0.2", k))
		l.gw6 = netip.MustParseAddr(fmt.Sprintf("fd00:%d::2", k))
		ls = append(ls, l)
	}
	return ls
}

func (n *testNS) open(cfg Config) *FIB {
	n.t.Helper()
	cfg.NetNS = n.h
	f, err := Open(cfg)
	if err != nil {
		n.t.Fatalf("Open: %v", err)
	}
	return f
}

func (n *testNS) dump() ([]KernelRoute, map[uint32]KernelNexthop) {
	n.t.Helper()
	rs, nhs, err := Dump(n.h, 187)
	if err != nil {
		n.t.Fatalf("Dump: %v", err)
	}
	m := map[uint32]KernelNexthop{}
	for _, k := range nhs {
		m[k.ID] = k
	}
	return rs, m
}

func (n *testNS) routeByPrefix(p string) (KernelRoute, bool) {
	rs, _ := n.dump()
	for _, r := range rs {
		if r.Prefix == netip.MustParsePrefix(p) {
			return r, true
		}
	}
	return KernelRoute{}, false
}

// ipJSON runs `ip -j ...` and decodes the output.
func (n *testNS) ipJSON(v any, args ...string) {
	n.t.Helper()
	out := n.ip(append([]string{"-j"}, args...)...)
	if strings.TrimSpace(out) == "" {
		out = "[]"
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		n.t.Fatalf("ip -j %v: %v: %s", args, err, out)
	}
}

func mustSync(t testing.TB, f *FIB, routes []Route) Stats {
	t.Helper()
	st, err := f.Sync(routes)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return st
}

func nh(gw netip.Addr, idx int, w uint32) NextHop {
	return NextHop{Gateway: gw, IfIndex: idx, Weight: w}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// groupWeights maps member gateway -> weight for group id, from Dump.
func groupWeights(t testing.TB, nhs map[uint32]KernelNexthop, id uint32) map[netip.Addr]uint32 {
	t.Helper()
	g, ok := nhs[id]
	if !ok || g.Group == nil {
		t.Fatalf("nexthop %#x is not a group in the kernel: %+v", id, g)
	}
	out := map[netip.Addr]uint32{}
	for _, m := range g.Group {
		out[nhs[m.ID].Gateway] = m.Weight
	}
	return out
}
