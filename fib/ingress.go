package fib

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Interfaces asks the kernel, for each address, which interfaces its
// route goes out of: every next hop of the route the kernel would use
// (RTM_GETROUTE with RTM_F_FIB_MATCH, which returns the whole FIB entry,
// not the one path a flow hashes to), with multipath routes and nexthop
// groups expanded. An address of this namespace answers with the
// loopback and the interface holding it (see parseRouteIfaces). This is the ingress set of strict
// unicast RPF: a packet from a source came in as expected when it came in
// on one of them.
//
// An address without a route (or with a blackhole) is absent from the
// result; a failure of the kernel request is an error.
func Interfaces(ns netns.NsHandle, addrs []netip.Addr) (map[netip.Addr][]int, error) {
	c, err := dial(ns)
	if err != nil {
		return nil, err
	}
	defer c.close()
	out := make(map[netip.Addr][]int, len(addrs))
	if len(addrs) == 0 {
		return out, nil
	}
	type answer struct {
		ifs  []int
		nhID uint32
	}
	ans := make([]answer, len(addrs))
	b := c.newBatch()
	for _, a := range addrs {
		fam, bits := uint8(unix.AF_INET), uint8(32)
		if a.Is6() && !a.Is4In6() {
			fam, bits = unix.AF_INET6, 128
		}
		b.Begin(unix.RTM_GETROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK, b.Next())
		msg := nlmsg.Rtmsg(fam, bits, 0, 0, 0, 0)
		ne.PutUint32(msg[8:], unix.RTM_F_FIB_MATCH)
		b.Raw(msg[:])
		b.Attr(unix.RTA_DST, nlmsg.AddrBytes(a.Unmap()))
		b.End()
	}
	res, err := c.run(b, func(i int) string { return fmt.Sprintf("route get %s (fibmatch)", addrs[i]) }, func(i int, typ uint16, p []byte) {
		if typ == unix.RTM_NEWROUTE && i < len(ans) {
			ans[i].ifs, ans[i].nhID = parseRouteIfaces(p)
		}
	})
	if err != nil {
		return nil, err
	}
	var nhs map[uint32]KernelNexthop
	for i, a := range addrs {
		if res[i] != nil {
			if errors.Is(res[i], unix.ENETUNREACH) || errors.Is(res[i], unix.EHOSTUNREACH) ||
				errors.Is(res[i], unix.ENOENT) || errors.Is(res[i], unix.EINVAL) {
				continue // no route: no ingress is right
			}
			return nil, res[i]
		}
		ifs := ans[i].ifs
		if id := ans[i].nhID; id != 0 {
			if nhs == nil {
				list, err := c.dumpNexthops()
				if err != nil && !isNoNexthops(err) {
					return nil, err
				}
				nhs = make(map[uint32]KernelNexthop, len(list))
				for _, n := range list {
					nhs[n.ID] = n
				}
			}
			ifs = append(ifs, nexthopIfaces(nhs, id, 0)...)
		}
		slices.Sort(ifs)
		if ifs = slices.Compact(ifs); len(ifs) > 0 {
			out[a] = ifs
		}
	}
	return out, nil
}

// parseRouteIfaces reads the output interfaces of one RTM_NEWROUTE: its
// RTA_OIF, every path of RTA_MULTIPATH, and its nexthop object's id. A
// packet this node sends to itself comes in on the loopback, which
// IP_PKTINFO reports as the interface holding the address (the local
// route's RTA_OIF): a local route answers both.
func parseRouteIfaces(p []byte) (ifs []int, nhID uint32) {
	if len(p) < unix.SizeofRtMsg {
		return nil, 0
	}
	if p[7] == unix.RTN_LOCAL {
		ifs = append(ifs, 1) // lo: the kernel delivers our own packets over it
	}
	attrs, err := nl.ParseRouteAttr(p[unix.SizeofRtMsg:])
	if err != nil {
		return ifs, 0
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_OIF:
			ifs = append(ifs, int(ne.Uint32(a.Value)))
		case unix.RTA_MULTIPATH:
			for _, path := range parseMultipath(a.Value) {
				ifs = append(ifs, path.IfIndex)
			}
		case nlmsg.RTA_NH_ID:
			nhID = ne.Uint32(a.Value)
		}
	}
	return ifs, nhID
}

// nexthopIfaces expands a nexthop object (a group: its members) into
// output interfaces. depth bounds the recursion (groups do not nest in
// Linux; the bound is for a malformed answer).
func nexthopIfaces(nhs map[uint32]KernelNexthop, id uint32, depth int) []int {
	n, ok := nhs[id]
	if !ok || n.Blackhole || depth > 2 {
		return nil
	}
	if len(n.Group) == 0 {
		if n.IfIndex == 0 {
			return nil
		}
		return []int{n.IfIndex}
	}
	var out []int
	for _, m := range n.Group {
		out = append(out, nexthopIfaces(nhs, m.ID, depth+1)...)
	}
	return out
}

// WatchRoutes calls changed (from its own goroutine) after every change
// of routes, nexthop objects, links or addresses in ns that could move
// an address's route to other interfaces, until ctx ends. Bursts arrive
// as one call per batch the kernel delivered. It returns when ctx ends
// or the socket fails (the caller then polls instead).
func WatchRoutes(ctx context.Context, ns netns.NsHandle, changed func()) error {
	c, err := dial(ns, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE, unix.RTNLGRP_NEXTHOP, unix.RTNLGRP_LINK,
		unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR)
	if err != nil {
		return err
	}
	defer c.close()
	// A short receive timeout instead of the dump's 30 s, so the end of
	// ctx is noticed (closing the socket under a blocked recvfrom would
	// race with the fd being reused).
	tv := unix.Timeval{Usec: 200_000}
	_ = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	for ctx.Err() == nil {
		_, _, err := unix.Recvfrom(c.fd, c.rbuf, 0)
		switch {
		case err == nil:
			changed()
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ENOBUFS):
			changed() // notifications were lost: something changed
		default:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fib: route notifications: %w", err)
		}
	}
	return nil
}
