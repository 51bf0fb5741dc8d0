package fib

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/fared/fared/api/wire"
	"golang.org/x/sys/unix"
)

// Kernel uapi values that x/sys/unix v0.49.0 does not export
// (include/uapi/linux/nexthop.h, include/uapi/linux/rtnetlink.h).
const (
	nhaFDB          = 11 // flag
	nhaResGroup     = 12 // nest: resilient group parameters
	nhaResBucket    = 13 // nest
	nhaOpFlags      = 14 // u32
	nhaResBuckets   = 1  // NHA_RES_GROUP_BUCKETS, u16
	nhaResIdle      = 2  // NHA_RES_GROUP_IDLE_TIMER, u32 clock_t
	nhaResUnbal     = 3  // NHA_RES_GROUP_UNBALANCED_TIMER, u32 clock_t
	nhaResUnbalTime = 4  // NHA_RES_GROUP_UNBALANCED_TIME, u64 clock_t

	nhGroupTypeMpath = 0 // NEXTHOP_GRP_TYPE_MPATH
	nhGroupTypeRes   = 1 // NEXTHOP_GRP_TYPE_RES

	rtaNHID = 30 // RTA_NH_ID

	// The kernel reports resilient timers as clock_t, i.e. USER_HZ ticks.
	// USER_HZ is 100 on every Linux ABI.
	userHZ = 100
)

// ne is the host byte order used by netlink for every integer that is
// not explicitly big-endian (gateways are byte strings, ports are BE).
var ne = binary.NativeEndian

// The writer below appends netlink messages to one buffer so a batch of
// thousands of requests costs one allocation and one sendmsg per chunk,
// instead of a []byte per attribute as nl.RtAttr would.

// msgBuf is a growing buffer of complete netlink messages.
type msgBuf struct {
	b     []byte
	start int // offset of the message being built
}

func align4(n int) int { return (n + 3) &^ 3 }

// begin starts a message; the header length is patched by end.
func (m *msgBuf) begin(typ, flags uint16, seq uint32) {
	m.start = len(m.b)
	var h [unix.SizeofNlMsghdr]byte
	ne.PutUint16(h[4:], typ)
	ne.PutUint16(h[6:], flags)
	ne.PutUint32(h[8:], seq)
	m.b = append(m.b, h[:]...)
}

func (m *msgBuf) end() {
	ne.PutUint32(m.b[m.start:], uint32(len(m.b)-m.start))
}

func (m *msgBuf) raw(p []byte) { m.b = append(m.b, p...) }

