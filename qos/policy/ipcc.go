package policy

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"time"

	"github.com/fared/fared/qos/model"
)

// IPCC (seed 001, "IPCC"): the congested switch itself sends RoCEv2
// CNPs to the senders whose flows fill a queue, as many as the queue's
// state calls for, a round trip before the receivers' CNPs would.
//
// The policy is pure: a runtime feeds it copies of the RoCEv2 packets the
// switch forwards (Observe) and the depth of the watched queues at each
// poll (Step), and sends the CNPs Step returns. The software data plane
// runs it inside the simulation; qos/ipcc runs it on Linux (AF_PACKET
// copies, HTB backlog over netlink, raw-socket CNPs).
//
// Flow table. A flow is (source IP, destination IP, destination QP) of
// its data packets; the table records its ingress and egress interfaces
// and queue. A CNP must name the *sender's* QP, which data packets do not
// carry: it is learnt from reverse traffic. A packet from the flow's
// destination to its source carrying an AETH (ACK/NAK) names the sender's
// QP as its destination QP and acknowledges a PSN the flow sent: if
// exactly one flow between the two addresses recently sent that PSN, its
// sender QP is learnt. Another reverse packet (no AETH) teaches the QP
// only when a single flow runs between the two addresses. A flow whose
// sender QP is unknown gets no CNP.
//
// Count (the seed's rule). At each poll, for each watched queue at or
// above Low bytes: the trend is the change of depth since the last poll
// and "high" means at or above High bytes. The queue sends, this poll,
//
//	growing and low:    Few CNPs
//	growing and high:   More
//	shrinking and low:  none
//	shrinking and high: Few
//
// per CNPInterval (a queue that did not grow counts as shrinking): a
// poll earns the queue count x poll / CNPInterval CNPs (fractions carry
// over, never more than a whole interval's worth), so the rate does not
// depend on how often the runtime polls. They go one each to the queue's
// active flows (data seen since the previous poll), heaviest first (bytes
// since the previous poll). A flow never gets two CNPs closer than
// CNPInterval: a flow notified less than that ago is skipped and the next
// one gets the CNP; a flow whose sender QP is unknown is skipped.

// IPCCConfig is the ipcc section.
type IPCCConfig struct {
	Ifaces      []string      // egress interfaces watched (empty: all the runtime reports)
	Prios       model.Prios   // queues watched
	Poll        time.Duration // how often queue depths are read
	CNPInterval time.Duration // at least this between two CNPs to one flow (50 µs)
	Low, High   uint64        // bytes: no congestion below Low; high buffer use from High
	Few, More   int           // CNPs per queue per CNPInterval (see the table)
	FlowTimeout time.Duration // a flow not seen this long leaves the table
	CNPDSCP     uint8
	MaxFlows    int // table size; new flows beyond it are not tracked
}

// IPCCPacket is one RoCEv2 packet the switch forwarded.
type IPCCPacket struct {
	Src, Dst netip.Addr
	DestQP   uint32
	PSN      uint32
	AETH     bool // an ACK or NAK (RC acknowledge opcodes)
	CNP      bool
	In, Out  string // interfaces ("" when unknown)
	Prio     int    // egress queue
	Size     int
}

// IPCCFlowKey identifies a flow by its data packets.
type IPCCFlowKey struct {
	Src, Dst netip.Addr
	DestQP   uint32
}

// IPCCFlow is one flow-table entry.
type IPCCFlow struct {
	IPCCFlowKey
	SrcQP    uint32 // the sender's QP (valid when Learned)
	Learned  bool
	In, Out  string
	Prio     int
	Packets  uint64
	Bytes    uint64
	First    time.Time
	LastSeen time.Time
	CNPs     uint64
	LastCNP  time.Time
	// PSNs seen recently (a 24-bit window [psnLo, psnHi]).
	psnLo, psnHi uint32
	psnSet       bool
	recent       uint64 // bytes since the previous poll (0: not active)
}

// CNPOrder is a CNP to send: from the flow's receiver's address to its
// sender, to the sender's QP.
type CNPOrder struct {
	At     time.Time
	Flow   IPCCFlowKey
	Src    netip.Addr // the flow's destination (the CNP looks like its receiver's)
	Dst    netip.Addr // the flow's source (the sender)
	DestQP uint32
	DSCP   uint8
	Queue  QueueKey
	Level  string
}

