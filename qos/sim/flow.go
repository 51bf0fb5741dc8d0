package sim

import (
	"math"
	"time"
)

// CC is a sender's congestion control.
type CC string

const (
	// CCNone sends at a fixed rate (line rate by default) and ignores
	// CNPs: the incast and deadlock scenarios' blunt senders.
	CCNone CC = "none"
	// CCDCQCN is a RoCEv2 reaction point: rate-based, cut by CNPs.
	CCDCQCN CC = "dcqcn"
	// CCDCTCP is a window-based DCTCP sender (ns-3 cross-check).
	CCDCTCP CC = "dctcp"
)

// Flow is one sender-receiver pair.
type Flow struct {
	ID       int
	Name     string
	Src, Dst *Node
	Size     int64 // bytes to deliver; 0 = until Stop
	Start    time.Duration
	Stop     time.Duration // 0 = never (sized flows stop when done)
	DSCP     uint8
	ECT      bool
	CC       CC
	MTU      int     // bytes on the wire per data packet
	LineRate float64 // bits/s cap (default: the host's link)

	net *Network
	// sender
	next     int64 // next byte to send
	acked    int64
	rate     float64 // current rate (DCQCN RC), bits/s
	target   float64 // DCQCN RT
	alpha    float64
	cnpSeen  bool // a CNP arrived since the last alpha update
	tCount   int
	bCount   int
	bBytes   int64
	sendGen  uint32
	dcqGen   uint32
	rtoGen   uint32
	blocked  bool
	nextSend time.Duration
	lastProg time.Duration
	stopped  bool
	// DCTCP
	cwnd      float64 // bytes
	ssthresh  float64
	dAlpha    float64
	winEnd    int64 // alpha is updated once per window of data
	winAcked  int64
	winMarked int64
	cwrEnd    int64 // no second cut before this byte is acked
	// receiver
	expect  int64
	unacked int64
	lastCNP time.Duration
	cnpSent bool
	nakFor  int64 // the gap a NAK was sent for (-1 none)

	// Results.
	Delivered int64 // in-order bytes at the receiver
	Done      bool
	Finish    time.Duration
	Lost      uint64 // data packets dropped in the network
	CNPsRx    uint64
	CNPsTx    uint64
	FirstCNP  time.Duration // when the sender got its first CNP (0: none)
	Marked    uint64        // CE packets received
	Rewinds   uint64        // go-back-N restarts
	MinRate   float64
}

// FCT is the flow completion time (valid when Done).
func (f *Flow) FCT() time.Duration { return f.Finish - f.Start }

// Rate is the sender's current rate (DCQCN) or cwnd/RTT estimate.
func (f *Flow) Rate() float64 { return f.rate }

// Alpha is the DCQCN (or DCTCP) congestion estimate.
func (f *Flow) Alpha() float64 {
	if f.CC == CCDCTCP {
		return f.dAlpha
	}
	return f.alpha
}

// Cwnd is the DCTCP window in bytes.
func (f *Flow) Cwnd() float64 { return f.cwnd }

// AddFlow adds a flow; it starts at f.Start.
func (n *Network) AddFlow(f *Flow) *Flow {
	f.ID = len(n.Flows)
	f.net = n
	f.nakFor = -1
	if f.MTU == 0 {
		f.MTU = 1000
	}
	if f.CC == "" {
		f.CC = CCNone
	}
	if f.LineRate == 0 && len(f.Src.Ports) > 0 {
		f.LineRate = f.Src.Ports[0].Rate
	}
	n.Flows = append(n.Flows, f)
	n.schedule(event{t: f.Start, kind: evFlowStart, flow: f})
	return f
}

