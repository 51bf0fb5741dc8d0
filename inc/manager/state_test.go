package manager

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/lsdb"
)

type fixture struct {
	t      *testing.T
	now    time.Time
	s      *State
	pushed map[string]*protos.SwitchConfig
	serial map[string]uint64
	ids    []string // client id by rank
}

var swNames = []string{"l1", "l2", "l3", "l4", "s1", "s2"}

// anyone is the caller of a manager without client-auth.
var anyone = Anyone("test")

func newFixture(t *testing.T, g *lsdb.Graph, register ...string) *fixture {
	f := &fixture{t: t, now: time.Unix(1000, 0), pushed: map[string]*protos.SwitchConfig{}, serial: map[string]uint64{}}
	f.s = NewState(Config{}, func() time.Time { return f.now }, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(sw string, c *protos.SwitchConfig) { f.pushed[sw] = c }, nil)
	for _, n := range register {
		f.register(n)
	}
	if g != nil {
		f.s.SetGraphs([]*lsdb.Graph{g})
	}
	return f
}

func swAddr(name string) string {
	for i, n := range swNames {
		if n == name {
			return lo(i + 1).String()
		}
	}
	panic(name)
}

func (f *fixture) register(name string) {
	f.t.Helper()
	ser, err := f.s.SwitchUp(&protos.SwitchRegister{NodeId: name, Address: swAddr(name), MaxTrees: 8, MaxSlots: 256, MaxRanks: 64, MaxPayload: 4096})
	if err != nil {
		f.t.Fatal(err)
	}
	f.serial[swAddr(name)] = ser
}

// apply makes every switch report the last config it was pushed.
func (f *fixture) apply() {
	for key, c := range f.pushed {
		f.s.SwitchStatus(key, f.serial[key], &protos.SwitchStatus{AppliedVersion: c.Version})
	}
}

func (f *fixture) joinAll(n int) {
	f.t.Helper()
	f.ids = make([]string, n)
	for r := range n {
		resp, err := f.s.Join(&protos.JoinRequest{Group: "g", Rank: uint32(r), Size: uint32(n),
			Address: fmt.Sprintf("10.1.%d.%d", r/2+1, 10+r%2), Qpn: uint32(1000 + r)}, anyone)
		if err != nil {
			f.t.Fatalf("join rank %d: %v", r, err)
		}
		f.ids[r] = resp.ClientId
	}
}

func (f *fixture) group() *group { return f.s.groups["g"] }

func (f *fixture) assign(rank int) *protos.TreeAssignment {
	f.t.Helper()
	a, err := f.s.Assignment(f.ids[rank], anyone)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// heartbeatAll advances the clock by d in heartbeat steps, every client
// but the silent ones heartbeating, ticking as the manager's loop does.
func (f *fixture) heartbeatAll(d time.Duration, silent ...int) {
	for step := time.Duration(0); step < d; step += 100 * time.Millisecond {
		f.now = f.now.Add(100 * time.Millisecond)
		for r, id := range f.ids {
			skip := false
			for _, s := range silent {
				skip = skip || s == r
			}
			if !skip {
				f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: id}, anyone)
			}
		}
		f.s.Tick()
	}
}

// TestLifecycle: registration, joins, a tree from the LSDB, programming,
// ready; the switch configs are what the plan says.
func TestLifecycle(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	g := f.group()
	if g.state != StateProgramming || g.gen != 1 {
		t.Fatalf("after joins: %s gen %d (%s)", g.state, g.gen, g.reason)
	}
	if a := f.assign(3); a.State != protos.GroupState_GROUP_STATE_WAITING || Settled(a, 0) {
		t.Fatalf("assignment before the switches applied: %v", a)
	}
	f.apply()
	if g.state != StateReady {
		t.Fatalf("after apply: %s", g.state)
	}
	root, l2 := f.pushed[swAddr("s1")].Trees, f.pushed[swAddr("l2")].Trees
	if len(root) != 1 || len(l2) != 1 || f.pushed[swAddr("s2")] != nil && len(f.pushed[swAddr("s2")].Trees) != 0 {
		t.Fatalf("configs: root %v l2 %v s2 %v", root, l2, f.pushed[swAddr("s2")])
	}
	r, l := root[0], l2[0]
	if !r.Root || len(r.Children) != 4 || r.Children[1].Address != swAddr("l2") || r.Children[1].Qpn != l.Qpn || r.Children[1].Client {
		t.Fatalf("root config %v", r)
	}
	if l.Root || l.Parent.Address != swAddr("s1") || l.Parent.Qpn != r.Qpn || l.ParentRank != 1 || l.TreeId != r.TreeId ||
		len(l.Children) != 2 || l.Children[1].Address != "10.1.2.11" || l.Children[1].Qpn != 1003 || !l.Children[1].Client || l.Slots != 256 {
		t.Fatalf("leaf l2 config %v", l)
	}
	a := f.assign(3)
	if !Settled(a, 0) || a.SwitchAddress != swAddr("l2") || a.SwitchQpn != l.Qpn || a.ChildIndex != 1 || a.TreeId != r.TreeId ||
		len(a.Members) != 8 || a.Members[5].Qpn != 1005 || a.MaxPayload != 4096 || a.BottleneckBps != 10e9 {
		t.Fatalf("assignment %v", a)
	}
	// The FRR spine s3 (never registered) is nowhere.
	for _, tr := range f.s.Trees() {
		for _, sw := range tr.Switches {
			if sw.Switch == "s3" {
				t.Fatal("s3 in a tree")
			}
		}
		if tr.Root != "s1" || tr.Levels != 2 || *tr.Bottleneck != gig10 || !tr.Ready {
			t.Fatalf("tree view %+v", tr)
		}
	}
}

