package bfd

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/bfd/packet"
)

type recorder struct {
	mu sync.Mutex
	ev []Event
}

func (r *recorder) notify(e Event) { r.mu.Lock(); r.ev = append(r.ev, e); r.mu.Unlock() }

func (r *recorder) last() (Event, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ev) == 0 {
		return Event{}, 0
	}
	return r.ev[len(r.ev)-1], len(r.ev)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestManagersComeUpAndShare(t *testing.T) {
	n := NewMemNet()
	a, b := netip.MustParseAddr("10.0.0.0"), netip.MustParseAddr("10.0.0.1")
	ma := New(Options{IO: n.IO(a, 7)})
	mb := New(Options{IO: n.IO(b, 7)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ma.Run(ctx)
	go mb.Run(ctx)
	p := Params{Interval: 20 * time.Millisecond, Multiplier: 3}
	var ra, ra2, rb recorder
	ca, ca2, cb := ma.NewClient(ra.notify), ma.NewClient(ra2.notify), mb.NewClient(rb.notify)
	ca.Set(Key{IfIndex: 7, Peer: b}, a, "eth0", p)
	ca2.Set(Key{IfIndex: 7, Peer: b}, a, "eth0", Params{Interval: 40 * time.Millisecond, Multiplier: 5})
	cb.Set(Key{IfIndex: 7, Peer: a}, b, "eth0", p)
	waitFor(t, "both Up", func() bool {
		ea, _ := ra.last()
		ea2, _ := ra2.last()
		eb, _ := rb.last()
		return ea.State == packet.Up && ea2.State == packet.Up && eb.State == packet.Up
	})
	s, _, err := ma.Sessions(ctx)
	if err != nil || len(s) != 1 {
		t.Fatalf("two clients, one peer: %d sessions (%v)", len(s), err)
	}
	if s[0].Interval != 20*time.Millisecond || s[0].Multiplier != 3 {
		t.Fatalf("shared session runs %v x %d, want the faster client's 20ms x 3", s[0].Interval, s[0].Multiplier)
	}
	// One client leaving keeps the session; b sees nothing.
	ca2.Remove(Key{IfIndex: 7, Peer: b})
	_, nb := rb.last()
	// a's side removed entirely: b hears AdminDown and goes Down, diag 3.
	ca.Close()
	waitFor(t, "b Down", func() bool { e, _ := rb.last(); return e.State == packet.Down })
	if e, k := rb.last(); e.Diag != packet.DiagNeighborDown || k != nb+1 {
		t.Fatalf("b: %+v after %d events (had %d)", e, k, nb)
	}
	// Sessions keyed to the peer stay with b and come Up again when a
	// asks once more.
	ca.Set(Key{IfIndex: 7, Peer: b}, a, "eth0", p)
	waitFor(t, "b Up again", func() bool { e, _ := rb.last(); return e.State == packet.Up })
	// Silence from a: b detects it.
	n.Mute(a, true)
	waitFor(t, "b Down on silence", func() bool { e, _ := rb.last(); return e.State == packet.Down })
	if e, _ := rb.last(); e.Diag != packet.DiagDetectExpired {
		t.Fatalf("b diag %s", e.Diag)
	}
}

func TestTTLNot255Dropped(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.0.0"), netip.MustParseAddr("10.0.0.1")
	n := NewMemNet()
	ma := New(Options{IO: ttlIO{n.IO(a, 7), 254}})
	mb := New(Options{IO: ttlIO{n.IO(b, 7), 254}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ma.Run(ctx)
	go mb.Run(ctx)
	p := Params{Interval: 10 * time.Millisecond, Multiplier: 3}
	var ra, rb recorder
	ma.NewClient(ra.notify).Set(Key{IfIndex: 7, Peer: b}, a, "eth0", p)
	mb.NewClient(rb.notify).Set(Key{IfIndex: 7, Peer: a}, b, "eth0", p)
	waitFor(t, "a TTL drop counted", func() bool {
		_, c, _ := ma.Sessions(ctx)
		return c["rx_rejected_ttl"] > 0
	})
	if _, k := ra.last(); k != 0 {
		t.Fatalf("a session moved on packets with TTL 254")
	}
}

// ttlIO rewrites the TTL of what it receives.
type ttlIO struct {
	IO
	ttl int
}

func (t ttlIO) Listen(ctx context.Context, deliver func(Received)) error {
	return t.IO.Listen(ctx, func(r Received) { r.TTL = t.ttl; deliver(r) })
}
