package transport

import (
	"testing"
	"time"
)

// TestBDPWindow: ⌈bps/8 × RTT / MTU⌉, computed by hand, within the floor
// and the ceiling.
func TestBDPWindow(t *testing.T) {
	for _, c := range []struct {
		bps  uint64
		rtt  time.Duration
		mtu  int
		want int
	}{
		// 10 Gb/s × 25 µs = 31250 B; / 1024 = 30.5 → 31.
		{10e9, 25 * time.Microsecond, 1024, 31},
		// 8,192,000 b/s × 10 ms = 10240 B = exactly 10 packets of 1024.
		{8_192_000, 10 * time.Millisecond, 1024, 10},
		// 100 Gb/s × 10 µs = 125000 B; / 4096 = 30.5 → 31.
		{100e9, 10 * time.Microsecond, 4096, 31},
		// 1 Gb/s × 10 µs = 1250 B: 2 packets, raised to the floor.
		{1e9, 10 * time.Microsecond, 1024, MinWindow},
		// 10 Gb/s × 1 ms = 1.25 MB: 1221 packets, cut to the ceiling.
		{10e9, time.Millisecond, 1024, MaxWindow},
		// 400 Gb/s × 1 s: no overflow, the ceiling.
		{400e9, time.Second, 1024, MaxWindow},
	} {
		if got := BDPWindow(c.bps, c.rtt, c.mtu); got != c.want {
			t.Errorf("BDPWindow(%d b/s, %v, %d B) = %d, want %d", c.bps, c.rtt, c.mtu, got, c.want)
		}
	}
}

// TestCapDefaultsAndOverride: with nothing configured the cap is the
// default path's BDP (10 Gb/s, 25 µs, 1 KB: 31); the tree's bandwidth and
// the payload change it; Window overrides it.
func TestCapDefaultsAndOverride(t *testing.T) {
	if got := (Config{}).Cap(); got != 31 {
		t.Errorf("default cap %d, want 31", got)
	}
	// 40 Gb/s × 25 µs = 125000 B; / 2048 = 61.04 → 62.
	if got := (Config{BandwidthBps: 40e9, MTU: 2048}).Cap(); got != 62 {
		t.Errorf("40G, 2 KB: cap %d, want 62", got)
	}
	if got := (Config{Window: 7, BandwidthBps: 40e9}).Cap(); got != 7 {
		t.Errorf("Window 7: cap %d", got)
	}
}

// TestBDPFCCapInFlight: a sender sized by BDP-FC (10 Gb/s, 25 µs, 1 KB:
// 31) over a lossless link keeps at most 31 packets in flight, and
// reaches 31 (the cap binds, it is not merely above the need).
func TestBDPFCCapInFlight(t *testing.T) {
	l := newLink(t, 300, Config{BandwidthBps: 10e9, RTT: 25 * time.Microsecond, MTU: 1024})
	if l.s.Window() != 31 {
		t.Fatalf("window %d", l.s.Window())
	}
	l.run(time.Second)
	if !l.s.Done() || l.maxWin != 31 {
		t.Fatalf("done %v, max in flight %d, want 31", l.s.Done(), l.maxWin)
	}
}
