package manager

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/protos"
)

func clientStats(v wire.INCClient) [5]uint64 {
	return [5]uint64{v.Bytes, v.Operations, v.FailedOperations, v.Retransmissions, v.RTOs}
}

// TestClientStats: a client's heartbeat carries its task statistics and
// farectl inc clients shows them on its row only; an older report (a
// retried heartbeat) does not move them back; they exist for registered
// clients only and leave with the client.
func TestClientStats(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.joinAll(4)
	f.apply()
	hb := func(rank int, st *protos.ClientStats) {
		t.Helper()
		if _, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: f.ids[rank], Stats: st}, anyone); err != nil {
			t.Fatal(err)
		}
	}
	hb(2, &protos.ClientStats{Bytes: 1 << 20, Operations: 4, FailedOperations: 1, Retransmissions: 17, Timeouts: 3})
	hb(1, nil) // a client that does not count
	rows := f.s.Clients()
	for _, v := range rows {
		want := [5]uint64{}
		if v.Rank == 2 {
			want = [5]uint64{1 << 20, 4, 1, 17, 3}
		}
		if clientStats(v) != want {
			t.Fatalf("rank %d: %v, want %v", v.Rank, clientStats(v), want)
		}
	}
	// Out of order: a report with fewer retransmissions but more
	// operations keeps the larger of each total.
	hb(2, &protos.ClientStats{Bytes: 1 << 20, Operations: 5, FailedOperations: 1, Retransmissions: 9, Timeouts: 3})
	if got := clientStats(f.s.Clients()[2]); got != [5]uint64{1 << 20, 5, 1, 17, 3} {
		t.Fatalf("after an older report: %v", got)
	}
	// Bounded: a report for an unknown id creates nothing.
	_, err := f.s.Heartbeat(&protos.HeartbeatRequest{ClientId: "c-unknown", Stats: &protos.ClientStats{Operations: 1}}, anyone)
	if status.Code(err) != codes.NotFound || len(f.s.clients) != 4 || len(f.s.Clients()) != 4 {
		t.Fatalf("unknown client: %v, %d clients", err, len(f.s.clients))
	}
	// Leaving takes the client's statistics with it.
	if err := f.s.Leave(&protos.LeaveRequest{ClientId: f.ids[2]}, anyone); err != nil {
		t.Fatal(err)
	}
	for _, v := range f.s.Clients() {
		if v.Rank == 2 || clientStats(v) != [5]uint64{} {
			t.Fatalf("after rank 2 left: %+v", v)
		}
	}
}

// TestStatsOnlyForOneself: over gRPC with client-auth, a client cannot
// report statistics for a client of another group: the heartbeat that
// carries them is refused and the victim's totals stay as they were.
func TestStatsOnlyForOneself(t *testing.T) {
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	victim := h.dial(nil, h.token("victim"), false)
	ids := joinGroup(t, ctx, victim, "victim", 2, 100)
	if _, err := victim.Heartbeat(ctx, &protos.HeartbeatRequest{ClientId: ids[0], Stats: &protos.ClientStats{Bytes: 4096, Operations: 1}}); err != nil {
		t.Fatal(err)
	}
	evil := h.dial(nil, h.token("evil"), false)
	_, err := evil.Heartbeat(ctx, &protos.HeartbeatRequest{ClientId: ids[0], Stats: &protos.ClientStats{Bytes: 1 << 40, Operations: 1 << 30, FailedOperations: 1 << 30}})
	wantCode(t, "stats for the victim", err, codes.PermissionDenied, "not in a group the token")
	rows, err := h.m.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rows {
		want := [5]uint64{}
		if v.ID == ids[0] {
			want = [5]uint64{4096, 1, 0, 0, 0}
		}
		if clientStats(v) != want {
			t.Fatalf("%s (rank %d): %v, want %v", v.ID, v.Rank, clientStats(v), want)
		}
	}
}
