package ipcc

import (
	"container/list"
	"net/netip"
	"time"
)

// routeCache remembers the egress interface of the destinations IPCC saw
// (a netlink RouteGet each otherwise). Destinations are whatever hosts
// put in their packets, so the cache is bounded: at most max entries,
// the least recently used leaving first, and an entry is looked up again
// once it is ttl old (a route that moved) and dropped once it has not
// been used for ttl (sweep, every poll).
type routeCache struct {
	max    int
	ttl    time.Duration
	lookup func(netip.Addr) string // "" when there is no route
	m      map[netip.Addr]*list.Element
	lru    list.List // of *routeEntry, most recently used first
	stats  RouteStats
}

type routeEntry struct {
	dst   netip.Addr
	iface string
	at    time.Time // when looked up
}

// RouteStats are the route cache's counters.
type RouteStats struct {
	Entries int
	Lookups uint64 // netlink lookups (misses and refreshes)
	Hits    uint64
	Evicted uint64 // dropped for room (the cache was full)
	Expired uint64 // dropped unused for ttl
}

func newRouteCache(max int, ttl time.Duration, lookup func(netip.Addr) string) *routeCache {
	c := &routeCache{max: max, ttl: ttl, lookup: lookup, m: map[netip.Addr]*list.Element{}}
	c.lru.Init()
	return c
}

// get returns dst's egress interface (false: no route).
func (c *routeCache) get(dst netip.Addr, now time.Time) (string, bool) {
	if el, ok := c.m[dst]; ok {
		e := el.Value.(*routeEntry)
		if now.Sub(e.at) >= c.ttl {
			c.stats.Lookups++
			e.iface, e.at = c.lookup(dst), now
		} else {
			c.stats.Hits++
		}
		c.lru.MoveToFront(el)
		return e.iface, e.iface != ""
	}
	c.stats.Lookups++
	e := &routeEntry{dst: dst, iface: c.lookup(dst), at: now}
	c.m[dst] = c.lru.PushFront(e)
	for len(c.m) > c.max {
		c.remove(c.lru.Back())
		c.stats.Evicted++
	}
	return e.iface, e.iface != ""
}

// sweep drops, from the least recently used end, the entries looked up
// ttl ago or more. An entry is looked up again when it is used ttl after
// its lookup, so its lookup is never more than ttl older than its last
// use: every entry unused for ttl is swept (they form the list's tail),
// and one used since is at worst looked up again sooner.
func (c *routeCache) sweep(now time.Time) {
	for el := c.lru.Back(); el != nil && now.Sub(el.Value.(*routeEntry).at) >= c.ttl; el = c.lru.Back() {
		c.remove(el)
		c.stats.Expired++
	}
}

func (c *routeCache) remove(el *list.Element) {
	delete(c.m, el.Value.(*routeEntry).dst)
	c.lru.Remove(el)
}

func (c *routeCache) Stats() RouteStats {
	s := c.stats
	s.Entries = len(c.m)
	return s
}
