// Package aggregator is the data plane of an INC switch: per tree, S
// slots that each aggregate one message at a time from every child (a
// client or a lower switch), with a per-slot child bitmap so a duplicate
// is never added twice, and a shadow copy of the slot's last result so a
// result lost on its way down can be sent again after the slot has moved
// on (the draft's gap; SwitchML's answer).
//
// A switch is the root of a tree (it sends results to its children) or an
// inner node (it sends its partial aggregate to its parent and forwards
// the parent's result to its children); trees of any depth are built from
// these two roles.
//
// Message m of a tree uses slot m mod S. A client sends m only after it
// has the result of m−S, so when m arrives the slot has finished m−S; the
// shadow still holds m−S until m completes, which is what a slow sibling
// retransmitting m−S needs.
//
// Every packet is checked before it can touch a slot (docs/inc.md, "What
// the key protects"): its BTH P_Key must match the switch's partition
// (IBTA's P_Key matching), its BTH destination QP must be the QP of the tree
// its INC header names, its RETH R_Key the tree's key, its source the
// address of the child at its rank index (a result: the parent's), and,
// when the receive path says where packets come in (SetIngress), it must
// have come in on an interface of this node's route back to that address
// (strict unicast RPF). A packet failing a check is counted by reason and
// dropped; it never sets a child's bit, so the real packet is still taken.
//
// The package is pure (no sockets, no clock): Handle takes a parsed packet
// and returns the packets to send. One goroutine owns a Switch.
package aggregator

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

// Peer is the far end of a QP: a client or another switch.
type Peer struct {
	Addr netip.Addr
	QP   uint32
}

// Child is one position of a tree node's bitmap.
type Child struct {
	Peer
	Client bool // a client (first hop: the switch NACKs gaps in its stream)
}

// TreeConfig is one tree as the manager programs it on one switch.
type TreeConfig struct {
	ID    uint16
	QP    uint32 // this switch's QP for the tree (packets are demultiplexed by it)
	RKey  uint32 // group key, echoed in RETH
	Slots int    // S
	Root  bool
	// Parent and ParentRank: where an inner node sends partials, and its
	// child index there.
	Parent     Peer
	ParentRank uint16
	Children   []Child // index = the rank field of their packets
	// Ordered sums the children in index order at completion, so results
	// are bit-identical whatever the arrival order (costs a copy per child).
	Ordered bool
}

// Limits are what a switch offers (and registers with the manager).
type Limits struct {
	MaxTrees   int
	MaxSlots   int // per tree
	MaxRanks   int // children per tree
	MaxPayload int // bytes per packet
}

// DefaultLimits are the draft's example: 256 slots × 64 ranks per tree.
var DefaultLimits = Limits{MaxTrees: 64, MaxSlots: 256, MaxRanks: 64, MaxPayload: 4096}

// Out is one packet to send.
type Out struct {
	To   Peer
	NACK bool // an IRN NACK (Cum, Trig) instead of data
	Cum  uint32
	Trig uint32
	Data packet.Data // Payload aliases the Switch's buffers until the next Handle
}

// Counters of one tree (and, summed, of the switch).
type Counters struct {
	Packets        uint64 // INC packets accepted for the tree
	Completed      uint64 // messages aggregated from all children
	Results        uint64 // result packets sent (to children)
	Partials       uint64 // partial aggregates sent to the parent
	Duplicates     uint64 // data already counted in the slot: suppressed
	Served         uint64 // results re-sent from the shadow copy
	PartialResends uint64 // partials re-sent to the parent (a child retransmitted while the result was pending)
	DupResults     uint64 // results from the parent already forwarded
	NACKs          uint64 // NACKs sent to clients
	Stale          uint64 // messages older than the slot's shadow
	Unexpected     uint64 // data for a message the slot cannot take yet, or results nobody waits for
	Mismatch       uint64 // count, type, op or slot disagreeing with the slot or the tree
	// Refused by the per-packet checks (never counted in Packets):
	BadPKey    uint64 // BTH P_Key does not match the switch's partition
	BadRank    uint64 // rank outside the tree
	BadQP      uint64 // on the QP of another tree than the header's
	BadRKey    uint64 // R_Key is not the tree's key
	BadSource  uint64 // source is not the child at the packet's rank (a result: not the parent)
	BadIngress uint64 // came in on an interface the route back to its source does not use
}

