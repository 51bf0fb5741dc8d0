package fib

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// logBuf collects the FIB's log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// count returns the number of lines containing every one of subs.
func (l *logBuf) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.b.String(), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all && line != "" {
			n++
		}
	}
	return n
}

func newLog() (*logBuf, *slog.Logger) {
	l := &logBuf{}
	return l, slog.New(slog.NewTextHandler(l, nil))
}

// ipRoute is one route as `ip -j route show` reports it.
type ipRoute struct {
	Type     string `json:"type"`
	Dst      string `json:"dst"`
	Gateway  string `json:"gateway"`
	Protocol string `json:"protocol"`
	Metric   uint32 `json:"metric"`
	NhID     uint32 `json:"nhid"`
}

// ipRoutes returns every route of the main table for the exact prefix p,
// read with iproute2 (an independent reader of the kernel).
func (n *testNS) ipRoutes(p string) []ipRoute {
	n.t.Helper()
	fam := "-4"
	if strings.Contains(p, ":") {
		fam = "-6"
	}
	var rs []ipRoute
	n.ipJSON(&rs, fam, "route", "show", "table", "main", "exact", p)
	return rs
}

// TestSyncNeverReplacesForeignRoute: a static route with our prefix, table
// and metric stays as it is; the prefix is reported as a conflict (stats,
// FIB.Conflicts, one log line per prefix) and retried on every Sync; once
// the static route is deleted, the next Sync installs ours.
func TestSyncNeverReplacesForeignRoute(t *testing.T) {
	logs, logger := newLog()
	n, l, f := openWith(t, 2, Config{Logger: logger})
	// The operator's routes: same table and metric as ours (20), another
	// protocol; one a blackhole, which blocks the key just the same; one
	// with another metric, which is no conflict (the kernel keeps both).
	n.ip("route", "add", "10.150.0.0/24", "via", l[1].gw4.String(), "proto", "static", "metric", "20")
	n.ip("-6", "route", "add", "fd50::/64", "via", l[1].gw6.String(), "proto", "static", "metric", "20")
	n.ip("route", "add", "blackhole", "10.152.0.0/24", "proto", "dhcp", "metric", "20")
	n.ip("route", "add", "10.153.0.0/24", "via", l[1].gw4.String(), "proto", "static", "metric", "100")
	routes := []Route{
		{Prefix: pfx("10.150.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("fd50::/64"), NextHops: []NextHop{nh(l[0].gw6, l[0].idx, 3), nh(l[1].gw6, l[1].idx, 1)}},
		{Prefix: pfx("10.151.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("10.152.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("10.153.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
	}
	checkForeign := func(when string) {
		t.Helper()
		for _, c := range []struct{ p, typ, gw, proto string }{
			{"10.150.0.0/24", "", l[1].gw4.String(), "static"},
			{"fd50::/64", "", l[1].gw6.String(), "static"},
			{"10.152.0.0/24", "blackhole", "", "dhcp"},
		} {
			rs := n.ipRoutes(c.p)
			if len(rs) != 1 || rs[0].Protocol != c.proto || rs[0].Gateway != c.gw || rs[0].Metric != 20 || rs[0].NhID != 0 ||
				(c.typ != "" && rs[0].Type != c.typ) {
				t.Errorf("%s: %s in the kernel: %+v, want only the untouched %s route", when, c.p, rs, c.proto)
			}
		}
	}
	st, err := f.Sync(routes)
	if err != nil {
		t.Fatalf("Sync: a conflict is not an error: %v", err)
	}
	t.Logf("stats %+v", st)
	checkForeign("after the first Sync")
	if st.RoutesConflicting() != 3 || st.RoutesAdded != 2 {
		t.Errorf("stats %+v: want 3 conflicting, 2 added", st)
	}
	want := map[string]string{"10.150.0.0/24": "static/unicast", "10.152.0.0/24": "dhcp/blackhole", "fd50::/64": "static/unicast"}
	check := func(cs []Conflict) {
		t.Helper()
		if len(cs) != len(want) {
			t.Errorf("conflicts %+v, want %v", cs, want)
		}
		for _, c := range cs {
			if want[c.Prefix.String()] != c.ProtocolName()+"/"+c.Type() || c.Metric != 20 || c.Table != unix.RT_TABLE_MAIN || c.Since.IsZero() {
				t.Errorf("conflict %+v, want %s", c, want[c.Prefix.String()])
			}
		}
	}
	check(st.Conflicts)
	check(f.Conflicts())
	// 10.153.0.0/24: ours at metric 20 beside the static at 100.
	if rs := n.ipRoutes("10.153.0.0/24"); len(rs) != 2 {
		t.Errorf("10.153.0.0/24: %+v, want ours (20) and the static (100)", rs)
	}

	// Later Syncs retry (one message per conflicting prefix, no dump) and
	// log nothing new while the conflict lasts.
	st, err = f.Sync(routes)
	if err != nil || st.RoutesConflicting() != 3 || st.Messages != 3 || st.RoutesAdded != 0 {
		t.Errorf("second Sync: %+v %v, want 3 conflicts retried with 3 messages", st, err)
	}
	checkForeign("after the second Sync")
	for p := range want {
		if c := logs.count("route not installed", "prefix="+p); c != 1 {
			t.Errorf("%d log lines for the conflict on %s, want 1:\n%s", c, p, logs.b.String())
		}
	}

	// The other routes go: the next Sync installs ours.
	n.ip("route", "del", "10.150.0.0/24", "proto", "static", "metric", "20")
	n.ip("-6", "route", "del", "fd50::/64", "proto", "static", "metric", "20")
	st, err = f.Sync(routes)
	if err != nil || st.RoutesConflicting() != 2-1 || st.RoutesAdded != 2 {
		t.Errorf("Sync after the static routes went: %+v %v, want 2 added, 1 (the blackhole) still conflicting", st, err)
	}
	for _, p := range []string{"10.150.0.0/24", "fd50::/64"} {
		r, ok := n.routeByPrefix(p)
		if !ok || r.Protocol != 187 || r.Metric != 20 || r.NhID == 0 {
			t.Errorf("%s: ours not installed: %+v %v", p, r, ok)
		}
		if logs.count("conflict over", "prefix="+p) != 1 {
			t.Errorf("no log line for the end of the conflict on %s", p)
		}
	}
	if _, nhs := n.dump(); len(groupWeights(t, nhs, func() uint32 { r, _ := n.routeByPrefix("fd50::/64"); return r.NhID }())) != 2 {
		t.Error("fd50::/64 should use a 2-member group")
	}
}

// TestSyncWithdrawLeavesForeignRoute: withdrawing a prefix removes our
// route only, never another protocol's route for it (same metric: we never
// installed ours; other metric: both were in the kernel).
func TestSyncWithdrawLeavesForeignRoute(t *testing.T) {
	_, logger := newLog()
	n, l, f := openWith(t, 2, Config{Logger: logger})
	n.ip("route", "add", "10.160.0.0/24", "via", l[1].gw4.String(), "proto", "static", "metric", "20")
	n.ip("-6", "route", "add", "fd60::/64", "via", l[1].gw6.String(), "proto", "static", "metric", "20")
	routes := []Route{
		{Prefix: pfx("10.160.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
		{Prefix: pfx("fd60::/64"), NextHops: []NextHop{nh(l[0].gw6, l[0].idx, 1)}},
		{Prefix: pfx("10.161.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},
	}
	mustSync(t, f, routes)
	n.ip("route", "add", "10.161.0.0/24", "via", l[1].gw4.String(), "proto", "static", "metric", "50")

	st, err := f.Sync(nil)
	if err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	if st.RoutesConflicting() != 0 || len(f.Conflicts()) != 0 || st.RoutesDeleted != 1 {
		t.Errorf("withdraw stats %+v: want our one route deleted and no conflicts left", st)
	}
	for _, c := range []struct {
		p, gw  string
		metric uint32
	}{
		{"10.160.0.0/24", l[1].gw4.String(), 20},
		{"fd60::/64", l[1].gw6.String(), 20},
		{"10.161.0.0/24", l[1].gw4.String(), 50},
	} {
		rs := n.ipRoutes(c.p)
		if len(rs) != 1 || rs[0].Protocol != "static" || rs[0].Gateway != c.gw || rs[0].Metric != c.metric {
			t.Errorf("%s after withdraw: %+v, want the static route via %s metric %d", c.p, rs, c.gw, c.metric)
		}
	}
	if rs, nhs := n.dump(); len(rs) != 0 || len(nhs) != 0 {
		t.Errorf("ours left behind: %+v %+v", rs, nhs)
	}
}

// A route of our protocol under our key that our state does not know
// (written by hand, or by another writer using our protocol) is ours, as
// on Adopt: it is taken over, not reported.
func TestSyncTakesOverOwnProtocolRoute(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	if err := f.Adopt(); err != nil {
		t.Fatal(err)
	}
	n.ip("route", "add", "10.170.0.0/24", "via", l[1].gw4.String(), "proto", "187", "metric", "20")
	st := mustSync(t, f, []Route{{Prefix: pfx("10.170.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}}})
	r, ok := n.routeByPrefix("10.170.0.0/24")
	_, nhs := n.dump()
	if !ok || nhs[r.NhID].Gateway != l[0].gw4 || st.RoutesConflicting() != 0 || st.RoutesAdded != 1 {
		t.Errorf("take-over: route %+v (nexthop %+v), stats %+v", r, nhs[r.NhID], st)
	}
	if rs := n.ipRoutes("10.170.0.0/24"); len(rs) != 1 {
		t.Errorf("want one route, got %+v", rs)
	}
}

// A route of ours that someone deleted is added again when it changes:
// the replace finds nothing (ENOENT) and the prefix is added exclusively.
func TestSyncReaddsRouteDeletedBehindOurBack(t *testing.T) {
	n, l, f := openWith(t, 2, Config{})
	mustSync(t, f, []Route{{Prefix: pfx("10.180.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}}})
	n.ip("route", "del", "10.180.0.0/24", "proto", "187", "metric", "20")
	st := mustSync(t, f, []Route{{Prefix: pfx("10.180.0.0/24"), NextHops: []NextHop{nh(l[1].gw4, l[1].idx, 1)}}})
	r, ok := n.routeByPrefix("10.180.0.0/24")
	_, nhs := n.dump()
	if !ok || nhs[r.NhID].Gateway != l[1].gw4 || st.RoutesAdded != 1 {
		t.Errorf("re-add: route %+v %v, stats %+v", r, ok, st)
	}
}

// TestSyncSkipsVanishedMember: an interface is deleted and the kernel
// deletes its nexthops, before anyone told the FIB (Monitor's LinkDown has
// not run, the protocol still lists next hops over it). The Sync must not
// be blocked by the dead member: every route is installed with the members
// that remain, and only the member itself is reported.
func TestSyncSkipsVanishedMember(t *testing.T) {
	n, l, f := openWith(t, 3, Config{})
	a := func(w2 uint32) Route {
		return Route{Prefix: pfx("10.190.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 5), nh(l[1].gw4, l[1].idx, 3), nh(l[2].gw4, l[2].idx, w2)}}
	}
	mustSync(t, f, []Route{a(2)})
	r, _ := n.routeByPrefix("10.190.0.0/24")
	gid := r.NhID

	n.ip("link", "del", l[0].dev) // the kernel deletes its nexthops; no LinkDown
	routes := []Route{
		a(4), // reweight of the existing group
		{Prefix: pfx("10.191.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1), nh(l[1].gw4, l[1].idx, 1)}}, // new, one valid member
		{Prefix: pfx("10.192.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 1)}},                            // new, no valid member
		{Prefix: pfx("10.193.0.0/24"), NextHops: []NextHop{nh(l[2].gw4, l[2].idx, 1)}},                            // unaffected
	}
	for pass := 1; pass <= 2; pass++ {
		st, err := f.Sync(routes)
		t.Logf("pass %d: %+v, err %v", pass, st, err)
		var oe *OpError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), l[0].gw4.String()) {
			t.Errorf("pass %d: the dead member should be reported: %v", pass, err)
		}
		if err != nil && (strings.Contains(err.Error(), "Invalid nexthop id") || strings.Contains(err.Error(), "does not exist")) {
			t.Errorf("pass %d: Sync used a nexthop the kernel deleted: %v", pass, err)
		}
		r, ok := n.routeByPrefix("10.190.0.0/24")
		_, nhs := n.dump()
		if !ok || r.NhID != gid {
			t.Fatalf("pass %d: 10.190.0.0/24 %+v %v, want it on group %#x", pass, r, ok, gid)
		}
		if w := groupWeights(t, nhs, gid); len(w) != 2 || w[l[1].gw4] != 3 || w[l[2].gw4] != 4 {
			t.Errorf("pass %d: group after reweight %v, want %s:3 %s:4", pass, w, l[1].gw4, l[2].gw4)
		}
		r, ok = n.routeByPrefix("10.191.0.0/24")
		if k := nhs[r.NhID]; !ok || k.Group != nil || k.Gateway != l[1].gw4 {
			t.Errorf("pass %d: 10.191.0.0/24 %+v %v via %+v, want installed via its one valid member %s", pass, r, ok, k, l[1].gw4)
		}
		if _, ok := n.routeByPrefix("10.192.0.0/24"); ok {
			t.Errorf("pass %d: 10.192.0.0/24 has no valid member but is installed", pass)
		}
		if r, ok := n.routeByPrefix("10.193.0.0/24"); !ok || nhs[r.NhID].Gateway != l[2].gw4 {
			t.Errorf("pass %d: 10.193.0.0/24 %+v %v", pass, r, ok)
		}
	}
}

// The RTA_MULTIPATH fallback (kernels without nexthop objects) must not
// overwrite another protocol's route either.
func TestSyncNeverReplacesForeignRouteMultipath(t *testing.T) {
	_, logger := newLog()
	n, l, f := openWith(t, 2, Config{forceMultipath: true, Logger: logger})
	n.ip("route", "add", "10.195.0.0/24", "via", l[1].gw4.String(), "proto", "static", "metric", "20")
	routes := []Route{{Prefix: pfx("10.195.0.0/24"), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, 2), nh(l[1].gw4, l[1].idx, 1)}}}
	for range 2 {
		st, err := f.Sync(routes)
		if err != nil || st.RoutesConflicting() != 1 || len(st.Conflicts) != 1 || st.Conflicts[0].ProtocolName() != "static" {
			t.Errorf("Sync: %+v %v, want one conflict with the static route", st, err)
		}
		if rs := n.ipRoutes("10.195.0.0/24"); len(rs) != 1 || rs[0].Protocol != "static" || rs[0].Gateway != l[1].gw4.String() {
			t.Errorf("the static route changed: %+v", rs)
		}
	}
	n.ip("route", "del", "10.195.0.0/24", "proto", "static")
	st := mustSync(t, f, routes)
	if r, ok := n.routeByPrefix("10.195.0.0/24"); !ok || len(r.Paths) != 2 || st.RoutesConflicting() != 0 {
		t.Errorf("after the static route went: %+v %v, %+v", r, ok, st)
	}
	mustSync(t, f, nil)
	if _, ok := n.routeByPrefix("10.195.0.0/24"); ok {
		t.Error("not withdrawn")
	}
}