// IPCCQueue is a watched queue's state.
type IPCCQueue struct {
	Key       QueueKey
	Depth     uint64
	Prev      uint64
	Trend     string // growing | shrinking
	Use       string // low | high | none (below Low)
	Count     int    // CNPs per CNP interval the table called for at the last poll
	Flows     int    // active flows at the last poll
	CNPs      uint64
	Congested uint64 // polls with depth >= Low
	credit    float64
	lastPoll  time.Time
}

// IPCCStats are the policy's counters.
type IPCCStats struct {
	Observed   uint64 // packets observed
	Flows      int    // in the table
	Learned    uint64 // sender QPs learnt
	Ambiguous  uint64 // reverse packets that matched several flows
	Unmatched  uint64 // reverse packets that matched no flow
	CNPs       uint64 // ordered
	NoQP       uint64 // congested flows skipped: sender QP unknown
	RateLimit  uint64 // congested flows skipped: notified less than CNPInterval ago
	TableFull  uint64 // flows not tracked: table full
	Expired    uint64
	Polls      uint64
	LastPollAt time.Time
}

// IPCC is the policy's state.
type IPCC struct {
	cfg    IPCCConfig
	flows  map[IPCCFlowKey]*IPCCFlow
	byPair map[[2]netip.Addr][]*IPCCFlow // (src, dst) -> flows
	queues map[QueueKey]*IPCCQueue
	ifaces map[string]bool
	stats  IPCCStats
}

// DefaultIPCC returns the defaults (CNP interval 50 µs as DCQCN's NP).
func DefaultIPCC() IPCCConfig {
	return IPCCConfig{Prios: model.PriosOf(3), Poll: 100 * time.Microsecond, CNPInterval: 50 * time.Microsecond,
		Low: 10_000, High: 100_000, Few: 2, More: 8, FlowTimeout: time.Second, CNPDSCP: 48, MaxFlows: 65536}
}

// NewIPCC returns an empty policy.
func NewIPCC(cfg IPCCConfig) *IPCC {
	p := &IPCC{cfg: cfg, flows: map[IPCCFlowKey]*IPCCFlow{}, byPair: map[[2]netip.Addr][]*IPCCFlow{},
		queues: map[QueueKey]*IPCCQueue{}, ifaces: map[string]bool{}}
	for _, i := range cfg.Ifaces {
		p.ifaces[i] = true
	}
	if p.cfg.MaxFlows <= 0 {
		p.cfg.MaxFlows = 65536
	}
	return p
}

// Config returns the configuration.
func (p *IPCC) Config() IPCCConfig { return p.cfg }

// Watched reports whether an egress queue is watched.
func (p *IPCC) Watched(iface string, prio int) bool {
	return p.cfg.Prios.Has(prio) && (len(p.ifaces) == 0 || p.ifaces[iface])
}

func psnIn(psn, lo, hi uint32) bool {
	// 24-bit wrap: psn - lo <= hi - lo
	return (psn-lo)&0xFFFFFF <= (hi-lo)&0xFFFFFF
}

// Observe records one forwarded packet.
func (p *IPCC) Observe(now time.Time, pk IPCCPacket) {
	p.stats.Observed++
	if pk.CNP {
		return
	}
	// Reverse traffic: does it name the sender QP of a flow dst -> src?
	if rev := p.byPair[[2]netip.Addr{pk.Dst, pk.Src}]; len(rev) > 0 {
		p.learn(rev, pk)
	}
	if pk.AETH {
		return // acknowledgements are not data flows
	}
	k := IPCCFlowKey{pk.Src, pk.Dst, pk.DestQP & 0xFFFFFF}
	f := p.flows[k]
	if f == nil {
		if len(p.flows) >= p.cfg.MaxFlows {
			p.stats.TableFull++
			return
		}
		f = &IPCCFlow{IPCCFlowKey: k, First: now}
		p.flows[k] = f
		pair := [2]netip.Addr{pk.Src, pk.Dst}
		p.byPair[pair] = append(p.byPair[pair], f)
	}
	f.In, f.Out, f.Prio = pk.In, pk.Out, pk.Prio
	f.Packets++
	f.Bytes += uint64(pk.Size)
	f.LastSeen = now
	f.recent += uint64(max(pk.Size, 1))
	psn := pk.PSN & 0xFFFFFF
	switch {
	case !f.psnSet:
		f.psnLo, f.psnHi, f.psnSet = psn, psn, true
	case psnIn(psn, f.psnLo, f.psnHi):
	case (psn-f.psnHi)&0xFFFFFF < 1<<23:
		f.psnHi = psn
	default:
		f.psnLo = psn
	}
	// Keep the window recent: at most 2^16 PSNs wide.
	if (f.psnHi-f.psnLo)&0xFFFFFF > 1<<16 {
		f.psnLo = (f.psnHi - 1<<16) & 0xFFFFFF
	}
}

