// Package sim is a deterministic, seeded, discrete-event data plane for
// lossless Ethernet: switches with eight priority queues per port and a
// shared buffer, PFC per priority with propagation delay, RED/ECN marking
// at enqueue or dequeue (fast ECN), port-group remapping (deadlock
// prevention), large-flow metering, and hosts with DCQCN reaction points
// (RoCEv2 senders), notification points (receivers sending CNPs) and a
// DCTCP sender for cross-checks against ns-3.
//
// A Node is driven through the same model.Backend interface as a Linux
// host or a SONiC switch (NodeBackend), so QoS policies run unchanged on
// it. Policies that tune the data plane while it runs (AI ECN, IPCC)
// read per-queue observations (Port.Queue), change profiles
// (Port.SetProfile), send CNPs from a switch (Network.SendCNP), watch
// packets (Node.Observer) and run periodically in simulated time
// (Network.Every).
//
// Time is simulated nanoseconds (time.Duration from the start). The same
// scenario and seed give the same result, event for event: events are
// ordered by (time, sequence number) and no decision depends on map
// order.
package sim

import (
	"math/rand/v2"
	"time"

	"github.com/fared/fared/qos/model"
)

type evKind uint8

const (
	evArrive       evKind = iota // a packet has fully arrived at port (ingress)
	evTxDone                     // port finished sending a packet
	evPFC                        // a PFC frame reaches port (its egress side)
	evPauseExpire                // a received PAUSE runs out
	evPauseRefresh               // resend a PAUSE while still above XON
	evFlowStart
	evFlowSend
	evDCQCNAlpha
	evDCQCNRate
	evRTO
	evCall
)

type event struct {
	t    time.Duration
	seq  uint64
	kind evKind
	prio uint8
	on   bool
	gen  uint32
	port *Port
	pkt  *Packet
	flow *Flow
	fn   func()
}

// eventQueue is a 4-ary min-heap on (t, seq) of small entries that
// point into a slab of events: sifting moves 24 bytes, not whole events.
type eventQueue struct {
	h    []hent
	slab []event
	free []int32
}

type hent struct {
	t   time.Duration
	seq uint64
	id  int32
}

func (a hent) before(b hent) bool { return a.t < b.t || (a.t == b.t && a.seq < b.seq) }

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) minTime() time.Duration { return q.h[0].t }

func (q *eventQueue) push(e event) {
	var id int32
	if k := len(q.free); k > 0 {
		id = q.free[k-1]
		q.free = q.free[:k-1]
		q.slab[id] = e
	} else {
		id = int32(len(q.slab))
		q.slab = append(q.slab, e)
	}
	x := hent{e.t, e.seq, id}
	q.h = append(q.h, x)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(q.h[p]) {
			break
		}
		q.h[i] = q.h[p]
		i = p
	}
	q.h[i] = x
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	x := q.h[n]
	q.h = q.h[:n]
	if n > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= n {
				break
			}
			m := c
			for j := c + 1; j < c+4 && j < n; j++ {
				if q.h[j].before(q.h[m]) {
					m = j
				}
			}
			if !q.h[m].before(x) {
				break
			}
			q.h[i] = q.h[m]
			i = m
		}
		q.h[i] = x
	}
	e := q.slab[top.id]
	q.slab[top.id] = event{}
	q.free = append(q.free, top.id)
	return e
}

// Params are the network-wide parameters.
type Params struct {
	Seed uint64
	// PauseQuanta is what a PAUSE asks for, in quanta of 512 bit times
	// (0xFFFF by default); a PAUSE is resent every half of that while the
	// priority group stays above XON.
	PauseQuanta int
	// CNP is the notification point's setting.
	CNPInterval time.Duration // at most one CNP per flow per interval (50 µs)
	CNPDSCP     uint8
	CNPSize     int
	AckSize     int
	DCQCN       DCQCNParams
	DCTCP       DCTCPParams
	// HostQueue is how many bytes a host NIC queue holds before a sender
	// waits (a NIC pulls work from its send queues only when it can send).
	HostQueue int
	// TTL of new packets; a routing loop ends a packet's life at zero.
	TTL uint8
	// HistBucket is the resolution of queue-depth histograms in bytes.
	HistBucket int
}

// DCQCNParams are the reaction point's (Zhu et al., SIGCOMM 2015).
type DCQCNParams struct {
	G           float64       // alpha gain (1/256)
	AlphaTimer  time.Duration // alpha decay period without CNPs (55 µs)
	RateTimer   time.Duration // rate increase period (55 µs)
	ByteCounter int64         // rate increase every this many bytes (10 MB)
	F           int           // fast recovery steps (5)
	RAI         float64       // additive increase, bits/s (40 Mb/s)
	RHAI        float64       // hyper increase, bits/s (200 Mb/s)
	MinRate     float64       // bits/s (10 Mb/s)
	// RTO: a sender with unacknowledged bytes and no progress for this
	// long goes back to the last acknowledged byte.
	RTO time.Duration
	// AckEvery is how many bytes a receiver takes before it acknowledges.
	AckEvery int64
}

// DCTCPParams are the DCTCP sender's (RFC 8257).
type DCTCPParams struct {
	G        float64 // alpha gain (1/16)
	InitCwnd int     // segments (10)
	RTO      time.Duration
	MinRTO   time.Duration
}

