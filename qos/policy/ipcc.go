package policy

import (
	"container/heap"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"time"

	"github.com/fared/fared/internal/setting"
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
// and queue. It is bounded per source, per port and in total, with LRU
// eviction, and a flow is bound to its ingress port (ipcc_table.go).
//
// Sender QP. A CNP must name the *sender's* QP, which data packets do not
// carry: it is learnt from the flow's acknowledgements. A packet from the
// flow's destination to its source carrying an AETH (ACK/NAK) names the
// sender's QP as its destination QP and acknowledges a PSN: it teaches
// only the flow that recently forwarded that PSN (the last PSNWindow
// PSNs of its data on its bound port, or up to ACKAhead beyond the last:
// the ACK's copy may overtake its data's). When several flows between the two
// addresses did, the one that came in on the port the ACK leaves by is
// taken (its sender is behind that port); if that does not single one out
// the ACK is ambiguous and teaches nothing. Reverse packets without an
// AETH teach nothing: anyone can send one. A learnt QP is not overwritten
// by a conflicting ACK (counted): an ACK from the receiver's side (it
// came in by the port the flow's data leaves by) outranks one from any
// other port, and between ACKs of the same rank QPReplaceVotes
// PSN-matched ACKs in a row must name the same other QP with none naming
// the learnt one in between (see teach); or the flow idles out and is
// learnt afresh. A flow whose sender QP is unknown gets no CNP.
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
	MaxFlows    int // table size (65,536)
	// MaxFlowsPerPort bounds the flows arriving on one port, and
	// MaxFlowsPerSource those of one source address on one port (0:
	// MaxFlows/4 and MaxFlows/16; a source's cap is at most its
	// port's, a port's at most the table's).
	MaxFlowsPerPort, MaxFlowsPerSource int
	// PSNWindow is how many of a flow's most recent PSNs an ACK may
	// acknowledge to teach its sender QP (1024).
	PSNWindow uint32
}

// QPReplaceVotes is how many PSN-matched ACKs in a row must name another
// QP to replace a flow's learnt sender QP.
const QPReplaceVotes = 4

// ACKAhead is how far beyond the last PSN seen an ACK still matches a
// flow: the copy of an ACK can reach the policy before the copy of the
// data packet it acknowledges (they come through different capture
// sockets), and without this a second flow between the same hosts whose
// window holds that PSN would be taught the first flow's QP.
const ACKAhead = 64

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
	In, Out  string // In: the port the flow is bound to
	Prio     int
	Packets  uint64
	Bytes    uint64
	First    time.Time
	LastSeen time.Time
	CNPs     uint64
	LastCNP  time.Time
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
	Observed  uint64 // packets observed
	Flows     int    // in the table
	Learned   uint64 // sender QPs learnt (first time, or replaced)
	Ambiguous uint64 // ACKs whose PSN several flows sent
	Unmatched uint64 // ACKs toward a flow's sender whose PSN no flow sent recently
	CNPs      uint64 // ordered
	NoQP      uint64 // congested flows skipped: sender QP unknown
	RateLimit uint64 // congested flows skipped: notified less than CNPInterval ago
	Expired   uint64
	// The table's bounds (ipcc_table.go).
	Evicted          uint64 // idle flows evicted to make room (source, port or table full)
	TableFull        uint64 // new flows refused: table full of flows active since the last poll
	RefusedPortCap   uint64 // new flows refused: their port's flows all active
	RefusedSourceCap uint64 // new flows refused: their source's flows all active
	PortMismatch     uint64 // data packets of a flow arriving on another port than its own
	// Sender QP learning.
	QPConflict uint64 // PSN-matched ACKs naming another QP than the learnt one
	QPReplaced uint64 // learnt QPs replaced (QPReplaceVotes conflicting ACKs in a row)
	Polls      uint64
	LastPollAt time.Time
}

// IPCC is the policy's state.
type IPCC struct {
	cfg     IPCCConfig
	flows   map[IPCCFlowKey]*flow
	byPair  map[[2]netip.Addr][]*flow // (src, dst) -> flows
	all     flowList                  // every flow, most recently active first
	ports   map[string]*flowList
	sources map[sourceKey]*flowList
	active  []*flow // flows that sent since the last poll
	queues  map[QueueKey]*IPCCQueue
	ifaces  map[string]bool
	stats   IPCCStats
	// stepVisits counts the flows Step looked at (tests: Step's work is
	// proportional to the flows that changed).
	stepVisits uint64
}

// DefaultIPCC returns the defaults (CNP interval 50 µs as DCQCN's NP).
func DefaultIPCC() IPCCConfig {
	return IPCCConfig{Prios: model.PriosOf(3), Poll: 100 * time.Microsecond, CNPInterval: 50 * time.Microsecond,
		Low: 10_000, High: 100_000, Few: 2, More: 8, FlowTimeout: time.Second, CNPDSCP: 48, MaxFlows: 65536, PSNWindow: 1024}
}

