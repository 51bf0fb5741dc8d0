package inof

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/fared/fared/inof/fabric"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/internal/guard"
)

type nopNet struct{}

func (nopNet) Publish([]record.Record, []record.Key) error { return nil }

// TestSwitchLoopIsGuarded: a panic while the switch's loop handles an
// event is recovered through the module's guard: counted, and the loop
// goes on (it answers the next query).
func TestSwitchLoopIsGuarded(t *testing.T) {
	g := guard.New("inof-loop-test", slog.New(slog.DiscardHandler))
	base := guard.Count("inof-loop-test") // the counts are process-wide
	r := newSwitchRT(slog.New(slog.DiscardHandler), g, &Config{Role: RoleSwitch}, netip.MustParseAddr("10.255.0.3"), "leaf1", nil)
	r.sw = fabric.New(fabric.Config{RouterID: r.rid}, slog.New(slog.DiscardHandler), r, nopNet{}, 1, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.lp.Run(ctx, 50*time.Millisecond, time.Now, r)
	// A reconfiguration without a configuration: a bug's shape.
	r.lp.Post(reconfEv{cfg: nil, reply: make(chan []string, 1)})
	// Queries travel on their own channel, so wait for the event's panic
	// to be counted before asking whether the loop still answers.
	for deadline := time.Now().Add(5 * time.Second); guard.Count("inof-loop-test") == base; {
		if time.Now().After(deadline) {
			t.Fatal("the reconfiguration's panic was never counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
	defer qcancel()
	var n int
	if err := r.lp.Query(qctx, func() { n = r.sw.Status().Locals }); err != nil {
		t.Fatalf("the loop stopped answering: %v", err)
	}
	if got := guard.Count("inof-loop-test") - base; got != 1 || n != 0 {
		t.Fatalf("panics %d", got)
	}
}

// TestReaderIsGuarded: a panic in a port's reader is recovered, and the
// port is reported failed (its owner opens it again).
func TestReaderIsGuarded(t *testing.T) {
	g := guard.New("inof-reader-test", slog.New(slog.DiscardHandler))
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	p := &port{name: "p1", mac: net.HardwareAddr{2, 0, 0, 0, 0, 1}, f: rd}
	failed := make(chan error, 1)
	go p.read(g, func([]byte) { panic("decode bug") }, func(err error) { failed <- err })
	wr.Write(make([]byte, 60))
	select {
	case err := <-failed:
		if !errors.Is(err, errReaderPanic) || guard.Count("inof-reader-test") != 1 {
			t.Fatalf("failed with %v, panics %d", err, guard.Count("inof-reader-test"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader's panic was not reported")
	}
}

// Send implements fabric.Tx for the loop test (no ports).
var _ fabric.Tx = (*switchRT)(nil)
