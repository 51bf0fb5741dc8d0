package fib

import (
	"github.com/vishvananda/netlink/nl"

	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestProbe(t *testing.T) {
	n := newNS(t)
	caps, err := Probe(n.h)
	if err != nil {
		t.Fatal(err)
	}
	// Kernel 6.18: all three. Older CI kernels must still report honestly.
	t.Logf("capabilities: %+v", caps)
	if !caps.NexthopObjects || !caps.Weight16 || !caps.Resilient {
		t.Errorf("Probe = %+v, want all true on kernel >= 6.12", caps)
	}
	_, nhs, err := Dump(n.h, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(nhs) != 0 {
		t.Errorf("Probe left nexthops behind: %+v", nhs)
	}
}

// Sync, then read back with Dump and with iproute2's JSON.
func TestSyncReadBack(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	routes := []Route{
		{Prefix: pfx("10.100.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 5), nh(l[1].gw4, l[1].idx, 3), nh(l[2].gw4, l[2].idx, 2)}},
		{Prefix: pfx("10.101.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("fd10::/48"), NextHops: []NextHop{nh(l[0].gw6, l[0].idx, 7), nh(l[1].gw6, l[1].idx, 1)}},
	}
	st := mustSync(t, f, routes)
	t.Logf("stats: %+v", st)
	if st.RoutesAdded != 3 || st.GroupsAdded != 2 || st.NexthopsAdded != 5 {
		t.Errorf("stats = %+v", st)
	}
	rs, nhs := n.dump()
	got := map[netip.Prefix]KernelRoute{}
	for _, r := range rs {
		got[r.Prefix] = r
		if r.Protocol != 187 || r.Metric != 20 || r.Table != unix.RT_TABLE_MAIN {
			t.Errorf("route %+v: want proto 187, metric 20, main", r)
		}
	}
	if len(got) != 3 {
		t.Fatalf("routes in kernel: %+v", rs)
	}
	w := groupWeights(t, nhs, got[pfx("10.100.0.0/16")].NhID)
	if w[l[0].gw4] != 5 || w[l[1].gw4] != 3 || w[l[2].gw4] != 2 {
		t.Errorf("group weights %v, want 5/3/2", w)
	}
	if k := nhs[got[pfx("10.101.0.0/24")].NhID]; k.Group != nil || k.Gateway != l[0].gw4 || k.IfIndex != l[0].idx {
		t.Errorf("single route should use the plain nexthop, got %+v", k)
	}
	w6 := groupWeights(t, nhs, got[pfx("fd10::/48")].NhID)
	if w6[l[0].gw6] != 7 || w6[l[1].gw6] != 1 {
		t.Errorf("v6 group weights %v, want 7/1", w6)
	}

	// Cross-check with iproute2.
	var ipNH []struct {
		ID       uint32 `json:"id"`
		Gateway  string `json:"gateway"`
		Protocol string `json:"protocol"`
		Group    []struct {
			ID     uint32 `json:"id"`
			Weight uint32 `json:"weight"`
		} `json:"group"`
	}
	n.ipJSON(&ipNH, "nexthop", "show")
	gw := map[uint32]string{}
	for _, x := range ipNH {
		gw[x.ID] = x.Gateway
		if x.Protocol != "isis" {
			t.Errorf("ip nexthop %d protocol %q", x.ID, x.Protocol)
		}
	}
	for _, x := range ipNH {
		if x.ID != got[pfx("10.100.0.0/16")].NhID {
			continue
		}
		ws := map[string]uint32{}
		for _, m := range x.Group {
			if m.Weight == 0 {
				m.Weight = 1 // iproute2 omits weight 1
			}
			ws[gw[m.ID]] = m.Weight
		}
		if ws["10.1.0.2"] != 5 || ws["10.2.0.2"] != 3 || ws["10.3.0.2"] != 2 {
			t.Errorf("ip -j nexthop: group %d weights %v", x.ID, ws)
		}
	}
	for _, fam := range []string{"-4", "-6"} {
		var ipRT []struct {
			Dst    string `json:"dst"`
			NhID   uint32 `json:"nhid"`
			Metric uint32 `json:"metric"`
		}
		n.ipJSON(&ipRT, fam, "route", "show", "proto", "187")
		for _, r := range ipRT {
			k := got[pfx(r.Dst)]
			if r.NhID != k.NhID || r.Metric != 20 {
				t.Errorf("ip -j route %s: nhid %d metric %d, Dump says %d", r.Dst, r.NhID, r.Metric, k.NhID)
			}
		}
		if want := map[string]int{"-4": 2, "-6": 1}[fam]; len(ipRT) != want {
			t.Errorf("ip %s route proto 187: %d routes, want %d", fam, len(ipRT), want)
		}
	}

	// Idempotent: the same state again sends nothing.
	st = mustSync(t, f, routes)
	if !reflect.DeepEqual(st, Stats{}) {
		t.Errorf("second identical Sync: %+v, want no work", st)
	}
}

// 100/40 and 5/2 are one ratio: one group, refcount 2. Changing one splits.
func TestDedupRefcount(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	r := func(p string, a, b uint32) Route {
		return Route{Prefix: pfx(p), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, a), nh(l[1].gw4, l[1].idx, b)}}
	}
	st := mustSync(t, f, []Route{r("10.200.0.0/24", 100, 40), r("10.201.0.0/24", 5, 2)})
	if st.GroupsAdded != 1 {
		t.Fatalf("want one shared group: %+v", st)
	}
	a, _ := n.routeByPrefix("10.200.0.0/24")
	b, _ := n.routeByPrefix("10.201.0.0/24")
	if a.NhID != b.NhID {
		t.Fatalf("100/40 and 5/2 use groups %#x and %#x", a.NhID, b.NhID)
	}
	if g := f.groups[a.NhID]; g == nil || g.refs != 2 {
		t.Fatalf("refcount of shared group: %+v", g)
	}
	shared := a.NhID

	// One prefix changes: it must leave (new group), the other must stay.
	st = mustSync(t, f, []Route{r("10.200.0.0/24", 100, 40), r("10.201.0.0/24", 1, 1)})
	a, _ = n.routeByPrefix("10.200.0.0/24")
	b, _ = n.routeByPrefix("10.201.0.0/24")
	if a.NhID != shared || b.NhID == shared {
		t.Fatalf("split: a on %#x, b on %#x (shared %#x)", a.NhID, b.NhID, shared)
	}
	_, nhs := n.dump()
	if w := groupWeights(t, nhs, shared); w[l[0].gw4] != 5 || w[l[1].gw4] != 2 {
		t.Errorf("shared group changed: %v", w)
	}
	if w := groupWeights(t, nhs, b.NhID); w[l[0].gw4] != 1 || w[l[1].gw4] != 1 {
		t.Errorf("new group: %v", w)
	}
	if st.GroupsAdded != 1 || st.RoutesReplaced != 1 || st.GroupsReplaced != 0 {
		t.Errorf("split stats %+v", st)
	}
	if f.groups[shared].refs != 1 || f.groups[b.NhID].refs != 1 {
		t.Errorf("refcounts after split: %d, %d", f.groups[shared].refs, f.groups[b.NhID].refs)
	}

	// Back to one ratio: they merge and the spare group is deleted.
	st = mustSync(t, f, []Route{r("10.200.0.0/24", 10, 4), r("10.201.0.0/24", 15, 6)})
	_, nhs = n.dump()
	groups := 0
	for _, k := range nhs {
		if k.Group != nil {
			groups++
		}
	}
	if groups != 1 || st.GroupsDeleted != 1 {
		t.Errorf("after merge: %d groups in kernel, stats %+v", groups, st)
	}
}

// Runs of routes with the same next hops (what a fabric's table is made
// of) share the work of the route before them: each run must still land
// on the group of its own weights, whether that group exists already
// (second Sync) or is new, and a run broken by a different route must not
// inherit its decision.
func TestRunsOfEqualRoutes(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	r := func(p string, a, b uint32) Route {
		return Route{Prefix: pfx(p), NextHops: []NextHop{nh(l[1].gw4, l[1].idx, b), nh(l[0].gw4, l[0].idx, a)}}
	}
	// 3:1 twice, 1:1 twice, a single next hop, 3:1 again: two groups.
	routes := []Route{
		r("10.210.0.0/24", 3, 1), r("10.210.1.0/24", 3, 1),
		r("10.210.2.0/24", 1, 1), r("10.210.3.0/24", 1, 1),
		{Prefix: pfx("10.210.4.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		r("10.210.5.0/24", 3, 1),
	}
	check := func(stage string) {
		t.Helper()
		_, nhs := n.dump()
		want := map[string][2]uint32{"10.210.0.0/24": {3, 1}, "10.210.1.0/24": {3, 1}, "10.210.2.0/24": {1, 1}, "10.210.3.0/24": {1, 1}, "10.210.5.0/24": {3, 1}}
		for p, w := range want {
			rt, ok := n.routeByPrefix(p)
			if !ok {
				t.Fatalf("%s: %s not in the kernel", stage, p)
			}
			got := groupWeights(t, nhs, rt.NhID)
			if got[l[0].gw4] != w[0] || got[l[1].gw4] != w[1] {
				t.Errorf("%s: %s on group %#x weights %v, want %s:%d %s:%d", stage, p, rt.NhID, got, l[0].gw4, w[0], l[1].gw4, w[1])
			}
		}
		a, _ := n.routeByPrefix("10.210.0.0/24")
		b, _ := n.routeByPrefix("10.210.5.0/24")
		if a.NhID != b.NhID {
			t.Errorf("%s: the 3:1 routes use groups %#x and %#x", stage, a.NhID, b.NhID)
		}
		if rt, ok := n.routeByPrefix("10.210.4.0/24"); !ok || f.groups[rt.NhID] != nil {
			t.Errorf("%s: the single next hop route: %+v (a group?)", stage, rt)
		}
	}
	st := mustSync(t, f, routes)
	if st.GroupsAdded != 2 || st.RoutesAdded != 6 {
		t.Errorf("first Sync: %+v", st)
	}
	check("new groups")
	// The same table again, in a fresh FIB that adopts the kernel's
	// objects: every route finds its existing group.
	f2 := n.open(Config{})
	defer f2.Close()
	f = f2
	st = mustSync(t, f, routes)
	if st.GroupsAdded != 0 || st.RoutesAdded != 0 || st.RoutesReplaced != 0 {
		t.Errorf("second Sync changed something: %+v", st)
	}
	check("existing groups")
}

// nlWatch counts route and nexthop notifications in a namespace.
type nlWatch struct {
	c *conn
}

func watch(t *testing.T, n *testNS) *nlWatch {
	c, err := dial(n.h, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE, unix.RTNLGRP_NEXTHOP)
	if err != nil {
		t.Fatal(err)
	}
	tv := unix.Timeval{Usec: 300000}
	_ = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	t.Cleanup(func() { c.close() })
	return &nlWatch{c: c}
}

// drain reads until 300ms of silence: routes = route messages (but the
// kernel's own), nh = nexthop messages by id.
func (w *nlWatch) drain(t *testing.T) (routes int, nh map[uint32]int) {
	nh = map[uint32]int{}
	for {
		nr, _, err := unix.Recvfrom(w.c.fd, w.c.rbuf, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EWOULDBLOCK) {
				return
			}
			t.Fatalf("watch: %v", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(w.c.rbuf[:nr])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
				// The kernel's own routes for the veths' addresses (IPv6
				// local routes come when DAD ends, seconds late on a
				// loaded machine) are not the FIB's doing.
				if len(m.Data) > 5 && m.Data[5] == unix.RTPROT_KERNEL {
					continue
				}
				routes++
			case unix.RTM_NEWNEXTHOP, unix.RTM_DELNEXTHOP:
				k, err := ParseNexthop(m.Data)
				if err != nil {
					t.Fatal(err)
				}
				nh[k.ID]++
			}
		}
	}
}

func TestReweightInPlace(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	// With the default compat mode 1 the kernel itself sends a route
	// notification per route on a group replace; 0 is what fared runs
	// with (and is what makes reweights O(groups)).
	n.sysctl("net.ipv4.nexthop_compat_mode", "0")
	mk := func(a, b, c uint32, d uint32) []Route {
		var rs []Route
		for i := range 50 {
			rs = append(rs, Route{Prefix: pfx(fmt.Sprintf("10.%d.%d.0/24", 100+i/10, i%10)),
				NextHops: []NextHop{nh(l[0].gw4, l[0].idx, a), nh(l[1].gw4, l[1].idx, b), nh(l[2].gw4, l[2].idx, c)}})
			rs = append(rs, Route{Prefix: pfx(fmt.Sprintf("fd%02x::/64", i)),
				NextHops: []NextHop{nh(l[0].gw6, l[0].idx, d), nh(l[1].gw6, l[1].idx, 1)}})
		}
		return rs
	}
	mustSync(t, f, mk(5, 3, 2, 4))
	before, _ := n.dump()
	ids := map[netip.Prefix]uint32{}
	for _, r := range before {
		ids[r.Prefix] = r.NhID
	}
	w := watch(t, n)
	w.drain(t)

	st := mustSync(t, f, mk(1, 1, 8, 9))
	routes, nhmsgs := w.drain(t)
	t.Logf("reweight stats %+v; notifications: %d route, nexthop %v", st, routes, nhmsgs)
	if st.GroupsReplaced != 2 || st.Messages != 2 || st.RoutesReplaced+st.RoutesAdded+st.GroupsAdded != 0 {
		t.Errorf("reweight of 100 routes over 2 groups: %+v, want 2 group replaces, 2 messages", st)
	}
	if routes != 0 {
		t.Errorf("%d route notifications during reweight, want 0", routes)
	}
	if len(nhmsgs) != 2 {
		t.Errorf("nexthop notifications for %d objects, want the 2 groups: %v", len(nhmsgs), nhmsgs)
	}
	for id, c := range nhmsgs {
		if c != 1 {
			t.Errorf("group %#x: %d notifications, want 1", id, c)
		}
	}
	after, nhs := n.dump()
	for _, r := range after {
		if ids[r.Prefix] != r.NhID {
			t.Errorf("%s moved from %#x to %#x", r.Prefix, ids[r.Prefix], r.NhID)
		}
	}
	g4 := groupWeights(t, nhs, ids[pfx("10.100.0.0/24")])
	if g4[l[0].gw4] != 1 || g4[l[1].gw4] != 1 || g4[l[2].gw4] != 8 {
		t.Errorf("v4 group after reweight: %v", g4)
	}
	g6 := groupWeights(t, nhs, ids[pfx("fd00::/64")])
	if g6[l[0].gw6] != 9 || g6[l[1].gw6] != 1 {
		t.Errorf("v6 group after reweight: %v", g6)
	}
}

func TestResilientGroup(t *testing.T) {
	n := newNS(t)
	l := n.veths(2)
	res := &Resilient{Buckets: 64, IdleTimer: 2 * time.Second, UnbalancedTimer: 10 * time.Second}
	f := n.open(Config{Resilient: res})
	defer f.Close()
	mustSync(t, f, []Route{{Prefix: pfx("10.50.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 3), nh(l[1].gw4, l[1].idx, 1)}}})
	r, ok := n.routeByPrefix("10.50.0.0/16")
	if !ok {
		t.Fatal("route missing")
	}
	_, nhs := n.dump()
	g := nhs[r.NhID]
	if g.GroupType != GroupResilient || g.Resilient == nil {
		t.Fatalf("group %+v is not resilient", g)
	}
	if g.Resilient.Buckets != 64 || g.Resilient.IdleTimer != 2*time.Second || g.Resilient.UnbalancedTimer != 10*time.Second {
		t.Errorf("resilient params %+v", *g.Resilient)
	}
	// Reweight a resilient group in place too (same bucket count).
	st := mustSync(t, f, []Route{{Prefix: pfx("10.50.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1)}}})
	if st.GroupsReplaced != 1 || st.Messages != 1 {
		t.Errorf("resilient reweight: %+v", st)
	}
	if w := groupWeights(t, func() map[uint32]KernelNexthop { _, m := n.dump(); return m }(), r.NhID); w[l[0].gw4] != 1 || w[l[1].gw4] != 1 {
		t.Errorf("resilient weights after replace: %v", w)
	}
	// A FIB configured with another bucket count must not reuse it.
	f.Close()
	f2 := n.open(Config{Resilient: &Resilient{Buckets: 32}, KeepOnShutdown: true})
	defer f2.Close()
	mustSync(t, f2, []Route{{Prefix: pfx("10.50.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1)}}})
	r2, _ := n.routeByPrefix("10.50.0.0/16")
	_, nhs = n.dump()
	if nhs[r2.NhID].Resilient == nil || nhs[r2.NhID].Resilient.Buckets != 32 {
		t.Errorf("after bucket change: %+v", nhs[r2.NhID])
	}
}

func TestWeight16RoundTrip(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	if !f.Capabilities().Weight16 {
		t.Fatal("Probe: weight16 = false on this kernel")
	}
	mustSync(t, f, []Route{{Prefix: pfx("10.60.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1000), nh(l[1].gw4, l[1].idx, 1)}}})
	r, _ := n.routeByPrefix("10.60.0.0/16")
	_, nhs := n.dump()
	if w := groupWeights(t, nhs, r.NhID); w[l[0].gw4] != 1000 || w[l[1].gw4] != 1 {
		t.Errorf("weights read back %v, want 1000/1", w)
	}

	// The same input on an 8-bit kernel is scaled to 256/1.
	f8 := &FIB{caps: Capabilities{NexthopObjects: true}, down: map[int]bool{}}
	ws, err := f8.normalise([]Route{{Prefix: pfx("10.60.0.0/16"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1000), nh(l[1].gw4, l[1].idx, 1)}}})
	if err != nil || ws[0].set.weights[0] != 256 || ws[0].set.weights[1] != 1 {
		t.Errorf("8-bit scaling: %+v %v", ws, err)
	}
}

// Restart: FIB#1 is dropped without Close; FIB#2 adopts; forwarding never stops.
func TestAdoptRestart(t *testing.T) {
	n := newNS(t)
	l := n.veths(3)
	all := []Route{}
	for i := range 20 {
		all = append(all, Route{Prefix: pfx(fmt.Sprintf("10.70.%d.0/24", i)),
			NextHops: []NextHop{nh(l[0].gw4, l[0].idx, uint32(1+i%3)), nh(l[1].gw4, l[1].idx, 1), nh(l[2].gw4, l[2].idx, 1)}})
	}
	all = append(all, Route{Prefix: pfx("10.71.0.0/24"), NextHops: []NextHop{nh(l[2].gw4, l[2].idx, 1)}})
	f1 := n.open(Config{})
	mustSync(t, f1, all)
	before, nhBefore := n.dump()
	// kill -9: no Close. Only the socket goes away with the process.
	f1.c.close()

	f2 := n.open(Config{})
	defer f2.Close()
	if err := f2.Adopt(); err != nil {
		t.Fatal(err)
	}
	mid, nhMid := n.dump()
	if len(mid) != len(before) || len(nhMid) != len(nhBefore) {
		t.Fatalf("Adopt changed the kernel: %d/%d routes, %d/%d nexthops", len(mid), len(before), len(nhMid), len(nhBefore))
	}
	// Same state again: adoption recognised every object, nothing to do.
	st := mustSync(t, f2, all)
	if st.Messages != 0 {
		t.Errorf("Sync of unchanged state after Adopt sent %d messages: %+v", st.Messages, st)
	}
	// Reduced set: only stale objects go.
	reduced := all[:5]
	st = mustSync(t, f2, reduced)
	t.Logf("reduced: %+v", st)
	after, nhAfter := n.dump()
	if len(after) != 5 {
		t.Fatalf("%d routes after reduce, want 5", len(after))
	}
	for i, r := range after {
		if r.NhID != before[i].NhID || r.Prefix != before[i].Prefix {
			t.Errorf("kept route %s moved: %#x -> %#x", r.Prefix, before[i].NhID, r.NhID)
		}
	}
	// No duplicate nexthops: one object per (gateway, ifindex), one group per content.
	seenNH := map[string]uint32{}
	for id, k := range nhAfter {
		key := fmt.Sprint(k.Gateway, k.IfIndex, k.Group)
		if old, dup := seenNH[key]; dup {
			t.Errorf("duplicate nexthops %#x and %#x: %s", old, id, key)
		}
		seenNH[key] = id
	}
	// 5 routes use weights 1,2,3 for l0 → 3 groups + 3 nexthops.
	if len(nhAfter) != 6 || st.RoutesDeleted != 16 || st.GroupsDeleted != 0 || st.NexthopsDeleted != 0 {
		t.Errorf("after reduce: %d nexthop objects, stats %+v", len(nhAfter), st)
	}
}

// Adopting objects left by a crashed run that has duplicates and a metric
// change: the first Sync converges to one object per key.
func TestAdoptDuplicatesAndMetric(t *testing.T) {
	n := newNS(t)
	l := n.veths(2)
	base := uint32(0x0FA0_0000)
	n.ip("nexthop", "add", "id", fmt.Sprint(base), "via", "10.1.0.2", "dev", "v1", "proto", "187")
	n.ip("nexthop", "add", "id", fmt.Sprint(base+1), "via", "10.1.0.2", "dev", "v1", "proto", "187") // duplicate
	n.ip("nexthop", "add", "id", fmt.Sprint(base+2), "via", "10.2.0.2", "dev", "v2", "proto", "187")
	n.ip("nexthop", "add", "id", fmt.Sprint(base+3), "group", fmt.Sprintf("%d,2/%d", base+1, base+2), "proto", "187")
	n.ip("nexthop", "add", "id", fmt.Sprint(base+4), "via", "10.2.0.2", "dev", "v2", "proto", "static") // not ours
	n.ip("route", "add", "10.80.0.0/24", "nhid", fmt.Sprint(base+3), "proto", "187", "metric", "20")
	n.ip("route", "add", "10.81.0.0/24", "via", "10.1.0.2", "proto", "187", "metric", "99") // old metric
	f := n.open(Config{})
	defer f.Close()
	st := mustSync(t, f, []Route{{Prefix: pfx("10.80.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 2), nh(l[1].gw4, l[1].idx, 1)}}})
	t.Logf("stats %+v", st)
	rs, nhs := n.dump()
	if len(rs) != 1 || rs[0].Metric != 20 {
		t.Fatalf("routes: %+v", rs)
	}
	w := groupWeights(t, nhs, rs[0].NhID)
	if w[l[0].gw4] != 2 || w[l[1].gw4] != 1 {
		t.Errorf("weights %v", w)
	}
	if len(nhs) != 3 {
		t.Errorf("want 2 nexthops + 1 group of ours, got %+v", nhs)
	}
	if _, nhAll, _ := Dump(n.h, 0); len(nhAll) != 4 {
		t.Errorf("the static nexthop in our range must stay: %+v", nhAll)
	}
}

func TestLinkDown(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	routes := []Route{
		{Prefix: pfx("10.90.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 5), nh(l[1].gw4, l[1].idx, 3), nh(l[2].gw4, l[2].idx, 2)}},
		{Prefix: pfx("10.91.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
	}
	mustSync(t, f, routes)
	r, _ := n.routeByPrefix("10.90.0.0/24")
	gid := r.NhID

	// Carrier loss: the peer goes down.
	n.ip("link", "set", l[0].peer, "down")
	if err := f.LinkDown(l[0].idx); err != nil {
		t.Fatal(err)
	}
	_, nhs := n.dump()
	w := groupWeights(t, nhs, gid)
	if _, in := w[l[0].gw4]; in || w[l[1].gw4] != 3 || w[l[2].gw4] != 2 || len(w) != 2 {
		t.Errorf("group after link down: %v, want l1:3 l2:2", w)
	}
	if r, ok := n.routeByPrefix("10.90.0.0/24"); !ok || r.NhID != gid {
		t.Errorf("route via the group must stay: %+v %v", r, ok)
	}
	if _, ok := n.routeByPrefix("10.91.0.0/24"); ok {
		t.Errorf("route whose only nexthop was on the down link is still there")
	}
	// The daemon may still list the dead member: it is left out, no error.
	st := mustSync(t, f, routes)
	if st.RoutesUnresolved != 1 {
		t.Errorf("Sync while down: %+v", st)
	}
	// Up again: the member comes back into the same group, in place.
	n.ip("link", "set", l[0].peer, "up")
	f.LinkUp(l[0].idx)
	st = mustSync(t, f, routes)
	t.Logf("after link up: %+v", st)
	r, _ = n.routeByPrefix("10.90.0.0/24")
	_, nhs = n.dump()
	if w := groupWeights(t, nhs, r.NhID); w[l[0].gw4] != 5 || w[l[1].gw4] != 3 || w[l[2].gw4] != 2 {
		t.Errorf("restored weights %v", w)
	}
	if r.NhID != gid || st.GroupsReplaced != 1 {
		t.Errorf("restore should replace group %#x in place: route on %#x, %+v", gid, r.NhID, st)
	}
	if _, ok := n.routeByPrefix("10.91.0.0/24"); !ok {
		t.Error("single-nexthop route not restored")
	}
}

// A group whose members all go down is deleted by the kernel with its
// routes; the FIB follows and re-creates on the next Sync.
func TestGroupAllMembersDown(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	routes := []Route{{Prefix: pfx("10.95.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 2), nh(l[1].gw4, l[1].idx, 1)}}}
	mustSync(t, f, routes)
	n.ip("link", "set", l[0].dev, "down")
	n.ip("link", "set", l[1].dev, "down")
	_ = f.LinkDown(l[0].idx)
	_ = f.LinkDown(l[1].idx)
	if rs, nhs := n.dump(); len(rs) != 0 || len(nhs) != 0 {
		t.Errorf("kernel kept %v / %v", rs, nhs)
	}
	if len(f.routes) != 0 || len(f.groups) != 0 || len(f.nhs) != 0 {
		t.Errorf("FIB state did not follow: %d routes %d groups %d nexthops", len(f.routes), len(f.groups), len(f.nhs))
	}
	st, err := f.Sync(routes)
	if err != nil || st.RoutesUnresolved != 1 || st.Messages != 0 {
		t.Errorf("Sync with every member down: %+v %v", st, err)
	}
	n.ip("link", "set", l[0].dev, "up")
	n.ip("link", "set", l[1].dev, "up")
	f.LinkUp(l[0].idx)
	f.LinkUp(l[1].idx)
	mustSync(t, f, routes)
	if _, ok := n.routeByPrefix("10.95.0.0/24"); !ok {
		t.Error("not restored")
	}
}

func TestBadInput(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	// A one-member "group" is a plain nexthop.
	mustSync(t, f, []Route{{Prefix: pfx("10.110.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 7)}}})
	r, _ := n.routeByPrefix("10.110.0.0/24")
	if _, nhs := n.dump(); nhs[r.NhID].Group != nil || len(nhs) != 1 {
		t.Errorf("one member should be a plain nexthop: %+v", nhs)
	}
	// Weight 0: rejected, nothing written.
	_, err := f.Sync([]Route{{Prefix: pfx("10.111.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 0), nh(l[1].gw4, l[1].idx, 1)}}})
	if err == nil || !strings.Contains(err.Error(), "weight 0") {
		t.Errorf("weight 0: %v", err)
	}
	if _, ok := n.routeByPrefix("10.110.0.0/24"); !ok {
		t.Error("a rejected Sync must not touch the kernel")
	}
	// No next hops: the prefix is withdrawn.
	st := mustSync(t, f, []Route{{Prefix: pfx("10.110.0.0/24")}})
	if _, ok := n.routeByPrefix("10.110.0.0/24"); ok || st.RoutesUnresolved != 1 || st.RoutesDeleted != 1 {
		t.Errorf("route without next hops: %+v", st)
	}
	// A kernel error is per object and names the object.
	_, err = f.Sync([]Route{
		{Prefix: pfx("10.112.0.0/24"), NextHops: []NextHop{nh(netip.MustParseAddr("192.0.2.1"), l[0].idx, 1)}}, // gateway not on link
		{Prefix: pfx("10.113.0.0/24"), NextHops: []NextHop{nh(l[1].gw4, l[1].idx, 1)}},
	})
	var oe *OpError
	if !errors.As(err, &oe) || !strings.Contains(oe.Op, "192.0.2.1") {
		t.Errorf("unreachable gateway: %v", err)
	} else {
		t.Logf("reported: %v", err)
	}
	if _, ok := n.routeByPrefix("10.113.0.0/24"); !ok {
		t.Error("the good route must be installed despite the bad one")
	}
}

func TestCloseFlushAndKeep(t *testing.T) {
	n := newNS(t)
	l := n.veths(2)
	routes := []Route{{Prefix: pfx("10.120.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1)}}}
	f := n.open(Config{KeepOnShutdown: true})
	mustSync(t, f, routes)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if rs, nhs := n.dump(); len(rs) != 1 || len(nhs) != 3 {
		t.Fatalf("KeepOnShutdown: %d routes %d nexthops left", len(rs), len(nhs))
	}
	f = n.open(Config{})
	if err := f.Adopt(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if rs, nhs := n.dump(); len(rs) != 0 || len(nhs) != 0 {
		t.Fatalf("Close: %d routes %d nexthops left", len(rs), len(nhs))
	}
}

func TestMultipathFallback(t *testing.T) {
	n, l, f := openWith(t, 2, Config{forceMultipath: true})
	st := mustSync(t, f, []Route{{Prefix: pfx("10.130.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1000), nh(l[1].gw4, l[1].idx, 1)}}})
	r, ok := n.routeByPrefix("10.130.0.0/24")
	if !ok || r.NhID != 0 || len(r.Paths) != 2 {
		t.Fatalf("fallback route %+v", r)
	}
	// 8-bit: 1000/1 scaled to 256/1.
	ws := map[netip.Addr]uint32{}
	for _, p := range r.Paths {
		ws[p.Gateway] = p.Weight
	}
	if ws[l[0].gw4] != 256 || ws[l[1].gw4] != 1 || st.RoutesAdded != 1 {
		t.Errorf("multipath weights %v, stats %+v", ws, st)
	}
	mustSync(t, f, nil)
	if _, ok := n.routeByPrefix("10.130.0.0/24"); ok {
		t.Error("fallback route not deleted")
	}
}

// The real split: 10,000 UDP 5-tuples through RTM_GETROUTE with L4
// hashing; each member's share must be within 2 points of its weight's.
// netlink v1.3.1's RouteGetOptions has no sport/dport/ipproto, so the
// request is built here with RTA_SPORT, RTA_DPORT and RTA_IP_PROTO.
func TestWeightedSplit(t *testing.T) {
	n := newNS(t)
	n.sysctl("net.ipv4.fib_multipath_hash_policy", "1")
	l := n.veths(3)
	f := n.open(Config{})
	defer f.Close()
	weights := []uint32{5, 3, 2}
	var hops []NextHop
	for i, w := range weights {
		hops = append(hops, nh(l[i].gw4, l[i].idx, w))
	}
	mustSync(t, f, []Route{{Prefix: pfx("10.140.0.0/16"), NextHops: hops}})

	const flows = 10000
	var fs []Flow
	for i := range flows {
		fs = append(fs, Flow{Src: netip.MustParseAddr("10.1.0.1"), Dst: netip.MustParseAddr("10.140.0.1"), Proto: unix.IPPROTO_UDP,
			Sport: uint16(1024 + i), Dport: uint16(2000 + (i*7919)%60000)})
	}
	gws, err := Lookup(n.h, fs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[netip.Addr]int{}
	for _, gw := range gws {
		count[gw]++
	}
	total := 0
	for _, w := range weights {
		total += int(w)
	}
	for i, w := range weights {
		share := float64(count[l[i].gw4]) / flows * 100
		want := float64(w) / float64(total) * 100
		t.Logf("%s: %d flows = %.2f%% (configured %.1f%%)", l[i].gw4, count[l[i].gw4], share, want)
		if share < want-2 || share > want+2 {
			t.Errorf("nexthop %s got %.2f%%, want %.1f%% ± 2", l[i].gw4, share, want)
		}
	}
}

// nlParse maps attribute type to value.
func nlParse(b []byte) (map[uint16][]byte, error) {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return nil, err
	}
	m := make(map[uint16][]byte, len(attrs))
	for _, a := range attrs {
		m[a.Attr.Type] = a.Value
	}
	return m, nil
}

// Dump while Syncs move 1,000 routes between groups (one group over
// three gateways, then two halves over two gateways each, and back: each
// change makes a group, repoints routes to it and deletes one): every
// route Dump returns names a nexthop it also returns, and so does every
// group.
func TestDumpWhileRoutesMove(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	mk := func(k int) []Route {
		var rs []Route
		for i := range 1000 {
			hops := []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1), nh(l[2].gw4, l[2].idx, 1)}
			if k%2 == 1 {
				hops = slices.Delete(hops, 1+i%2, 2+i%2)
			}
			rs = append(rs, Route{Prefix: pfx(fmt.Sprintf("10.%d.%d.0/24", 100+i/250, i%250)), NextHops: hops})
		}
		return rs
	}
	mustSync(t, f, mk(0))
	if st := mustSync(t, f, mk(1)); st.GroupsAdded == 0 || st.RoutesReplaced == 0 {
		t.Fatalf("splitting the group moved no routes to a new one: %+v", st)
	}
	if st := mustSync(t, f, mk(2)); st.GroupsDeleted == 0 || st.RoutesReplaced == 0 {
		t.Fatalf("merging the groups deleted none: %+v", st)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	syncs := 0
	go func() {
		for k := 3; ; k++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := f.Sync(mk(k)); err != nil {
				done <- err
				return
			}
			syncs++
		}
	}()
	var bad []string
	for range 200 {
		rs, nhs, err := Dump(n.h, 187)
		if err != nil {
			t.Fatal(err)
		}
		if !consistent(rs, nhs) {
			bad = append(bad, fmt.Sprintf("%d routes, %d nexthops", len(rs), len(nhs)))
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("200 dumps beside %d Syncs", syncs)
	if syncs < 10 {
		t.Fatalf("only %d Syncs ran beside the dumps: the test saw too few moves to say anything", syncs)
	}
	if len(bad) > 0 {
		t.Errorf("%d of 200 dumps name a nexthop they do not hold: %v", len(bad), bad)
	}
}

// openWith is the start of most kernel tests: a fresh namespace with
// count veths and a FIB on it, closed when the test ends.
func openWith(t *testing.T, count int, cfg Config) (*testNS, []link, *FIB) {
	t.Helper()
	n := newNS(t)
	l := n.veths(count)
	f := n.open(cfg)
	t.Cleanup(func() { f.Close() })
	return n, l, f
}
