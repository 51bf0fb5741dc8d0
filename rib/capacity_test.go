package rib

import (
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/spf"
)

// clocked is a manager on a clock the test moves, driven step by step
// (takeMail, runDue, releaseDue as Run calls them), without a kernel.
type clocked struct {
	t   *testing.T
	m   *Manager
	now time.Time
}

// newClocked starts with vee(25, 40) computed at t0, the clock's start.
func newClocked(t *testing.T) (*clocked, time.Time) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clocked{t: t, now: t0}
	c.m = New(Config{Now: func() time.Time { return c.now }, Log: slog.New(slog.DiscardHandler)})
	c.m.Submit(vee(25, 40, true), "first")
	c.m.takeMail()
	c.at(t0, 0)
	return c, t0
}

// at moves the clock to start+d and runs what is due, as Run does.
func (c *clocked) at(start time.Time, d time.Duration) {
	c.now = start.Add(d)
	c.m.runDue()
	c.m.releaseDue(c.now)
}

// shareB is the share of S's route to 10.9.0.0/24 through B, 0 without one.
func (c *clocked) shareB() float64 {
	c.t.Helper()
	r, ok := c.m.Snapshot().Lookup("10.9.0.0/24")
	if !ok {
		c.t.Fatal("no route to 10.9.0.0/24")
	}
	for _, h := range r.NextHops {
		if h.NeighborName == "B" {
			return h.Share
		}
	}
	return 0
}

// vee's weights by hand (FARE: per first hop min(S–X, X–D), X–D = 100G):
// through A min(25,100) = 25, through B min(bwB,100) = bwB; B's share is
// bwB / (25 + bwB): 40G → 40/65, 100G → 100/125.
var shareOfB = map[float32]float64{40: 40.0 / 65, 100: 100.0 / 125}

func (c *clocked) wantShareB(bwB float32, what string) {
	c.t.Helper()
	if got := c.shareB(); math.Abs(got-shareOfB[bwB]) > 1e-6 {
		c.t.Fatalf("%s: B's share %.4f, want %.4f (B at %vG)", what, got, shareOfB[bwB], bwB)
	}
}

func (c *clocked) lastLog() spf.LogEntry {
	log := c.m.Snapshot().Log
	return log[len(log)-1]
}

// A pure bandwidth change is weighed at once on the route-only path while
// the topology back-off is in LONG_WAIT, and leaves the back-off alone:
// no computation armed, LONG_WAIT and its holddown as they were.
func TestCapacityChangeInLongWait(t *testing.T) {
	c, t0 := newClocked(t)
	c.wantShareB(40, "first computation")
	// Topology churn: B's link goes and comes back. The first event is
	// computed at once (QUIET); after TIME_TO_LEARN (500 ms) the machine
	// is in LONG_WAIT, and each later event waits LONG_SPF_DELAY (5 s).
	c.now = t0.Add(600 * time.Millisecond)
	c.m.Submit(vee(25, 40, false), "S–B down")
	c.m.takeMail()
	c.at(t0, 5600*time.Millisecond)
	c.now = t0.Add(5700 * time.Millisecond)
	c.m.Submit(vee(25, 40, true), "S–B up")
	c.m.takeMail()
	if due := c.m.protoSet["isis"].due; !due.Equal(t0.Add(10700 * time.Millisecond)) {
		t.Fatalf("S–B up due at %v, want LONG_WAIT's 5 s later", due.Sub(t0))
	}
	c.at(t0, 10700*time.Millisecond)
	c.wantShareB(40, "S–B back")
	before := c.m.Delays()["isis"]
	if before.State != spf.LongWait {
		t.Fatalf("back-off %s, want LONG_WAIT", before.State)
	}

	c.now = t0.Add(11 * time.Second)
	c.m.Submit(vee(25, 100, true), "S–B to 100G")
	c.m.takeMail() // no runDue: it must not need the SPF timer
	c.wantShareB(100, "bandwidth change in LONG_WAIT")
	e := c.lastLog()
	if e.Full || !e.Capacity || !strings.Contains(e.Reason, "route-only: bandwidth change on S→B") || e.Trigger != "S–B to 100G" {
		t.Fatalf("log entry %+v", e)
	}
	after := c.m.Delays()["isis"]
	if !c.m.protoSet["isis"].due.IsZero() || after.State != spf.LongWait || !after.HolddownAt.Equal(before.HolddownAt) {
		t.Fatalf("the back-off moved: before %+v, after %+v", before, after)
	}
	// A topology change still waits for the back-off.
	c.m.Submit(vee(25, 100, false), "S–B down again")
	c.m.takeMail()
	if due := c.m.protoSet["isis"].due; !due.Equal(c.now.Add(5 * time.Second)) {
		t.Fatalf("topology change due in %v, want 5 s", due.Sub(c.now))
	}
}

