package spf

import (
	"sync"

	"github.com/fared/fared/api/wire"
)

// LogEntry records one SPF computation.
type LogEntry = wire.SPFLogEntry

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