// NewIPCC returns an empty policy.
func NewIPCC(cfg IPCCConfig) *IPCC {
	p := &IPCC{cfg: cfg, flows: map[IPCCFlowKey]*flow{}, byPair: map[[2]netip.Addr][]*flow{},
		all: flowList{slot: slotTable}, ports: map[string]*flowList{}, sources: map[sourceKey]*flowList{},
		queues: map[QueueKey]*IPCCQueue{}, ifaces: map[string]bool{}}
	for _, i := range cfg.Ifaces {
		p.ifaces[i] = true
	}
	p.cfg = cfg.WithBounds()
	return p
}

// WithBounds returns c with the flow table's bounds in force: unset ones
// derived (MaxFlows 65,536, per port MaxFlows/4, per source MaxFlows/16,
// PSNWindow 1024), a source's cap within its port's, a port's within
// the table's.
func (c IPCCConfig) WithBounds() IPCCConfig {
	setting.Default(&c.MaxFlows, 65536)
	setting.Default(&c.MaxFlowsPerPort, max(c.MaxFlows/4, 1))
	c.MaxFlowsPerPort = min(c.MaxFlowsPerPort, c.MaxFlows)
	setting.Default(&c.MaxFlowsPerSource, max(c.MaxFlows/16, 1))
	c.MaxFlowsPerSource = min(c.MaxFlowsPerSource, c.MaxFlowsPerPort)
	if c.PSNWindow == 0 {
		c.PSNWindow = 1024
	}
	c.PSNWindow = min(c.PSNWindow, 1<<22)
	return c
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
	if pk.AETH {
		// An acknowledgement: does it name the sender QP of a flow
		// dst -> src? It is not a data flow itself.
		p.learn(pk)
		return
	}
	k := IPCCFlowKey{pk.Src, pk.Dst, pk.DestQP & psnMask}
	f := p.flows[k]
	switch {
	case f == nil:
		if !p.admit(pk.In, pk.Src) {
			return
		}
		f = p.insert(now, k, pk.In)
	case f.In != pk.In && f.In == "" && f.Packets == 0:
		p.bind(f, pk.In) // announced by the CM exchange: its first data packet
	case f.In != pk.In:
		p.stats.PortMismatch++
		return
	}
	f.Out, f.Prio = pk.Out, pk.Prio
	f.Packets++
	f.Bytes += uint64(pk.Size)
	f.LastSeen = now
	if f.recent == 0 {
		p.active = append(p.active, f)
	}
	f.recent += uint64(max(pk.Size, 1))
	p.touch(f)
	f.notePSN(pk.PSN&psnMask, p.cfg.PSNWindow)
}

const psnMask = 0xFFFFFF

// notePSN keeps the window of recent PSNs: [psnLo, psnHi], at most w
// wide, following the flow's PSNs forward (and back over a
// retransmission).
func (f *flow) notePSN(psn, w uint32) {
	switch {
	case !f.psnSet:
		f.psnLo, f.psnHi, f.psnSet = psn, psn, true
	case psnIn(psn, f.psnLo, f.psnHi):
	case (psn-f.psnHi)&psnMask < 1<<23:
		f.psnHi = psn
	default:
		f.psnLo = psn
	}
	if (f.psnHi-f.psnLo)&psnMask >= w {
		f.psnLo = (f.psnHi - (w - 1)) & psnMask
	}
}

// learn finds the flow an ACK acknowledges: among the flows from the
// ACK's destination to its source, the one that recently sent its PSN.
func (p *IPCC) learn(pk IPCCPacket) {
	cands := p.byPair[[2]netip.Addr{pk.Dst, pk.Src}]
	if len(cands) == 0 {
		return
	}
	psn := pk.PSN & psnMask
	var match, onPort *flow
	n, np := 0, 0
	for _, f := range cands {
		if f.psnSet && psnIn(psn, f.psnLo, (f.psnHi+ACKAhead)&psnMask) {
			match = f
			n++
			// The ACK goes out toward the sender: the flow that came in
			// by that port is the likelier one.
			if pk.Out != "" && f.In == pk.Out {
				onPort = f
				np++
			}
		}
	}
	if n > 1 && np == 1 {
		match, n = onPort, 1
	}
	switch {
	case n == 0:
		p.stats.Unmatched++
	case n > 1:
		p.stats.Ambiguous++
	default:
		p.teach(match, pk.DestQP&psnMask, pk.In != "" && pk.In == match.Out)
	}
}

