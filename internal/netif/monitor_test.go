package netif

import (
	"context"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/fared/fared/internal/testns"
	"github.com/vishvananda/netns"
)

func TestMonitor(t *testing.T) {
	n := testns.New(t, "nift")
	n.IP("link", "add", "v1", "type", "veth", "peer", "name", "v1p")
	n.IP("link", "set", "v1p", "up")
	n.IP("link", "set", "v1", "up")
	n.IP("addr", "add", "10.1.0.1/24", "dev", "v1")
	idx := n.Ifindex("v1")
	n.IP("link", "add", "v2", "type", "veth", "peer", "name", "v2p")
	idx2 := n.Ifindex("v2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := make(chan Event, 64)
	errc := make(chan error, 1)
	go func() { errc <- Monitor(ctx, n.Handle, ev) }()
	var seen []Event
	wait := func(match func(Event) bool) {
		t.Helper()
		for i, e := range seen {
			if match(e) {
				seen = seen[i+1:]
				return
			}
		}
		seen = nil
		tm := time.After(5 * time.Second)
		for {
			select {
			case e := <-ev:
				t.Logf("event %v #%d %s %v", e.Kind, e.IfIndex, e.Name, e.Addr)
				if match(e) {
					return
				}
				seen = append(seen, e)
			case err := <-errc:
				t.Fatalf("monitor ended: %v", err)
			case <-tm:
				t.Fatal("event not seen")
			}
		}
	}
	wait(func(e Event) bool { return e.Kind == LinkUp && e.IfIndex == idx && e.Initial })
	wait(func(e Event) bool { return e.Kind == AddrAdded && e.Addr == netip.MustParsePrefix("10.1.0.1/24") })
	n.IP("link", "set", "v1p", "down")
	wait(func(e Event) bool { return e.Kind == LinkDown && e.IfIndex == idx })
	n.IP("addr", "del", "10.1.0.1/24", "dev", "v1")
	wait(func(e Event) bool { return e.Kind == AddrRemoved && e.Addr == netip.MustParsePrefix("10.1.0.1/24") })
	n.IP("link", "set", "v1p", "up")
	wait(func(e Event) bool { return e.Kind == LinkUp && e.IfIndex == idx })
	// An RTM_NEWLINK that is no up/down transition (here an MTU; on a
	// bond, the speed after a member left) is reported for a re-read. v2
	// stays down, so nothing else of the kernel's makes one for it.
	n.IP("link", "set", "v2", "mtu", "1400")
	wait(func(e Event) bool { return e.Kind == LinkChanged && e.IfIndex == idx2 && e.Name == "v2" && !e.Initial })
	// A deleted link that was up is reported down, then gone.
	n.IP("link", "del", "v1")
	wait(func(e Event) bool { return e.Kind == LinkDown && e.IfIndex == idx && !e.Initial })
	wait(func(e Event) bool { return e.Kind == LinkGone && e.IfIndex == idx && e.Name == "v1" })
}

// The zero handle means the caller's own namespace (as in fared, which
// runs inside the namespace it routes for): Monitor must not take it for
// file descriptor 0.
func TestMonitorCurrentNamespace(t *testing.T) {
	n := testns.New(t, "nifc")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := make(chan Event, 64)
	errc := make(chan error, 1)
	go func() {
		// This goroutine's thread enters the test namespace and stays
		// locked: it dies with the goroutine, never reused elsewhere.
		runtime.LockOSThread()
		if err := netns.Set(n.Handle); err != nil {
			errc <- err
			return
		}
		errc <- Monitor(ctx, 0, ev)
	}()
	n.IP("link", "add", "c1", "type", "veth", "peer", "name", "c1p")
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Name == "c1" {
				return
			}
		case err := <-errc:
			t.Fatalf("monitor ended: %v", err)
		case <-deadline:
			t.Fatal("no event for c1")
		}
	}
}
