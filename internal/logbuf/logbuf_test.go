package logbuf

import (
	"sync"
	"testing"
)

// TestConcurrent: loggers on other goroutines and the reader do not race
// (go test -race), and every line arrives.
func TestConcurrent(t *testing.T) {
	buf, log := New()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				log.Info("tick", "k", 1)
				_ = buf.String()
			}
		})
	}
	wg.Wait()
	if n := buf.Count("msg=tick"); n != 200 {
		t.Fatalf("%d lines, want 200:\n%s", n, buf.String())
	}
}
