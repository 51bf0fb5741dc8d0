package spf

import (
	"fmt"
	"testing"
	"time"
)

func TestDelayStateMachine(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at    time.Duration // since t0
		op    string        // "event" | "ran" | "state"
		state DelayState    // state after the step
		run   time.Duration // "event": expected runAt - t0
		tr    int           // RFC 8405 transition last applied
	}
	tests := []struct {
		name  string
		cfg   DelayConfig
		steps []step
	}{
		{"defaults: the first event at once, the next after SHORT_SPF_DELAY", DelayConfig{}, []step{
			{0, "event", ShortWait, 0, 1},               // T1: INITIAL_SPF_DELAY 0
			{0, "ran", ShortWait, 0, 8},                 // T8
			{1 * ms, "event", ShortWait, 201 * ms, 2},   // T2: SHORT_SPF_DELAY 200ms
			{50 * ms, "event", ShortWait, 201 * ms, 2},  // armed: unchanged
			{201 * ms, "ran", ShortWait, 0, 8},          //
			{600 * ms, "event", LongWait, 5600 * ms, 4}, // T3 at 500ms, then T4: LONG_SPF_DELAY 5s
		}},
		{"quiet→short→long→quiet", DelayConfig{InitialDelay: 50 * ms}, []step{
			{0, "event", ShortWait, 50 * ms, 1},             // T1: INITIAL_SPF_DELAY 50ms
			{10 * ms, "event", ShortWait, 50 * ms, 2},       // T2: SPF_TIMER armed: unchanged
			{50 * ms, "ran", ShortWait, 0, 8},               // T8: SPF_TIMER expiration in SHORT_WAIT
			{100 * ms, "event", ShortWait, 300 * ms, 2},     // T2: SHORT_SPF_DELAY 200ms
			{300 * ms, "ran", ShortWait, 0, 8},              //
			{499 * ms, "state", ShortWait, 0, 8},            // learn expires at 500ms
			{500 * ms, "state", LongWait, 0, 3},             // T3
			{600 * ms, "event", LongWait, 5600 * ms, 4},     // T4: LONG_SPF_DELAY 5s; holddown → 10.6s
			{700 * ms, "event", LongWait, 5600 * ms, 4},     // armed: unchanged; holddown → 10.7s
			{5600 * ms, "ran", LongWait, 0, 9},              // T9: SPF_TIMER expiration in LONG_WAIT
			{10699 * ms, "state", LongWait, 0, 9},           //
			{10700 * ms, "state", Quiet, 0, 5},              // T5: HOLDDOWN expiration
			{20000 * ms, "event", ShortWait, 20050 * ms, 1}, // back to T1
		}},
		{"holddown in short wait", DelayConfig{InitialDelay: 10 * ms, ShortDelay: 20 * ms, LongDelay: 1000 * ms, TimeToLearn: 1000 * ms, Holddown: 300 * ms}, []step{
			{0, "event", ShortWait, 10 * ms, 1},
			{10 * ms, "ran", ShortWait, 0, 8},
			{200 * ms, "event", ShortWait, 220 * ms, 2}, // holddown → 500ms
			{220 * ms, "ran", ShortWait, 0, 8},
			{500 * ms, "state", Quiet, 0, 6}, // T6: learn timer deactivated
			// 1.2s: the old LEARN_TIMER (1s) must not push us to LONG_WAIT.
			{1200 * ms, "event", ShortWait, 1210 * ms, 1},
		}},
		{"learn and holddown expire in one gap", DelayConfig{InitialDelay: 50 * ms, TimeToLearn: 100 * ms, Holddown: 200 * ms}, []step{
			{0, "event", ShortWait, 50 * ms, 1},
			{50 * ms, "ran", ShortWait, 0, 8},
			// At 1s both have expired: T3 at 100ms, then T5 at 200ms.
			{1000 * ms, "state", Quiet, 0, 5},
		}},
		{"SPF timer in QUIET (holddown shorter than the long delay)", DelayConfig{InitialDelay: 50 * ms, TimeToLearn: 100 * ms, Holddown: 200 * ms, LongDelay: 1000 * ms}, []step{
			{0, "event", ShortWait, 50 * ms, 1},
			{50 * ms, "ran", ShortWait, 0, 8},
			{150 * ms, "event", LongWait, 1150 * ms, 4}, // T3 at 100ms, then T4; holddown → 350ms
			{350 * ms, "state", Quiet, 0, 5},            // T5 while SPF is pending
			{1150 * ms, "ran", Quiet, 0, 7},             // T7: SPF_TIMER expiration in QUIET
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var now time.Time
			d := NewDelay(tc.cfg, func() time.Time { return now })
			for i, s := range tc.steps {
				now = t0.Add(s.at)
				switch s.op {
				case "event":
					if got := d.Event(now); !got.Equal(t0.Add(s.run)) {
						t.Fatalf("step %d: runAt %v, want %v", i, got.Sub(t0), s.run)
					}
				case "ran":
					d.Ran(now)
				}
				if st := d.State(); st != s.state || d.lastTran != s.tr {
					t.Fatalf("step %d (%s at %v): state %v T%d, want %v T%d", i, s.op, s.at, st, d.lastTran, s.state, s.tr)
				}
			}
		})
	}
}

