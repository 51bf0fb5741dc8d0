package igptest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"
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