func (c *Counters) add(o *Counters) {
	c.Packets += o.Packets
	c.Completed += o.Completed
	c.Results += o.Results
	c.Partials += o.Partials
	c.Duplicates += o.Duplicates
	c.Served += o.Served
	c.PartialResends += o.PartialResends
	c.DupResults += o.DupResults
	c.NACKs += o.NACKs
	c.Stale += o.Stale
	c.Unexpected += o.Unexpected
	c.Mismatch += o.Mismatch
	c.BadPKey += o.BadPKey
	c.BadRank += o.BadRank
	c.BadQP += o.BadQP
	c.BadRKey += o.BadRKey
	c.BadSource += o.BadSource
	c.BadIngress += o.BadIngress
}

// Reason is why the per-packet checks refused a packet.
type Reason uint8

// Reasons, as named in the API's bad_packets.
const (
	ReasonNone    Reason = iota
	ReasonQP             // "qp"
	ReasonRKey           // "rkey"
	ReasonSource         // "source"
	ReasonIngress        // "ingress"
	ReasonRank           // "rank"
	ReasonPKey           // "pkey"
)

func (r Reason) String() string {
	switch r {
	case ReasonQP:
		return "qp"
	case ReasonRKey:
		return "rkey"
	case ReasonSource:
		return "source"
	case ReasonIngress:
		return "ingress"
	case ReasonRank:
		return "rank"
	case ReasonPKey:
		return "pkey"
	}
	return "none"
}

// Refused is the error Handle returns for a packet the per-packet checks
// refused (a one-byte value: returning it does not allocate, which
// matters when a host floods the switch with forged packets).
type Refused Reason

func (e Refused) Error() string { return "refused: " + Reason(e).String() }

// ReasonOf returns why err refused a packet (ReasonNone for other errors).
func ReasonOf(err error) Reason {
	var r Refused
	if errors.As(err, &r) {
		return Reason(r)
	}
	return ReasonNone
}

// Refusals returns the counters of the per-packet checks by reason name.
func (c *Counters) Refusals() map[string]uint64 {
	return map[string]uint64{ReasonQP.String(): c.BadQP, ReasonRKey.String(): c.BadRKey, ReasonSource.String(): c.BadSource,
		ReasonIngress.String(): c.BadIngress, ReasonRank.String(): c.BadRank, ReasonPKey.String(): c.BadPKey}
}

const (
	idle    = iota // waiting for the slot's next message
	collect        // aggregating s.msg
	waiting        // inner node: partial sent, waiting for the parent's result
)

type slot struct {
	state   uint8
	msg     uint32
	arrived int
	bits    []uint64
	hdr     packet.Header // dtype, op, count, collective of the message
	acc     acc
	ranks   [][]byte // Ordered: each child's payload
	partial []byte   // inner node: the partial sent up (re-sent on demand)
	// shadow: the slot's last result
	shadowOK  bool
	shadowMsg uint32
	shadowHdr packet.Header
	shadow    []byte
}

// clientTrack is the receive state of one client child: the lowest message
// not yet received (cum) and which later ones were (IRN receiver).
type clientTrack struct {
	cum  uint32
	seen []uint64 // bit i: cum+1+i received
}

type tree struct {
	cfg     TreeConfig
	slots   []slot
	clients []clientTrack // per child (unused for switches)
	c       Counters
	// Ingress sets (SetIngress), resolved per child and for the parent so
	// the check is a scan of a few ints, not a map lookup.
	childIn  [][]int
	parentIn []int
}

// Switch is the aggregation state of one INC switch.
type Switch struct {
	lim   Limits
	trees map[uint32]*tree // by QP
	out   []Out
	tot   Counters // counters of trees already removed
	// ingress: the interfaces each peer's packets may come in on; nil: no
	// ingress check (SetIngress).
	ingress map[netip.Addr][]int
	// pkey is the P_Key of the switch's QPs, its partition (SetPKey).
	pkey uint16
	// Unknown counts packets for a QP no tree has.
	Unknown uint64
}

