// Package logbuf is where a test collects the log lines of the code under
// test: a buffer the code's goroutines write (a slog handler over it)
// while the test reads it, so a check like "logged once" or "warned
// about X" is race-free. The lab keeps its command logs and processes'
// stderr in one too (interop.LockedBuffer).
package logbuf

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Buffer is a goroutine-safe log sink. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// New is a Buffer and a text logger writing to it.
func New() (*Buffer, *slog.Logger) {
	l := &Buffer{}
	return l, slog.New(slog.NewTextHandler(l, nil))
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count is how many times s was logged.
func (l *Buffer) Count(s string) int {
	return strings.Count(l.String(), s)
}
