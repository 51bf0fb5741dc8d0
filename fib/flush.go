package fib

import (
	"fmt"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netns"
)

// Owned reports whether a kernel nexthop id is one fared allocates: ids
// in [IDBase, IDBase+IDCount) are fared's whatever protocol number they
// carry (isis when IS-IS runs, ospf for an OSPF-only daemon).
func (c Config) Owned(id uint32) bool {
	c = c.withDefaults()
	return id >= c.IDBase && uint64(id) < uint64(c.IDBase)+uint64(c.IDCount)
}

// FlushStats counts what a flush removed.
type FlushStats struct {
	Routes   int `json:"routes"`
	Nexthops int `json:"nexthops"`
}

// Flush removes every route and nexthop object fared owns in the
// namespace, whatever its protocol number: the routes (any protocol) of
// cfg's table that point at a nexthop id in fared's range, then those
// nexthops, groups first. It is `fared --flush`, for a node that moves to
// another routing daemon or protocol. Routes of other daemons, which use
// other nexthop ids or none, are never touched.
func Flush(ns netns.NsHandle, cfg Config) (FlushStats, error) {
	cfg = cfg.withDefaults()
	return flushOwned(ns, cfg, func(proto uint8) bool { return true })
}

// flushOwned removes the owned routes and nexthops whose protocol number
// matches sel.
func flushOwned(ns netns.NsHandle, cfg Config, sel func(proto uint8) bool) (FlushStats, error) {
	var st FlushStats
	c, err := dial(ns)
	if err != nil {
		return st, err
	}
	defer c.close()
	routes, err := c.dumpRoutes(func(r *KernelRoute) bool {
		return r.Table == cfg.Table && r.NhID != 0 && cfg.Owned(r.NhID) && sel(r.Protocol)
	})
	if err != nil {
		return st, err
	}
	nhs, err := c.dumpNexthops()
	if err != nil {
		return st, err
	}
	b := c.newBatch()
	for _, r := range routes {
		b.DelRoute(b.Next(), nlmsg.RouteKey{Prefix: r.Prefix, Table: r.Table, Protocol: r.Protocol, Metric: r.Metric})
	}
	nRoutes := b.Len()
	// Groups before their members: deleting a group's last member makes
	// the kernel delete the group itself, and the group's own delete would
	// then fail.
	for _, pass := range []bool{true, false} {
		for _, k := range nhs {
			if cfg.Owned(k.ID) && sel(k.Protocol) && (len(k.Group) > 0) == pass {
				b.DelNexthop(b.Next(), k.ID)
			}
		}
	}
	errs, err := c.run(b, func(i int) string {
		if i < nRoutes {
			return "delete route " + routes[i].Prefix.String()
		}
		return "delete nexthop"
	}, nil)
	if err != nil {
		return st, err
	}
	var first error
	for i, e := range errs {
		switch {
		case e == nil && i < nRoutes:
			st.Routes++
		case e == nil:
			st.Nexthops++
		case first == nil:
			first = e
		}
	}
	if first != nil {
		return st, fmt.Errorf("fib: flush: %w", first)
	}
	return st, nil
}
