package fib

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestInterfaces: the ingress set of each kind of route, by hand from the
// routes below, with nexthop_compat_mode on and off (off: a route with a
// nexthop object carries only its id).
func TestInterfaces(t *testing.T) {
	for _, compat := range []string{"0", "1"} {
		t.Run("compat="+compat, func(t *testing.T) {
			n := newNS(t)
			n.sysctl("net.ipv4.nexthop_compat_mode", compat)
			ls := n.veths(3)
			v1, v2, v3 := ls[0].idx, ls[1].idx, ls[2].idx
			n.ip("route", "add", "10.99.1.0/24", "via", "10.1.0.2", "dev", "v1")
			n.ip("route", "add", "10.99.2.0/24", "nexthop", "via", "10.1.0.2", "dev", "v1", "nexthop", "via", "10.2.0.2", "dev", "v2")
			n.ip("nexthop", "add", "id", "1", "via", "10.2.0.2", "dev", "v2")
			n.ip("nexthop", "add", "id", "2", "via", "10.3.0.2", "dev", "v3")
			n.ip("nexthop", "add", "id", "10", "group", "1/2")
			n.ip("route", "add", "10.99.3.0/24", "nhid", "10")
			n.ip("route", "add", "10.99.5.0/24", "nhid", "2")
			n.ip("route", "add", "blackhole", "10.99.4.0/24")
			n.ip("addr", "add", "10.255.0.7/32", "dev", "lo")

			a := netip.MustParseAddr
			addrs := []netip.Addr{a("10.99.1.9"), a("10.99.2.9"), a("10.99.3.9"), a("10.99.5.9"), a("10.1.0.5"),
				a("10.1.0.1"), a("10.255.0.7"), a("10.99.4.9"), a("192.0.2.1")}
			got, err := Interfaces(n.h, addrs)
			if err != nil {
				t.Fatal(err)
			}
			want := map[netip.Addr][]int{
				a("10.99.1.9"):  {v1},
				a("10.99.2.9"):  {v1, v2},
				a("10.99.3.9"):  {v2, v3},
				a("10.99.5.9"):  {v3},
				a("10.1.0.5"):   {v1},    // connected
				a("10.1.0.1"):   {1, v1}, // our own address: lo, and where it is
				a("10.255.0.7"): {1},
				// blackhole and no route: absent
			}
			slices.Sort(want[a("10.99.2.9")])
			slices.Sort(want[a("10.99.3.9")])
			if len(got) != len(want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			for k, w := range want {
				if !slices.Equal(got[k], w) {
					t.Errorf("%s: got %v, want %v", k, got[k], w)
				}
			}
		})
	}
}

// TestWatchRoutes: a route added in the namespace is reported.
func TestWatchRoutes(t *testing.T) {
	n := newNS(t)
	n.veths(1)
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- WatchRoutes(ctx, n.h, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
	}()
	// The subscription is open once the watcher reports anything; keep
	// adding routes until it does (a route added before it subscribed is
	// not seen).
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		n.ip("route", "add", netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 98, byte(i), 0}), 24).String(), "via", "10.1.0.2", "dev", "v1")
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatal("no route change reported")
		}
		break
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WatchRoutes did not return after its context ended")
	}
}
