package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/kernwatch"
	"github.com/fared/fared/interop"
)

// BFD against FRR's bfdd, and local repair. CI runs BFD at 100 ms x 3 (50
// ms flaps on a loaded two-core box); docs/bfd.md has the 50 ms figures.
//
// FARED_LAB_BFD_INTERVAL (e.g. 50ms) runs them at another interval, for
// those figures.
var bfdInterval = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("FARED_LAB_BFD_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return 100 * time.Millisecond
}()

const (
	bfdMult = 3
	// sched is what a shared CI box may add to the detection time: the
	// BFD goroutine's timer wake-up and the log write.
	sched = 25 * time.Millisecond
)

// A fared leaf with two FRR spines (BFD on both sides) toward an FRR leaf:
// f1 reaches r3's loopback over a two-member nexthop group. f1's SPF waits
// at least 500 ms after a change (in every RFC 8405 state), so that "the
// group shrank before the SPF" is told apart by timestamps read in user
// space: with the default initial delay of 0 an SPF in QUIET starts a
// millisecond after the repair, closer than a watcher's read is sure to be.
var bfdISISTopo = fmt.Sprintf(`name: bfdi
nodes:
  f1: {kind: fared, bfd: {interval: %[1]s, multiplier: %[2]d}, config: {rib: {spf: {initial-delay: 500ms}}}}
  r1: {kind: frr, bfd: {interval: %[1]s, multiplier: %[2]d}}
  r2: {kind: frr, bfd: {interval: %[1]s, multiplier: %[2]d}}
  r3: {kind: frr}
links:
  - {a: f1, b: r1}
  - {a: f1, b: r2}
  - {a: r1, b: r3}
  - {a: r2, b: r3}
`, bfdInterval, bfdMult)

