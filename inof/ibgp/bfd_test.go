package ibgp

import (
	"context"
	"fmt"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v4/api"
)

// BFD is fared's: a neighbour with bfd on gets no GoBGP BFD peer (so
// GoBGP's BFD server never opens UDP 3784 beside fared's speaker, issue
// 25 row 11); the state fared's speaker reports is what Peers shows; and
// BFDDown resets the session at once, which then comes back.
func TestBFDIsFareds(t *testing.T) {
	rr, a := newNode(t, 7), newNode(t, 8)
	bfdOn := func(c *Config) {
		for i := range c.Neighbors {
			c.Neighbors[i].BFD = true
		}
	}
	rr.start(true, bfdOn, a)
	a.start(false, bfdOn, rr)
	poll(t, 15*time.Second, "session", a.established(rr))
	ctx := context.Background()
	for _, n := range []*node{rr, a} {
		gobgpBFD := 0
		n.sp.s.ListBfdPeer(ctx, func(string, *api.BfdPeerState) { gobgpBFD++ })
		if err := n.sp.s.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
			if p.GetBfd().GetEnabled() {
				gobgpBFD++
			}
		}); err != nil {
			t.Fatal(err)
		}
		if gobgpBFD != 0 {
			t.Fatalf("%s: GoBGP runs BFD for %d peers", n.addr, gobgpBFD)
		}
	}
	bfdOf := func() string {
		ps, err := a.sp.Peers(ctx)
		if err != nil || len(ps) != 1 {
			t.Fatalf("peers %+v %v", ps, err)
		}
		return ps[0].BFD
	}
	if s := bfdOf(); s != "down" {
		t.Fatalf("BFD before the speaker reported: %q, want down", s)
	}
	a.sp.SetBFD(rr.addr, "up")
	if s := bfdOf(); s != "up" {
		t.Fatalf("BFD %q, want up", s)
	}
	ps, _ := a.sp.Peers(ctx)
	flaps := ps[0].Flaps
	a.sp.SetBFD(rr.addr, "down")
	if err := a.sp.BFDDown(ctx, rr.addr); err != nil {
		t.Fatal(err)
	}
	poll(t, 5*time.Second, "session reset", func() error {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.peers[rr.addr] == "established" {
			return fmt.Errorf("still established")
		}
		return nil
	})
	poll(t, 15*time.Second, "session back", a.established(rr))
	if ps, _ := a.sp.Peers(ctx); ps[0].Flaps != flaps+1 {
		t.Fatalf("flaps %d, want %d", ps[0].Flaps, flaps+1)
	}
}