// bws alternates B's bandwidth from vee(25, 40)'s: 100G, 40G, 100G, ...
func bws(i int) float32 {
	if i%2 == 1 {
		return 100
	}
	return 40
}

// Changes 1 s apart are never held: ten of them, each weighed at once.
func TestDampingSpacedChanges(t *testing.T) {
	c, t0 := newClocked(t)
	for i := 1; i <= 10; i++ {
		c.now = t0.Add(time.Duration(i) * time.Second)
		c.m.Submit(vee(25, bws(i), true), "change")
		c.m.takeMail()
		c.wantShareB(bws(i), "spaced change")
		if e := c.lastLog(); !e.Capacity || strings.Contains(e.Reason, "damped") {
			t.Fatalf("change %d: %+v", i, e)
		}
		if !c.m.nextRelease().IsZero() {
			t.Fatalf("change %d held", i)
		}
	}
}

// A link flapping every 100 ms is held after its fifth change within 2 s
// (DefaultDampConfig): the hold is 1 s, then 2 s while it keeps flapping,
// and its newest bandwidth goes out when each hold ends. Once it has
// been quiet for the window, a change is weighed at once again.
func TestDampingFlappingLink(t *testing.T) {
	c, t0 := newClocked(t)
	flap := func(i int) {
		c.now = t0.Add(time.Duration(i) * 100 * time.Millisecond)
		c.m.Submit(vee(25, bws(i), true), "flap")
		c.m.takeMail()
		c.m.releaseDue(c.now)
	}
	for i := 1; i <= 4; i++ {
		flap(i)
		c.wantShareB(bws(i), "changes 1-4")
	}
	flap(5) // the fifth within 2 s: held 1 s, until t0+1.5 s
	c.wantShareB(bws(4), "fifth change held")
	if e := c.lastLog(); e.At.Equal(c.now) {
		t.Fatalf("a held change was computed: %+v", e)
	}
	if r := c.m.nextRelease(); !r.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Fatalf("release at %v, want t0+1.5s", r.Sub(t0))
	}
	for i := 6; i <= 13; i++ { // still flapping, held
		flap(i)
		c.wantShareB(bws(4), "held while flapping")
	}
	c.at(t0, 1500*time.Millisecond) // the hold ends: the newest (13th) goes out
	c.wantShareB(bws(13), "hold ended")
	if e := c.lastLog(); !e.Capacity || !strings.Contains(e.Reason, "damped bandwidth applied on B→S, S→B") {
		t.Fatalf("release: %+v", e)
	}
	flap(16) // still flapping: the next hold is twice as long
	c.wantShareB(bws(13), "second hold")
	if r := c.m.nextRelease(); !r.Equal(t0.Add(3600 * time.Millisecond)) {
		t.Fatalf("second release at %v, want t0+3.6s (2 s hold)", r.Sub(t0))
	}
	c.at(t0, 3600*time.Millisecond)
	c.wantShareB(bws(16), "second hold ended")
	// Quiet for more than the window: a change goes out at once.
	flap(61)
	c.wantShareB(bws(61), "after a quiet spell")
	if !c.m.nextRelease().IsZero() {
		t.Fatal("held after a quiet spell")
	}
}
