package fib

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// KernelNexthop is one nexthop object as the kernel reports it.
type KernelNexthop struct {
	ID        uint32
	Protocol  uint8
	Family    uint8 // AF_INET or AF_INET6; 0 for groups and blackholes
	Gateway   netip.Addr
	IfIndex   int
	Blackhole bool
	Flags     uint32        // RTNH_F_*
	Group     []GroupMember // weights decoded with weight_high
	GroupType GroupType
	Resilient *ResilientInfo
}

// GroupType is the kind of a nexthop group (NHA_GROUP_TYPE).
type GroupType uint8

const (
	NotGroup       GroupType = iota // a single nexthop or a blackhole
	GroupMpath                      // NEXTHOP_GRP_TYPE_MPATH
	GroupResilient                  // NEXTHOP_GRP_TYPE_RES
)

// String is iproute2's word for the type ("" for NotGroup).
func (t GroupType) String() string {
	return [...]string{NotGroup: "", GroupMpath: "mpath", GroupResilient: "resilient"}[t]
}

// ResilientInfo is the NHA_RES_GROUP nest read back from the kernel: the
// group's parameters and how long it has been unbalanced.
type ResilientInfo struct {
	Resilient
	UnbalancedTime time.Duration
}

// KernelRoute is one unicast route as the kernel reports it.
type KernelRoute struct {
	Prefix   netip.Prefix
	Table    int
	Protocol uint8
	Metric   uint32
	NhID     uint32 // RTA_NH_ID; 0 for routes without a nexthop object
	// Paths are the legacy next hops (RTA_GATEWAY/RTA_OIF or RTA_MULTIPATH)
	// for routes without a nexthop object; weight is rtnh_hops+1.
	Paths []KernelPath
}

// KernelPath is one legacy next hop of a route.
type KernelPath struct {
	Gateway netip.Addr
	IfIndex int
	Weight  uint32
}

// ParseNexthop decodes one RTM_NEWNEXTHOP/RTM_DELNEXTHOP payload (nhmsg and
// its attributes), as a dump or a notification carries it.
func ParseNexthop(p []byte) (KernelNexthop, error) {
	var k KernelNexthop
	if len(p) < unix.SizeofNhmsg {
		return k, fmt.Errorf("short nhmsg")
	}
	fam := p[0]
	k.Protocol = p[2]
	k.Flags = ne.Uint32(p[4:])
	attrs, err := nl.ParseRouteAttr(p[unix.SizeofNhmsg:])
	if err != nil {
		return k, err
	}
	for _, a := range attrs {
		switch a.Attr.Type &^ unix.NLA_F_NESTED {
		case unix.NHA_ID:
			k.ID = ne.Uint32(a.Value)
		case unix.NHA_OIF:
			k.IfIndex = int(ne.Uint32(a.Value))
		case unix.NHA_GATEWAY:
			if ip, ok := netip.AddrFromSlice(a.Value); ok {
				k.Gateway = ip.Unmap()
			}
		case unix.NHA_BLACKHOLE:
			k.Blackhole = true
		case unix.NHA_GROUP:
			if k.Group, err = decodeGroup(a.Value); err != nil {
				return k, err
			}
			if k.GroupType == NotGroup {
				k.GroupType = GroupMpath
			}
		case unix.NHA_GROUP_TYPE:
			k.GroupType = cond(ne.Uint16(a.Value) == nlmsg.NEXTHOP_GRP_TYPE_RES, GroupResilient, GroupMpath)
		case nlmsg.NHA_RES_GROUP:
			r := &ResilientInfo{}
			sub, err := nl.ParseRouteAttr(a.Value)
			if err != nil {
				return k, err
			}
			for _, s := range sub {
				switch s.Attr.Type {
				case nlmsg.NHA_RES_GROUP_BUCKETS:
					r.Buckets = ne.Uint16(s.Value)
				case nlmsg.NHA_RES_GROUP_IDLE_TIMER:
					r.IdleTimer = nlmsg.ClockDuration(uint64(ne.Uint32(s.Value)))
				case nlmsg.NHA_RES_GROUP_UNBALANCED_TIMER:
					r.UnbalancedTimer = nlmsg.ClockDuration(uint64(ne.Uint32(s.Value)))
				case nlmsg.NHA_RES_GROUP_UNBALANCED_TIME:
					r.UnbalancedTime = nlmsg.ClockDuration(ne.Uint64(s.Value))
				}
			}
			k.Resilient = r
		}
	}
	if k.Group == nil && !k.Blackhole && (fam == unix.AF_INET || fam == unix.AF_INET6) {
		k.Family = fam
	}
	return k, nil
}

