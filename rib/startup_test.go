package rib

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestStartupFloodNotLongWait: the initial flood drives the back-off into
// LONG_WAIT while the kernel is held. Once the hold ended, an LSP of the
// flood that still arrives is computed within SHORT_SPF_DELAY (200 ms),
// not LONG_SPF_DELAY (5 s); after a holddown (10 s) without events the
// back-off is back in QUIET and from then on applies as RFC 8405 says.
func TestStartupFloodNotLongWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	rec := &recorder{}
	var ready atomic.Bool
	m := New(Config{Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler), FIB: rec,
		Ready: ready.Load, StartupHold: time.Minute})
	m.started = t0
	event := func(at time.Duration, withB bool) time.Duration {
		now = t0.Add(at)
		m.Submit(vee(25, 40, withB), "lsp")
		m.takeMail()
		return m.protoSet["isis"].due.Sub(now)
	}
	run := func(at time.Duration) {
		now = t0.Add(at)
		m.runDue()
	}
	// The flood, held: every 100 ms for 3 s, alternating B's link.
	for i := range 30 {
		at := time.Duration(i) * 100 * time.Millisecond
		event(at, i%2 == 0)
		run(at + 250*time.Millisecond) // whatever is due by then
	}
	if _, n := rec.last(); n != 0 {
		t.Fatalf("%d kernel writes while holding", n)
	}
	if st := m.Delays()["isis"].State.String(); st != "LONG_WAIT" {
		t.Fatalf("back-off %s after the flood, want LONG_WAIT", st)
	}
	now = t0.Add(3200 * time.Millisecond)
	ready.Store(true)
	m.retryHold()
	if _, n := rec.last(); n != 1 {
		t.Fatalf("%d kernel writes at the hold's end, want 1", n)
	}
	// A late LSP of the flood: at most SHORT_SPF_DELAY.
	if d := event(3500*time.Millisecond, true); d != 200*time.Millisecond {
		t.Fatalf("late LSP due in %v, want 200ms", d)
	}
	run(3700 * time.Millisecond)
	if _, n := rec.last(); n != 2 {
		t.Fatalf("%d kernel writes after the late LSP, want 2", n)
	}
	// 10 s without events: QUIET; the first event runs at once, a second
	// after TIME_TO_LEARN waits LONG_SPF_DELAY, as before start-up.
	if d := event(14*time.Second, false); d != 0 {
		t.Fatalf("first event after the quiet spell due in %v, want 0", d)
	}
	run(14 * time.Second)
	if d := event(14600*time.Millisecond, true); d != 5*time.Second {
		t.Fatalf("churn after start-up due in %v, want 5s (LONG_WAIT)", d)
	}
}
