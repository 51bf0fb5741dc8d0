// Package transport is the client transport of fared's INC: RoCEv2 UC
// packets over raw sockets (endpoint.go) with the reliability the draft
// asks of UC clients (send, time out, retransmit, report after N
// timeouts), improved with IRN (SIGCOMM 2018): selective retransmission
// driven by NACKs that carry the cumulative ack and the triggering PSN,
// a BDP-based cap on packets in flight, and two timeouts, RTO_low when
// few packets are in flight and RTO_high otherwise.
//
// Sender is the sending half, pure and clock-driven; Receiver is the
// receiving half of a point-to-point flow (the ring baseline). For INC the
// switch is the receiver: its NACKs come from the aggregator, and the
// aggregation result is the acknowledgement.
package transport

import (
	"slices"
	"time"
)

type pkt struct {
	sentAt   time.Time // last transmission
	acked    bool      // done (ACKed, or its INC result arrived)
	sacked   bool      // the receiver has it (NACK trigger / cumulative)
	lost     bool      // queued for retransmission
	sentRec  bool      // already retransmitted in the current recovery episode
	sent     bool
	retx     bool // retransmitted at least once (no RTT sample: Karn)
	timeouts int  // timeouts while it was the lowest unacknowledged
	reported bool
}

// Stats counts a flow's events.
type Stats struct {
	Packets     int // packets of the transfer
	Sent        int // transmissions, first ones included
	Retransmits int
	Timeouts    int // retransmission timer expiries (each enters loss recovery)
	NACKs       int // NACKs received
	Recoveries  int // loss-recovery episodes entered (on a NACK, a selective-ack loss or a timeout)
	Reports     int // packets that reached ReportAfter timeouts
	SackLosses  int // packets retransmitted because later ones were acknowledged
}

// Sender tracks the packets 0..n-1 of one transfer: IRN's sender with one
// retransmission timer per flow, as a NIC keeps per QP.
//
// Loss recovery is entered on a NACK, on a selective-ack loss (Reorder
// later packets acknowledged) and on a timeout. In it the sender
// retransmits, before any new packet, the packets the receiver's state
// marks lost: on a timeout the lowest unacknowledged packet (the
// cumulative ack) first, then, in order, each packet below one the
// receiver has that the receiver lacks. Each is retransmitted once per
// episode; an episode ends when everything sent before it is
// acknowledged (IRN: "a cumulative acknowledgement greater than the
// recovery sequence"). A timeout during recovery starts a new episode.
//
// The timer (RFC 6298's rules, which a RoCE NIC's per-QP timer follows)
// starts when a packet leaves with nothing in flight, restarts when the
// cumulative ack moves and on its own expiry, and stops when nothing is
// in flight. So a receiver that answers slowly but steadily never times
// out, and a timeout resends one packet, not the window.
type Sender struct {
	cfg      Config
	window   int // BDP-FC's cap on packets in flight
	p        []pkt
	next     int // first packet never sent
	cum      int // first packet not acked
	inflight int // sent, not acked
	// recovery: in loss recovery until everything up to recSeq (the last
	// packet sent before the episode began) is acknowledged.
	recovery bool
	recSeq   int
	rtoRec   bool // the episode began with a timeout
	hiSack   int  // highest index the receiver has (NACK trigger), -1
	aboveAck int  // highest acknowledged index
	lostQ    []int
	// timerAt: when the retransmission timer (re)started; zero: stopped.
	// backoff: timeouts since the cumulative ack moved (doubles the RTO).
	timerAt time.Time
	backoff int
	// CanSend, when set, holds back a new packet until it is ready (the
	// ring sends a chunk once the chunk it depends on has arrived).
	CanSend func(i int) bool
	// OnReport is called once per packet that reaches ReportAfter timeouts.
	OnReport func(i, timeouts int)
	// NACKIsAck: a NACK's cumulative part acknowledges (point-to-point);
	// for INC it only says the switch has the packets (results ack).
	NACKIsAck bool
	st        Stats
	// Adaptive raises the timeouts to the measured SRTT + 4·RTTVAR
	// (RFC 6298, samples from packets acknowledged on their first
	// transmission: Karn) when the endpoints are slower than configured.
	// Right for a point-to-point flow; wrong for INC, where a result waits
	// for the slowest rank: one rank's loss would lengthen everybody's
	// timeouts, which lengthens the next recovery (a feedback loop).
	Adaptive     bool
	srtt, rttvar time.Duration
}

// maxBackoff: each timeout without a cumulative ack doubles the RTO,
// up to 2^3 = 8×, so a slow receiver is not flooded but a lossy path is
// still retried often.
const maxBackoff = 3

// NewSender returns a sender of n packets, capped at cfg.Cap() in flight.
func NewSender(cfg Config, n int) *Sender {
	return &Sender{cfg: cfg.WithDefaults(), window: cfg.Cap(), p: make([]pkt, n), hiSack: -1, aboveAck: -1, st: Stats{Packets: n}}
}

// Window is the cap on packets in flight.
func (s *Sender) Window() int { return s.window }

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.st }