func TestBFDISISWithFRR(t *testing.T) {
	l := startLab(t, bfdISISTopo)
	ctx := ctxT(t)
	f1 := l.Node("f1")
	r3lo := l.Node("r3").Loopback.String() + "/32"
	// Both sessions Up, as FRR's bfdd sees them, and the ECMP route.
	for _, r := range []string{"r1", "r2"} {
		waitBFDPeer(t, ctx, l, r, faredAddrToward(l, "f1", r), "up")
	}
	waitGroup(t, ctx, l, "f1", r3lo, 2)
	// fared's view (farectl bfd sessions): both Up, with the timers the
	// Poll Sequence put in force.
	poll(t, ctx, 30*time.Second, "f1: farectl bfd sessions", func() error {
		var v wire.BFDSessions
		if err := l.FarectlJSON(ctx, "f1", &v, "bfd", "sessions"); err != nil {
			return err
		}
		up := 0
		for _, s := range v.Sessions {
			if s.State == "Up" && s.RemoteState == "Up" && s.DetectTime == bfdMult*bfdInterval && s.TxInterval == bfdInterval {
				up++
			}
		}
		if up != 2 {
			return fmt.Errorf("sessions %+v", v.Sessions)
		}
		return nil
	})

	// 1. The FRR spine r1 goes silent (every packet from it dropped at
	// f1's port; its carrier stays up): f1's BFD must take the adjacency
	// down within the detection time, and local repair must take r1 out
	// of the group before the SPF that follows.
	gid, r1nh := routeGroup(t, ctx, l, "f1", r3lo, peerAddr(l, "f1", "r1"))
	mon := monitorNexthops(t, l, f1)
	t0 := silence(t, ctx, l, "f1", "r1-1")
	tDown := waitLog(t, ctx, l, "f1", `msg="adjacency down" proto=isis iface=r1-1 .*reason="BFD session down`, t0)
	detect := tDown.Sub(t0)
	t.Logf("r1 silent at %s: adjacency down after %v (detection time %v)", t0.Format("15:04:05.000"), detect, bfdMult*bfdInterval)
	if detect > bfdMult*bfdInterval+sched {
		t.Errorf("adjacency down %v after r1 went silent; BFD %v x %d allows %v (+%v scheduling)", detect, bfdInterval, bfdMult, bfdMult*bfdInterval, sched)
	}
	t1 := mon.waitGroupWithout(t, ctx, gid, r1nh, t0)
	t2 := firstSPFAfter(t, ctx, l, "f1", t0)
	t.Logf("local repair: group %#x lost r1 at T1 = %s (%v after the adjacency went down); next SPF at T2 = %s (T2 - T1 = %v)",
		gid, t1.Format("15:04:05.000000"), t1.Sub(tDown), t2.Format("15:04:05.000000"), t2.Sub(t1))
	if !t1.Before(t2) {
		t.Errorf("the group lost r1 at %s, not before the SPF at %s", t1.Format("15:04:05.000000"), t2.Format("15:04:05.000000"))
	}
	// The SPF then settles the route on r2 alone.
	waitGroup(t, ctx, l, "f1", r3lo, 1)

	// 2. r1 speaks again: adjacency and BFD come back, and so does ECMP.
	unsilence(t, ctx, l, "f1", "r1-1")
	waitBFDPeer(t, ctx, l, "r1", faredAddrToward(l, "f1", "r1"), "up")
	waitGroup(t, ctx, l, "f1", r3lo, 2)

	// 3. FRR's bfdd on r2 dies (isisd lives on): fared notices within the
	// detection time.
	pid := l.Node("r2").Pids["bfdd"]
	if d, err := l.Daemons("r2"); err == nil && d["bfdd"] != 0 {
		pid = d["bfdd"]
	}
	if pid == 0 {
		t.Fatal("r2: no bfdd pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	tDown = waitLog(t, ctx, l, "f1", `msg="adjacency down" proto=isis iface=r2-1 .*reason="BFD session down`, t0.Add(-bfdMult*bfdInterval))
	t.Logf("r2's bfdd killed: adjacency down after %v", tDown.Sub(t0))
	if tDown.Sub(t0) > bfdMult*bfdInterval+sched {
		t.Errorf("adjacency down %v after r2's bfdd died; allowed %v (+%v)", tDown.Sub(t0), bfdMult*bfdInterval, sched)
	}
}

// OSPF: the same against ospfd (`ip ospf bfd`).
func TestBFDOSPFWithFRR(t *testing.T) {
	l := startLab(t, fmt.Sprintf(`name: bfdo
protocol: ospf
nodes:
  f1: {kind: fared, bfd: {interval: %[1]s, multiplier: %[2]d}}
  r1: {kind: frr, bfd: {interval: %[1]s, multiplier: %[2]d}}
links:
  - {a: f1, b: r1}
`, bfdInterval, bfdMult))
	ctx := ctxT(t)
	waitBFDPeer(t, ctx, l, "r1", faredAddrToward(l, "f1", "r1"), "up")
	waitLog(t, ctx, l, "f1", `msg="neighbor state" proto=ospf iface=r1-1 .* to=Full`, time.Time{})
	t0 := silence(t, ctx, l, "f1", "r1-1")
	tDown := waitLog(t, ctx, l, "f1", `msg="neighbor state" proto=ospf iface=r1-1 .*from=Full to=Down event="BFD session down`, t0)
	t.Logf("r1 silent: OSPF neighbour down after %v", tDown.Sub(t0))
	if tDown.Sub(t0) > bfdMult*bfdInterval+sched {
		t.Errorf("neighbour down %v after r1 went silent; allowed %v (+%v)", tDown.Sub(t0), bfdMult*bfdInterval, sched)
	}
	// r1 still hears f1, whose hellos no longer list it: ospfd leaves
	// Full (1-Way) and drops its BFD session.
	poll(t, ctx, 30*time.Second, "r1: f1 no longer Full", func() error {
		ns, err := l.OSPFNeighbors(ctx, "r1")
		if err != nil {
			return err
		}
		for _, n := range ns {
			if n.RouterID == l.Node("f1").Loopback.String() && strings.HasPrefix(n.State, "Full") {
				return fmt.Errorf("neighbours %+v", ns)
			}
		}
		return nil
	})
}

// peerAddr is the address of node peer on its link to node.
func peerAddr(l *interop.Lab, node, peer string) string {
	for _, f := range l.Node(peer).Interfaces {
		if f.Peer == node {
			return f.Addr.Addr().String()
		}
	}
	return ""
}

// faredAddrToward is node's address on its link to peer.
func faredAddrToward(l *interop.Lab, node, peer string) string { return peerAddr(l, peer, node) }

func waitBFDPeer(t *testing.T, ctx context.Context, l *interop.Lab, frr, peer, status string) {
	t.Helper()
	poll(t, ctx, 60*time.Second, frr+": BFD session with "+peer+" "+status, func() error {
		ps, err := l.BFDPeers(ctx, frr)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Peer == peer && p.Status == status {
				return nil
			}
		}
		return fmt.Errorf("sessions %+v", ps)
	})
}

// waitGroup waits until node's kernel route to prefix has n next hops
// (fared's routes point at nexthop objects: a group, or one nexthop).
func waitGroup(t *testing.T, ctx context.Context, l *interop.Lab, node, prefix string, n int) {
	t.Helper()
	poll(t, ctx, 60*time.Second, fmt.Sprintf("%s: %s over %d next hops", node, prefix, n), func() error {
		out, err := l.Exec(ctx, node, "ip", "route", "show", prefix)
		if err != nil {
			return err
		}
		m := regexp.MustCompile(`nhid (\d+)`).FindStringSubmatch(string(out))
		if m == nil {
			return fmt.Errorf("route: %q", out)
		}
		nh, err := l.Exec(ctx, node, "ip", "nexthop", "show", "id", m[1])
		if err != nil {
			return err
		}
		got := 1
		if g := regexp.MustCompile(`group (\S+)`).FindStringSubmatch(string(nh)); g != nil {
			got = len(strings.Split(g[1], "/"))
		}
		if got != n {
			return fmt.Errorf("route %q, nexthop %q", out, nh)
		}
		return nil
	})
}

// routeGroup returns the nexthop group of node's route to prefix and the
// id of the group member via gw.
func routeGroup(t *testing.T, ctx context.Context, l *interop.Lab, node, prefix, gw string) (gid, member uint32) {
	t.Helper()
	out, err := l.Exec(ctx, node, "ip", "route", "show", prefix)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`nhid (\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("%s: route %s has no nexthop id: %q", node, prefix, out)
	}
	g, _ := strconv.ParseUint(m[1], 10, 32)
	out, err = l.Exec(ctx, node, "ip", "nexthop", "show")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "id" && f[2] == "via" && f[3] == gw {
			n, _ := strconv.ParseUint(f[1], 10, 32)
			return uint32(g), uint32(n)
		}
	}
	t.Fatalf("%s: no nexthop via %s:\n%s", node, gw, out)
	return 0, 0
}

// nhMonitor records a node's nexthop notifications through a netlink
// socket that has joined the group before monitorNexthops returns, so no
// change after that is missed.
type nhMonitor struct{ w *kernwatch.Watcher }

func monitorNexthops(t *testing.T, l *interop.Lab, n *interop.Node) *nhMonitor {
	w, err := kernwatch.Watch(filepath.Join("/run/netns", n.Netns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &nhMonitor{w: w}
}

// waitGroupWithout returns the time of the first notification, after t0,
// of group gid without member.
func (m *nhMonitor) waitGroupWithout(t *testing.T, ctx context.Context, gid, member uint32, t0 time.Time) time.Time {
	t.Helper()
	var at time.Time
	poll(t, ctx, 10*time.Second, fmt.Sprintf("kernel: group %d without member %d", gid, member), func() error {
		evs, err := m.w.Events()
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range evs {
			nh := e.Nexthop
			if nh == nil || e.Del || nh.ID != gid || e.At.Before(t0) {
				continue
			}
			if !slices.ContainsFunc(nh.Group, func(g fib.GroupMember) bool { return g.ID == member }) {
				at = e.At
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s %v", e.At.Format("15:04:05.000000"), nh.Group))
		}
		return fmt.Errorf("group %d's notifications so far: %v", gid, seen)
	})
	return at
}

// firstSPFAfter is the time of node's first SPF computation after t0.
func firstSPFAfter(t *testing.T, ctx context.Context, l *interop.Lab, node string, t0 time.Time) time.Time {
	t.Helper()
	var at time.Time
	poll(t, ctx, 10*time.Second, node+": an SPF after "+t0.Format("15:04:05.000"), func() error {
		var v struct {
			Log []struct {
				At      time.Time `json:"at"`
				Trigger string    `json:"trigger"`
			} `json:"log"`
		}
		if err := l.FarectlJSON(ctx, node, &v, "spf", "log"); err != nil {
			return err
		}
		for _, e := range v.Log {
			if e.At.After(t0) && (at.IsZero() || e.At.Before(at)) {
				at = e.At
			}
		}
		if at.IsZero() {
			return fmt.Errorf("log %+v", v.Log)
		}
		return nil
	})
	return at
}

// silence drops everything node receives on iface (a netdev ingress
// chain; the carrier stays up: only hellos or BFD can tell). It returns
// the time the rule was in force.
func silence(t *testing.T, ctx context.Context, l *interop.Lab, node, iface string) time.Time {
	t.Helper()
	table := "bfdt_" + strings.ReplaceAll(iface, "-", "_")
	if out, err := l.Exec(ctx, node, "nft", "add table netdev "+table+"; add chain netdev "+table+
		" in { type filter hook ingress device \""+iface+"\" priority 0; policy drop; }"); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
	t0 := time.Now()
	t.Cleanup(func() { l.Exec(context.Background(), node, "nft", "delete table netdev "+table) })
	return t0
}

func unsilence(t *testing.T, ctx context.Context, l *interop.Lab, node, iface string) {
	t.Helper()
	if out, err := l.Exec(ctx, node, "nft", "delete table netdev bfdt_"+strings.ReplaceAll(iface, "-", "_")); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
}

var logTime = regexp.MustCompile(`^time=(\S+) `)

// waitLog waits for a fared log line matching pattern at or after t0 and
// returns its time.
func waitLog(t *testing.T, ctx context.Context, l *interop.Lab, node, pattern string, t0 time.Time) time.Time {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var at time.Time
	poll(t, ctx, 60*time.Second, node+": log "+pattern, func() error {
		b, err := os.ReadFile(l.FaredLog(node))
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !re.MatchString(line) {
				continue
			}
			m := logTime.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			ts, err := time.Parse(time.RFC3339Nano, m[1])
			// The log has millisecond times: a line in t0's millisecond counts.
			if err == nil && !ts.Before(t0.Truncate(time.Millisecond)) {
				at = ts
				return nil
			}
		}
		return fmt.Errorf("no such line yet")
	})
	return at
}
