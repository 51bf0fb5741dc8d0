package fib

import (
	"fmt"
	"net/netip"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Flow is one 5-tuple for a route lookup.
type Flow struct {
	Src, Dst     netip.Addr
	Proto        uint8 // unix.IPPROTO_UDP, ...
	Sport, Dport uint16
}

// Lookup asks the kernel which gateway each flow takes (RTM_GETROUTE with
// RTA_SPORT, RTA_DPORT and RTA_IP_PROTO, so multipath hashing on L4 —
// fib_multipath_hash_policy=1 — is exercised as for real packets).
// netlink v1.3.1's RouteGet has no port options, hence our own request.
// The answer for flow i is gateways[i] (invalid when the route has none).
func Lookup(ns netns.NsHandle, flows []Flow) (gateways []netip.Addr, err error) {
	c, err := dial(ns)
	if err != nil {
		return nil, err
	}
	defer c.close()
	b := c.newBatch()
	for _, f := range flows {
		fam, bits := uint8(unix.AF_INET), uint8(32)
		if f.Dst.Is6() {
			fam, bits = unix.AF_INET6, 128
		}
		b.Begin(unix.RTM_GETROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK, b.Next())
		msg := nlmsg.Rtmsg(fam, bits, 0, 0, 0, 0)
		msg[2] = bits // src_len
		b.Raw(msg[:])
		b.Attr(unix.RTA_DST, nlmsg.AddrBytes(f.Dst))
		b.Attr(unix.RTA_SRC, nlmsg.AddrBytes(f.Src))
		b.Attr(unix.RTA_IP_PROTO, []byte{f.Proto})
		sp := [2]byte{byte(f.Sport >> 8), byte(f.Sport)} // big-endian
		dp := [2]byte{byte(f.Dport >> 8), byte(f.Dport)}
		b.Attr(unix.RTA_SPORT, sp[:])
		b.Attr(unix.RTA_DPORT, dp[:])
		b.End()
	}
	gateways = make([]netip.Addr, len(flows))
	res, err := c.run(b, func(i int) string { return fmt.Sprintf("route get flow %d", i) }, func(i int, typ uint16, p []byte) {
		if gw, err := parseRouteGW(p); err == nil && i < len(gateways) {
			gateways[i] = gw
		}
	})
	if err != nil {
		return nil, err
	}
	for _, e := range res {
		if e != nil {
			return nil, e
		}
	}
	return gateways, nil
}

func parseRouteGW(p []byte) (netip.Addr, error) {
	if len(p) < unix.SizeofRtMsg {
		return netip.Addr{}, fmt.Errorf("short rtmsg")
	}
	attrs, err := nl.ParseRouteAttr(p[unix.SizeofRtMsg:])
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.RTA_GATEWAY {
			gw, _ := netip.AddrFromSlice(a.Value)
			return gw, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("no gateway")
}
