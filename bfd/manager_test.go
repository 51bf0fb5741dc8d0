package bfd

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/internal/guard"
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
	ca, ca2, cb := ma.NewClient("a", ra.notify), ma.NewClient("a2", ra2.notify), mb.NewClient("b", rb.notify)
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
	ma.NewClient("a", ra.notify).Set(Key{IfIndex: 7, Peer: b}, a, "eth0", p)
	mb.NewClient("b", rb.notify).Set(Key{IfIndex: 7, Peer: a}, b, "eth0", p)
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

// countIO counts the receive sockets open at a time.
type countIO struct {
	IO
	open *atomic.Int32
}

func (c countIO) Listen(ctx context.Context, deliver func(Received)) error {
	c.open.Add(1)
	defer c.open.Add(-1)
	return c.IO.Listen(ctx, deliver)
}

// A daemon owns one speaker whether or not anything uses BFD: its receive
// sockets are open only while there is a session.
func TestListensOnlyWithSessions(t *testing.T) {
	var open atomic.Int32
	n := NewMemNet()
	m := New(Options{IO: countIO{n.IO(netip.MustParseAddr("10.0.0.0"), 7), &open}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	if _, _, err := m.Sessions(ctx); err != nil || open.Load() != 0 {
		t.Fatalf("listening without a session: %d %v", open.Load(), err)
	}
	c := m.NewClient("x", func(Event) {})
	k := Key{IfIndex: 7, Peer: netip.MustParseAddr("10.0.0.1")}
	c.Set(k, netip.MustParseAddr("10.0.0.0"), "eth0", Params{Interval: time.Second, Multiplier: 3})
	waitFor(t, "listening", func() bool { return open.Load() == 1 })
	c.Remove(k)
	waitFor(t, "not listening", func() bool { return open.Load() == 0 })
}

// A panic while handling a packet (a bug) is recovered through the
// module's guard: counted under fared_panics_total{module="bfd"}, the
// packet dropped, and every session runs on.
func TestPanicRecovered(t *testing.T) {
	var boom atomic.Bool
	now := func() time.Time {
		if boom.Load() {
			panic("bug")
		}
		return time.Now()
	}
	n := NewMemNet()
	a, b := netip.MustParseAddr("10.0.0.0"), netip.MustParseAddr("10.0.0.1")
	ma := New(Options{IO: zeroAtIO{n.IO(a, 7)}, Now: now, Guard: guard.New("bfd-test", nil)})
	mb := New(Options{IO: n.IO(b, 7)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ma.Run(ctx)
	go mb.Run(ctx)
	var ra recorder
	p := Params{Interval: 100 * time.Millisecond, Multiplier: 5}
	ma.NewClient("a", ra.notify).Set(Key{IfIndex: 7, Peer: b}, a, "eth0", p)
	mb.NewClient("b", func(Event) {}).Set(Key{IfIndex: 7, Peer: a}, b, "eth0", p)
	waitFor(t, "a Up", func() bool { e, _ := ra.last(); return e.State == packet.Up })
	boom.Store(true)
	waitFor(t, "a panic recovered", func() bool { return guard.Count("bfd-test") > 0 })
	boom.Store(false)
	ss, _, err := ma.Sessions(ctx)
	if err != nil || len(ss) != 1 {
		t.Fatalf("the manager stopped answering: %v %v", ss, err)
	}
	waitFor(t, "a Up after the panic", func() bool { e, _ := ra.last(); return e.State == packet.Up })
}

// zeroAtIO delivers packets without a receive time (the manager reads
// its clock).
type zeroAtIO struct{ IO }

func (z zeroAtIO) Listen(ctx context.Context, deliver func(Received)) error {
	return z.IO.Listen(ctx, func(r Received) { r.At = time.Time{}; deliver(r) })
}

// A client that asks for a session another client already brought Up is
// told it is Up (no transition would tell it), and a later failure is a
// failure for both.
func TestLateClientHearsUp(t *testing.T) {
	u := startPair(t, fast, fast)
	u.waitUp(t)
	var late recorder
	s := NewSessions(u.ma, "inof", nil, late.notify)
	k := Key{IfIndex: 7, Peer: u.b}
	s.Sync(map[Key]Want{k: {Local: u.a, Iface: "eth0", Params: fast}})
	waitFor(t, "the late client hears Up", func() bool { e, _ := late.last(); return e.State == packet.Up })
	e, _ := late.last()
	s.Failed(e)
	if !s.Up(k) {
		t.Fatal("the late client's set does not count the session Up")
	}
	u.net.Mute(u.b, true)
	waitFor(t, "the late client hears Down", func() bool { e, _ := late.last(); return e.State == packet.Down })
	if e, _ := late.last(); !s.Failed(e) {
		t.Fatalf("a detected failure is no failure for the late client: %+v", e)
	}
}