func (f *Flow) start() {
	n := f.net
	f.rate, f.target, f.MinRate = f.LineRate, f.LineRate, f.LineRate
	f.alpha = 1
	f.lastProg = n.now
	switch f.CC {
	case CCDCQCN:
		f.armDCQCN()
	case CCDCTCP:
		f.cwnd = float64(n.P.DCTCP.InitCwnd * f.payload())
		f.ssthresh = math.Inf(1)
		f.dAlpha = 1
	}
	if f.Stop > 0 {
		n.At(f.Stop, func() { f.stopped = true })
	}
	if f.CC != CCNone || f.Size > 0 {
		f.armRTO()
	}
	f.pump()
}

// payload is the data bytes per full packet (the wire size is MTU).
func (f *Flow) payload() int { return f.MTU }

func (f *Flow) sendingDone() bool {
	if f.stopped {
		return true
	}
	return f.Size > 0 && f.next >= f.Size
}

// pump sends what the flow may send now.
func (f *Flow) pump() {
	n := f.net
	for !f.sendingDone() {
		if f.CC == CCDCTCP {
			if float64(f.next-f.acked+int64(f.payload())) > f.cwnd && f.next > f.acked {
				return
			}
		} else if n.now < f.nextSend {
			f.sendGen++
			n.schedule(event{t: f.nextSend, kind: evFlowSend, flow: f, gen: f.sendGen})
			return
		}
		prio := f.Src.DSCP[f.DSCP]
		port := f.Src.egressFor(f.Dst)
		if port == nil {
			return
		}
		if port.qBytes[prio] >= int64(n.P.HostQueue) {
			if !f.blocked {
				f.blocked = true
				f.Src.waiting[prio] = append(f.Src.waiting[prio], f)
			}
			return
		}
		f.emit(port)
	}
}

func (f *Flow) sendTimer() { f.pump() }

func (f *Flow) emit(port *Port) {
	n := f.net
	ln := f.payload()
	if f.Size > 0 && f.Size-f.next < int64(ln) {
		ln = int(f.Size - f.next)
	}
	pkt := n.newPacket()
	*pkt = Packet{Flow: f, Kind: Data, Size: ln, Len: ln, Seq: f.next, DSCP: f.DSCP, TTL: n.P.TTL, Src: f.Src, Dst: f.Dst}
	if f.ECT {
		pkt.ECN = ECT0
	}
	f.next += int64(ln)
	f.Src.send(pkt)
	if f.CC != CCDCTCP {
		gap := txTime(ln, f.rate)
		if f.nextSend < n.now {
			f.nextSend = n.now
		}
		f.nextSend += gap
	}
	if f.CC == CCDCQCN {
		f.bBytes += int64(ln)
		if f.bBytes >= n.P.DCQCN.ByteCounter {
			f.bBytes = 0
			f.bCount++
			f.increase()
		}
	}
}

// egressFor is a host's port toward dst.
func (nd *Node) egressFor(dst *Node) *Port {
	r := nd.routes[dst.ID]
	if len(r) == 0 {
		return nil
	}
	return r[0]
}

// wake lets flows waiting for room in host queue q send again.
func (nd *Node) wake(q int) {
	w := nd.waiting[q]
	if len(w) == 0 {
		return
	}
	nd.waiting[q] = nil
	for _, f := range w {
		f.blocked = false
	}
	for _, f := range w {
		f.pump()
	}
}

// receive handles a packet at its destination host.
func (nd *Node) receive(pkt *Packet) {
	n := nd.net
	f := pkt.Flow
	switch pkt.Kind {
	case Data:
		f.recvData(pkt)
	case Ack:
		f.recvAck(pkt.Seq, pkt.ECE, pkt.Len)
	case Nak:
		f.recvNak(pkt.Seq)
	case CNP:
		f.recvCNP()
	}
	n.release(pkt)
}

func (f *Flow) control(kind PacketKind, seq int64, ece bool, ln int) {
	n := f.net
	pkt := n.newPacket()
	size := n.P.AckSize
	dscp := f.DSCP
	if kind == CNP {
		size, dscp = n.P.CNPSize, n.P.CNPDSCP
	}
	*pkt = Packet{Flow: f, Kind: kind, Size: size, Seq: seq, ECE: ece, Len: ln, DSCP: dscp, TTL: n.P.TTL, Src: f.Dst, Dst: f.Src}
	if f.ECT {
		// A RoCE NIC marks every packet of the QP ECN-capable, ACKs too.
		pkt.ECN = ECT0
	}
	f.Dst.send(pkt)
}