func (p *IPCC) learn(cands []*IPCCFlow, pk IPCCPacket) {
	var match *IPCCFlow
	n := 0
	if pk.AETH {
		for _, f := range cands {
			if f.psnSet && psnIn(pk.PSN&0xFFFFFF, f.psnLo, f.psnHi) {
				match = f
				n++
			}
		}
	} else if len(cands) == 1 {
		match, n = cands[0], 1
	} else {
		n = len(cands)
	}
	switch {
	case n == 0:
		p.stats.Unmatched++
	case n > 1:
		p.stats.Ambiguous++
	default:
		qp := pk.DestQP & 0xFFFFFF
		if !match.Learned || match.SrcQP != qp {
			p.stats.Learned++
		}
		match.SrcQP, match.Learned = qp, true
	}
}

// LearnPair records a connection's two QPs, as the CM exchange carries
// them (a REQ names the active side's QP, the REP answering it the
// passive side's): a and b are the two ends, aQP and bQP their QPs. The
// flows a->b (to bQP) and b->a (to aQP) get their sender QPs, including
// flows whose data has not been seen yet.
func (p *IPCC) LearnPair(now time.Time, a, b netip.Addr, aQP, bQP uint32) {
	for _, x := range []struct {
		src, dst netip.Addr
		dqp, sqp uint32
	}{{a, b, bQP, aQP}, {b, a, aQP, bQP}} {
		k := IPCCFlowKey{x.src, x.dst, x.dqp & 0xFFFFFF}
		f := p.flows[k]
		if f == nil {
			if len(p.flows) >= p.cfg.MaxFlows {
				p.stats.TableFull++
				continue
			}
			f = &IPCCFlow{IPCCFlowKey: k, First: now, LastSeen: now}
			p.flows[k] = f
			pair := [2]netip.Addr{x.src, x.dst}
			p.byPair[pair] = append(p.byPair[pair], f)
		}
		if !f.Learned || f.SrcQP != x.sqp&0xFFFFFF {
			p.stats.Learned++
		}
		f.SrcQP, f.Learned = x.sqp&0xFFFFFF, true
	}
}

