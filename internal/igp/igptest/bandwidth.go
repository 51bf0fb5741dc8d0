package igptest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/internal/netif"
)

// Overridable is a running instance whose interface e0 is configured by
// YAML(bandwidth), for BandwidthOverrideAcrossReloads.
type Overridable struct {
	YAML   func(bw string) string
	Reload func(yaml string) daemon.Change
	Set    func(ctx context.Context, iface string, bw config.Bandwidth) error
	BW     func() (float32, error) // e0's bandwidth in force, bytes/s
	Log    *LogBuf                 // the instance's log
}

// BandwidthOverrideAcrossReloads: a run-time override of e0 (started
// with 10G) is logged and in force, survives a reload that leaves the
// configured bandwidth alone (reported "kept"), can be cleared, and is
// dropped by a reload that changes the configured bandwidth; an unknown
// interface is not found.
func BandwidthOverrideAcrossReloads(t *testing.T, o Overridable) {
	t.Helper()
	ctx := context.Background()
	bw := func() float32 {
		b, err := o.BW()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	Poll(t, 5*time.Second, "up", func() error {
		if b := bw(); b != 1.25e9 {
			return fmt.Errorf("bandwidth %v", b)
		}
		return nil
	})
	if err := o.Set(ctx, "e0", 40e9); err != nil || bw() != 5e9 || o.Log.Count("bandwidth override set") != 1 {
		t.Fatalf("set: %v, bandwidth %v, logged %d", err, bw(), o.Log.Count("bandwidth override set"))
	}
	if err := HasLine(o.Reload(o.YAML("10G")), "interface e0: bandwidth override 40G kept"); err != nil || bw() != 5e9 {
		t.Fatalf("override lost on an unchanged reload: %v, bandwidth %v", err, bw())
	}
	if err := o.Set(ctx, "e0", 0); err != nil || bw() != 1.25e9 || o.Log.Count("bandwidth override cleared") != 1 {
		t.Fatalf("clear: %v, bandwidth %v, logged %d", err, bw(), o.Log.Count("bandwidth override cleared"))
	}
	_ = o.Set(ctx, "e0", 40e9)
	if err := HasLine(o.Reload(o.YAML("20G")), "interface e0: bandwidth 10G -> 20G (run-time override 40G dropped"); err != nil || bw() != 2.5e9 {
		t.Fatalf("configured bandwidth not in force: %v, bandwidth %v", err, bw())
	}
	if err := o.Set(ctx, "nope", 1e9); !errors.As(err, new(igp.ErrNotFound)) {
		t.Fatalf("unknown interface: %v", err)
	}
}

// SpeedChange starts an instance whose interface e0 has no configured
// bandwidth, for SpeedChangeByLinkEvent, with a kernel whose e0 reports
// speed() bits/s, on a clock that never moves. It returns the instance's
// LinkEvent and e0's bandwidth in force (bytes/s: FirstBandwidth).
type SpeedChange func(speed func() float64, now func() time.Time) (linkEvent func(netif.Event), bw func() (float32, error))

// FirstBandwidth reads the bandwidth in force (bytes/s) of the first
// interface an instance's view lists.
func FirstBandwidth[T any](list func(context.Context) ([]T, error), bw func(T) float32) func() (float32, error) {
	return func() (float32, error) {
		ifs, err := list(context.Background())
		if err != nil || len(ifs) == 0 {
			return 0, fmt.Errorf("interfaces %v: %v", ifs, err)
		}
		return bw(ifs[0]), nil
	}
}

// SpeedChangeByLinkEvent: e0's speed changes (a bond lost a member); the
// link event the monitor makes of the kernel's RTM_NEWLINK
// (netif.LinkChanged) has the instance re-read it, and the new speed is
// the bandwidth in force (and advertised: the same path as an override).
// The clock never moves, so the one-second interface poll never runs:
// only the event can have done it.
func SpeedChangeByLinkEvent(t *testing.T, start SpeedChange) {
	t.Helper()
	var mu sync.Mutex
	speed := 10e9
	frozen := time.Now()
	linkEvent, bw := start(func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return speed
	}, func() time.Time { return frozen })
	want := func(b float32) func() error {
		return func() error {
			got, err := bw()
			if err != nil {
				return err
			}
			if got != b {
				return fmt.Errorf("bandwidth %v bytes/s, want %v", got, b)
			}
			return nil
		}
	}
	Poll(t, 5*time.Second, "e0 at its speed, 10G", want(1.25e9))
	mu.Lock()
	speed = 20e9 // a bond of two 10G members that got a third back, say
	mu.Unlock()
	linkEvent(netif.Event{Kind: netif.LinkChanged, Name: "e0", IfIndex: 12})
	Poll(t, 5*time.Second, "e0 at its new speed, 20G, after the link event", want(2.5e9))
}