func (f *Flow) recvData(pkt *Packet) {
	n := f.net
	ce := pkt.ECN == CE
	if ce {
		f.Marked++
	}
	// Notification point: at most one CNP per interval per flow.
	if ce && f.CC == CCDCQCN && (!f.cnpSent || n.now-f.lastCNP >= n.P.CNPInterval) {
		f.cnpSent = true
		f.lastCNP = n.now
		f.CNPsTx++
		n.CNPs["receiver"]++
		f.control(CNP, 0, false, 0)
	}
	if pkt.Seq != f.expect {
		if pkt.Seq > f.expect && f.nakFor != f.expect {
			f.nakFor = f.expect
			if f.CC == CCDCTCP {
				f.control(Ack, f.expect, ce, pkt.Len)
			} else {
				f.control(Nak, f.expect, false, 0)
			}
		} else if f.CC == CCDCTCP {
			f.control(Ack, f.expect, ce, pkt.Len)
		}
		return
	}
	f.expect += int64(pkt.Len)
	f.Delivered = f.expect
	f.nakFor = -1
	done := f.Size > 0 && f.expect >= f.Size
	if done && !f.Done {
		f.Done = true
		f.Finish = n.now
	}
	switch f.CC {
	case CCDCTCP:
		f.control(Ack, f.expect, ce, pkt.Len)
	default:
		f.unacked += int64(pkt.Len)
		if done || f.unacked >= n.P.DCQCN.AckEvery {
			f.unacked = 0
			f.control(Ack, f.expect, false, 0)
		}
	}
}

func (f *Flow) recvAck(seq int64, ece bool, ln int) {
	n := f.net
	if seq > f.acked {
		newly := seq - f.acked
		f.acked = seq
		f.lastProg = n.now
		if f.CC == CCDCTCP {
			f.dctcpAck(newly, ece)
		}
	} else if f.CC == CCDCTCP && ece {
		f.dctcpAck(0, ece)
	}
	if f.CC == CCDCTCP {
		f.pump()
	}
}

func (f *Flow) recvNak(seq int64) {
	if seq < f.acked || seq >= f.next {
		return
	}
	f.acked = seq
	f.goBack()
}

// goBack resends from the last acknowledged byte.
func (f *Flow) goBack() {
	f.Rewinds++
	f.next = f.acked
	f.lastProg = f.net.now
	if f.CC == CCDCTCP {
		f.cwnd = float64(f.payload())
	}
	f.pump()
}

func (f *Flow) armRTO() {
	n := f.net
	f.rtoGen++
	rto := n.P.DCQCN.RTO
	if f.CC == CCDCTCP {
		rto = n.P.DCTCP.RTO
	}
	n.schedule(event{t: n.now + rto, kind: evRTO, flow: f, gen: f.rtoGen})
}

func (f *Flow) rtoTimer(gen uint32) {
	if gen != f.rtoGen || f.Done || (f.stopped && f.Size == 0) {
		return
	}
	n := f.net
	rto := n.P.DCQCN.RTO
	if f.CC == CCDCTCP {
		rto = n.P.DCTCP.RTO
	}
	if f.next > f.acked && n.now-f.lastProg >= rto {
		f.goBack()
	}
	f.armRTO()
}

// --- DCQCN reaction point ---

func (f *Flow) armDCQCN() {
	n := f.net
	f.dcqGen++
	n.schedule(event{t: n.now + n.P.DCQCN.AlphaTimer, kind: evDCQCNAlpha, flow: f, gen: f.dcqGen})
	n.schedule(event{t: n.now + n.P.DCQCN.RateTimer, kind: evDCQCNRate, flow: f, gen: f.dcqGen})
}