// Done reports whether every packet is acknowledged.
func (s *Sender) Done() bool { return s.cum == len(s.p) }

// Acked is the number of packets acknowledged.
func (s *Sender) Acked() int {
	n := s.cum
	for i := s.cum; i < s.next; i++ {
		if s.p[i].acked {
			n++
		}
	}
	return n
}

// Lowest is the first packet not acknowledged.
func (s *Sender) Lowest() int { return s.cum }

// InFlight is the number of packets sent and not acknowledged.
func (s *Sender) InFlight() int { return s.inflight }

// InRecovery reports whether the sender is in loss recovery.
func (s *Sender) InRecovery() bool { return s.recovery }

// rto is IRN's timeout for the current number of packets in flight:
// RTO_low with at most NLow in flight, RTO_high otherwise, each at least
// the measured SRTT + 4·RTTVAR.
func (s *Sender) rto() time.Duration {
	var floor time.Duration
	if s.Adaptive {
		floor = s.srtt + 4*s.rttvar
	}
	if s.inflight <= s.cfg.NLow {
		return max(s.cfg.RTOLow, floor)
	}
	return max(s.cfg.RTOHigh, floor)
}

// timeout is the running timer's length: the RTO, at least RTO_high when
// the receiver holds the lowest unacknowledged packet (its result, not
// the packet, is late), doubled per timeout since the cumulative ack
// last moved.
func (s *Sender) timeout() time.Duration {
	rto := s.rto()
	if s.cum < s.next && s.p[s.cum].sacked {
		rto = max(rto, s.cfg.RTOHigh)
	}
	return rto << s.backoff
}

func (s *Sender) sample(rtt time.Duration) {
	if s.srtt == 0 {
		s.srtt, s.rttvar = rtt, rtt/2
		return
	}
	d := s.srtt - rtt
	if d < 0 {
		d = -d
	}
	s.rttvar = (3*s.rttvar + d) / 4
	s.srtt = (7*s.srtt + rtt) / 8
}

// SRTT is the smoothed round trip.
func (s *Sender) SRTT() time.Duration { return s.srtt }

// Poll sends what may be sent now: retransmissions first, in sequence
// order (IRN sends lost packets instead of new ones), then new packets
// within BDP-FC's cap. It first handles an expired timer.
func (s *Sender) Poll(now time.Time, send func(i int, retransmit bool)) {
	if dl := s.NextDeadline(); !dl.IsZero() && !now.Before(dl) {
		s.onTimeout(now)
	}
	slices.Sort(s.lostQ)
	for _, i := range s.lostQ {
		pk := &s.p[i]
		if pk.acked || !pk.lost {
			continue
		}
		pk.lost = false
		pk.sentAt = now
		pk.retx = true
		s.st.Sent++
		s.st.Retransmits++
		send(i, true)
	}
	s.lostQ = s.lostQ[:0]
	for s.next < len(s.p) && s.next-s.cum < s.window {
		if s.CanSend != nil && !s.CanSend(s.next) {
			break
		}
		pk := &s.p[s.next]
		pk.sent, pk.sentAt = true, now
		if s.inflight == 0 {
			s.timerAt = now
		}
		s.inflight++
		s.st.Sent++
		i := s.next
		s.next++
		send(i, false)
	}
}

// onTimeout: the timer ran out, the cumulative ack unmoved for an RTO.
// A new recovery episode begins; the lowest unacknowledged packet is
// retransmitted first, then those the receiver's state marks lost (a
// packet retransmitted less than an RTO ago is given its time).
func (s *Sender) onTimeout(now time.Time) {
	s.st.Timeouts++
	rto := s.rto()
	s.backoff = min(s.backoff+1, maxBackoff)
	s.timerAt = now
	i := s.cum
	pk := &s.p[i]
	pk.timeouts++
	if pk.timeouts >= s.cfg.ReportAfter && !pk.reported {
		pk.reported = true
		s.st.Reports++
		if s.OnReport != nil {
			s.OnReport(i, pk.timeouts)
		}
	}
	s.recovery, s.recSeq, s.rtoRec = true, s.next-1, true
	s.st.Recoveries++
	for j := s.cum; j < s.next; j++ {
		if now.Sub(s.p[j].sentAt) >= rto {
			s.p[j].sentRec = false
		}
	}
	pk.sentRec = true
	s.markLost(i)
	s.detect()
}

func (s *Sender) markLost(i int) {
	pk := &s.p[i]
	if pk.acked || pk.lost {
		return
	}
	pk.lost = true
	s.lostQ = append(s.lostQ, i)
}

