package scenarios

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// One BFD per node (issue 25 row 11): with IGP BFD (the bfd node option)
// and iNOF BFD on the same fared nodes, fared's one speaker runs both
// clients' sessions. Before, GoBGP's built-in BFD claimed UDP 3784 beside
// it: an IS-IS adjacency flapped 25 times in 25 s.

// bfdState is what a fared node's BFD, IS-IS and iNOF views say.
type bfdState struct {
	isisFlaps map[string]int    // adjacency -> flaps
	isisSince map[string]string // adjacency -> up since (a re-created adjacency starts at 0 flaps)
	bgpFlaps  map[string]int    // iNOF neighbour -> flaps
	downs     map[string]uint64 // BFD session -> transitions Up to Down
	clients   map[string]int    // client -> sessions Up
}

func readBFDState(ctx context.Context, l *interop.Lab, node string) (bfdState, error) {
	st := bfdState{isisFlaps: map[string]int{}, isisSince: map[string]string{}, bgpFlaps: map[string]int{}, downs: map[string]uint64{}, clients: map[string]int{}}
	var nbrs []wire.ISISNeighbor
	if err := l.FarectlJSON(ctx, node, &nbrs, "isis", "neighbors"); err != nil {
		return st, err
	}
	for _, n := range nbrs {
		if n.State != "Up" {
			return st, fmt.Errorf("%s: adjacency %s on %s is %s", node, n.SystemID, n.Interface, n.State)
		}
		st.isisFlaps[n.Interface+"/"+n.SystemID] = n.Flaps
		st.isisSince[n.Interface+"/"+n.SystemID] = n.UpSince
	}
	ps, err := inofPeerStates(ctx, l, node)
	if err != nil {
		return st, err
	}
	for a, p := range ps {
		if p.State != "established" || p.BFD != "" && p.BFD != "up" {
			return st, fmt.Errorf("%s: iNOF session %s %s, bfd %q", node, a, p.State, p.BFD)
		}
		st.bgpFlaps[a] = p.Flaps
	}
	var v wire.BFDSessions
	if err := l.FarectlJSON(ctx, node, &v, "bfd", "sessions"); err != nil {
		return st, err
	}
	for _, s := range v.Sessions {
		if s.State != "Up" {
			return st, fmt.Errorf("%s: BFD session %s on %s is %s (clients %v)", node, s.Peer, s.Interface, s.State, s.Clients)
		}
		st.downs[s.Interface+"/"+s.Peer] = s.Downs
		for _, c := range s.Clients {
			st.clients[c]++
		}
		if len(s.Clients) > 1 {
			st.clients[strings.Join(s.Clients, "+")]++ // one session, shared
		}
	}
	return st, nil
}

// bfdNoFlap waits until every fared router of nodes has its IS-IS
// adjacencies Up, its iNOF sessions established with BFD up, and BFD
// sessions Up for both clients (isis, inof); then, for window, it checks
// that none of that moves: no adjacency or BGP flap, no BFD session
// down. It returns the sessions' view of the first node.
func bfdNoFlap(t *testing.T, ctx context.Context, l *interop.Lab, nodes []string, window time.Duration) {
	t.Helper()
	first := map[string]bfdState{}
	poll(t, ctx, 90*time.Second, "IS-IS, iNOF and BFD up on "+strings.Join(nodes, ","), func() error {
		for _, n := range nodes {
			st, err := readBFDState(ctx, l, n)
			if err != nil {
				return err
			}
			if len(st.isisFlaps) == 0 || st.clients["isis"] < len(st.isisFlaps) {
				return fmt.Errorf("%s: %d adjacencies, BFD sessions of isis %d", n, len(st.isisFlaps), st.clients["isis"])
			}
			if l.Node(n).INOF != "" && st.clients["inof"] == 0 {
				return fmt.Errorf("%s: no BFD session of inof (clients %v)", n, st.clients)
			}
			first[n] = st
		}
		return nil
	})
	for n, st := range first {
		t.Logf("%s: BFD sessions by client %v, %d adjacencies, %d iNOF sessions", n, st.clients, len(st.isisFlaps), len(st.bgpFlaps))
		for _, f := range st.flapped() {
			t.Errorf("%s: %s while coming up", n, f)
		}
	}
	// What is asserted over the window is that nothing happens: read
	// every second, and fail at the first change.
	end := time.Now().Add(window)
	for time.Now().Before(end) {
		for _, n := range nodes {
			st, err := readBFDState(ctx, l, n)
			if err != nil {
				t.Fatalf("during the window: %v", err)
			}
			f := first[n]
			for k, d := range st.downs {
				if d != f.downs[k] {
					t.Fatalf("%s: BFD session %s went down (%d -> %d)", n, k, f.downs[k], d)
				}
			}
			for k, x := range st.isisFlaps {
				if x != 0 || st.isisSince[k] != f.isisSince[k] {
					t.Fatalf("%s: adjacency %s flapped (%d flaps, up since %s, was %s)", n, k, x, st.isisSince[k], f.isisSince[k])
				}
			}
			for k, x := range st.bgpFlaps {
				if x != 0 {
					t.Fatalf("%s: iNOF session %s flapped (%d)", n, k, x)
				}
			}
			if !slices.Equal(slices.Sorted(maps.Keys(st.downs)), slices.Sorted(maps.Keys(f.downs))) {
				t.Fatalf("%s: BFD sessions changed: %v -> %v", n, slices.Sorted(maps.Keys(f.downs)), slices.Sorted(maps.Keys(st.downs)))
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
	// IS-IS deletes an adjacency that BFD takes down and a new one starts
	// at 0 flaps: the log tells every one of them, from the start.
	for _, n := range nodes {
		if k := bfdAdjDowns(t, l, n); k != 0 {
			t.Errorf("%s: %d adjacencies taken down by BFD since the start", n, k)
		}
	}
}

// bfdAdjDowns counts node's log lines of an adjacency or neighbour that
// BFD took down.
func bfdAdjDowns(t *testing.T, l *interop.Lab, node string) int {
	t.Helper()
	return len(logLines(t, l, node, `reason="BFD session down`)) + len(logLines(t, l, node, `event="BFD session down`))
}

// flapped describes the adjacencies and iNOF sessions that flapped.
func (st bfdState) flapped() []string {
	var out []string
	for k, x := range st.isisFlaps {
		if x != 0 {
			out = append(out, fmt.Sprintf("adjacency %s flapped %d times", k, x))
		}
	}
	for k, x := range st.bgpFlaps {
		if x != 0 {
			out = append(out, fmt.Sprintf("iNOF session %s flapped %d times", k, x))
		}
	}
	return out
}