func (f *Flow) active() bool { return !f.Done && !f.stopped }

func (f *Flow) alphaTimer(gen uint32) {
	if gen != f.dcqGen || !f.active() {
		return
	}
	p := f.net.P.DCQCN
	if !f.cnpSeen {
		f.alpha *= 1 - p.G
	}
	f.cnpSeen = false
	f.net.schedule(event{t: f.net.now + p.AlphaTimer, kind: evDCQCNAlpha, flow: f, gen: gen})
}

func (f *Flow) rateTimer(gen uint32) {
	if gen != f.dcqGen || !f.active() {
		return
	}
	f.tCount++
	f.increase()
	f.net.schedule(event{t: f.net.now + f.net.P.DCQCN.RateTimer, kind: evDCQCNRate, flow: f, gen: gen})
}

// increase is one rate-increase event: fast recovery, additive or
// hyper increase by the timer and byte-counter stages.
func (f *Flow) increase() {
	p := f.net.P.DCQCN
	switch {
	case max(f.tCount, f.bCount) < p.F:
	case min(f.tCount, f.bCount) > p.F:
		f.target += p.RHAI * float64(min(f.tCount, f.bCount)-p.F)
	default:
		f.target += p.RAI
	}
	if f.target > f.LineRate {
		f.target = f.LineRate
	}
	f.rate = (f.rate + f.target) / 2
	if f.rate > f.LineRate {
		f.rate = f.LineRate
	}
}

func (f *Flow) recvCNP() {
	f.CNPsRx++
	if f.CNPsRx == 1 {
		f.FirstCNP = f.net.now
	}
	if f.CC != CCDCQCN || !f.active() {
		return
	}
	p := f.net.P.DCQCN
	f.target = f.rate
	f.rate *= 1 - f.alpha/2
	if f.rate < p.MinRate {
		f.rate = p.MinRate
	}
	if f.rate < f.MinRate {
		f.MinRate = f.rate
	}
	f.alpha = (1-p.G)*f.alpha + p.G
	f.cnpSeen = true
	f.tCount, f.bCount, f.bBytes = 0, 0, 0
	// The rate timer restarts from the cut; the alpha timer keeps its
	// period.
	f.dcqGen++
	n := f.net
	n.schedule(event{t: n.now + p.AlphaTimer, kind: evDCQCNAlpha, flow: f, gen: f.dcqGen})
	n.schedule(event{t: n.now + p.RateTimer, kind: evDCQCNRate, flow: f, gen: f.dcqGen})
	// A slower rate stretches the gap to the next packet.
	if f.nextSend > n.now {
		f.nextSend = n.now + txTime(f.payload(), f.rate)
		f.sendGen++
		n.schedule(event{t: f.nextSend, kind: evFlowSend, flow: f, gen: f.sendGen})
	}
}

// --- DCTCP (RFC 8257) ---

func (f *Flow) dctcpAck(newly int64, ece bool) {
	p := f.net.P.DCTCP
	mss := float64(f.payload())
	f.winAcked += newly
	if ece {
		f.winMarked += newly
	}
	// Once per window of data: alpha = (1-g) alpha + g F.
	if f.acked >= f.winEnd {
		if f.winAcked > 0 {
			frac := float64(f.winMarked) / float64(f.winAcked)
			if frac > 1 {
				frac = 1
			}
			f.dAlpha = (1-p.G)*f.dAlpha + p.G*frac
		}
		f.winAcked, f.winMarked = 0, 0
		f.winEnd = f.next
	}
	if ece {
		if f.acked >= f.cwrEnd {
			f.cwnd = max(f.cwnd*(1-f.dAlpha/2), mss)
			f.ssthresh = f.cwnd
			f.cwrEnd = f.next
		}
		return
	}
	if newly == 0 {
		return
	}
	if f.cwnd < f.ssthresh {
		f.cwnd += float64(newly)
	} else {
		f.cwnd += mss * float64(newly) / f.cwnd
	}
}