// detect marks lost, once per recovery episode, each packet the
// receiver's state says is lost: one below a packet the receiver has
// (NACK trigger) that the receiver lacks, or one with Reorder later
// packets acknowledged (selective acks; for INC, results). Finding one
// enters recovery. Packets are scanned from the highest down so the
// count of later acknowledged packets is a running sum.
func (s *Sender) detect() {
	top := min(max(s.hiSack, s.aboveAck), s.next-1)
	later := 0 // acknowledged packets above j, up to Reorder
	for j := top; j >= s.cum; j-- {
		pk := &s.p[j]
		if pk.acked {
			later = min(later+1, s.cfg.Reorder)
			continue
		}
		if pk.lost || pk.sentRec || !pk.sent {
			continue
		}
		hole := !pk.sacked && j < s.hiSack
		reordered := later >= s.cfg.Reorder
		if !hole && !reordered {
			continue
		}
		if !hole {
			s.st.SackLosses++
		}
		s.enterRecovery()
		pk.sentRec = true
		s.markLost(j)
	}
}

func (s *Sender) enterRecovery() {
	if !s.recovery {
		s.recovery, s.recSeq = true, s.next-1
		s.st.Recoveries++
	}
}

// NextDeadline is when the retransmission timer runs out (zero: it is
// not running).
func (s *Sender) NextDeadline() time.Time {
	if s.timerAt.IsZero() || s.inflight == 0 {
		return time.Time{}
	}
	return s.timerAt.Add(s.timeout())
}

// Outstanding reports whether packet i was sent and is not acknowledged
// yet: an INC result for it is news (one for a packet never sent, or
// already answered, is not).
func (s *Sender) Outstanding(i int) bool { return i >= 0 && i < s.next && !s.p[i].acked }

// Ack acknowledges packet i (an INC result, or a selective ack) at now.
func (s *Sender) Ack(i int, now time.Time) {
	if !s.ack(i, now) {
		return
	}
	if s.aboveAck > s.cum {
		s.detect()
	}
}

// ack acknowledges packet i; it reports whether i was news. A
// cumulative ack that moves restarts the timer and ends the back-off.
func (s *Sender) ack(i int, now time.Time) bool {
	if i < 0 || i >= s.next || s.p[i].acked {
		return false
	}
	pk := &s.p[i]
	pk.acked, pk.lost = true, false
	s.inflight--
	s.aboveAck = max(s.aboveAck, i)
	if !pk.retx && !now.IsZero() {
		if rtt := now.Sub(pk.sentAt); rtt > 0 {
			s.sample(rtt)
		}
	}
	cum := s.cum
	for s.cum < s.next && s.p[s.cum].acked {
		s.cum++
	}
	switch {
	case s.inflight == 0:
		s.timerAt = time.Time{}
	case s.cum > cum && !now.IsZero(): // new data acknowledged (a caller without a clock leaves the timer running)
		s.timerAt = now
	}
	if s.cum > cum {
		s.backoff = 0
		s.leaveRecovery()
		s.partialAck(now)
	}
	return true
}

// partialAck: in a recovery a timeout began, the cumulative ack moved up
// to a packet the receiver still lacks. If that packet has been out for
// a whole RTO it is the new cumulative-ack packet to retransmit, as a
// timeout would, without waiting another RTO for it (TCP NewReno's
// partial acknowledgement, RFC 6582; a burst lost whole is otherwise
// repaired one RTO per packet).
func (s *Sender) partialAck(now time.Time) {
	if !s.rtoRec || s.cum >= s.next || now.IsZero() {
		return
	}
	pk := &s.p[s.cum]
	if pk.lost || pk.sentRec || now.Sub(pk.sentAt) < s.rto() {
		return
	}
	pk.sentRec = true
	s.markLost(s.cum)
}

// AckUpTo acknowledges every packet before end (a cumulative ACK).
func (s *Sender) AckUpTo(end int, now time.Time) {
	end = min(end, s.next)
	for i := s.cum; i < end; i++ {
		s.ack(i, now)
	}
	if s.aboveAck > s.cum {
		s.detect()
	}
}

func (s *Sender) leaveRecovery() {
	if s.recovery && s.cum > s.recSeq {
		s.recovery, s.rtoRec = false, false
		for i := s.cum; i < s.next; i++ {
			s.p[i].sentRec = false
		}
	}
}

// NACK handles an IRN NACK at now: cum is the receiver's cumulative ack
// (first packet it misses), trig the packet that arrived out of order.
// The sender enters loss recovery and retransmits, once per episode,
// every packet below the highest one the receiver has that it lacks,
// starting with cum.
func (s *Sender) NACK(cum, trig int, now time.Time) {
	s.st.NACKs++
	if cum < 0 || trig < 0 || trig >= s.next || cum > trig {
		return
	}
	if s.NACKIsAck {
		for i := s.cum; i < cum; i++ {
			s.ack(i, now)
		}
		s.ack(trig, now)
	} else {
		for i := s.cum; i < cum; i++ {
			s.p[i].sacked = true
		}
	}
	s.p[trig].sacked = true
	s.hiSack = max(s.hiSack, trig)
	s.enterRecovery()
	s.detect()
}

// Sack records that the receiver has packet i (point-to-point: it is
// done; it only needs no retransmission).
func (s *Sender) Sack(i int, now time.Time) {
	if i < 0 || i >= s.next {
		return
	}
	s.p[i].sacked = true
	s.Ack(i, now)
}
