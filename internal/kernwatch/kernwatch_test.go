package kernwatch

import (
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/fib"
)

// Reached replays notifications: the table is reached when every wanted
// prefix resolves to its next-hop set, and only if it stays so.
func TestReached(t *testing.T) {
	a, b := netip.MustParseAddr("100.64.0.1"), netip.MustParseAddr("100.64.0.3")
	p, q := netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.0.0.2/32")
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	nh := func(ms int, id uint32, gw netip.Addr, ifi int) Event {
		return Event{At: at(ms), Nexthop: &fib.KernelNexthop{ID: id, Gateway: gw, IfIndex: ifi}}
	}
	grp := func(ms int, id uint32, members ...uint32) Event {
		n := &fib.KernelNexthop{ID: id}
		for _, m := range members {
			n.Group = append(n.Group, fib.GroupMember{ID: m, Weight: 1})
		}
		return Event{At: at(ms), Nexthop: n}
	}
	rt := func(ms int, pfx netip.Prefix, id uint32) Event {
		return Event{At: at(ms), Route: &fib.KernelRoute{Prefix: pfx, Protocol: ProtoISIS, Table: 254, NhID: id}}
	}
	w := &Watcher{names: map[int]string{7: "S0-1", 8: "S1-1"}}
	want := map[netip.Prefix]Hops{
		p: Sort(Hops{{b, "S1-1"}, {a, "S0-1"}}),
		q: {{a, "S0-1"}},
	}
	w.ev = []Event{
		nh(1, 1, a, 7), nh(2, 2, b, 8),
		grp(3, 3, 1), // first only one member
		rt(4, p, 3),
		rt(5, q, 1),     // q done, p not yet
		grp(6, 3, 1, 2), // p done: reached at 6
		{At: at(7), Route: &fib.KernelRoute{Prefix: netip.MustParsePrefix("10.9.9.9/32"), Protocol: 11, Table: 254}}, // another protocol's: ignored
	}
	if got, ok := w.Reached(want, t0); !ok || !got.Equal(at(6)) {
		t.Fatalf("reached %v %v, want at 6 ms", got, ok)
	}
	// A later change that breaks p and a repair: reached again at the repair.
	w.ev = append(w.ev, grp(10, 3, 2), grp(12, 3, 2, 1))
	if got, ok := w.Reached(want, t0); !ok || !got.Equal(at(12)) {
		t.Fatalf("reached %v %v, want at 12 ms", got, ok)
	}
	// A deletion at the end: not reached.
	w.ev = append(w.ev, Event{At: at(13), Del: true, Route: &fib.KernelRoute{Prefix: q, Protocol: ProtoISIS, Table: 254}})
	if _, ok := w.Reached(want, t0); ok {
		t.Fatal("reached although q was deleted")
	}
	if last, n := w.LastChange(at(10)); !last.Equal(at(13)) || n != 3 {
		t.Errorf("LastChange %v %d", last, n)
	}
}
