package inof

import (
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/inof/agent"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/guard"
)

func ev(t l2.Event, id string, port string, addr string) agent.Event {
	return agent.Event{Type: t, Peer: agent.Peer{Key: agent.PathKey{ID: id, Switch: netip.MustParseAddr("10.255.0.3"), Port: port},
		Host: l2.Host{ID: id, Addrs: []netip.Addr{netip.MustParseAddr(addr)}}}}
}

// TestHookQueueCoalesces: one event waits per peer path, the latest, in
// the place of the first.
func TestHookQueueCoalesces(t *testing.T) {
	var q hookQueue
	q.put(ev(l2.EventJoin, "a", "p1", "10.0.0.1"))
	q.put(ev(l2.EventJoin, "b", "p2", "10.0.0.2"))
	q.put(ev(l2.EventLeave, "a", "p1", "10.0.0.1"))
	q.put(ev(l2.EventJoin, "a", "p1", "10.0.0.9"))
	q.put(ev(l2.EventJoin, "a", "p3", "10.0.0.3")) // another path of a
	var got []string
	for e, ok := q.take(); ok; e, ok = q.take() {
		got = append(got, e.Type.String()+":"+e.Peer.Key.ID+"@"+e.Peer.Key.Port+"="+e.Peer.Host.Addrs[0].String())
	}
	if strings.Join(got, " ") != "join:a@p1=10.0.0.9 join:b@p2=10.0.0.2 join:a@p3=10.0.0.3" || q.coalesced != 2 {
		t.Fatalf("got %v, coalesced %d", got, q.coalesced)
	}
}

// TestHookRunsOncePerBurst: while the hook runs, a burst of ten changes
// about one peer and one about another wait; the hook then runs once for
// each peer, with the final state.
func TestHookRunsOncePerBurst(t *testing.T) {
	h := newHookRunner(slog.New(slog.DiscardHandler), guard.New("inoftest", slog.New(slog.DiscardHandler)), "/nonexistent", time.Second)
	var mu sync.Mutex
	var ran []string
	started, release := make(chan struct{}), make(chan struct{})
	first := true
	h.exec = func(e agent.Event) {
		mu.Lock()
		ran = append(ran, e.Type.String()+":"+e.Peer.Key.ID+"="+e.Peer.Host.Addrs[0].String())
		wait := first
		first = false
		mu.Unlock()
		if wait {
			close(started)
			<-release
		}
	}
	h.queue(ev(l2.EventJoin, "x", "p9", "10.0.9.9"))
	<-started // the hook is busy with x
	for i := 0; i < 10; i++ {
		typ := l2.EventJoin
		if i%2 == 1 {
			typ = l2.EventUnreachable
		}
		h.queue(ev(typ, "a", "p1", netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}).String()))
	}
	h.queue(ev(l2.EventJoin, "b", "p2", "10.0.0.2"))
	close(release)
	h.close()
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(ran, " "); got != "join:x=10.0.9.9 unreachable:a=10.0.0.9 join:b=10.0.0.2" {
		t.Fatalf("hook ran %q", got)
	}
	if c, r := h.counts(); c != 9 || r != 3 {
		t.Fatalf("coalesced %d, runs %d", c, r)
	}
}

// TestHookPanicIsGuarded: a panic in a hook run is recovered through the
// module's guard; the next event runs.
func TestHookPanicIsGuarded(t *testing.T) {
	h := newHookRunner(slog.New(slog.DiscardHandler), guard.New("inofhooktest", slog.New(slog.DiscardHandler)), "/nonexistent", time.Second)
	var mu sync.Mutex
	var ran []string
	h.exec = func(e agent.Event) {
		mu.Lock()
		ran = append(ran, e.Peer.Key.ID)
		mu.Unlock()
		if e.Peer.Key.ID == "boom" {
			panic("hook bug")
		}
	}
	h.queue(ev(l2.EventJoin, "boom", "p1", "10.0.0.1"))
	h.queue(ev(l2.EventJoin, "next", "p2", "10.0.0.2"))
	h.close()
	if strings.Join(ran, ",") != "boom,next" || guard.Count("inofhooktest") != 1 {
		t.Fatalf("ran %v, panics %d", ran, guard.Count("inofhooktest"))
	}
}