// Step takes the depth of every watched queue (bytes, by interface and
// priority) at now, ages the table and returns the CNPs to send now.
func (p *IPCC) Step(now time.Time, depth map[QueueKey]uint64) []CNPOrder {
	p.stats.Polls++
	p.stats.LastPollAt = now
	for k, f := range p.flows {
		if now.Sub(f.LastSeen) > p.cfg.FlowTimeout {
			p.drop(k, f)
			p.stats.Expired++
		}
	}
	// Active flows per egress queue.
	byQueue := map[QueueKey][]*IPCCFlow{}
	for _, f := range p.flows {
		if f.recent > 0 {
			k := QueueKey{f.Out, f.Prio}
			byQueue[k] = append(byQueue[k], f)
		}
	}
	var out []CNPOrder
	keys := make([]QueueKey, 0, len(depth))
	for k := range depth {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Iface != keys[j].Iface {
			return keys[i].Iface < keys[j].Iface
		}
		return keys[i].Prio < keys[j].Prio
	})
	for _, k := range keys {
		if !p.Watched(k.Iface, k.Prio) {
			continue
		}
		d := depth[k]
		q := p.queues[k]
		if q == nil {
			q = &IPCCQueue{Key: k, Prev: d}
			p.queues[k] = q
		} else {
			q.Prev = q.Depth
		}
		q.Depth = d
		c, level := p.count(q)
		// Credit for the time since the last poll (at most one poll
		// period's worth on the first one).
		span := p.cfg.Poll
		if !q.lastPoll.IsZero() {
			span = now.Sub(q.lastPoll)
		}
		q.lastPoll = now
		if c == 0 {
			q.credit = 0
		} else if p.cfg.CNPInterval > 0 {
			q.credit = math.Min(q.credit+float64(c)*float64(span)/float64(p.cfg.CNPInterval), float64(c))
		} else {
			q.credit = float64(c)
		}
		n := int(q.credit)
		flows := byQueue[k]
		// Heaviest first; ties in key order (deterministic).
		sort.Slice(flows, func(i, j int) bool {
			if flows[i].recent != flows[j].recent {
				return flows[i].recent > flows[j].recent
			}
			return flowLess(flows[i].IPCCFlowKey, flows[j].IPCCFlowKey)
		})
		q.Count, q.Flows = c, len(flows)
		if d >= p.cfg.Low {
			q.Congested++
		}
		for _, f := range flows {
			if n == 0 {
				break
			}
			if !f.Learned {
				p.stats.NoQP++
				continue
			}
			if !f.LastCNP.IsZero() && now.Sub(f.LastCNP) < p.cfg.CNPInterval {
				p.stats.RateLimit++
				continue
			}
			out = append(out, CNPOrder{At: now, Flow: f.IPCCFlowKey, Src: f.Dst, Dst: f.Src, DestQP: f.SrcQP,
				DSCP: p.cfg.CNPDSCP, Queue: k, Level: level})
			f.CNPs++
			f.LastCNP = now
			q.CNPs++
			p.stats.CNPs++
			q.credit--
			n--
		}
	}
	for _, f := range p.flows {
		f.recent = 0
	}
	return out
}

// count applies the seed's table to a queue.
func (p *IPCC) count(q *IPCCQueue) (int, string) {
	q.Trend = "shrinking"
	if q.Depth > q.Prev {
		q.Trend = "growing"
	}
	switch {
	case q.Depth < p.cfg.Low:
		q.Use = "none"
		return 0, ""
	case q.Depth < p.cfg.High:
		q.Use = "low"
	default:
		q.Use = "high"
	}
	level := q.Trend + "/" + q.Use
	switch {
	case q.Trend == "growing" && q.Use == "high":
		return p.cfg.More, level
	case q.Trend == "growing", q.Use == "high":
		return p.cfg.Few, level
	}
	return 0, level
}

func flowLess(a, b IPCCFlowKey) bool {
	if c := a.Src.Compare(b.Src); c != 0 {
		return c < 0
	}
	if c := a.Dst.Compare(b.Dst); c != 0 {
		return c < 0
	}
	return a.DestQP < b.DestQP
}

func (p *IPCC) drop(k IPCCFlowKey, f *IPCCFlow) {
	delete(p.flows, k)
	pair := [2]netip.Addr{k.Src, k.Dst}
	l := p.byPair[pair]
	for i, g := range l {
		if g == f {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(p.byPair, pair)
	} else {
		p.byPair[pair] = l
	}
}

// Flows returns a copy of the flow table, sorted.
func (p *IPCC) Flows() []IPCCFlow {
	out := make([]IPCCFlow, 0, len(p.flows))
	for _, f := range p.flows {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return flowLess(out[i].IPCCFlowKey, out[j].IPCCFlowKey) })
	return out
}

// Flow returns one entry.
func (p *IPCC) Flow(k IPCCFlowKey) (IPCCFlow, bool) {
	f := p.flows[k]
	if f == nil {
		return IPCCFlow{}, false
	}
	return *f, true
}

// Queues returns the watched queues' states.
func (p *IPCC) Queues() []IPCCQueue {
	out := make([]IPCCQueue, 0, len(p.queues))
	for _, q := range p.queues {
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key.Iface != out[j].Key.Iface {
			return out[i].Key.Iface < out[j].Key.Iface
		}
		return out[i].Key.Prio < out[j].Key.Prio
	})
	return out
}

// Stats returns the counters.
func (p *IPCC) Stats() IPCCStats {
	s := p.stats
	s.Flows = len(p.flows)
	return s
}

func (k IPCCFlowKey) String() string { return fmt.Sprintf("%s->%s qp %#x", k.Src, k.Dst, k.DestQP) }