// New returns a switch with no trees.
func New(lim Limits) *Switch {
	return &Switch{lim: lim, trees: map[uint32]*tree{}, pkey: rocev2.DefaultPKey}
}

// SetPKey sets the P_Key of the switch's QPs (rocev2.DefaultPKey, the
// full-member default partition, until set): packets whose P_Key does
// not match it are refused (ReasonPKey). The caller checked that it is
// valid (rocev2.ValidPKey).
func (s *Switch) SetPKey(k uint16) { s.pkey = k }

// Limits returns what the switch offers.
func (s *Switch) Limits() Limits { return s.lim }

// Validate checks a tree against the limits.
func (l Limits) Validate(c *TreeConfig) error {
	switch {
	case c.Slots < 1 || c.Slots > l.MaxSlots:
		return fmt.Errorf("tree %d: %d slots, this switch has 1..%d", c.ID, c.Slots, l.MaxSlots)
	case len(c.Children) < 1 || len(c.Children) > l.MaxRanks:
		return fmt.Errorf("tree %d: %d children, this switch takes 1..%d", c.ID, len(c.Children), l.MaxRanks)
	case c.QP == 0 || c.QP > 0xFFFFFF:
		return fmt.Errorf("tree %d: QP %d not in 1..2^24-1", c.ID, c.QP)
	case !c.Root && !c.Parent.Addr.IsValid():
		return fmt.Errorf("tree %d: not a root and no parent", c.ID)
	}
	for i, ch := range c.Children {
		if !ch.Addr.IsValid() || ch.QP == 0 {
			return fmt.Errorf("tree %d: child %d has no address or QP", c.ID, i)
		}
	}
	return nil
}

// SetTrees replaces the tree set. A tree whose configuration is unchanged
// keeps its slots (the manager re-sends the whole set on every change);
// a changed one starts empty.
func (s *Switch) SetTrees(cfgs []TreeConfig) error {
	if len(cfgs) > s.lim.MaxTrees {
		return fmt.Errorf("%d trees, this switch takes %d", len(cfgs), s.lim.MaxTrees)
	}
	seen := map[uint32]bool{}
	for i := range cfgs {
		if err := s.lim.Validate(&cfgs[i]); err != nil {
			return err
		}
		if seen[cfgs[i].QP] {
			return fmt.Errorf("tree %d: QP %d used twice", cfgs[i].ID, cfgs[i].QP)
		}
		seen[cfgs[i].QP] = true
	}
	next := make(map[uint32]*tree, len(cfgs))
	for _, c := range cfgs {
		if old, ok := s.trees[c.QP]; ok && sameConfig(&old.cfg, &c) {
			next[c.QP] = old
			continue
		}
		next[c.QP] = newTree(c)
	}
	for qp, t := range s.trees {
		if next[qp] != t {
			s.tot.add(&t.c)
		}
	}
	s.trees = next
	s.resolveIngress()
	return nil
}

// SetIngress turns on the ingress check: a packet from a peer (a child, or
// the parent for results) is taken only if it came in on one of the
// interfaces in[peer's address] — those of this node's route back to the
// peer, as strict unicast RPF — and refused when the peer has no entry
// (no route back: nothing can be right). Packets then carry the interface
// in Parsed.IfIndex. nil turns the check off, for a receive path that
// cannot say where packets come in. The map is not copied; the caller
// hands over a new one on every change.
func (s *Switch) SetIngress(in map[netip.Addr][]int) {
	s.ingress = in
	s.resolveIngress()
}

