package bfd

import (
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/bfd/packet"
)

// Failed is true only for a wanted session that went from Up to Down
// without the peer saying AdminDown (RFC 5882 §3.2); Sync asks the
// manager only for differences.
func TestSessionsFailed(t *testing.T) {
	m := New(Options{}) // not run: requests stay queued
	s := NewSessions(m, "test", nil, func(Event) {})
	k := Key{IfIndex: 3, Peer: netip.MustParseAddr("10.0.0.2")}
	w := Want{Local: netip.MustParseAddr("10.0.0.1"), Iface: "e0", Params: Params{Interval: 50 * time.Millisecond, Multiplier: 3}}
	s.Sync(map[Key]Want{k: w})
	s.Sync(map[Key]Want{k: w})
	if n := len(m.ev); n != 1 {
		t.Fatalf("an unchanged want sent %d requests, want 1", n)
	}
	ev := func(st, remote packet.State) Event { return Event{Key: k, State: st, Remote: remote} }
	if s.Failed(ev(packet.Down, packet.Down)) {
		t.Fatal("Down before Up counted as a failure")
	}
	s.Failed(ev(packet.Up, packet.Up))
	if s.Failed(ev(packet.Down, packet.AdminDown)) {
		t.Fatal("the peer's AdminDown counted as a failure")
	}
	s.Failed(ev(packet.Up, packet.Up))
	if !s.Failed(ev(packet.Down, packet.Down)) {
		t.Fatal("Up to Down not a failure")
	}
	if s.Failed(ev(packet.Down, packet.Down)) {
		t.Fatal("a second Down counted again")
	}
	s.Failed(ev(packet.Up, packet.Up))
	s.Sync(nil)
	if s.Failed(ev(packet.Down, packet.Down)) {
		t.Fatal("a session no longer wanted counted")
	}
}
