package fib

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Conflict is one prefix fared did not install: another protocol's route
// holds the same table, prefix and metric.
type Conflict struct {
	Prefix    netip.Prefix
	Table     int
	Metric    uint32
	Protocol  uint8 // the holder's rtm_protocol
	RouteType uint8 // the holder's rtm_type: RTN_UNICAST, RTN_BLACKHOLE, ...
	Since     time.Time
}

// ProtocolName is iproute2's name for the holder's protocol.
func (c Conflict) ProtocolName() string { return netlink.RouteProtocol(c.Protocol).String() }

// Type names the holder's route type: unicast, blackhole, ...
func (c Conflict) Type() string { return routeTypeName(c.RouteType) }

type conflictEnt struct {
	Conflict
	// nh is the object the prefix would use. It counts as a reference, so
	// the objects are not deleted and re-created on every Sync while the
	// conflict lasts.
	nh  uint32
	gen uint64 // last Sync that wanted the prefix
}

// Conflicts returns the prefixes not installed because another protocol's
// route holds them, sorted by prefix. Each Sync retries them (one message
// each): when the other route is gone, ours is installed.
func (f *FIB) Conflicts() []Conflict {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conflictList()
}

func (f *FIB) conflictList() []Conflict {
	if len(f.conflicts) == 0 {
		return nil
	}
	out := make([]Conflict, 0, len(f.conflicts))
	for _, c := range f.conflicts {
		out = append(out, c.Conflict)
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits())
	})
	return out
}

// heldRoute is the kernel route under one of our keys.
type heldRoute struct {
	protocol uint8
	typ      uint8
}

// existing sorts the prefixes whose exclusive add failed with EEXIST and
// that are not known conflicts: a route of our own protocol that our state
// does not know (a second writer with our protocol, an operator's `ip
// route add ... proto isis`) is ours to take over; one of another protocol
// becomes a conflict (logged once); none at all (deleted since) is retried.
// It costs one route dump per address family concerned, and runs only when
// the kernel said EEXIST for a prefix not already known to conflict, so
// the common path reads nothing.
func (f *FIB) existing(ws []*want) (takeover, retry []*want, err error) {
	if len(ws) == 0 {
		return nil, nil, nil
	}
	held, err := f.heldRoutes(ws)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	for _, w := range ws {
		h, ok := held[w.prefix]
		switch {
		case !ok:
			retry = append(retry, w)
		case h.protocol == f.cfg.Protocol:
			f.log.Info("fib: taking over a route of our protocol that was not in our state", "prefix", w.prefix,
				"protocol", f.cfg.Protocol, "table", f.cfg.Table, "metric", f.cfg.Metric)
			takeover = append(takeover, w)
		default:
			c := &conflictEnt{Conflict: Conflict{Prefix: w.prefix, Table: f.cfg.Table, Metric: f.cfg.Metric,
				Protocol: h.protocol, RouteType: h.typ, Since: now},
				nh: w.target, gen: f.gen}
			f.conflicts[w.prefix] = c
			f.log.Warn("fib: route not installed: the kernel holds another protocol's route with the same prefix, table and metric",
				"prefix", w.prefix, "protocol", c.ProtocolName(), "type", c.Type(), "table", c.Table, "metric", c.Metric)
		}
	}
	return takeover, retry, nil
}

// heldRoutes dumps the routes of the families of ws and returns those
// under one of ws's keys, whatever their type (a blackhole or unreachable
// route blocks the key as much as a unicast one).
func (f *FIB) heldRoutes(ws []*want) (map[netip.Prefix]heldRoute, error) {
	wanted := make(map[netip.Prefix]bool, len(ws))
	var v4, v6 bool
	for _, w := range ws {
		wanted[w.prefix] = true
		if w.prefix.Addr().Is4() {
			v4 = true
		} else {
			v6 = true
		}
	}
	out := map[netip.Prefix]heldRoute{}
	err := f.c.eachRoute(v4, v6, func(p []byte) error {
		k, ok, err := parseRouteKey(p)
		if err != nil {
			return fmt.Errorf("fib: parse route: %w", err)
		}
		if ok && wanted[k.prefix] && k.table == f.cfg.Table && k.metric == f.cfg.Metric {
			out[k.prefix] = heldRoute{protocol: k.protocol, typ: k.typ}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// routeKey is what the kernel compares when it refuses an exclusive add.
type routeKey struct {
	prefix   netip.Prefix
	table    int
	metric   uint32
	protocol uint8
	typ      uint8
}

// parseRouteKey reads the key of a route of any type; ok is false for
// entries that cannot collide with ours (IPv6 cache clones, IPv4 routes
// with a TOS, IPv6 source-specific routes).
func parseRouteKey(p []byte) (routeKey, bool, error) {
	var k routeKey
	if len(p) < unix.SizeofRtMsg {
		return k, false, fmt.Errorf("short rtmsg")
	}
	srcLen, tos := p[2], p[3]
	k.protocol, k.typ = p[5], p[7]
	if ne.Uint32(p[8:])&unix.RTM_F_CLONED != 0 || tos != 0 || srcLen != 0 {
		return k, false, nil
	}
	var err error
	k.prefix, k.table, k.metric, err = routeKeyAttrs(p, func(uint16, []byte) {})
	if err != nil {
		return k, false, err
	}
	return k, true, nil
}

func routeTypeName(t uint8) string {
	switch t {
	case unix.RTN_UNICAST:
		return "unicast"
	case unix.RTN_LOCAL:
		return "local"
	case unix.RTN_BROADCAST:
		return "broadcast"
	case unix.RTN_ANYCAST:
		return "anycast"
	case unix.RTN_MULTICAST:
		return "multicast"
	case unix.RTN_BLACKHOLE:
		return "blackhole"
	case unix.RTN_UNREACHABLE:
		return "unreachable"
	case unix.RTN_PROHIBIT:
		return "prohibit"
	case unix.RTN_THROW:
		return "throw"
	}
	return fmt.Sprintf("type %d", t)
}

// dropUnwanted forgets the conflicts of prefixes this Sync does not want
// (withdrawn, or no usable next hop), before the objects they kept are
// counted for deletion.
func (f *FIB) dropUnwanted() {
	for p, c := range f.conflicts {
		if c.gen != f.gen {
			f.log.Info("fib: conflict over: prefix no longer wanted", "prefix", p, "protocol", c.ProtocolName())
			delete(f.conflicts, p)
		}
	}
}

// endConflicts reports the conflicts in st at the end of every Sync.
func (f *FIB) endConflicts(st *Stats) {
	st.Conflicts = f.conflictList()
}

// resolved is called when a prefix that conflicted got installed.
func (f *FIB) resolved(p netip.Prefix) {
	if c := f.conflicts[p]; c != nil {
		f.log.Info("fib: conflict over: the other route is gone, ours is installed", "prefix", p, "protocol", c.ProtocolName())
		delete(f.conflicts, p)
	}
}

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}