// Peers lists the addresses the ingress check needs (every child and
// parent of every tree), once each.
func (s *Switch) Peers() []netip.Addr {
	var out []netip.Addr
	for _, t := range s.trees {
		for _, c := range t.cfg.Children {
			out = append(out, c.Addr)
		}
		if !t.cfg.Root {
			out = append(out, t.cfg.Parent.Addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

func (s *Switch) resolveIngress() {
	for _, t := range s.trees {
		t.childIn, t.parentIn = nil, nil
		if s.ingress == nil {
			continue
		}
		t.childIn = make([][]int, len(t.cfg.Children))
		for i, c := range t.cfg.Children {
			t.childIn[i] = s.ingress[c.Addr]
		}
		if !t.cfg.Root {
			t.parentIn = s.ingress[t.cfg.Parent.Addr]
		}
	}
}

// cameIn reports whether a packet that came in on ifindex may come from a
// peer whose ingress set is in (always, without the check).
func (s *Switch) cameIn(in []int, ifindex int) bool {
	return s.ingress == nil || ifindex != 0 && slices.Contains(in, ifindex)
}

func sameConfig(a, b *TreeConfig) bool {
	if a.ID != b.ID || a.QP != b.QP || a.RKey != b.RKey || a.Slots != b.Slots || a.Root != b.Root ||
		a.Parent != b.Parent || a.ParentRank != b.ParentRank || a.Ordered != b.Ordered || len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if a.Children[i] != b.Children[i] {
			return false
		}
	}
	return true
}

func newTree(c TreeConfig) *tree {
	c.Children = append([]Child(nil), c.Children...)
	t := &tree{cfg: c, slots: make([]slot, c.Slots), clients: make([]clientTrack, len(c.Children))}
	words := (len(c.Children) + 63) / 64
	for i := range t.slots {
		t.slots[i].bits = make([]uint64, words)
		t.slots[i].msg = uint32(i) // the first message the slot expects
	}
	for i := range t.clients {
		t.clients[i].seen = make([]uint64, (2*c.Slots+63)/64)
	}
	return t
}

// QPs lists the QPs of the configured trees (for the kernel filter).
func (s *Switch) QPs() []uint32 {
	out := make([]uint32, 0, len(s.trees))
	for qp := range s.trees {
		out = append(out, qp)
	}
	return out
}

// ErrUnknownTree is returned by Handle for a QP no tree has.
var ErrUnknownTree = errors.New("no tree for this QP")

// newer reports a > b in message-id order (wrapping).
func newer(a, b uint32) bool { return int32(a-b) > 0 }

// Handle processes one parsed INC packet (data from a child, a result from
// the parent) and returns the packets to send, valid until the next call.
func (s *Switch) Handle(p *packet.Parsed) ([]Out, error) {
	s.out = s.out[:0]
	if p.Kind != packet.KindINC {
		return nil, fmt.Errorf("not an INC packet (kind %d)", p.Kind)
	}
	t := s.trees[p.RoCE.BTH.DestQP]
	if t == nil {
		s.Unknown++
		return nil, ErrUnknownTree
	}
	if r := s.check(t, p); r != ReasonNone {
		return nil, Refused(r)
	}
	h := &p.Hdr
	switch {
	case int(h.Slot) != int(h.Msg%uint32(t.cfg.Slots)):
		t.c.Mismatch++
		return nil, fmt.Errorf("message %d in slot %d, want slot %d", h.Msg, h.Slot, h.Msg%uint32(t.cfg.Slots))
	case h.Collective != packet.AllReduce:
		t.c.Mismatch++
		return nil, fmt.Errorf("collective %s is not aggregated", h.Collective)
	case h.PayloadLen() > s.lim.MaxPayload:
		t.c.Mismatch++
		return nil, fmt.Errorf("payload %d bytes, this switch takes %d", h.PayloadLen(), s.lim.MaxPayload)
	}
	t.c.Packets++
	if h.IsResult() {
		s.result(t, p)
	} else {
		s.data(t, p)
	}
	return s.out, nil
}

// check is the per-packet authentication of the data plane: the
// partition (P_Key), which tree (QP), the tree's key, the sender (the child at the rank index, or the
// parent for a result), and where it came in. It counts a refusal.
func (s *Switch) check(t *tree, p *packet.Parsed) Reason {
	h := &p.Hdr
	var in []int
	switch {
	case !rocev2.PKeyMatch(p.RoCE.BTH.PKey, s.pkey):
		t.c.BadPKey++
		return ReasonPKey
	case h.Tree != t.cfg.ID:
		t.c.BadQP++
		return ReasonQP
	case p.RoCE.RETH.RKey != t.cfg.RKey:
		t.c.BadRKey++
		return ReasonRKey
	case h.IsResult():
		if t.cfg.Root || p.Frame.Src != t.cfg.Parent.Addr {
			t.c.BadSource++
			return ReasonSource
		}
		in = t.parentIn
	case int(h.Rank) >= len(t.cfg.Children):
		t.c.BadRank++
		return ReasonRank
	case t.cfg.Children[h.Rank].Addr != p.Frame.Src:
		t.c.BadSource++
		return ReasonSource
	default:
		if t.childIn != nil {
			in = t.childIn[h.Rank]
		}
	}
	if !s.cameIn(in, p.IfIndex) {
		t.c.BadIngress++
		return ReasonIngress
	}
	return ReasonNone
}

func (s *Switch) data(t *tree, p *packet.Parsed) {
	h := &p.Hdr
	m, c := h.Msg, int(h.Rank)
	sl := &t.slots[h.Slot]
	fresh := false
	switch {
	case sl.state == collect && sl.msg == m:
		if sl.bits[c/64]&(1<<(c%64)) != 0 {
			t.c.Duplicates++
		} else if !sameShape(&sl.hdr, h) {
			t.c.Mismatch++
			return
		} else {
			fresh = true
			s.contribute(t, sl, c, p.Payload)
		}
	case sl.state == waiting && sl.msg == m:
		// Every child had sent m; one sends it again, so it has no result:
		// the partial or the result was lost above us. Ask again.
		t.c.Duplicates++
		t.c.PartialResends++
		s.sendPartial(t, sl)
	case sl.shadowOK && sl.shadowMsg == m:
		t.c.Duplicates++
		t.c.Served++
		s.sendResult(t, sl, c)
	case sl.state == idle && (!sl.shadowOK || newer(m, sl.shadowMsg)):
		sl.state, sl.msg, sl.arrived, sl.hdr = collect, m, 0, *h
		sl.hdr.Flags, sl.hdr.Rank = 0, 0
		clear(sl.bits)
		fresh = true
		s.contribute(t, sl, c, p.Payload)
	case sl.shadowOK && !newer(m, sl.shadowMsg):
		t.c.Stale++
	default:
		t.c.Unexpected++
	}
	if t.cfg.Children[c].Client {
		s.track(t, c, m, fresh)
	}
}

func sameShape(a, b *packet.Header) bool {
	return a.DType == b.DType && a.Op == b.Op && a.Count == b.Count && a.Collective == b.Collective
}

// contribute adds child c's payload to the slot and completes it when
// every child has arrived.
func (s *Switch) contribute(t *tree, sl *slot, c int, payload []byte) {
	sl.bits[c/64] |= 1 << (c % 64)
	n := int(sl.hdr.Count)
	if t.cfg.Ordered {
		if sl.ranks == nil {
			sl.ranks = make([][]byte, len(t.cfg.Children))
		}
		sl.ranks[c] = append(sl.ranks[c][:0], payload...)
	} else if sl.arrived == 0 {
		sl.acc.load(sl.hdr.DType, payload, n)
	} else {
		sl.acc.add(sl.hdr.DType, sl.hdr.Op, payload, n)
	}
	sl.arrived++
	if sl.arrived < len(t.cfg.Children) {
		return
	}
	if t.cfg.Ordered {
		sl.acc.load(sl.hdr.DType, sl.ranks[0], n)
		for _, r := range sl.ranks[1:] {
			sl.acc.add(sl.hdr.DType, sl.hdr.Op, r, n)
		}
	}
	t.c.Completed++
	if t.cfg.Root {
		sl.shadow = sl.acc.store(sl.hdr.DType, sl.shadow, n)
		sl.shadowOK, sl.shadowMsg, sl.shadowHdr = true, sl.msg, sl.hdr
		sl.state = idle
		for i := range t.cfg.Children {
			s.sendResult(t, sl, i)
		}
		return
	}
	sl.partial = sl.acc.store(sl.hdr.DType, sl.partial, n)
	sl.state = waiting
	s.sendPartial(t, sl)
}

func (s *Switch) sendPartial(t *tree, sl *slot) {
	t.c.Partials++
	h := sl.hdr
	h.Rank = t.cfg.ParentRank
	s.out = append(s.out, Out{To: t.cfg.Parent, Data: packet.Data{
		DestQP: t.cfg.Parent.QP, PSN: sl.msg, Hdr: h, RKey: t.cfg.RKey, Payload: sl.partial}})
}

func (s *Switch) sendResult(t *tree, sl *slot, c int) {
	t.c.Results++
	h := sl.shadowHdr
	h.Flags = packet.FlagResult
	h.Rank = uint16(c)
	to := t.cfg.Children[c].Peer
	s.out = append(s.out, Out{To: to, Data: packet.Data{
		DestQP: to.QP, PSN: sl.shadowMsg, Hdr: h, RKey: t.cfg.RKey, Payload: sl.shadow}})
}

// result handles the parent's result for a message this inner node sent a
// partial of.
func (s *Switch) result(t *tree, p *packet.Parsed) {
	h := &p.Hdr
	sl := &t.slots[h.Slot]
	switch {
	case sl.state == waiting && sl.msg == h.Msg && sameShape(&sl.hdr, h):
		sl.shadow = append(sl.shadow[:0], p.Payload...)
		sl.shadowOK, sl.shadowMsg, sl.shadowHdr = true, h.Msg, sl.hdr
		sl.state = idle
		for i := range t.cfg.Children {
			s.sendResult(t, sl, i)
		}
	case sl.shadowOK && sl.shadowMsg == h.Msg:
		t.c.DupResults++
	default:
		t.c.Unexpected++
	}
}

// track is the IRN receiver of a client child: on every message that
// arrives out of order it NACKs with the cumulative ack (the lowest
// message not received) and the triggering message.
func (s *Switch) track(t *tree, c int, m uint32, fresh bool) {
	ct := &t.clients[c]
	window := uint32(len(ct.seen) * 64)
	d := m - ct.cum
	switch {
	case d == 0:
		ct.cum++
		// Slide over what already arrived.
		for ct.seen[0]&1 != 0 {
			shiftOne(ct.seen)
			ct.cum++
		}
		shiftOne(ct.seen)
	case int32(d) < 0:
		// Old: a retransmission of something already counted.
	case d > window:
		// Far ahead (a switch that lost its state, or a reprogrammed tree):
		// start over from here.
		ct.cum = m + 1
		clear(ct.seen)
	default:
		i := d - 1
		already := ct.seen[i/64]&(1<<(i%64)) != 0
		ct.seen[i/64] |= 1 << (i % 64)
		if !already && fresh {
			t.c.NACKs++
			s.out = append(s.out, Out{To: t.cfg.Children[c].Peer, NACK: true, Cum: ct.cum, Trig: m})
		}
	}
}

// shiftOne shifts the bitmap down by one bit (bit 0 falls out).
func shiftOne(b []uint64) {
	for i := range b {
		b[i] >>= 1
		if i+1 < len(b) {
			b[i] |= b[i+1] << 63
		}
	}
}

// TreeStats is the state of one tree for the API.
type TreeStats struct {
	ID         uint16
	QP         uint32
	Root       bool
	Children   int
	Slots      int
	SlotsInUse int // slots collecting or waiting for a result
	Counters
	// Busy describes up to 8 slots in use: what each waits for.
	Busy []SlotState
}

// SlotState is one busy slot.
type SlotState struct {
	Slot    int
	State   string // collecting, waiting
	Msg     uint32
	Arrived int   // children counted
	Missing []int // children not yet counted (collecting)
	Shadow  uint32
}

// Stats returns the per-tree and total counters.
func (s *Switch) Stats() ([]TreeStats, Counters) {
	tot := s.tot
	var out []TreeStats
	for _, t := range s.trees {
		ts := TreeStats{ID: t.cfg.ID, QP: t.cfg.QP, Root: t.cfg.Root, Children: len(t.cfg.Children), Slots: t.cfg.Slots, Counters: t.c}
		for i := range t.slots {
			sl := &t.slots[i]
			if sl.state == idle {
				continue
			}
			ts.SlotsInUse++
			if len(ts.Busy) < 8 {
				st := SlotState{Slot: i, State: "collecting", Msg: sl.msg, Arrived: sl.arrived, Shadow: sl.shadowMsg}
				if sl.state == waiting {
					st.State = "waiting"
				} else {
					for c := range t.cfg.Children {
						if sl.bits[c/64]&(1<<(c%64)) == 0 {
							st.Missing = append(st.Missing, c)
						}
					}
				}
				ts.Busy = append(ts.Busy, st)
			}
		}
		tot.add(&t.c)
		out = append(out, ts)
	}
	return out, tot
}
