package rib

import (
	"testing"
	"time"

	"github.com/fared/fared/fib"
)

// slowFIB is an Installer whose Sync takes d on the manager's clock.
type slowFIB struct {
	recorder
	now *time.Time
	d   time.Duration
}

func (s *slowFIB) Sync(routes []fib.Route) (fib.Stats, error) {
	*s.now = s.now.Add(s.d)
	return s.recorder.Sync(routes)
}

// TestLogEntrySplitsInstall: the SPF log entry's Install is the kernel
// write alone, Compute the rest, Duration their sum (docs/api.md); on a
// clock that only the kernel write advances, Install is that write's time
// and Compute 0.
func TestLogEntrySplitsInstall(t *testing.T) {
	now := time.Unix(1000, 0)
	f := &slowFIB{now: &now, d: 7 * time.Millisecond}
	m := New(Config{FIB: f, Now: func() time.Time { return now }})
	g := square(2, false)
	m.levels[topoKey(g)] = &levelState{g: g}
	m.compute(nil, []string{"test"})
	log := m.Snapshot().Log
	if len(log) != 1 {
		t.Fatalf("%d log entries", len(log))
	}
	e := log[0]
	if e.Install != 7*time.Millisecond || e.Compute != 0 || e.Duration() != e.Compute+e.Install {
		t.Fatalf("duration %v = compute %v + install %v, want 0 + 7ms", e.Duration(), e.Compute, e.Install)
	}
	if _, n := f.last(); n != 1 {
		t.Fatalf("%d kernel writes", n)
	}
}
