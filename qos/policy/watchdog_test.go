package policy

import (
	"testing"
	"time"

	"github.com/fared/fared/qos/model"
)

// feed drives a watchdog with hand-made counter snapshots: one interface
// "e0" with PFC on priorities 3 and 4.
type feed struct {
	t   *testing.T
	w   *Watchdog
	now time.Time
	c   model.PrioCounters // priority 3's counters
	c4  model.PrioCounters
}

func newFeed(t *testing.T, cfg WatchdogConfig) *feed {
	return &feed{t: t, w: NewWatchdog(cfg, map[string]model.Prios{"e0": model.PriosOf(3, 4)}),
		now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *feed) step() []Event {
	f.now = f.now.Add(f.w.cfg.Poll)
	ic := &model.IfaceCounters{Name: "e0"}
	ic.Prio[3], ic.Prio[4] = f.c, f.c4
	return f.w.Step(f.now, &model.Counters{At: f.now, Ifaces: map[string]*model.IfaceCounters{"e0": ic}})
}

// stuck: still paused, more PAUSE frames, no resume.
func (f *feed) stuck() []Event {
	f.c.Paused, f.c.PausedKnown = true, true
	f.c.PauseRx += 10
	return f.step()
}

func cfg() WatchdogConfig {
	return WatchdogConfig{Enabled: true, Poll: 100 * time.Millisecond, Detection: 300 * time.Millisecond,
		Restoration: 500 * time.Millisecond, Action: model.ActionDrop, Limit: 3, Window: 10 * time.Second}
}

func kinds(ev []Event) string {
	s := ""
	for _, e := range ev {
		s += string(e.Kind) + " "
	}
	return s
}

// TestDetectAfterDetectionTime: a queue that stays XOFF is detected at
// the poll where the run has lasted the detection time, not before; only
// the stuck priority is dropped, PFC is off on the whole interface.
func TestDetectAfterDetectionTime(t *testing.T) {
	f := newFeed(t, cfg())
	f.step() // running
	f.c.XOFFOnsets++
	for i := 0; i < 3; i++ { // run starts at the first paused poll; +100, +200 ms
		if ev := f.stuck(); len(ev) != 0 {
			t.Fatalf("poll %d: early %s", i, kinds(ev))
		}
	}
	ev := f.stuck() // +300 ms
	if len(ev) != 1 || ev[0].Kind != EvDetected || ev[0].Prio != 3 || f.now.Sub(ev[0].Since) != 300*time.Millisecond {
		t.Fatalf("events %+v", ev)
	}
	o := f.w.Overrides()["e0"]
	if !o.PFCOff || o.Drop != model.PriosOf(3) {
		t.Fatalf("override %+v, want PFC off and priority 3 dropped", o)
	}
}

// TestResumeResetsTimer: XOFF runs interrupted by a resume (a new onset,
// or an unpaused poll) never add up: an incast is not a deadlock.
func TestResumeResetsTimer(t *testing.T) {
	f := newFeed(t, cfg())
	for i := 0; i < 50; i++ {
		if i%3 == 2 {
			f.c.XOFFOnsets++ // resumed and paused again between polls
		}
		if ev := f.stuck(); len(ev) != 0 {
			t.Fatalf("poll %d: %s", i, kinds(ev))
		}
	}
	f.c.Paused = false
	f.step()
	for i := 0; i < 50; i++ {
		if i%3 == 2 {
			f.c.Paused = false
			f.step()
			continue
		}
		if ev := f.stuck(); len(ev) != 0 {
			t.Fatalf("poll %d: %s", i, kinds(ev))
		}
	}
	// Paused but no PAUSE frames arriving: not a storm either.
	f.c.Paused = false
	f.step()
	f.c.Paused = true
	for i := 0; i < 10; i++ {
		if ev := f.step(); len(ev) != 0 {
			t.Fatalf("no PAUSE frames, poll %d: %s", i, kinds(ev))
		}
	}
}

// TestUnknownPauseState: a backend that cannot tell XOFF never triggers.
func TestUnknownPauseState(t *testing.T) {
	f := newFeed(t, cfg())
	for i := 0; i < 20; i++ {
		f.c.PauseRx += 10
		if ev := f.step(); len(ev) != 0 {
			t.Fatalf("%s", kinds(ev))
		}
	}
}

// TestLimitWindow: deadlocks further apart than the window never reach
// the limit; three within it do, and only restore ends it.
func TestLimitWindow(t *testing.T) {
	c := cfg()
	c.Window = 2 * time.Second
	f := newFeed(t, c)
	deadlock := func() string {
		f.c.XOFFOnsets++
		var all string
		for i := 0; i < 4; i++ {
			all += kinds(f.stuck())
		}
		return all
	}
	recover := func() {
		f.c.Paused = false
		for i := 0; i < 5; i++ {
			f.step()
		}
	}
	for i := 0; i < 5; i++ { // one deadlock every 3 s: never 3 within 2 s
		if got := deadlock(); got != "detected " {
			t.Fatalf("deadlock %d: %q", i, got)
		}
		recover()
		for j := 0; j < 20; j++ {
			f.step()
		}
	}
	deadlock()
	recover()
	deadlock()
	recover()
	if got := deadlock(); got != "detected limit " {
		t.Fatalf("third in the window: %q", got)
	}
	for i := 0; i < 100; i++ {
		f.c.Paused = i%2 == 0
		if ev := f.stuck(); len(ev) != 0 {
			t.Fatalf("limited but %s", kinds(ev))
		}
		if !f.w.Overrides()["e0"].PFCOff {
			t.Fatal("PFC back without restore")
		}
	}
	if _, err := f.w.Restore(f.now, "e9"); err == nil {
		t.Error("restore of an unknown interface accepted")
	}
	if ok, _ := f.w.Restore(f.now, "e0"); !ok || f.w.Overrides()["e0"].PFCOff {
		t.Fatal("restore did not bring PFC back")
	}
}

// TestDisabled: detection off means nothing happens.
func TestDisabled(t *testing.T) {
	c := cfg()
	c.Enabled = false
	f := newFeed(t, c)
	for i := 0; i < 20; i++ {
		if ev := f.stuck(); len(ev) != 0 {
			t.Fatal(kinds(ev))
		}
	}
}
