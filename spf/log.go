package spf

import (
	"sync"
	"time"
)

// LogEntry records one SPF computation. Its whole duration is Compute +
// Install.
type LogEntry struct {
	At      time.Time
	Trigger string
	// Full: the DAG was recomputed; otherwise only routes and FARE were
	// (a prefix or bandwidth change).
	Full bool
	// Reason says why the computation took its path: "topology", "first
	// computation", "prefixes or adjacencies", or the capacity change
	// ("bandwidth change on link l1→s1").
	Reason string
	// Capacity: a capacity change (bandwidths only) computed at once,
	// outside the RFC 8405 back-off; false for what the back-off
	// scheduled.
	Capacity bool
	// Compute is SPF, FARE, route building and next-hop resolution, and
	// the count of changed routes: everything but the kernel write.
	// Install is the kernel write (fib Sync), 0 while the start-up hold
	// keeps the kernel table.
	Compute, Install time.Duration
	Nodes            int
	RoutesChanged    int
}

// Duration is the whole computation.
func (e LogEntry) Duration() time.Duration { return e.Compute + e.Install }

// Kind names the computation: "full" or "route-only".
func (e LogEntry) Kind() string {
	if e.Full {
		return "full"
	}
	return "route-only"
}

// LogSize is the capacity of a Log.
const LogSize = 64

// Log is a ring buffer of the last LogSize SPF runs. The zero value is ready;
// it is safe for concurrent use.
type Log struct {
	mu   sync.Mutex
	ring [LogSize]LogEntry
	next int
	n    int
}

// Add appends e, dropping the oldest entry when full.
func (l *Log) Add(e LogEntry) {
	l.mu.Lock()
	l.ring[l.next] = e
	l.next = (l.next + 1) % LogSize
	if l.n < LogSize {
		l.n++
	}
	l.mu.Unlock()
}

// Entries returns a copy of the entries, oldest first.
func (l *Log) Entries() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LogEntry, l.n)
	start := (l.next - l.n + LogSize) % LogSize
	for i := 0; i < l.n; i++ {
		out[i] = l.ring[(start+i)%LogSize]
	}
	return out
}
