package manager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fared/fared/inc/protos"
)

// TestOperatorDismantle: the operator dismantles a ready group. Its tree
// leaves every switch's config, its members learn it at their next call
// (heartbeat, GetTree, a timeout report) with the operator's reason, the
// tree id is free again, and the name can be joined afresh.
func TestOperatorDismantle(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	a := f.assign(0)
	if a.State != protos.GroupState_GROUP_STATE_READY {
		t.Fatalf("before: %v", a)
	}
	// The tree is on s1 (root) and the four leaves (hand-checked in
	// TestLifecycle): five switches carry it.
	var had []string
	for key, c := range f.pushed {
		if len(c.Trees) > 0 {
			had = append(had, key)
		}
	}
	if len(had) != 5 {
		t.Fatalf("switches with the tree before: %v", had)
	}
	v, err := f.s.Dismantle("g")
	if err != nil {
		t.Fatal(err)
	}
	if v.State != StateDismantled || !strings.HasPrefix(v.Reason, ReasonOperator) || !strings.Contains(v.Reason, "tree 1 removed from 5 switch(es)") ||
		v.TreeID != 0 || v.Joined != 8 || v.Generation != a.Generation+1 {
		t.Fatalf("view %+v", v)
	}
	// Switch state dropped: every switch that had the tree was pushed a
	// config without it.
	for _, key := range had {
		if c := f.pushed[key]; len(c.Trees) != 0 {
			t.Fatalf("switch %s still has %v", key, c.Trees)
		}
	}
	// Members' next calls: the heartbeat answers dismantled, GetTree
	// settles at once with the reason, a report changes nothing.
	hb, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: f.ids[3], Generation: a.Generation}, anyone)
	if err != nil || hb.State != protos.GroupState_GROUP_STATE_DISMANTLED || hb.Generation != a.Generation+1 {
		t.Fatalf("heartbeat: %v %v", hb, err)
	}
	b := f.assign(5)
	if b.State != protos.GroupState_GROUP_STATE_DISMANTLED || !Settled(b, a.Generation) || !strings.HasPrefix(b.Reason, ReasonOperator) || b.TreeId != 0 {
		t.Fatalf("assignment: %v", b)
	}
	rp, err := f.s.ReportTimeouts(&protos.TimeoutReport{ClientId: f.ids[0], TreeId: a.TreeId, Generation: a.Generation, Timeouts: 8}, anyone)
	if err != nil || !strings.HasPrefix(rp.Action, "none") || rp.Current.State != protos.GroupState_GROUP_STATE_DISMANTLED {
		t.Fatalf("report: %v %v", rp, err)
	}
	// Dismantling it again changes nothing.
	again, err := f.s.Dismantle("g")
	if err != nil || again.Generation != v.Generation || again.Reason != v.Reason {
		t.Fatalf("again: %+v %v", again, err)
	}
	// The name is joined afresh: a new group with a tree of its own.
	f.joinAll(8)
	f.apply()
	if g := f.group(); g.state != StateReady || uint32(g.tree.id) == a.TreeId || g.gen != 1 {
		t.Fatalf("re-formed: %s tree %v gen %d", g.state, g.tree, g.gen)
	}
}

// TestOperatorDismantleRefusals: an unknown group and a name no group can
// have are refused with the reason, and nothing changes.
func TestOperatorDismantleRefusals(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(8)
	f.apply()
	for _, c := range []struct {
		name string
		want error
		msg  string
	}{
		{"other", ErrNoGroup, `no such group: "other"`},
		{"", ErrGroupName, "not a group name"},
		{"a b", ErrGroupName, "not a group name"},
		{strings.Repeat("x", MaxGroupName+1), ErrGroupName, "65 characters"},
	} {
		_, err := f.s.Dismantle(c.name)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("dismantle %q: %v, want %v %q", c.name, err, c.want, c.msg)
		}
	}
	if g := f.group(); g.state != StateReady {
		t.Fatalf("group after refusals: %s", g.state)
	}
}

// TestClientsCannotDismantle: over gRPC, with client-auth, a client whose
// token covers its own group cannot dismantle another's: the service has
// no dismantle call (its client calls are the ones below), and the calls
// that end a membership act only on a client of the token's group. The
// operator's dismantle (the API's path) then reaches the victims.
func TestClientsCannotDismantle(t *testing.T) {
	var calls []string
	for _, m := range protos.Manager_ServiceDesc.Methods {
		calls = append(calls, m.MethodName)
	}
	slices.Sort(calls)
	if want := []string{"GetTree", "Heartbeat", "Join", "Leave", "ReportTimeouts"}; !slices.Equal(calls, want) {
		t.Fatalf("client calls %v, want %v: a new call must keep to the client's own id and group", calls, want)
	}
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	victim := h.dial(nil, h.token("victim"), false)
	ids := joinGroup(t, ctx, victim, "victim", 2, 100)
	evil := h.dial(nil, h.token("evil"), false)
	joinGroup(t, ctx, evil, "evil", 2, 200)
	for _, id := range ids {
		_, err := evil.Leave(ctx, &protos.LeaveRequest{ClientId: id})
		wantCode(t, "Leave of a victim", err, codes.PermissionDenied, "not in a group the token")
	}
	a, err := victim.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[0]})
	if err != nil || a.State == protos.GroupState_GROUP_STATE_DISMANTLED {
		t.Fatalf("victim after the attempts: %v %v", a, err)
	}
	v, err := h.m.Dismantle(context.Background(), "victim")
	if err != nil || v.State != StateDismantled {
		t.Fatalf("operator: %+v %v", v, err)
	}
	b, err := victim.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[1], AfterGeneration: a.Generation})
	if err != nil || b.State != protos.GroupState_GROUP_STATE_DISMANTLED || !strings.HasPrefix(b.Reason, ReasonOperator) {
		t.Fatalf("victim after the operator: %v %v", b, err)
	}
}