func (m *msgBuf) attr(typ uint16, payload []byte) {
	var h [4]byte
	ne.PutUint16(h[0:], uint16(4+len(payload)))
	ne.PutUint16(h[2:], typ)
	m.b = append(m.b, h[:]...)
	m.b = append(m.b, payload...)
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

func (m *msgBuf) u32(typ uint16, v uint32) {
	var p [4]byte
	ne.PutUint32(p[:], v)
	m.attr(typ, p[:])
}

func (m *msgBuf) u16(typ uint16, v uint16) {
	var p [2]byte
	ne.PutUint16(p[:], v)
	m.attr(typ, p[:])
}

func (m *msgBuf) flag(typ uint16) { m.attr(typ, nil) }

// nest opens a nested attribute and returns its offset for nestEnd.
func (m *msgBuf) nest(typ uint16) int {
	off := len(m.b)
	m.attr(typ|unix.NLA_F_NESTED, nil)
	return off
}

func (m *msgBuf) nestEnd(off int) { ne.PutUint16(m.b[off:], uint16(len(m.b)-off)) }

func addrBytes(a netip.Addr) []byte {
	if a.Is4() {
		v := a.As4()
		return v[:]
	}
	v := a.As16()
	return v[:]
}

func family(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// maxWireWeight is the largest weight a nexthop_grp entry can carry: the
// wire value is weight-1 in 8 bits (weight) plus, since kernel 6.12,
// 8 more bits (weight_high).
const (
	maxWeight8  = 1 << 8
	maxWeight16 = 1 << 16
)

// GroupMember is one entry of a kernel nexthop group.
type GroupMember = wire.GroupMember

// encodeGroup returns the NHA_GROUP payload: an array of
// struct nexthop_grp {u32 id; u8 weight; u8 weight_high; u16 resvd}, where
// weight|weight_high<<8 == Weight-1.
func encodeGroup(members []GroupMember) ([]byte, error) {
	return appendGroupEntries(make([]byte, 0, len(members)*unix.SizeofNexthopGrp), members)
}

func appendGroupEntries(out []byte, members []GroupMember) ([]byte, error) {
	for _, m := range members {
		if m.Weight < 1 || m.Weight > maxWeight16 {
			return nil, fmt.Errorf("nexthop %d: weight %d outside 1..%d", m.ID, m.Weight, maxWeight16)
		}
		w := m.Weight - 1
		var e [unix.SizeofNexthopGrp]byte
		ne.PutUint32(e[0:], m.ID)
		e[4] = byte(w)
		e[5] = byte(w >> 8)
		out = append(out, e[:]...)
	}
	return out, nil
}

// decodeGroup is the inverse of encodeGroup. A kernel without weight_high
// reports the byte as reserved zero, which decodes to the same value.
func decodeGroup(p []byte) ([]GroupMember, error) {
	if len(p)%unix.SizeofNexthopGrp != 0 {
		return nil, fmt.Errorf("NHA_GROUP length %d is not a multiple of %d", len(p), unix.SizeofNexthopGrp)
	}
	out := make([]GroupMember, 0, len(p)/unix.SizeofNexthopGrp)
	for i := 0; i < len(p); i += unix.SizeofNexthopGrp {
		out = append(out, GroupMember{
			ID:     ne.Uint32(p[i:]),
			Weight: (uint32(p[i+4]) | uint32(p[i+5])<<8) + 1,
		})
	}
	return out, nil
}

// nhmsg encodes struct nhmsg.
func nhmsg(fam, protocol uint8) []byte {
	var b [unix.SizeofNhmsg]byte
	b[0] = fam
	b[2] = protocol
	return b[:]
}

// Resilient configures resilient (consistent-hash) nexthop groups.
type Resilient struct {
	// Buckets is the size of the hash table; the kernel refuses to change it
	// on an existing group, so a changed value means new groups.
	Buckets uint16 `json:"buckets"`
	// IdleTimer: a bucket idle this long may be migrated to rebalance.
	IdleTimer time.Duration `json:"idle_timer"`
	// UnbalancedTimer: after this long unbalanced, buckets are migrated
	// even if busy. 0 = never force.
	UnbalancedTimer time.Duration `json:"unbalanced_timer"`
}

func clockT(d time.Duration) uint32 { return uint32(d / (time.Second / userHZ)) }

// appendNexthop appends RTM_NEWNEXTHOP for a single gateway/device nexthop.
func appendNexthop(m *msgBuf, seq uint32, flags uint16, id uint32, proto uint8, k nhKey) {
	m.begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	m.raw(nhmsg(k.fam, proto))
	m.u32(unix.NHA_ID, id)
	m.u32(unix.NHA_OIF, uint32(k.ifindex))
	if k.gw.IsValid() {
		m.attr(unix.NHA_GATEWAY, addrBytes(k.gw))
	}
	m.end()
}

// appendGroup appends RTM_NEWNEXTHOP for a group. Replace (NLM_F_REPLACE
// on an existing id) swaps members/weights atomically under every route
// that references the id.
func appendGroup(m *msgBuf, seq uint32, flags uint16, id uint32, proto uint8, members []GroupMember, res *Resilient) error {
	m.begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	m.raw(nhmsg(unix.AF_UNSPEC, proto)) // groups must be AF_UNSPEC
	m.u32(unix.NHA_ID, id)
	// The entries go straight into the message (8 bytes each: aligned).
	at, start := len(m.b), m.start
	m.attr(unix.NHA_GROUP, nil)
	b, err := appendGroupEntries(m.b, members)
	if err != nil {
		m.b, m.start = m.b[:start], start // drop the half-built message
		return err
	}
	m.b = b
	ne.PutUint16(m.b[at:], uint16(len(m.b)-at))
	if res != nil {
		m.u16(unix.NHA_GROUP_TYPE, nhGroupTypeRes)
		n := m.nest(nhaResGroup)
		m.u16(nhaResBuckets, res.Buckets)
		m.u32(nhaResIdle, clockT(res.IdleTimer))
		m.u32(nhaResUnbal, clockT(res.UnbalancedTimer))
		m.nestEnd(n)
	}
	m.end()
	return nil
}

func appendBlackhole(m *msgBuf, seq uint32, id uint32, proto uint8) {
	m.begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL, seq)
	m.raw(nhmsg(unix.AF_INET, proto)) // a blackhole still needs a family
	m.u32(unix.NHA_ID, id)
	m.flag(unix.NHA_BLACKHOLE)
	m.end()
}

func appendDelNexthop(m *msgBuf, seq uint32, id uint32) {
	m.begin(unix.RTM_DELNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq)
	m.raw(nhmsg(unix.AF_UNSPEC, 0))
	m.u32(unix.NHA_ID, id)
	m.end()
}

// routeKey identifies one kernel route we manage.
type routeHdr struct {
	prefix   netip.Prefix
	table    int
	protocol uint8
	metric   uint32
}

func rtmsg(fam, dstLen uint8, table int, proto, scope, typ uint8) []byte {
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
	return b[:]
}

func appendRouteHdr(m *msgBuf, h routeHdr, scope, typ uint8) {
	p := h.prefix
	m.raw(rtmsg(family(p.Addr()), uint8(p.Bits()), h.table, h.protocol, scope, typ))
	m.attr(unix.RTA_DST, addrBytes(p.Addr()))
	if h.table >= 256 {
		m.u32(unix.RTA_TABLE, uint32(h.table))
	}
	m.u32(unix.RTA_PRIORITY, h.metric)
}

// appendRoute appends RTM_NEWROUTE pointing the prefix at nexthop id nh.
// With replace (a route we hold) it atomically repoints it, and fails with
// ENOENT if the route is gone; without, it adds with CREATE|EXCL, which the
// kernel refuses with EEXIST if any route holds the key (table, prefix,
// metric, and for IPv4 TOS), whatever its protocol or type: the kernel
// keeps one route per key, so CREATE|REPLACE would overwrite a static or
// another daemon's route.
func appendRoute(m *msgBuf, seq uint32, h routeHdr, nh uint32, replace bool) {
	flags := uint16(unix.NLM_F_CREATE | unix.NLM_F_EXCL)
	if replace {
		flags = unix.NLM_F_REPLACE
	}
	m.begin(unix.RTM_NEWROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	appendRouteHdr(m, h, unix.RT_SCOPE_UNIVERSE, unix.RTN_UNICAST)
	m.u32(rtaNHID, nh)
	m.end()
}

func appendDelRoute(m *msgBuf, seq uint32, h routeHdr) {
	m.begin(unix.RTM_DELROUTE, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq)
	// Scope NOWHERE and type UNSPEC are wildcards for deletion.
	appendRouteHdr(m, h, unix.RT_SCOPE_NOWHERE, unix.RTN_UNSPEC)
	m.end()
}
