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
	"time"

	"github.com/fared/fared/internal/setting"
)

// Config is the IRN configuration of a flow.
type Config struct {
	// Window caps packets in flight (IRN's BDP-FC): the bandwidth-delay
	// product of the longest path divided by the packet size. A packet is
	// sent only while (its index − the lowest unacknowledged) < Window.
	Window int
	// RTOLow applies while at most NLow packets are in flight (a lost
	// single packet must not wait long), RTOHigh otherwise.
	RTOLow, RTOHigh time.Duration
	NLow            int
	// ReportAfter: after this many timeouts of one packet the flow
	// reports (the draft's "N timeouts": the client tells the manager).
	ReportAfter int
	// Reorder: a packet unacknowledged while Reorder packets sent after
	// it are acknowledged is taken as lost (IRN: "a packet is considered
	// lost only if another packet with a higher sequence number has been
	// selectively acked"; a small threshold tolerates the reordering of
	// INC results, which complete in the order of the slowest rank).
	Reorder int
}

// DefaultConfig suits user-space endpoints on a small fabric of veths: a
// window of 32 packets (a 10 Gb/s path with a 25 µs round trip holds
// 31 KB: 32 packets of 1 KB), RTO_low 5 ms for up to 3 packets in flight,
// RTO_high 30 ms (user-space endpoints sharing CPUs are scheduled late:
// the microsecond timeouts of a NIC would fire on every hiccup), a
// reordering threshold of 3, and a report to the manager after 8
// timeouts of one packet (with the back-off, about 2 s of silence).
var DefaultConfig = Config{Window: 32, RTOLow: 5 * time.Millisecond, RTOHigh: 30 * time.Millisecond, NLow: 3, ReportAfter: 8, Reorder: 3}

// WithDefaults is c with DefaultConfig's value in every field not set
// (zero or negative).
func (c Config) WithDefaults() Config {
	d := DefaultConfig
	setting.Fill(&c, d)
	return c
}

type pkt struct {
	sentAt   time.Time
	acked    bool // done (ACKed, or its INC result arrived)
	sacked   bool // the receiver has it (NACK trigger / cumulative)
	lost     bool // queued for retransmission
	sentRec  bool // already retransmitted in the current recovery episode
	sent     bool
	retx     bool // retransmitted at least once (no RTT sample: Karn)
	timeouts int
	reported bool
}

// Stats counts a flow's events.
type Stats struct {
	Packets     int // packets of the transfer
	Sent        int // transmissions, first ones included
	Retransmits int
	Timeouts    int // retransmissions caused by RTO
	NACKs       int // NACKs received
	Recoveries  int // loss-recovery episodes entered
	Reports     int // packets that reached ReportAfter timeouts
	SackLosses  int // packets retransmitted because later ones were acknowledged
}

