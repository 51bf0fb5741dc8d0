package nlmsg

import (
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// Kernel uapi values that x/sys/unix v0.49.0 does not export
// (include/uapi/linux/nexthop.h, include/uapi/linux/rtnetlink.h).
const (
	NHA_RES_GROUP = 12 // nest: resilient group parameters

	NHA_RES_GROUP_BUCKETS          = 1 // u16
	NHA_RES_GROUP_IDLE_TIMER       = 2 // u32 clock_t
	NHA_RES_GROUP_UNBALANCED_TIMER = 3 // u32 clock_t
	NHA_RES_GROUP_UNBALANCED_TIME  = 4 // u64 clock_t

	NEXTHOP_GRP_TYPE_MPATH = 0
	NEXTHOP_GRP_TYPE_RES   = 1

	RTA_NH_ID = 30

	// UserHZ: the kernel reports resilient timers as clock_t, i.e.
	// USER_HZ ticks. USER_HZ is 100 on every Linux ABI.
	UserHZ = 100
)

// A nexthop_grp entry carries weight-1 in 8 bits (weight) plus, since
// kernel 6.12, 8 more bits (weight_high): MaxWeight8 and MaxWeight16 are
// the largest weights without and with weight_high.
const (
	MaxWeight8  = 1 << 8
	MaxWeight16 = 1 << 16
)

// ClockT is d in USER_HZ ticks, as resilient group timers are written.
func ClockT(d time.Duration) uint32 { return uint32(d / (time.Second / UserHZ)) }

// ClockDuration is the inverse of ClockT, for the kernel's answers.
func ClockDuration(v uint64) time.Duration { return time.Duration(v) * (time.Second / UserHZ) }

// Nhmsg is struct nhmsg, returned by value so it costs no allocation.
func Nhmsg(fam, protocol uint8) [unix.SizeofNhmsg]byte {
	var b [unix.SizeofNhmsg]byte
	b[0] = fam
	b[2] = protocol
	return b
}

func (m *Buf) nhmsg(fam, protocol uint8) {
	h := Nhmsg(fam, protocol)
	m.b = append(m.b, h[:]...)
}

// Nexthop appends RTM_NEWNEXTHOP for a single gateway/device nexthop of
// family fam (that of the gateway; of the route for a device nexthop).
// gw invalid (zero) means directly connected over ifindex.
func (m *Buf) Nexthop(seq uint32, flags uint16, id uint32, proto, fam uint8, gw netip.Addr, ifindex int) {
	m.Begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	m.nhmsg(fam, proto)
	m.U32(unix.NHA_ID, id)
	m.U32(unix.NHA_OIF, uint32(ifindex))
	if gw.IsValid() {
		m.Attr(unix.NHA_GATEWAY, AddrBytes(gw))
	}
	m.End()
}

// BeginGroup starts RTM_NEWNEXTHOP for a group: add its members with
// Member, then close it with EndGroup (or Abort it). With NLM_F_REPLACE
// on an existing id it swaps members and weights atomically under every
// route that references the id.
func (m *Buf) BeginGroup(seq uint32, flags uint16, id uint32, proto uint8) {
	m.Begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags, seq)
	m.nhmsg(unix.AF_UNSPEC, proto) // groups must be AF_UNSPEC
	m.U32(unix.NHA_ID, id)
	// The entries go straight into the attribute (8 bytes each: aligned);
	// EndGroup patches its length.
	m.group = len(m.b)
	m.Attr(unix.NHA_GROUP, nil)
}

// Member appends one entry of the group BeginGroup opened: struct
// nexthop_grp {u32 id; u8 weight; u8 weight_high; u16 resvd}, where
// weight|weight_high<<8 == weight-1.
func (m *Buf) Member(id, weight uint32) error {
	if weight < 1 || weight > MaxWeight16 {
		return fmt.Errorf("nexthop %d: weight %d outside 1..%d", id, weight, MaxWeight16)
	}
	w := weight - 1
	var e [unix.SizeofNexthopGrp]byte
	ne.PutUint32(e[0:], id)
	e[4] = byte(w)
	e[5] = byte(w >> 8)
	m.b = append(m.b, e[:]...)
	return nil
}

// GroupEntry decodes the nexthop_grp entry at the start of p (Member's
// layout). A kernel without weight_high reports that byte as reserved
// zero, which decodes to the same value.
func GroupEntry(p []byte) (id, weight uint32) {
	return ne.Uint32(p), (uint32(p[4]) | uint32(p[5])<<8) + 1
}

// Resilient are the parameters of a resilient (NEXTHOP_GRP_TYPE_RES)
// group.
type Resilient struct {
	Buckets                    uint16
	IdleTimer, UnbalancedTimer time.Duration
}

// EndGroup closes the group's member list and the message; res non-nil
// makes it a resilient group.
func (m *Buf) EndGroup(res *Resilient) {
	ne.PutUint16(m.b[m.group:], uint16(len(m.b)-m.group))
	if res != nil {
		m.U16(unix.NHA_GROUP_TYPE, NEXTHOP_GRP_TYPE_RES)
		n := m.Nest(NHA_RES_GROUP)
		m.U16(NHA_RES_GROUP_BUCKETS, res.Buckets)
		m.U32(NHA_RES_GROUP_IDLE_TIMER, ClockT(res.IdleTimer))
		m.U32(NHA_RES_GROUP_UNBALANCED_TIMER, ClockT(res.UnbalancedTimer))
		m.NestEnd(n)
	}
	m.End()
}

// Blackhole appends RTM_NEWNEXTHOP (CREATE|EXCL) for a blackhole nexthop.
func (m *Buf) Blackhole(seq uint32, id uint32, proto uint8) {
	m.Begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL, seq)
	m.nhmsg(unix.AF_INET, proto) // a blackhole still needs a family
	m.U32(unix.NHA_ID, id)
	m.Flag(unix.NHA_BLACKHOLE)
	m.End()
}

// DelNexthop appends RTM_DELNEXTHOP for a nexthop or group.
func (m *Buf) DelNexthop(seq uint32, id uint32) {
	m.Begin(unix.RTM_DELNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq)
	m.nhmsg(unix.AF_UNSPEC, 0)
	m.U32(unix.NHA_ID, id)
	m.End()
}

// DumpNexthops appends the request for every nexthop object.
func (m *Buf) DumpNexthops(seq uint32) {
	m.Begin(unix.RTM_GETNEXTHOP, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, seq)
	m.nhmsg(unix.AF_UNSPEC, 0)
	m.End()
}