// teach records that a PSN-matched ACK named qp as f's sender QP;
// onPath says the ACK came in by the port f's data leaves by (from the
// receiver's side: where the real receiver's ACKs come from when the
// path is symmetric, as it is to a host on this switch). A learnt QP
// stands against a conflicting ACK:
//
//   - an on-path ACK replaces a QP only off-path ACKs taught (a lucky
//     guess from another port is undone by the receiver's next ACK);
//   - an off-path ACK never replaces a QP an on-path ACK taught;
//   - otherwise QPReplaceVotes of them in a row, naming the same QP with
//     none naming the learnt one in between, replace it (a flow that
//     restarted with a new sender QP; a blind attacker would need that
//     many correct PSN guesses between two of the receiver's ACKs).
func (p *IPCC) teach(f *flow, qp uint32, onPath bool) {
	switch {
	case !f.Learned:
		f.SrcQP, f.Learned, f.qpOnPath = qp, true, onPath
		p.stats.Learned++
	case f.SrcQP == qp:
		f.qpOnPath = f.qpOnPath || onPath
	default:
		p.stats.QPConflict++
		if f.qpOnPath && !onPath {
			return
		}
		if f.rivalQP != qp || f.rivalVotes == 0 {
			f.rivalQP, f.rivalVotes = qp, 0
		}
		f.rivalVotes++
		if f.rivalVotes < QPReplaceVotes && f.qpOnPath == onPath {
			return
		}
		f.SrcQP, f.qpOnPath = qp, onPath
		p.stats.Learned++
		p.stats.QPReplaced++
	}
	f.rivalVotes = 0
}

// LearnPair records a connection's two QPs, as the CM exchange carries
// them (a REQ names the active side's QP, the REP answering it the
// passive side's): a and b are the two ends, aQP and bQP their QPs. The
// flows a->b (to bQP) and b->a (to aQP) get their sender QPs, including
// flows whose data has not been seen yet (they are bound to the port of
// their first data packet). The CM exchange is trusted (qos-sim models
// it; the linux runtime does not parse CM MADs): it sets the QP.
func (p *IPCC) LearnPair(now time.Time, a, b netip.Addr, aQP, bQP uint32) {
	for _, x := range []struct {
		src, dst netip.Addr
		dqp, sqp uint32
	}{{a, b, bQP, aQP}, {b, a, aQP, bQP}} {
		k := IPCCFlowKey{x.src, x.dst, x.dqp & psnMask}
		f := p.flows[k]
		if f == nil {
			if !p.admit("", x.src) {
				continue
			}
			f = p.insert(now, k, "")
		}
		if !f.Learned || f.SrcQP != x.sqp&psnMask {
			p.stats.Learned++
		}
		f.SrcQP, f.Learned, f.rivalVotes, f.qpOnPath = x.sqp&psnMask, true, 0, true
	}
}

// Step takes the depth of every watched queue (bytes, by interface and
// priority) at now, ages the table and returns the CNPs to send now.
func (p *IPCC) Step(now time.Time, depth map[QueueKey]uint64) []CNPOrder {
	p.stats.Polls++
	p.stats.LastPollAt = now
	p.expire(now)
	// Active flows per egress queue: only those that sent since the
	// last poll are looked at.
	byQueue := map[QueueKey][]*flow{}
	for _, f := range p.active {
		p.stepVisits++
		if !f.dead {
			k := QueueKey{f.Out, f.Prio}
			byQueue[k] = append(byQueue[k], f)
		}
	}
	var out []CNPOrder
	for _, k := range sortedQueues(depth) {
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
		q.Count, q.Flows = c, len(flows)
		if d >= p.cfg.Low {
			q.Congested++
		}
		// Heaviest first; ties in key order (deterministic). A heap
		// yields them in that order for O(flows + taken x log flows):
		// a poll usually notifies a few of many active flows.
		h := heaviest(flows)
		heap.Init(&h)
		for n > 0 && h.Len() > 0 {
			f := heap.Pop(&h).(*flow)
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
	for i, f := range p.active {
		f.recent = 0
		p.active[i] = nil
	}
	p.active = p.active[:0]
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

// heaviest is a max-heap of flows by bytes since the last poll, ties in
// key order.
type heaviest []*flow

func (h heaviest) Len() int { return len(h) }
func (h heaviest) Less(i, j int) bool {
	if h[i].recent != h[j].recent {
		return h[i].recent > h[j].recent
	}
	return flowLess(h[i].IPCCFlowKey, h[j].IPCCFlowKey)
}
func (h heaviest) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heaviest) Push(x any)   { *h = append(*h, x.(*flow)) }
func (h *heaviest) Pop() any {
	old := *h
	f := old[len(old)-1]
	*h = old[:len(old)-1]
	return f
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

// Flows returns a copy of the flow table, sorted.
func (p *IPCC) Flows() []IPCCFlow { return p.RecentFlows(len(p.flows)) }

// RecentFlows returns a copy of the n most recently active flows, sorted
// by key (a bounded view of a big table: O(n log n)).
func (p *IPCC) RecentFlows(n int) []IPCCFlow {
	out := make([]IPCCFlow, 0, min(n, p.all.n))
	for f := p.all.head; f != nil && len(out) < n; f = f.links[slotTable].next {
		out = append(out, f.IPCCFlow)
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
	return f.IPCCFlow, true
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
