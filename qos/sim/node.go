package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/fared/fared/qos/model"
)

// Node is a switch or a host.
type Node struct {
	Name  string
	ID    int
	Host  bool
	Ports []*Port
	net   *Network

	// Switch: the shared buffer and classification.
	Buffer int64 // bytes
	used   int64
	// LossyLimit caps a queue of a priority without PFC, so lossy
	// traffic cannot take the whole shared buffer.
	LossyLimit int64
	DSCP       [64]uint8
	// remaps[group][dscp]: prevention rules (Prio 0xff = none).
	remaps   map[int]*[64]remapTo
	groupIDs map[string]int
	elephant *model.Elephant
	meters   map[*Flow]*meter

	routes [][]*Port // by destination node ID
	static map[int][]*Port

	// Observer, when set, sees every packet a switch enqueues (IPCC
	// builds its flow table from it).
	Observer func(PacketEvent)

	// Host: flows sending from here, by priority, waiting for NIC room.
	waiting [model.NumPrio][]*Flow

	TTLDrops uint64
}

// PacketEvent is what an Observer sees.
type PacketEvent struct {
	Now      time.Duration
	Packet   *Packet // do not keep: packets are recycled
	In, Out  *Port
	Prio     int
	Depth    int64 // queue bytes before this packet
	Buffered int64 // switch buffer in use
}

type remapTo struct {
	to   uint8
	prio uint8
	ok   bool
}

// meter is nft's "limit rate over R burst B" per flow: a token bucket of
// B bytes filling at R; a packet that finds it short makes the flow an
// elephant.
type meter struct {
	tokens   float64
	last     time.Duration
	elephant bool
}

// Port is one side of a link: an egress with eight queues and the
// ingress accounting of what arrived through it.
type Port struct {
	Name  string
	Node  *Node
	Peer  *Port
	Index int
	Rate  float64 // bits/s
	Delay time.Duration

	q      [model.NumPrio]fifo
	qBytes [model.NumPrio]int64
	busy   bool
	// txEnd is when the packet on the wire finishes.
	txEnd time.Duration

	// paused: the peer paused this priority (egress side).
	paused   [model.NumPrio]bool
	pauseGen [model.NumPrio]uint32
	onsetAt  [model.NumPrio]time.Duration

	// Settings (applied by NodeBackend or directly).
	PFC     model.Prios
	Drop    model.Prios
	Thr     [model.NumPrio]model.PFCThresholds
	Profile [model.NumPrio]*model.Profile
	Sched   [model.NumPrio]model.Queue
	Group   int // prevention port group, -1 = none

	deficit [model.NumPrio]int64
	rr      int
	arrived bool // the round-robin pointer just moved to rr

	// Ingress accounting: bytes buffered in this node that arrived here.
	pg         [model.NumPrio]int64
	xoffSent   [model.NumPrio]bool
	refreshGen [model.NumPrio]uint32

	C    [model.NumPrio]QueueStats
	hist [model.NumPrio]*depthHist
	// PeakPG is the highest priority-group occupancy seen, per priority.
	PeakPG [model.NumPrio]int64
}

// QueueStats are one queue's cumulative counters.
type QueueStats struct {
	EnqPackets, EnqBytes uint64
	TxPackets, TxBytes   uint64
	Drops                uint64
	Marks                uint64
	PauseRx, PauseTx     uint64
	XOFFOnsets           uint64
	Remapped             uint64
	ElephantBytes        uint64 // of TxBytes
	MiceBytes            uint64
	CNPsFromSwitch       uint64
}

// QueueObs is a snapshot of one queue for policies.
type QueueObs struct {
	QueueStats
	Depth  int64 // bytes queued now
	Paused bool  // the peer has it paused
	// Buffered is the node's shared buffer in use; BufferSize its size.
	Buffered, BufferSize int64
}

// Queue observes queue q.
func (p *Port) Queue(q int) QueueObs {
	return QueueObs{QueueStats: p.C[q], Depth: p.qBytes[q], Paused: p.paused[q],
		Buffered: p.Node.used, BufferSize: p.Node.Buffer}
}

// XOFFSince reports when the peer paused queue q, if it has it paused
// now: the ground truth a watchdog's detection is measured against.
func (p *Port) XOFFSince(q int) (time.Duration, bool) {
	return p.onsetAt[q], p.paused[q]
}

// SetProfile changes queue q's WRED/ECN profile while the network runs
// (nil: tail drop only).
func (p *Port) SetProfile(q int, prof *model.Profile) {
	if prof != nil {
		c := *prof
		prof = &c
	}
	p.Profile[q] = prof
}