func TestDelayView(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewDelay(DelayConfig{InitialDelay: 50 * time.Millisecond}, func() time.Time { return t0 })
	d.Event(t0)
	if at, ok := d.Pending(); !ok || at != t0.Add(50*time.Millisecond) {
		t.Fatalf("pending %v %v", at, ok)
	}
	if v := d.View(); v.State != ShortWait || v.State.String() != "SHORT_WAIT" || !v.SPFAt.Equal(t0.Add(50*time.Millisecond)) {
		t.Errorf("view %+v", v)
	}
}

func TestLogRing(t *testing.T) {
	var l Log
	if len(l.Entries()) != 0 {
		t.Fatal("empty log has entries")
	}
	for i := 0; i < LogSize+5; i++ {
		l.Add(LogEntry{Trigger: fmt.Sprint(i), Full: true})
	}
	es := l.Entries()
	if len(es) != LogSize || es[0].Trigger != "5" || es[LogSize-1].Trigger != fmt.Sprint(LogSize+4) {
		t.Fatalf("ring: %d entries, first %q last %q", len(es), es[0].Trigger, es[len(es)-1].Trigger)
	}
	e := LogEntry{Compute: time.Millisecond, Install: 2 * time.Millisecond}
	if e.Kind() != "route-only" || e.Duration() != 3*time.Millisecond {
		t.Errorf("entry %+v: kind %s duration %v", e, e.Kind(), e.Duration())
	}
}

// TestHolddownRestartedByEventWhilePending: RFC 8405 §5 transitions 2 and
// 4 restart the HOLDDOWN_TIMER on every IGP event, also while the
// SPF_TIMER is armed (only the SPF_TIMER is left alone). So the back-off
// ends HOLDDOWN_INTERVAL after the last event, not after the last event
// that armed an SPF run. Hand-computed with a 50 ms initial delay and the
// default others (200 ms / 5 s, learn 500 ms, holddown 10 s).
func TestHolddownRestartedByEventWhilePending(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	d := NewDelay(DelayConfig{InitialDelay: 50 * ms}, func() time.Time { return now })
	at := func(off time.Duration) time.Time { now = t0.Add(off); return now }

	d.Event(at(0)) // T1: SPF at 50 ms, LEARN at 500 ms, HOLDDOWN at 10 s
	// Events while the first run is pending (SHORT_WAIT): each restarts
	// HOLDDOWN; the SPF deadline stays.
	for _, off := range []time.Duration{10 * ms, 20 * ms, 40 * ms} {
		if run := d.Event(at(off)); !run.Equal(t0.Add(50 * ms)) {
			t.Fatalf("event at %v: SPF at %v, want the armed 50ms", off, run.Sub(t0))
		}
		if v := d.View(); !v.HolddownAt.Equal(now.Add(10 * time.Second)) {
			t.Fatalf("event at %v while SPF pending in SHORT_WAIT: holddown at %v, want %v", off, v.HolddownAt.Sub(t0), now.Add(10*time.Second).Sub(t0))
		}
	}
	d.Ran(at(50 * ms))
	// LONG_WAIT: one event arms the 5 s SPF run, more arrive while it is
	// pending, the last at 5.5 s.
	if run := d.Event(at(600 * ms)); !run.Equal(t0.Add(5600*ms)) || d.State() != LongWait {
		t.Fatalf("event at 600ms: SPF at %v in %v, want 5.6s in LONG_WAIT", run.Sub(t0), d.State())
	}
	for off := 1000 * ms; off <= 5500*ms; off += 500 * ms {
		if run := d.Event(at(off)); !run.Equal(t0.Add(5600 * ms)) {
			t.Fatalf("event at %v: SPF at %v, want the armed 5.6s", off, run.Sub(t0))
		}
	}
	d.Ran(at(5600 * ms))
	// Without the restarts HOLDDOWN would expire at 10.6 s; with them at
	// 15.5 s (last event + 10 s).
	if at(10600 * ms); d.State() != LongWait {
		t.Fatalf("at 10.6s: %v, want LONG_WAIT (holddown restarted by the events while pending)", d.State())
	}
	if at(15499 * ms); d.State() != LongWait {
		t.Fatalf("at 15.499s: %v, want LONG_WAIT", d.State())
	}
	// An event now still meets an unstable network: LONG_SPF_DELAY.
	if run := d.Event(at(12 * time.Second)); !run.Equal(t0.Add(17*time.Second)) || d.lastTran != 4 {
		t.Fatalf("event at 12s: SPF at %v (T%d), want 17s (T4)", run.Sub(t0), d.lastTran)
	}
	d.Ran(at(17 * time.Second))
	if at(21999 * ms); d.State() != LongWait {
		t.Fatalf("at 21.999s: %v, want LONG_WAIT", d.State())
	}
	if at(22 * time.Second); d.State() != Quiet || d.lastTran != 5 {
		t.Fatalf("at 22s: %v T%d, want QUIET by T5 (holddown 10s after the 12s event)", d.State(), d.lastTran)
	}
}

func TestDelayConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg DelayConfig
		ok  bool
	}{
		{DelayConfig{}, true}, // defaults: 10 s > 500 ms
		{DelayConfig{TimeToLearn: time.Second, Holddown: 2 * time.Second}, true},
		{DelayConfig{Holddown: 500 * time.Millisecond}, false}, // equal to the default time to learn
		{DelayConfig{Holddown: 200 * time.Millisecond}, false},
		{DelayConfig{TimeToLearn: 20 * time.Second}, false}, // longer than the default holddown
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate = %v, want ok=%v", c.cfg, err, c.ok)
		}
	}
}