func famOf(k KernelNexthop) uint8 {
	return cond(k.Family == unix.AF_INET6, uint8(unix.AF_INET6), unix.AF_INET)
}

func (c *conn) dumpNexthops() ([]KernelNexthop, error) {
	var out []KernelNexthop
	err := c.dump(func(m *nlmsg.Buf, seq uint32) {
		m.DumpNexthops(seq)
	}, func(typ uint16, p []byte) error {
		if typ != unix.RTM_NEWNEXTHOP {
			return nil
		}
		k, err := ParseNexthop(p)
		if err != nil {
			return fmt.Errorf("fib: parse nexthop: %w", err)
		}
		out = append(out, k)
		return nil
	})
	return out, err
}

// ParseRoute decodes one RTM_NEWROUTE/RTM_DELROUTE payload (rtmsg and its
// attributes); ok is false for routes that are never ours (not unicast, or
// IPv6 cache entries).
func ParseRoute(p []byte) (KernelRoute, bool, error) {
	var r KernelRoute
	if len(p) < unix.SizeofRtMsg {
		return r, false, fmt.Errorf("short rtmsg")
	}
	r.Protocol = p[5]
	if p[7] != unix.RTN_UNICAST {
		return r, false, nil // local, broadcast, multicast, ...: never ours
	}
	if ne.Uint32(p[8:])&unix.RTM_F_CLONED != 0 {
		return r, false, nil // IPv6 route cache entries
	}
	var single KernelPath
	var err error
	r.Prefix, r.Table, r.Metric, err = routeKeyAttrs(p, func(typ uint16, v []byte) {
		switch typ {
		case nlmsg.RTA_NH_ID:
			r.NhID = ne.Uint32(v)
		case unix.RTA_GATEWAY:
			single.Gateway, _ = netip.AddrFromSlice(v)
		case unix.RTA_OIF:
			single.IfIndex = int(ne.Uint32(v))
		case unix.RTA_MULTIPATH:
			r.Paths = parseMultipath(v)
		}
	})
	if err != nil {
		return r, false, err
	}
	if r.NhID == 0 && r.Paths == nil && (single.IfIndex != 0 || single.Gateway.IsValid()) {
		single.Weight = 1
		r.Paths = []KernelPath{single}
	}
	return r, true, nil
}

// routeKeyAttrs reads what the kernel keys a route by from an rtmsg
// payload p of at least the header's size: its prefix (the header's
// length, RTA_DST or the family's zero address), table (RTA_TABLE
// overrides the header's 8 bits) and metric. Every other attribute goes
// to other.
func routeKeyAttrs(p []byte, other func(typ uint16, v []byte)) (prefix netip.Prefix, table int, metric uint32, err error) {
	fam, dstLen := p[0], int(p[1])
	table = int(p[4])
	attrs, err := nl.ParseRouteAttr(p[unix.SizeofRtMsg:])
	if err != nil {
		return prefix, table, 0, err
	}
	var dst netip.Addr
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_DST:
			dst, _ = netip.AddrFromSlice(a.Value)
		case unix.RTA_TABLE:
			table = int(ne.Uint32(a.Value))
		case unix.RTA_PRIORITY:
			metric = ne.Uint32(a.Value)
		default:
			other(a.Attr.Type, a.Value)
		}
	}
	if !dst.IsValid() {
		dst = cond(fam == unix.AF_INET, netip.IPv4Unspecified(), netip.IPv6Unspecified())
	}
	return netip.PrefixFrom(dst, dstLen), table, metric, nil
}

