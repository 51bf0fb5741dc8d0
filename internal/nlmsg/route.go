package nlmsg

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// RouteKey is what the kernel identifies one of our routes by (with the
// TOS, always 0 here).
type RouteKey struct {
	Prefix   netip.Prefix
	Table    int
	Protocol uint8
	Metric   uint32
}

// Rtmsg is struct rtmsg, returned by value so it costs no allocation;
// callers needing src_len or flags set them before Raw.
func Rtmsg(fam, dstLen uint8, table int, proto, scope, typ uint8) [unix.SizeofRtMsg]byte {
	var b [unix.SizeofRtMsg]byte
	b[0] = fam
	b[1] = dstLen
	if table < 256 {
		b[4] = uint8(table)
	} else {
		b[4] = unix.RT_TABLE_UNSPEC // the real id goes in RTA_TABLE
	}
	b[5] = proto
	b[6] = scope
	b[7] = typ
	return b
}

func (m *Buf) routeKey(k RouteKey, scope, typ uint8) {
	p := k.Prefix
	h := Rtmsg(Family(p.Addr()), uint8(p.Bits()), k.Table, k.Protocol, scope, typ)
	m.b = append(m.b, h[:]...)
	m.Attr(unix.RTA_DST, AddrBytes(p.Addr()))
	if k.Table >= 256 {
		m.U32(unix.RTA_TABLE, uint32(k.Table))
	}
	m.U32(unix.RTA_PRIORITY, k.Metric)
}

// Route appends RTM_NEWROUTE pointing the prefix at nexthop id nh. With
// replace (a route we hold) it atomically repoints it, and fails with
// ENOENT if the route is gone; without, it adds with CREATE|EXCL, which
// the kernel refuses with EEXIST if any route holds the key (table,
// prefix, metric, and for IPv4 TOS), whatever its protocol or type: the
// kernel keeps one route per key, so CREATE|REPLACE would overwrite a
// static or another daemon's route.
func (m *Buf) Route(seq uint32, k RouteKey, nh uint32, replace bool) {
	flags := uint16(unix.NLM_F_CREATE | unix.NLM_F_EXCL)
	if replace {
		flags = unix.NLM_F_REPLACE
	}
	m.Begin(unix.RTM_NEWROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	m.routeKey(k, unix.RT_SCOPE_UNIVERSE, unix.RTN_UNICAST)
	m.U32(RTA_NH_ID, nh)
	m.End()
}

// DelRoute appends RTM_DELROUTE for the route under k. The protocol is
// part of the request, so another protocol's route is never deleted.
func (m *Buf) DelRoute(seq uint32, k RouteKey) {
	m.Begin(unix.RTM_DELROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq)
	// Scope NOWHERE and type UNSPEC are wildcards for deletion.
	m.routeKey(k, unix.RT_SCOPE_NOWHERE, unix.RTN_UNSPEC)
	m.End()
}

// DumpRoutes appends the request for every route of family fam.
func (m *Buf) DumpRoutes(seq uint32, fam uint8) {
	m.Begin(unix.RTM_GETROUTE, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, seq)
	h := Rtmsg(fam, 0, 0, 0, 0, 0)
	m.b = append(m.b, h[:]...)
	m.End()
}