// TestDeadClient: a client that stops heartbeating dismantles its group;
// the tree leaves the switches; the others learn it and leave.
func TestDeadClient(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	f.heartbeatAll(time.Second)
	if g := f.group(); g.state != StateReady {
		t.Fatalf("after a second of heartbeats: %s", g.state)
	}
	f.heartbeatAll(2*time.Second, 5)
	g := f.group()
	if g.state != StateDismantled || !strings.Contains(g.reason, "rank 5") {
		t.Fatalf("after rank 5 went silent: %s %q", g.state, g.reason)
	}
	for key, c := range f.pushed {
		if len(c.Trees) != 0 {
			t.Fatalf("switch %s still has %v", key, c.Trees)
		}
	}
	hb, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: f.ids[0]}, anyone)
	if err != nil || hb.State != protos.GroupState_GROUP_STATE_DISMANTLED {
		t.Fatalf("heartbeat of rank 0: %v %v", hb, err)
	}
	if _, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: f.ids[5]}, anyone); status.Code(err) != codes.NotFound {
		t.Fatalf("dead client's heartbeat: %v", err)
	}
	for r, id := range f.ids {
		if r != 5 {
			if err := f.s.Leave(&protos.LeaveRequest{ClientId: id}, anyone); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(f.s.groups) != 0 || len(f.s.clients) != 0 {
		t.Fatalf("left over: %v %v", f.s.groups, f.s.clients)
	}
	// The group can be formed again.
	f.joinAll(8)
	if f.group().state != StateProgramming {
		t.Fatal("re-formed group")
	}
}

// TestLinkDownRebuilds: an SPF with l1–s1 gone rebuilds the tree under s2
// with a new tree id and generation; clients see it once applied.
func TestLinkDownRebuilds(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	old := f.assign(0)
	f.s.SetGraphs([]*lsdb.Graph{clos(nil, map[string]bool{"l1s1": true})})
	g := f.group()
	if g.state != StateProgramming || g.tree.plan.Root != swAddr("s2") || g.rebuilds != 1 || g.gen != old.Generation+1 {
		t.Fatalf("after the link went down: %s root %s rebuilds %d gen %d (%s)", g.state, g.tree.plan.Root, g.rebuilds, g.gen, g.reason)
	}
	if len(f.pushed[swAddr("s1")].Trees) != 0 || len(f.pushed[swAddr("s2")].Trees) != 1 {
		t.Fatal("s1 kept the tree or s2 did not get it")
	}
	f.apply()
	a := f.assign(0)
	if !Settled(a, old.Generation) || a.TreeId == old.TreeId {
		t.Fatalf("new assignment %v (old tree %d)", a, old.TreeId)
	}
	// The same topology again changes nothing.
	f.s.SetGraphs([]*lsdb.Graph{clos(nil, map[string]bool{"l1s1": true})})
	if g.gen != a.Generation || g.state != StateReady {
		t.Fatal("a repeated SPF rebuilt the tree")
	}
	// The link comes back: s1 is as good as s2 again, not better: kept.
	f.s.SetGraphs([]*lsdb.Graph{clos(nil, nil)})
	if g.gen != a.Generation {
		t.Fatal("rebuilt for an equal tree")
	}
}

// TestSwitchLost: the root's session ends: rebuilt under the other spine.
func TestSwitchLost(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	f.s.SwitchDown(swAddr("s1"), f.serial[swAddr("s1")])
	if g := f.group(); g.tree.plan.Root != swAddr("s2") || g.state != StateProgramming {
		t.Fatalf("after s1 was lost: root %s %s", g.tree.plan.Root, g.state)
	}
	// A stale session's end is ignored.
	f.s.SwitchDown(swAddr("s2"), 12345)
	if !f.s.switches[swAddr("s2")].alive {
		t.Fatal("a stale session killed s2")
	}
}

// TestTimeoutReports: the first report reprograms the switches, the
// third rebuilds without the root; reports on an old generation change
// nothing.
func TestTimeoutReports(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	a := f.assign(0)
	rep := func(r int, gen uint64) string {
		rp, err := f.s.ReportTimeouts(&protos.TimeoutReport{ClientId: f.ids[r], TreeId: a.TreeId, Generation: gen, MessageId: 9, Timeouts: 8}, anyone)
		if err != nil {
			t.Fatal(err)
		}
		return rp.Action
	}
	v := f.pushed[swAddr("s1")].Version
	if act := rep(0, a.Generation); !strings.Contains(act, "reprogrammed") || f.pushed[swAddr("s1")].Version != v+1 {
		t.Fatalf("first report: %q", act)
	}
	if act := rep(0, a.Generation-1); !strings.Contains(act, "none") {
		t.Fatalf("old generation: %q", act)
	}
	// Reports older than the window do not count.
	f.heartbeatAll(11 * time.Second)
	if act := rep(1, a.Generation); !strings.Contains(act, "reprogrammed") {
		t.Fatalf("report after the window: %q", act)
	}
	rep(1, a.Generation)
	act := rep(2, a.Generation)
	g := f.group()
	if !strings.Contains(act, "rebuilt without root "+swAddr("s1")) || g.tree.plan.Root != swAddr("s2") || g.exclude[swAddr("s1")].IsZero() {
		t.Fatalf("third report: %q root %s", act, g.tree.plan.Root)
	}
	// The exclusion expires.
	f.heartbeatAll(31 * time.Second)
	if len(g.exclude) != 0 {
		t.Fatal("exclusion did not expire")
	}
}

// TestNoTree: without registered switches the complete group has no tree
// (clients fall back to the ring); a switch registering fixes that.
func TestNoTree(t *testing.T) {
	f := newFixture(t, clos(nil, nil))
	f.joinAll(8)
	if g := f.group(); g.state != StateNoTree || !strings.Contains(g.reason, "no tree") {
		t.Fatalf("%s %q", g.state, g.reason)
	}
	if a := f.assign(0); !Settled(a, 0) || a.State != protos.GroupState_GROUP_STATE_NO_TREE || len(a.Members) != 8 {
		t.Fatalf("assignment %v", a)
	}
	f.register("s1")
	if g := f.group(); g.state != StateProgramming || g.tree.plan.Root != swAddr("s1") || g.tree.plan.Levels != 1 {
		t.Fatalf("after s1 registered: %s", g.state)
	}
}

// TestRefusedConfig: a switch that refuses the tree is avoided.
func TestRefusedConfig(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	s1 := swAddr("s1")
	f.s.SwitchStatus(s1, f.serial[s1], &protos.SwitchStatus{AppliedVersion: 0, Error: "out of memory"})
	if g := f.group(); g.tree.plan.Root != swAddr("s2") {
		t.Fatalf("root %s after s1 refused", g.tree.plan.Root)
	}
}

// TestJoinErrors: what a join can get wrong.
func TestJoinErrors(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	ok := &protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 5}
	if _, err := f.s.Join(ok, anyone); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    *protos.JoinRequest
		code codes.Code
		msg  string
	}{
		{&protos.JoinRequest{Group: "g", Rank: 1, Size: 3, Address: "10.1.1.11", Qpn: 6}, codes.FailedPrecondition, "has 2 ranks"},
		{&protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.11", Qpn: 6}, codes.AlreadyExists, "rank 0 is taken"},
		{&protos.JoinRequest{Group: "g", Rank: 1, Size: 2, Address: "10.1.1.10", Qpn: 5}, codes.AlreadyExists, "QP 5"},
		{&protos.JoinRequest{Group: "g", Rank: 2, Size: 2, Address: "10.1.1.11", Qpn: 6}, codes.InvalidArgument, "rank 2"},
		{&protos.JoinRequest{Group: "", Rank: 0, Size: 2, Address: "10.1.1.11", Qpn: 6}, codes.InvalidArgument, "group"},
		{&protos.JoinRequest{Group: "g", Rank: 1, Size: 2, Address: "fe80::1", Qpn: 6}, codes.InvalidArgument, "IPv4"},
		{&protos.JoinRequest{Group: "g", Rank: 1, Size: 2, Address: "10.1.1.11", Qpn: 1 << 24}, codes.InvalidArgument, "qpn"},
		{&protos.JoinRequest{Group: "a b", Rank: 1, Size: 2, Address: "10.1.1.11", Qpn: 6}, codes.InvalidArgument, "printable"},
	} {
		_, err := f.s.Join(c.r, anyone)
		if status.Code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want %s %q", c.r, err, c.code, c.msg)
		}
	}
	if _, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: "nobody"}, anyone); status.Code(err) != codes.NotFound {
		t.Errorf("unknown client: %v", err)
	}
	// A leave while the group is still gathering keeps it waiting.
	var id *client
	for _, c := range f.s.clients {
		id = c
	}
	f.s.Leave(&protos.LeaveRequest{ClientId: id.id}, anyone)
	if len(f.s.groups) != 0 {
		t.Fatal("empty group kept")
	}
}

var _ = netip.Addr{}