// parseMultipath decodes RTA_MULTIPATH: struct rtnexthop {u16 len; u8
// flags; u8 hops; s32 ifindex} followed by its attributes.
func parseMultipath(b []byte) []KernelPath {
	var out []KernelPath
	for len(b) >= unix.SizeofRtNexthop {
		l := int(ne.Uint16(b))
		if l < unix.SizeofRtNexthop || l > len(b) {
			break
		}
		p := KernelPath{IfIndex: int(int32(ne.Uint32(b[4:]))), Weight: uint32(b[3]) + 1}
		if attrs, err := nl.ParseRouteAttr(b[unix.SizeofRtNexthop:l]); err == nil {
			for _, a := range attrs {
				if a.Attr.Type == unix.RTA_GATEWAY {
					p.Gateway, _ = netip.AddrFromSlice(a.Value)
				}
			}
		}
		out = append(out, p)
		b = b[nlmsg.Align4(l):]
	}
	return out
}

// dumpRoutes dumps IPv4 and IPv6 unicast routes, keeping those accepted
// by keep.
func (c *conn) dumpRoutes(keep func(*KernelRoute) bool) ([]KernelRoute, error) {
	var out []KernelRoute
	err := c.eachRoute(true, true, func(p []byte) error {
		r, ok, err := ParseRoute(p)
		if err != nil {
			return fmt.Errorf("fib: parse route: %w", err)
		}
		if ok && keep(&r) {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// eachRoute dumps the IPv4 routes (v4) and the IPv6 ones (v6) and calls
// fn with each RTM_NEWROUTE payload.
func (c *conn) eachRoute(v4, v6 bool, fn func(p []byte) error) error {
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if !cond(fam == unix.AF_INET, v4, v6) {
			continue
		}
		err := c.dump(func(m *nlmsg.Buf, seq uint32) { m.DumpRoutes(seq, fam) }, func(typ uint16, p []byte) error {
			if typ != unix.RTM_NEWROUTE {
				return nil
			}
			return fn(p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Dump reads routes and nexthop objects back from the kernel of ns
// (0 = current namespace), for `farectl fib` and for tests. protocol
// filters routes and nexthops by protocol (0 = all); routes are unicast
// routes of every table, nexthops every object (groups with members,
// weights including weight_high, and resilient parameters).
//
// Routes and nexthop objects are two dumps, and a Sync running beside us
// can move routes to a new group and delete the old one in between. The
// kernel never lets a route or group name a missing nexthop, so a pair of
// dumps where one does is read again (up to dumpAttempts times; the last
// pair is returned as it is).
func Dump(ns netns.NsHandle, protocol uint8) ([]KernelRoute, []KernelNexthop, error) {
	c, err := dial(ns)
	if err != nil {
		return nil, nil, err
	}
	defer c.close()
	var routes []KernelRoute
	var nhs []KernelNexthop
	for range dumpAttempts {
		routes, err = c.dumpRoutes(func(r *KernelRoute) bool { return protocol == 0 || r.Protocol == protocol })
		if err != nil {
			return nil, nil, err
		}
		nhs, err = c.dumpNexthops()
		if err != nil && !isNoNexthops(err) {
			return nil, nil, err
		}
		if consistent(routes, nhs) {
			break
		}
	}
	keep := nhs[:0]
	for _, n := range nhs {
		if protocol == 0 || n.Protocol == protocol {
			keep = append(keep, n)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].ID < keep[j].ID })
	sort.Slice(routes, func(i, j int) bool { return lessPrefix(routes[i].Prefix, routes[j].Prefix) })
	return routes, keep, nil
}

const dumpAttempts = 5

// consistent reports whether every nexthop id a route or group names is
// among nhs.
func consistent(routes []KernelRoute, nhs []KernelNexthop) bool {
	ids := make(map[uint32]bool, len(nhs))
	for _, n := range nhs {
		ids[n.ID] = true
	}
	for _, r := range routes {
		if r.NhID != 0 && !ids[r.NhID] {
			return false
		}
	}
	for _, n := range nhs {
		for _, m := range n.Group {
			if !ids[m.ID] {
				return false
			}
		}
	}
	return true
}

func lessPrefix(a, b netip.Prefix) bool {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c < 0
	}
	return a.Bits() < b.Bits()
}