// Sender tracks the packets 0..n-1 of one transfer.
type Sender struct {
	cfg      Config
	p        []pkt
	next     int // first packet never sent
	cum      int // first packet not acked
	inflight int // sent, not acked
	// recovery: entered on a NACK, left once everything up to recSeq is
	// acknowledged (IRN: "a cumulative acknowledgement greater than the
	// recovery sequence").
	recovery bool
	recSeq   int
	hiSack   int // highest selectively acknowledged index, -1
	aboveAck int // highest acknowledged index
	lostQ    []int
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

// NewSender returns a sender of n packets.
func NewSender(cfg Config, n int) *Sender {
	return &Sender{cfg: cfg.WithDefaults(), p: make([]pkt, n), hiSack: -1, st: Stats{Packets: n}}
}

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

// timeout of one packet: a packet the receiver holds waits RTO_high (its
// result, not the packet, is late); each timeout of the packet doubles
// its wait, up to 8×, so a slow receiver is not flooded but a lossy path
// is still retried often.
func (s *Sender) timeout(pk *pkt, rto time.Duration) time.Duration {
	if pk.sacked {
		rto = max(rto, s.cfg.RTOHigh)
	}
	return rto << min(pk.timeouts, 3)
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

// Poll sends what may be sent now: retransmissions first (IRN sends lost
// packets before new ones), then new packets within the window. It first
// turns expired timers into retransmissions.
func (s *Sender) Poll(now time.Time, send func(i int, retransmit bool)) {
	s.expire(now)
	for len(s.lostQ) > 0 {
		i := s.lostQ[0]
		s.lostQ = s.lostQ[1:]
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
	for s.next < len(s.p) && s.next-s.cum < s.cfg.Window {
		if s.CanSend != nil && !s.CanSend(s.next) {
			break
		}
		pk := &s.p[s.next]
		pk.sent, pk.sentAt = true, now
		s.inflight++
		s.st.Sent++
		i := s.next
		s.next++
		send(i, false)
	}
}

// expire queues for retransmission every unacked packet whose timer ran
// out. A packet the receiver holds (sacked) waits RTO_high: its result,
// not the packet, is late.
func (s *Sender) expire(now time.Time) {
	rto := s.rto()
	for i := s.cum; i < s.next; i++ {
		pk := &s.p[i]
		if pk.acked || pk.lost {
			continue
		}
		if now.Sub(pk.sentAt) < s.timeout(pk, rto) {
			continue
		}
		pk.timeouts++
		s.st.Timeouts++
		if pk.timeouts >= s.cfg.ReportAfter && !pk.reported {
			pk.reported = true
			s.st.Reports++
			if s.OnReport != nil {
				s.OnReport(i, pk.timeouts)
			}
		}
		s.markLost(i)
	}
}

func (s *Sender) markLost(i int) {
	pk := &s.p[i]
	if pk.acked || pk.lost {
		return
	}
	pk.lost = true
	s.lostQ = append(s.lostQ, i)
}

// NextDeadline is when the earliest timer runs out (zero: none running).
func (s *Sender) NextDeadline() time.Time {
	var t time.Time
	rto := s.rto()
	for i := s.cum; i < s.next; i++ {
		pk := &s.p[i]
		if pk.acked || pk.lost {
			continue
		}
		if dl := pk.sentAt.Add(s.timeout(pk, rto)); t.IsZero() || dl.Before(t) {
			t = dl
		}
	}
	return t
}

// Outstanding reports whether packet i was sent and is not acknowledged
// yet: an INC result for it is news (one for a packet never sent, or
// already answered, is not).
func (s *Sender) Outstanding(i int) bool { return i >= 0 && i < s.next && !s.p[i].acked }

// Ack acknowledges packet i (an INC result, or a selective ack) at now.
func (s *Sender) Ack(i int, now time.Time) {
	if i < 0 || i >= s.next {
		return
	}
	pk := &s.p[i]
	if pk.acked {
		return
	}
	pk.acked, pk.lost = true, false
	s.inflight--
	s.sackLoss(i)
	if !pk.retx && !now.IsZero() {
		if rtt := now.Sub(pk.sentAt); rtt > 0 {
			s.sample(rtt)
		}
	}
	for s.cum < s.next && s.p[s.cum].acked {
		s.cum++
	}
	s.leaveRecovery()
}

// sackLoss: packet i was acknowledged out of order; the packets Reorder
// or more places before it that are still unacknowledged are lost, once
// per transmission (a retransmission that is lost too is left to RTO).
func (s *Sender) sackLoss(i int) {
	s.aboveAck = max(s.aboveAck, i)
	for j := s.cum; j <= i-s.cfg.Reorder; j++ {
		pk := &s.p[j]
		if pk.acked || pk.lost || pk.sentRec || !pk.sent {
			continue
		}
		// Count the acknowledged packets after j.
		n := 0
		for k := j + 1; k <= s.aboveAck && n < s.cfg.Reorder; k++ {
			if s.p[k].acked {
				n++
			}
		}
		if n < s.cfg.Reorder {
			break
		}
		pk.sentRec = true
		s.st.SackLosses++
		s.markLost(j)
	}
}

// AckUpTo acknowledges every packet before end (a cumulative ACK).
func (s *Sender) AckUpTo(end int, now time.Time) {
	end = min(end, s.next)
	for i := s.cum; i < end; i++ {
		s.Ack(i, now)
	}
}

func (s *Sender) leaveRecovery() {
	if s.recovery && s.cum > s.recSeq {
		s.recovery = false
		for i := range s.p[:s.next] {
			s.p[i].sentRec = false
		}
	}
}

// NACK handles an IRN NACK at now: cum is the receiver's cumulative ack (first
// packet it misses), trig the packet that arrived out of order. The
// sender enters loss recovery and retransmits, once per episode, every
// packet below the highest selectively acked one that the receiver does
// not have, starting with cum.
func (s *Sender) NACK(cum, trig int, now time.Time) {
	s.st.NACKs++
	if cum < 0 || trig < 0 || trig >= s.next || cum > trig {
		return
	}
	if s.NACKIsAck {
		s.AckUpTo(cum, now)
	} else {
		for i := s.cum; i < cum; i++ {
			s.p[i].sacked = true
		}
	}
	s.p[trig].sacked = true
	if s.NACKIsAck {
		s.Sack(trig, now)
	}
	if trig > s.hiSack {
		s.hiSack = trig
	}
	if !s.recovery {
		s.recovery, s.recSeq = true, s.next-1
		s.st.Recoveries++
	}
	for i := max(cum, s.cum); i < s.hiSack; i++ {
		pk := &s.p[i]
		if !pk.acked && !pk.sacked && !pk.sentRec && pk.sent {
			pk.sentRec = true
			s.markLost(i)
		}
	}
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
