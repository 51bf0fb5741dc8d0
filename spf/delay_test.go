package spf

import (
	"encoding/json"
	"fmt"
	"strings"
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
		{"defaults: quiet→short→long→quiet", DelayConfig{}, []step{
			{0, "event", ShortWait, 50 * ms, 1},             // T1: INITIAL_SPF_DELAY 50ms
			{10 * ms, "event", ShortWait, 50 * ms, 2},       // T2: SPF_TIMER armed: unchanged
			{50 * ms, "ran", ShortWait, 0, 7},               // T7
			{100 * ms, "event", ShortWait, 300 * ms, 2},     // T2: SHORT_SPF_DELAY 200ms
			{300 * ms, "ran", ShortWait, 0, 7},              //
			{499 * ms, "state", ShortWait, 0, 7},            // learn expires at 500ms
			{500 * ms, "state", LongWait, 0, 3},             // T3
			{600 * ms, "event", LongWait, 5600 * ms, 4},     // T4: LONG_SPF_DELAY 5s; holddown → 10.6s
			{700 * ms, "event", LongWait, 5600 * ms, 4},     // armed: unchanged; holddown → 10.7s
			{5600 * ms, "ran", LongWait, 0, 7},              //
			{10699 * ms, "state", LongWait, 0, 7},           //
			{10700 * ms, "state", Quiet, 0, 5},              // T5: HOLDDOWN expiration
			{20000 * ms, "event", ShortWait, 20050 * ms, 1}, // back to T1
		}},
		{"holddown in short wait", DelayConfig{InitialDelay: 10 * ms, ShortDelay: 20 * ms, LongDelay: 1000 * ms, TimeToLearn: 1000 * ms, Holddown: 300 * ms}, []step{
			{0, "event", ShortWait, 10 * ms, 1},
			{10 * ms, "ran", ShortWait, 0, 7},
			{200 * ms, "event", ShortWait, 220 * ms, 2}, // holddown → 500ms
			{220 * ms, "ran", ShortWait, 0, 7},
			{500 * ms, "state", Quiet, 0, 6}, // T6: learn timer deactivated
			// 1.2s: the old LEARN_TIMER (1s) must not push us to LONG_WAIT.
			{1200 * ms, "event", ShortWait, 1210 * ms, 1},
		}},
		{"learn and holddown expire in one gap", DelayConfig{TimeToLearn: 100 * ms, Holddown: 200 * ms}, []step{
			{0, "event", ShortWait, 50 * ms, 1},
			{50 * ms, "ran", ShortWait, 0, 7},
			// At 1s both have expired: T3 at 100ms, then T5 at 200ms.
			{1000 * ms, "state", Quiet, 0, 5},
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
	d := NewDelay(DelayConfig{}, func() time.Time { return t0 })
	d.Event(t0)
	if at, ok := d.Pending(); !ok || at != t0.Add(50*time.Millisecond) {
		t.Fatalf("pending %v %v", at, ok)
	}
	b, _ := json.Marshal(d.View())
	if !strings.Contains(string(b), `"state":"SHORT_WAIT"`) || !strings.Contains(string(b), `"spf_at"`) {
		t.Errorf("view %s", b)
	}
}

func TestLogRing(t *testing.T) {
	var l Log
	if len(l.Entries()) != 0 {
		t.Fatal("empty log has entries")
	}
	for i := 0; i < LogSize+5; i++ {
		l.Add(LogEntry{Trigger: fmt.Sprint(i), Kind: "full"})
	}
	es := l.Entries()
	if len(es) != LogSize || es[0].Trigger != "5" || es[LogSize-1].Trigger != fmt.Sprint(LogSize+4) {
		t.Fatalf("ring: %d entries, first %q last %q", len(es), es[0].Trigger, es[len(es)-1].Trigger)
	}
	b, _ := json.Marshal(LogEntry{Kind: "route-only", Duration: time.Millisecond, RoutesChanged: 3})
	for _, k := range []string{`"at"`, `"trigger"`, `"kind":"route-only"`, `"duration_ns":1000000`, `"nodes"`, `"routes_changed":3`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("json %s lacks %s", b, k)
		}
	}
}