// PG is the bytes buffered in the node that arrived through this port in
// priority q.
func (p *Port) PG(q int) int64 { return p.pg[q] }

// fifo is a queue of packets.
type fifo struct {
	b    []*Packet
	head int
}

func (f *fifo) push(p *Packet) { f.b = append(f.b, p) }
func (f *fifo) len() int       { return len(f.b) - f.head }
func (f *fifo) pop() *Packet {
	p := f.b[f.head]
	f.b[f.head] = nil
	f.head++
	if f.head > 64 && f.head*2 >= len(f.b) {
		n := copy(f.b, f.b[f.head:])
		f.b = f.b[:n]
		f.head = 0
	}
	return p
}
func (f *fifo) peek() *Packet { return f.b[f.head] }

// AddNode adds a switch (host false) or a host.
func (n *Network) AddNode(name string, host bool) *Node {
	nd := &Node{Name: name, ID: len(n.Nodes), Host: host, net: n, Buffer: 12 << 20, LossyLimit: 1 << 20,
		static: map[int][]*Port{}, groupIDs: map[string]int{}, remaps: map[int]*[64]remapTo{}, meters: map[*Flow]*meter{}}
	n.Nodes = append(n.Nodes, nd)
	n.names[name] = nd
	n.routed = false
	return nd
}

// Connect links a and b with a full-duplex link; ports are named after
// the peer ("b", then "b-2" for a parallel link).
func (n *Network) Connect(a, b *Node, rate float64, delay time.Duration) (*Port, *Port) {
	pa := a.newPort(b.Name, rate, delay)
	pb := b.newPort(a.Name, rate, delay)
	pa.Peer, pb.Peer = pb, pa
	n.routed = false
	return pa, pb
}

func (nd *Node) newPort(peer string, rate float64, delay time.Duration) *Port {
	name := peer
	for k := 2; nd.Port(name) != nil; k++ {
		name = fmt.Sprintf("%s-%d", peer, k)
	}
	p := &Port{Name: name, Node: nd, Index: len(nd.Ports), Rate: rate, Delay: delay, Group: -1}
	for q := range p.Sched {
		p.Sched[q] = model.Queue{Sched: model.Strict, Weight: 1}
		p.Thr[q] = model.PFCThresholds{XOFF: 300_000, XON: 250_000, Headroom: 100_000}
	}
	nd.Ports = append(nd.Ports, p)
	return p
}

