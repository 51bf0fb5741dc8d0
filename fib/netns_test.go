package fib

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/fared/fared/internal/testns"

	"github.com/vishvananda/netns"
)

func requireRoot(t testing.TB) { testns.RequireRoot(t) }

// testNS is a private network namespace for one test, with the FIB's
// helpers.
type testNS struct {
	*testns.NS
	t    testing.TB
	name string
	h    netns.NsHandle
}

func newNS(t testing.TB) *testNS {
	t.Helper()
	n := testns.New(t, "fibt")
	return &testNS{NS: n, t: t, name: n.Name, h: n.Handle}
}

func (n *testNS) ip(args ...string) string { n.t.Helper(); return n.IP(args...) }

func (n *testNS) sysctl(key, val string) { n.t.Helper(); n.Sysctl(key, val) }

func (n *testNS) ifindex(name string) int { n.t.Helper(); return n.Ifindex(name) }

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