// DefaultParams returns the reference settings.
func DefaultParams() Params {
	return Params{
		Seed:        1,
		PauseQuanta: 0xFFFF,
		CNPInterval: 50 * time.Microsecond,
		CNPDSCP:     48,
		CNPSize:     64,
		AckSize:     64,
		DCQCN: DCQCNParams{G: 1.0 / 256, AlphaTimer: 55 * time.Microsecond, RateTimer: 55 * time.Microsecond,
			ByteCounter: 10_000_000, F: 5, RAI: 40e6, RHAI: 200e6, MinRate: 10e6, RTO: time.Millisecond, AckEvery: 64_000},
		DCTCP:      DCTCPParams{G: 1.0 / 16, InitCwnd: 10, RTO: 10 * time.Millisecond},
		HostQueue:  2 * 1500,
		TTL:        64,
		HistBucket: 1000,
	}
}

// Network is the simulated fabric.
type Network struct {
	P     Params
	now   time.Duration
	seq   uint64
	ev    eventQueue
	rng   *rand.Rand
	Nodes []*Node
	Flows []*Flow
	names map[string]*Node
	free  []*Packet

	// Events counts processed events (for speed figures).
	Events uint64
	// Drops by reason, network-wide.
	Drops map[string]uint64
	// CNPs sent, by origin ("receiver", "switch").
	CNPs map[string]uint64

	routed     bool
	statsStart time.Duration
}

// New returns an empty network.
func New(p Params) *Network {
	return &Network{P: p, rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15)),
		names: map[string]*Node{}, Drops: map[string]uint64{}, CNPs: map[string]uint64{}}
}

// Now is the simulated time.
func (n *Network) Now() time.Duration { return n.now }

func (n *Network) schedule(e event) {
	n.seq++
	e.seq = n.seq
	n.ev.push(e)
}

// At runs fn at simulated time t (not before now).
func (n *Network) At(t time.Duration, fn func()) {
	if t < n.now {
		t = n.now
	}
	n.schedule(event{t: t, kind: evCall, fn: fn})
}

// Every runs fn every period from start on, until fn returns false.
func (n *Network) Every(start, period time.Duration, fn func(now time.Duration) bool) {
	var tick func()
	next := start
	tick = func() {
		if fn(n.now) {
			next += period
			n.At(next, tick)
		}
	}
	n.At(start, tick)
}

// RunUntil processes events up to and including time t.
func (n *Network) RunUntil(t time.Duration) {
	if !n.routed {
		n.Route()
	}
	for n.ev.len() > 0 && n.ev.minTime() <= t {
		e := n.ev.pop()
		n.now = e.t
		n.Events++
		n.dispatch(&e)
	}
	if n.now < t {
		n.now = t
	}
}

func (n *Network) dispatch(e *event) {
	switch e.kind {
	case evArrive:
		e.port.arrive(e.pkt)
	case evTxDone:
		e.port.txDone()
	case evPFC:
		e.port.pfcFrame(int(e.prio), e.on)
	case evPauseExpire:
		p := e.port
		if p.pauseGen[e.prio] == e.gen && p.paused[e.prio] {
			p.paused[e.prio] = false
			p.kick()
		}
	case evPauseRefresh:
		e.port.refreshPause(int(e.prio), e.gen)
	case evFlowStart:
		e.flow.start()
	case evFlowSend:
		if e.gen == e.flow.sendGen {
			e.flow.sendTimer()
		}
	case evDCQCNAlpha:
		e.flow.alphaTimer(e.gen)
	case evDCQCNRate:
		e.flow.rateTimer(e.gen)
	case evRTO:
		e.flow.rtoTimer(e.gen)
	case evCall:
		e.fn()
	}
}

// Node returns the named node, or nil.
func (n *Network) Node(name string) *Node { return n.names[name] }

// Rand is the network's seeded random source (policies that need
// randomness use it to stay deterministic).
func (n *Network) Rand() *rand.Rand { return n.rng }

func (n *Network) newPacket() *Packet {
	if k := len(n.free); k > 0 {
		p := n.free[k-1]
		n.free = n.free[:k-1]
		return p
	}
	return &Packet{}
}

func (n *Network) release(p *Packet) {
	*p = Packet{}
	n.free = append(n.free, p)
}

func (n *Network) drop(p *Packet, why string) {
	n.Drops[why]++
	if p.Kind == Data && p.Flow != nil {
		p.Flow.Lost++
	}
	n.release(p)
}

// PacketKind tells data from control packets.
type PacketKind uint8

const (
	Data PacketKind = iota
	Ack             // cumulative acknowledgement (DCTCP, RoCE RC)
	Nak             // out-of-order at the receiver: go back
	CNP             // congestion notification (RoCEv2 opcode 0x81)
)

// ECN codepoints (RFC 3168).
const (
	NotECT uint8 = 0
	ECT0   uint8 = 2
	CE     uint8 = 3
)

// Packet is one frame in flight or in a queue.
type Packet struct {
	Flow     *Flow
	Kind     PacketKind
	Size     int   // bytes on the wire
	Seq      int64 // first byte (data), cumulative ack (Ack, Nak)
	Len      int   // payload bytes of a data packet
	DSCP     uint8
	ECN      uint8
	ECE      bool // Ack: the acknowledged packet was CE
	Prio     uint8
	Color    model.Color
	TTL      uint8
	Elephant bool
	Src, Dst *Node
	In       *Port // ingress port at the current switch (PG accounting)
	PG       uint8 // the priority group of In the packet is counted in
	Enq      time.Duration
}
