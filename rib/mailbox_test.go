package rib

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/spf"
)

// pollRoutes waits until cond holds for the latest snapshot.
func pollRoutes(t *testing.T, m *Manager, what string, cond func(*Snapshot) bool) *Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := m.Snapshot()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: routes %+v", what, s.Routes)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// One topology churning thousands of times must not push out another
// topology's only pending graph: the mailbox keeps the newest graph per
// topology. All submissions happen before Run takes any, which is the
// worst case for a shared queue (a 64-slot queue that drops the oldest
// loses level 1's graph here every time).
func TestMailboxKeepsEveryTopology(t *testing.T) {
	m := New(Config{FIB: &recorder{}})
	m.Submit(square(1, false), "level 1 once")
	for i := 0; i < 5000; i++ {
		g := square(2, false)
		m.Submit(g, "level 2 churn")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	pollRoutes(t, m, "level 1's route", func(s *Snapshot) bool {
		return len(s.Routes) == 1 && s.Routes[0].Level == 1
	})
	s := m.Snapshot()
	if len(s.Graphs) != 2 || s.Graphs[0].Level != 1 || s.Graphs[1].Level != 2 {
		t.Fatalf("graphs %d", len(s.Graphs))
	}
}

// New SPF timers reach the protocol's back-off machine: after SetRouting
// the next event is scheduled with the new initial delay, and ECMP-only
// switches the protocol's routes to equal weights.
func TestSetRoutingTimers(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	m := New(Config{Now: clock, Routing: map[string]Routing{"isis": {Delay: spf.DelayConfig{InitialDelay: 3 * time.Second}}}})
	m.Submit(square(2, false), "first")
	m.takeMail()
	if got := m.protoSet["isis"].due; !got.Equal(now.Add(3 * time.Second)) {
		t.Fatalf("first event due %v, want now+3s", got.Sub(now))
	}
	m.runDue() // nothing yet
	now = now.Add(3 * time.Second)
	m.runDue()
	if len(m.Snapshot().Routes) != 1 {
		t.Fatal("no route after the initial delay")
	}
	// Reload with a 10 ms initial delay: the machine restarts in QUIET
	// with the new timers, so the next event runs after 10 ms.
	m.SetRouting("isis", Routing{Delay: spf.DelayConfig{InitialDelay: 10 * time.Millisecond}})
	m.Submit(square(2, true), "second")
	m.takeMail()
	if got := m.protoSet["isis"].due; !got.Equal(now.Add(10 * time.Millisecond)) {
		t.Fatalf("event after reload due %v, want now+10ms", got.Sub(now))
	}
	if d := m.Routing("isis").Delay.InitialDelay; d != 10*time.Millisecond {
		t.Fatalf("Routing(isis) initial delay %v", d)
	}
}

// ECMP-only set by reload recomputes that protocol's routes at once.
func TestSetRoutingECMPOnly(t *testing.T) {
	m := New(Config{FIB: &recorder{}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	m.Submit(square(2, false), "t")
	pollRoutes(t, m, "FARE route", func(s *Snapshot) bool { return len(s.Routes) == 1 && s.Routes[0].Mode != "ecmp" })
	m.SetRouting("isis", Routing{ECMPOnly: true})
	s := pollRoutes(t, m, "ECMP route", func(s *Snapshot) bool { return len(s.Routes) == 1 && s.Routes[0].Mode == "ecmp" })
	for _, h := range s.Routes[0].NextHops {
		if h.KernelWeight != s.Routes[0].NextHops[0].KernelWeight {
			t.Fatalf("unequal ECMP weights %+v", s.Routes[0].NextHops)
		}
	}
}

// A subscriber sees the current snapshot at once and every newer one; a
// dropped protocol's routes leave the table.
func TestSubscribeAndDrop(t *testing.T) {
	m := New(Config{FIB: &recorder{}})
	sub := m.Subscribe()
	defer sub.Close()
	if s := <-sub.C(); len(s.Routes) != 0 {
		t.Fatalf("initial snapshot %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	o := square(0, false)
	o.Protocol, o.Area = "ospf", "0.0.0.0"
	m.Submit(o, "ospf")
	m.Submit(square(2, false), "isis")
	wait := func(what string, cond func(*Snapshot) bool) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case s := <-sub.C():
				if cond(s) {
					return
				}
			case <-timeout:
				t.Fatalf("no snapshot with %s", what)
			}
		}
	}
	pfx := netip.MustParsePrefix("10.9.0.0/24")
	wait("the ospf route", func(s *Snapshot) bool {
		return len(s.Routes) == 1 && s.Routes[0].Prefix == pfx && s.Routes[0].Protocol == "ospf" && len(s.Graphs) == 2
	})
	m.Drop("ospf")
	wait("the isis route after ospf stopped", func(s *Snapshot) bool {
		return len(s.Routes) == 1 && s.Routes[0].Protocol == "isis" && len(s.Graphs) == 1
	})
}

// Delays is the back-off now, not as of the last computation: after the
// holddown the state is QUIET again although nothing was computed since.
func TestDelaysAreCurrent(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := New(Config{Now: func() time.Time { return now }})
	m.Submit(square(2, false), "t")
	m.takeMail()
	now = now.Add(time.Second)
	m.runDue()
	if st := m.Delays()["isis"].State; st != spf.ShortWait && st != spf.LongWait {
		t.Fatalf("after an event: %s", st)
	}
	now = now.Add(time.Minute) // past the holddown: QUIET
	if st := m.Delays()["isis"].State; st != spf.Quiet {
		t.Fatalf("a minute later: %s, want QUIET (the snapshot says %s)", st, m.Snapshot().Delays["isis"].State)
	}
}