// Port returns the named port, or nil.
func (nd *Node) Port(name string) *Port {
	for _, p := range nd.Ports {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Network is the node's network.
func (nd *Node) Network() *Network { return nd.net }

// Used is the shared buffer in use.
func (nd *Node) Used() int64 { return nd.used }

// SetRoute makes nd send packets for dst through the given ports
// (overriding shortest paths; a loop is allowed).
func (nd *Node) SetRoute(dst *Node, via ...*Port) {
	nd.static[dst.ID] = via
	nd.net.routed = false
}

// Route computes shortest-path (hop count) ECMP routes to every host,
// then applies static routes.
func (n *Network) Route() {
	for _, nd := range n.Nodes {
		nd.routes = make([][]*Port, len(n.Nodes))
	}
	for _, dst := range n.Nodes {
		// BFS from dst over reversed links (links are symmetric).
		dist := make([]int, len(n.Nodes))
		for i := range dist {
			dist[i] = -1
		}
		dist[dst.ID] = 0
		queue := []*Node{dst}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if x.Host && x != dst {
				continue // hosts do not forward
			}
			for _, p := range x.Ports {
				y := p.Peer.Node
				if dist[y.ID] < 0 {
					dist[y.ID] = dist[x.ID] + 1
					queue = append(queue, y)
				}
			}
		}
		for _, nd := range n.Nodes {
			if nd == dst || dist[nd.ID] < 0 {
				continue
			}
			for _, p := range nd.Ports {
				if d := dist[p.Peer.Node.ID]; d >= 0 && d == dist[nd.ID]-1 {
					nd.routes[dst.ID] = append(nd.routes[dst.ID], p)
				}
			}
		}
	}
	for _, nd := range n.Nodes {
		for id, via := range nd.static {
			nd.routes[id] = via
		}
	}
	n.routed = true
}

func (nd *Node) egress(p *Packet) *Port {
	r := nd.routes[p.Dst.ID]
	switch len(r) {
	case 0:
		return nil
	case 1:
		return r[0]
	}
	id := 0
	if p.Flow != nil {
		id = p.Flow.ID
	}
	h := uint64(id)*0x9e3779b97f4a7c15 ^ uint64(nd.ID)*0xbf58476d1ce4e5b9
	h ^= h >> 31
	return r[h%uint64(len(r))]
}

func txTime(size int, rate float64) time.Duration {
	return time.Duration(math.Round(float64(size) * 8 / rate * 1e9))
}

// send puts a packet a host originates on the wire's queue.
func (nd *Node) send(p *Packet) {
	out := nd.egress(p)
	if out == nil {
		nd.net.drop(p, "no route")
		return
	}
	p.Prio = nd.DSCP[p.DSCP]
	out.enqueueLocal(p)
}

// enqueueLocal queues a host's own packet (no buffer accounting: the
// sender waits for NIC room instead).
func (p *Port) enqueueLocal(pkt *Packet) {
	q := int(pkt.Prio)
	pkt.In = nil
	pkt.Enq = p.Node.net.now
	p.histNote(q)
	p.q[q].push(pkt)
	p.qBytes[q] += int64(pkt.Size)
	p.C[q].EnqPackets++
	p.C[q].EnqBytes += uint64(pkt.Size)
	p.kick()
}

// arrive handles a packet that has fully arrived through port p.
func (p *Port) arrive(pkt *Packet) {
	nd := p.Node
	net := nd.net
	if nd.Host {
		nd.receive(pkt)
		return
	}
	if pkt.TTL <= 1 {
		nd.TTLDrops++
		net.drop(pkt, "ttl")
		return
	}
	pkt.TTL--
	out := nd.egress(pkt)
	if out == nil {
		net.drop(pkt, "no route")
		return
	}
	prio, pg := nd.prevent(pkt, p, out)
	pkt.Color = model.Green
	if e := nd.elephant; e != nil && pkt.Kind == Data && pkt.Flow != nil {
		if nd.meter(pkt, e) {
			if !e.ClassifyOnly {
				prio = e.Prio
				pkt.Color = e.Color
			}
			pkt.Elephant = true
		} else {
			pkt.Elephant = false
		}
	}
	pkt.Prio = prio
	if pg == noRemap {
		pg = int(prio)
	}
	pkt.PG = uint8(pg)
	q := int(prio)
	size := int64(pkt.Size)
	if out.Drop.Has(q) {
		out.C[q].Drops++
		net.drop(pkt, "watchdog")
		return
	}
	if nd.used+size > nd.Buffer {
		out.C[q].Drops++
		net.drop(pkt, "buffer")
		return
	}
	lossless := p.PFC.Has(pg)
	if lossless {
		if t := p.Thr[pg]; p.pg[pg]+size > int64(t.XOFF+t.Headroom) {
			out.C[q].Drops++
			net.drop(pkt, "headroom")
			return
		}
	}
	if !p.PFC.Has(q) && out.qBytes[q]+size > nd.LossyLimit {
		out.C[q].Drops++
		net.drop(pkt, "lossy limit")
		return
	}
	if prof := out.Profile[q]; prof != nil {
		if pr := out.redProb(prof, pkt.Color, out.qBytes[q]); pr > 0 && net.rng.Float64() < pr {
			switch {
			case pkt.ECN != NotECT && prof.ECN.Marks(pkt.Color):
				if !prof.Dequeue && pkt.ECN != CE {
					pkt.ECN = CE
					out.C[q].Marks++
				}
			default:
				out.C[q].Drops++
				net.drop(pkt, "wred")
				return
			}
		}
	}
	if nd.Observer != nil {
		nd.Observer(PacketEvent{Now: net.now, Packet: pkt, In: p, Out: out, Prio: q, Depth: out.qBytes[q], Buffered: nd.used})
	}
	pkt.In = p
	pkt.Enq = net.now
	out.histNote(q)
	out.q[q].push(pkt)
	out.qBytes[q] += size
	out.C[q].EnqPackets++
	out.C[q].EnqBytes += uint64(size)
	nd.used += size
	p.pg[pg] += size
	if p.pg[pg] > p.PeakPG[pg] {
		p.PeakPG[pg] = p.pg[pg]
	}
	if lossless && !p.xoffSent[pg] && p.pg[pg] >= int64(p.Thr[pg].XOFF) {
		p.sendPFC(pg, true)
	}
	out.kick()
}

// noRemap is prevent's priority group when it remapped nothing.
const noRemap = -1

// prevent classifies a packet arriving through in and leaving through
// out: its DSCP's priority, unless it enters and leaves through one port
// group (a high-risk flow, the seed's Figure 8) and the group remaps its
// DSCP (Figure 9). A remapped packet goes to the new priority's egress
// queue but stays in the ingress priority group it arrived in: the
// upstream sent it in that priority, and only a PAUSE of that priority
// stops the upstream. (This is the dependency edge the remap adds, from
// the old priority to the new; it is why the second priority has no
// cycle where the remap happens at a bounce.) pg is noRemap when the
// packet kept its DSCP. The rule is looked up once, for the DSCP the
// packet arrived with: a packet remapped here is not remapped again here.
func (nd *Node) prevent(pkt *Packet, in, out *Port) (prio uint8, pg int) {
	prio = nd.DSCP[pkt.DSCP]
	if in.Group < 0 || in.Group != out.Group {
		return prio, noRemap
	}
	rm := nd.remaps[in.Group]
	if rm == nil || !rm[pkt.DSCP].ok {
		return prio, noRemap
	}
	r := rm[pkt.DSCP]
	out.C[prio].Remapped++
	pkt.DSCP = r.to
	return r.prio, int(prio)
}

// release returns a departing (or flushed) packet's bytes to the
// priority group it was counted in, and resumes the upstream below XON.
func (p *Port) release(pkt *Packet) {
	g := int(pkt.PG)
	p.pg[g] -= int64(pkt.Size)
	if p.xoffSent[g] && p.pg[g] <= int64(p.Thr[g].XON) {
		p.sendPFC(g, false)
	}
}

// meter runs the flow's token bucket; true when the flow is an elephant.
func (nd *Node) meter(pkt *Packet, e *model.Elephant) bool {
	now := nd.net.now
	m := nd.meters[pkt.Flow]
	if m == nil || (e.Idle > 0 && now-m.last > e.Idle) {
		m = &meter{tokens: float64(e.Size), last: now}
		nd.meters[pkt.Flow] = m
	}
	m.tokens += float64(now-m.last) / 1e9 * float64(e.Rate)
	if m.tokens > float64(e.Size) {
		m.tokens = float64(e.Size)
	}
	m.last = now
	if m.tokens >= float64(pkt.Size) {
		m.tokens -= float64(pkt.Size)
	} else {
		m.elephant = true
	}
	return m.elephant
}

// redProb is the WRED probability of marking or dropping a packet of
// colour c arriving at (or leaving) a queue of depth bytes.
func (p *Port) redProb(prof *model.Profile, c model.Color, depth int64) float64 {
	w := prof.Colors[c]
	if !w.Enable {
		return 0
	}
	d := uint64(depth)
	switch {
	case d < w.Min:
		return 0
	case d >= w.Max:
		return 1
	}
	return w.Probability() * float64(d-w.Min) / float64(w.Max-w.Min)
}

// kick starts a transmission if the port is idle and a queue may send.
func (p *Port) kick() {
	if p.busy {
		return
	}
	q := p.pick()
	if q < 0 {
		return
	}
	p.transmit(q)
}

// eligible: queue q has packets and is not held by a PAUSE it honours.
func (p *Port) eligible(q int) bool {
	return p.q[q].len() > 0 && !(p.paused[q] && p.PFC.Has(q))
}

// pick chooses the next queue: strict queues first, highest priority
// first; then deficit round robin over the others.
func (p *Port) pick() int {
	for q := model.NumPrio - 1; q >= 0; q-- {
		if p.Sched[q].Sched == model.Strict && p.eligible(q) {
			return q
		}
	}
	any := false
	for q := 0; q < model.NumPrio; q++ {
		if p.Sched[q].Sched != model.Strict && p.eligible(q) {
			any = true
			break
		}
	}
	if !any {
		return -1
	}
	// Deficit round robin: a queue gets its quantum when the pointer
	// arrives at it, and keeps the turn while its deficit covers the
	// head packet.
	for {
		q := p.rr
		if p.Sched[q].Sched != model.Strict {
			if p.eligible(q) {
				if p.arrived {
					p.deficit[q] += int64(p.Sched[q].Weight) * 1500
					p.arrived = false
				}
				if p.deficit[q] >= int64(p.q[q].peek().Size) {
					return q
				}
			} else if p.q[q].len() == 0 {
				p.deficit[q] = 0
			}
		}
		p.rr = (p.rr + 1) % model.NumPrio
		p.arrived = true
	}
}

func (p *Port) transmit(q int) {
	nd := p.Node
	net := nd.net
	pkt := p.q[q].pop()
	p.histNote(q)
	size := int64(pkt.Size)
	p.qBytes[q] -= size
	if p.Sched[q].Sched != model.Strict {
		p.deficit[q] -= size
	}
	if in := pkt.In; in != nil {
		nd.used -= size
		in.release(pkt)
		pkt.In = nil
	}
	// Fast ECN: the departing packet carries the queue's state now.
	if prof := p.Profile[q]; prof != nil && prof.Dequeue && pkt.ECN != NotECT && pkt.ECN != CE && prof.ECN.Marks(pkt.Color) {
		if pr := p.redProb(prof, pkt.Color, p.qBytes[q]); pr > 0 && net.rng.Float64() < pr {
			pkt.ECN = CE
			p.C[q].Marks++
		}
	}
	c := &p.C[q]
	c.TxPackets++
	c.TxBytes += uint64(size)
	if pkt.Kind == Data {
		if pkt.Elephant {
			c.ElephantBytes += uint64(size)
		} else {
			c.MiceBytes += uint64(size)
		}
	}
	d := txTime(pkt.Size, p.Rate)
	p.busy = true
	p.txEnd = net.now + d
	net.schedule(event{t: net.now + d, kind: evTxDone, port: p})
	net.schedule(event{t: net.now + d + p.Delay, kind: evArrive, port: p.Peer, pkt: pkt})
	if nd.Host {
		nd.wake(q)
	}
}

func (p *Port) txDone() {
	p.busy = false
	p.kick()
}

// pauseTime is how long a PAUSE of the configured quanta holds.
func (p *Port) pauseTime() time.Duration {
	return time.Duration(float64(p.Node.net.P.PauseQuanta) * 512 / p.Rate * 1e9)
}

// sendPFC sends a PFC frame for priority q to the peer: on = XOFF
// (PAUSE with full quanta), off = XON (quanta 0). The frame goes ahead
// of queued data; it reaches the peer after the link delay.
func (p *Port) sendPFC(q int, on bool) {
	net := p.Node.net
	p.xoffSent[q] = on
	p.C[q].PauseTx++
	net.schedule(event{t: net.now + txTime(64, p.Rate) + p.Delay, kind: evPFC, port: p.Peer, prio: uint8(q), on: on})
	p.refreshGen[q]++
	if on {
		net.schedule(event{t: net.now + p.pauseTime()/2, kind: evPauseRefresh, port: p, prio: uint8(q), gen: p.refreshGen[q]})
	}
}

func (p *Port) refreshPause(q int, gen uint32) {
	if gen != p.refreshGen[q] || !p.xoffSent[q] {
		return
	}
	if !p.PFC.Has(q) {
		// PFC went off: stop asking; the peer's pause runs out.
		p.xoffSent[q] = false
		return
	}
	p.sendPFC(q, true)
}

// pfcFrame handles a PFC frame received on p for priority q.
func (p *Port) pfcFrame(q int, on bool) {
	net := p.Node.net
	c := &p.C[q]
	c.PauseRx++
	p.pauseGen[q]++
	if !on {
		if p.paused[q] {
			p.paused[q] = false
			p.kick()
		}
		return
	}
	if !p.paused[q] {
		c.XOFFOnsets++
		p.onsetAt[q] = net.now
	}
	p.paused[q] = true
	net.schedule(event{t: net.now + p.pauseTime(), kind: evPauseExpire, port: p, prio: uint8(q), gen: p.pauseGen[q]})
}

// flush drops everything queued in q (the watchdog's drop action).
func (p *Port) flush(q int) {
	nd := p.Node
	p.histNote(q)
	for p.q[q].len() > 0 {
		pkt := p.q[q].pop()
		size := int64(pkt.Size)
		p.qBytes[q] -= size
		if in := pkt.In; in != nil {
			nd.used -= size
			in.release(pkt)
		}
		p.C[q].Drops++
		nd.net.drop(pkt, "watchdog")
	}
}

// SendCNP sends a congestion notification from switch sw to flow f's
// sender, as IPCC does (the switch learnt the sender's QP from reverse
// traffic). It reports false when sw has no route to the sender.
func (n *Network) SendCNP(sw *Node, f *Flow) bool {
	pkt := n.newPacket()
	*pkt = Packet{Flow: f, Kind: CNP, Size: n.P.CNPSize, DSCP: n.P.CNPDSCP, TTL: n.P.TTL, Src: sw, Dst: f.Src}
	out := sw.egress(pkt)
	if out == nil {
		n.release(pkt)
		return false
	}
	n.CNPs["switch"]++
	pkt.Prio = sw.DSCP[pkt.DSCP]
	out.C[pkt.Prio].CNPsFromSwitch++
	// A locally generated packet uses no ingress priority group.
	out.enqueueLocal(pkt)
	return true
}
