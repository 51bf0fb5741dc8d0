package ipcc

import (
	"net/netip"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func addr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

// fakeRoutes answers lookups from a table and counts them.
type fakeRoutes struct {
	iface map[netip.Addr]string
	asked map[netip.Addr]int
}

func (f *fakeRoutes) lookup(dst netip.Addr) string {
	f.asked[dst]++
	return f.iface[dst]
}

// TestRouteCacheBounded: a host sending to 100,000 destinations leaves
// at most the cap in the cache; the least recently used leave first.
func TestRouteCacheBounded(t *testing.T) {
	f := &fakeRoutes{iface: map[netip.Addr]string{}, asked: map[netip.Addr]int{}}
	c := newRouteCache(1000, time.Second, f.lookup)
	f.iface[addr(0)] = "eth0"
	for i := 0; i < 100_000; i++ {
		if i%100 == 0 {
			c.get(addr(0), t0) // a destination in steady use
		}
		c.get(addr(i+1), t0)
	}
	st := c.Stats()
	if st.Entries != 1000 || st.Evicted != 100_001-1000 {
		t.Fatalf("stats %+v: want 1000 entries, %d evicted", st, 100_001-1000)
	}
	if iface, ok := c.get(addr(0), t0); !ok || iface != "eth0" || f.asked[addr(0)] != 1 {
		t.Fatalf("the destination in use was evicted (%q %v, looked up %d times)", iface, ok, f.asked[addr(0)])
	}
	if _, ok := c.m[addr(1)]; ok {
		t.Error("the least recently used destination is still cached")
	}
	if _, ok := c.m[addr(100_000)]; !ok {
		t.Error("the most recent destination is not cached")
	}
}

// TestRouteCacheExpiry: an entry is looked up again once ttl old, and
// entries unused for ttl leave at the next sweep.
func TestRouteCacheExpiry(t *testing.T) {
	f := &fakeRoutes{iface: map[netip.Addr]string{addr(1): "eth1", addr(2): "eth2"}, asked: map[netip.Addr]int{}}
	c := newRouteCache(100, time.Second, f.lookup)
	for i := 1; i <= 10; i++ {
		c.get(addr(i), t0)
	}
	c.get(addr(1), t0.Add(500*time.Millisecond)) // a hit
	f.iface[addr(1)] = "eth9"                    // the route moves
	if iface, _ := c.get(addr(1), t0.Add(999*time.Millisecond)); iface != "eth1" || f.asked[addr(1)] != 1 {
		t.Fatalf("within ttl: %q after %d lookups", iface, f.asked[addr(1)])
	}
	if iface, _ := c.get(addr(1), t0.Add(1000*time.Millisecond)); iface != "eth9" || f.asked[addr(1)] != 2 {
		t.Fatalf("at ttl: %q after %d lookups, want the moved route", iface, f.asked[addr(1)])
	}
	c.get(addr(2), t0.Add(1200*time.Millisecond)) // refreshed too
	c.sweep(t0.Add(1500 * time.Millisecond))
	st := c.Stats()
	if st.Entries != 2 || st.Expired != 8 || st.Lookups != 12 || st.Hits != 2 {
		t.Fatalf("stats %+v: want 2 entries (the two in use), 8 expired, 12 lookups, 2 hits", st)
	}
	// No route is cached too (and said so), then expires like the rest.
	if _, ok := c.get(addr(50), t0.Add(1500*time.Millisecond)); ok {
		t.Fatal("a destination without a route has an interface")
	}
	c.sweep(t0.Add(10 * time.Second))
	if st := c.Stats(); st.Entries != 0 || st.Expired != 11 {
		t.Fatalf("after everything aged: %+v", st)
	}
}
