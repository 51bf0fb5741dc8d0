package uc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/fared/fared/internal/setting"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// badInput counts rejected packets by kind and logs the first of each
// kind (with the offending offset, which the codec's error names).
type badInput struct {
	counts rocev2.ErrorCounts
	mu     sync.Mutex
	said   map[rocev2.ErrKind]bool
	log    *slog.Logger
}

func (b *badInput) note(err error, who string) {
	k := b.counts.Add(err)
	b.mu.Lock()
	first := !b.said[k]
	if b.said == nil {
		b.said = map[rocev2.ErrKind]bool{}
	}
	b.said[k] = true
	b.mu.Unlock()
	if first && b.log != nil {
		b.log.Warn("rocev2: bad packet dropped (logged once per kind)", "endpoint", who, "kind", k.String(), "err", err)
	}
}

// SenderConfig configures a Sender.
type SenderConfig struct {
	Netns        string // network namespace name or path ("" = current)
	Src, Dst     netip.Addr
	SrcQP, DstQP uint32 // the sender's QP (CNPs and ACKs come to it) and the receiver's
	StartPSN     uint32
	Rate         float64 // line rate, bits/s of IP packets
	Payload      int     // bytes of data per packet (default 1000)
	DSCP         uint8
	ECT          bool // ECN-capable (ECT(0))
	SrcPort      uint16
	AckReq       bool          // ask for acknowledgement in every BTH
	Duration     time.Duration // stop after this (0: when ctx ends)
	DCQCN        DCQCN         // zero: LabDCQCN(Rate)
	// PKey is the P_Key of the sender's QP (default 0xFFFF): its data
	// carries it, and acknowledgements that do not match it are dropped
	// (SenderStats.BadPKey). CNPs are taken whatever their P_Key: NICs
	// send them with 0xFFFF.
	PKey uint16
	Log  *slog.Logger
}

// Sample is the sender's rate at a moment (after each CNP, and every
// SampleEvery).
type Sample struct {
	At    time.Duration // since the start
	Rate  float64       // bits/s
	Cause string        // "cnp" or "tick"
}

// SampleEvery is how often the sender records its rate besides CNPs.
const SampleEvery = 50 * time.Millisecond

const maxSamples = 4096

// SenderStats are a sender's counters.
type SenderStats struct {
	Packets, Bytes uint64
	CNPs           uint64 // CNPs received (to SrcQP)
	ACKs, NAKs     uint64
	Other          uint64 // other packets to SrcQP
	BadPKey        uint64 // acknowledgements dropped: P_Key not of the QP's partition
	Errors         map[string]uint64
	Rate, MinRate  float64 // bits/s now, lowest
	Alpha          float64
	FirstCNP       time.Duration // since the start (0: none yet)
	LastCNPFrom    netip.Addr
	Samples        []Sample
}

// Sender is a DCQCN-paced UC writer.
type Sender struct {
	cfg   SenderConfig
	conn  *rawsock.Conn
	bad   badInput
	mu    sync.Mutex
	st    SenderStats
	start time.Time
}

// NewSender opens the sender's raw sockets in its namespace; it receives
// only packets to its QP (the kernel filter).
func NewSender(cfg SenderConfig) (*Sender, error) {
	if !cfg.Src.Is4() || !cfg.Dst.Is4() {
		return nil, errors.New("uc: IPv4 addresses only (raw receive is IPv4)")
	}
	if cfg.Rate <= 0 {
		return nil, errors.New("uc: rate must be positive")
	}
	setting.Default(&cfg.Payload, 1000)
	setting.Default(&cfg.PKey, rocev2.DefaultPKey)
	if !rocev2.ValidPKey(cfg.PKey) {
		return nil, fmt.Errorf("uc: P_Key %#04x: partition 0 is the invalid P_Key", cfg.PKey)
	}
	if cfg.DCQCN.AlphaTimer == 0 {
		cfg.DCQCN = LabDCQCN(cfg.Rate)
	}
	if cfg.SrcPort == 0 {
		cfg.SrcPort = 0xC000 | uint16(cfg.SrcQP&0x3FFF)
	}
	c, err := rawsock.OpenIn(cfg.Netns, rawsock.Config{DestQPs: []uint32{cfg.SrcQP}, RcvBuf: 1 << 20})
	if err != nil {
		return nil, err
	}
	s := &Sender{cfg: cfg, conn: c}
	s.bad.log = cfg.Log
	return s, nil
}

type rxEvent struct {
	at      time.Time
	op      rocev2.Opcode
	nak     bool
	src     netip.Addr
	badPKey bool // an acknowledgement of another partition
}

// Run sends until ctx ends or the duration passes, then closes the
// sockets. CNPs cut the rate as DCQCN's reaction point does.
func (s *Sender) Run(ctx context.Context) error {
	defer s.conn.Close()
	if s.cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.Duration)
		defer cancel()
	}
	s.start = time.Now()
	rp := newRP(s.cfg.DCQCN, s.cfg.Rate, s.start)
	s.mu.Lock()
	s.st.Rate, s.st.MinRate, s.st.Alpha = rp.rate, rp.rate, rp.alpha
	s.mu.Unlock()
	events := make(chan rxEvent, 1024)
	go s.read(events)
	frame := rocev2.Frame{Src: s.cfg.Src, Dst: s.cfg.Dst, TOS: s.cfg.DSCP << 2, TTL: 64, DF: true, SrcPort: s.cfg.SrcPort}
	if s.cfg.ECT {
		frame.TOS |= 2
	}
	payload := make([]byte, s.cfg.Payload)
	pkt := rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: s.cfg.PKey, DestQP: s.cfg.DstQP, AckReq: s.cfg.AckReq},
		RETH: rocev2.RETH{RKey: 0x1000 | s.cfg.DstQP, Length: uint32(s.cfg.Payload)}, Payload: payload}
	psn := s.cfg.StartPSN & rocev2.PSNMask
	var id uint16
	var buf []byte
	var credit float64 // bytes
	last := s.start
	nextSample := s.start.Add(SampleEvery)
	wire := float64(frame.HeaderLen() + pkt.HeaderLen() + s.cfg.Payload + rocev2.ICRCLen)
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			s.handle(rp, ev)
			continue
		case <-tick.C:
		}
		now := time.Now()
		rp.advance(now)
		// Pace: the rate earns bytes; at most 2 ms of them are kept,
		// so a late tick catches up without a burst.
		credit = min(credit+rp.rate/8*now.Sub(last).Seconds(), max(2*wire, rp.rate/8*0.002))
		last = now
		for credit >= wire {
			id++
			if id == 0 {
				id = 1 // the kernel fills ID 0 after the ICRC: keep ours
			}
			frame.ID = id
			pkt.BTH.PSN = psn
			pkt.RETH.VA = uint64(psn) * uint64(s.cfg.Payload)
			buf = frame.Append(buf[:0], &pkt)
			if err := s.conn.Send(buf); err != nil {
				if errors.Is(err, os.ErrClosed) {
					return nil
				}
				return fmt.Errorf("uc sender: %w", err)
			}
			credit -= float64(len(buf))
			psn = (psn + 1) & rocev2.PSNMask
			rp.sent(len(buf))
			s.mu.Lock()
			s.st.Packets++
			s.st.Bytes += uint64(len(buf))
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.st.Rate, s.st.Alpha = rp.rate, rp.alpha
		if !now.Before(nextSample) && len(s.st.Samples) < maxSamples {
			s.st.Samples = append(s.st.Samples, Sample{At: now.Sub(s.start), Rate: rp.rate, Cause: "tick"})
			nextSample = nextSample.Add(SampleEvery)
		}
		s.mu.Unlock()
	}
}

func (s *Sender) handle(rp *rp, ev rxEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ev.badPKey:
		s.st.BadPKey++
	case ev.op == rocev2.CNP:
		rp.cnp(ev.at)
		s.st.CNPs++
		if s.st.FirstCNP == 0 {
			s.st.FirstCNP = ev.at.Sub(s.start)
		}
		s.st.LastCNPFrom = ev.src
		s.st.Rate, s.st.MinRate, s.st.Alpha = rp.rate, rp.minRate, rp.alpha
		if len(s.st.Samples) < maxSamples {
			s.st.Samples = append(s.st.Samples, Sample{At: ev.at.Sub(s.start), Rate: rp.rate, Cause: "cnp"})
		}
	case ev.op == rocev2.RCAcknowledge && ev.nak:
		s.st.NAKs++
	case ev.op == rocev2.RCAcknowledge:
		s.st.ACKs++
	default:
		s.st.Other++
	}
}

// read turns what arrives for the sender's QP into events.
func (s *Sender) read(out chan<- rxEvent) {
	b := make([]byte, 9000)
	var f rocev2.Frame
	var p rocev2.Packet
	for {
		n, err := s.conn.Recv(b)
		if err != nil {
			return // closed
		}
		if err := rocev2.DecodeIPInto(b[:n], &f, &p); err != nil {
			s.bad.note(err, "sender")
			continue
		}
		ev := rxEvent{at: time.Now(), op: p.BTH.Opcode, nak: p.HasAETH && p.AETH.IsNAK(), src: f.Src,
			badPKey: p.BTH.Opcode != rocev2.CNP && !rocev2.PKeyMatch(p.BTH.PKey, s.cfg.PKey)}
		select {
		case out <- ev:
		default: // the pacing loop is behind: a CNP burst loses nothing DCQCN would use
		}
	}
}

// Stats returns a copy of the counters.
func (s *Sender) Stats() SenderStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Samples = append([]Sample(nil), s.st.Samples...)
	st.Errors = s.bad.counts.Map()
	return st
}

// RecvQP is one QP a Receiver serves: data to QP is acknowledged to
// PeerQP (the sender's), unless NoAck.
type RecvQP struct {
	QP, PeerQP uint32
	NoAck      bool
}

// ReceiverConfig configures a Receiver.
type ReceiverConfig struct {
	Netns    string
	QPs      []RecvQP
	AckEvery int  // acknowledge every this many packets (default 1)
	NP       bool // DCQCN notification point: a CNP on CE, one per CNPInterval per QP
	// CNPInterval is the NP's interval (default 50 µs).
	CNPInterval time.Duration
	DSCP        uint8 // of ACKs and CNPs
	// PKey is the P_Key of the served QPs (default 0xFFFF): data whose
	// BTH P_Key does not match it (IBTA's P_Key matching) is dropped
	// and counted (QPStats.BadPKey); ACKs carry it.
	PKey uint16
	Log  *slog.Logger
}

// QPStats are one QP's receive counters.
type QPStats struct {
	QP       uint32
	Packets  uint64
	Bytes    uint64
	CE       uint64 // ECN-marked packets
	Gaps     uint64 // PSN jumps (lost or reordered)
	LastPSN  uint32
	ACKs     uint64 // acknowledgements sent
	CNPs     uint64 // CNPs sent (NP)
	BadPKey  uint64 // dropped: P_Key not of the QP's partition
	From     netip.Addr
	LastSeen time.Time
}

// ReceiverStats are a receiver's counters.
type ReceiverStats struct {
	QPs    []QPStats
	Other  uint64 // packets to no served QP
	Errors map[string]uint64
}

type rqp struct {
	cfg     RecvQP
	st      QPStats
	seen    bool
	lastCNP time.Time
}

// Receiver counts UC data and acknowledges it.
type Receiver struct {
	cfg  ReceiverConfig
	conn *rawsock.Conn
	bad  badInput
	mu   sync.Mutex
	qps  map[uint32]*rqp
	oth  uint64
}

// NewReceiver opens the receiver's raw sockets in its namespace.
func NewReceiver(cfg ReceiverConfig) (*Receiver, error) {
	setting.Default(&cfg.AckEvery, 1)
	setting.Default(&cfg.CNPInterval, 50*time.Microsecond)
	setting.Default(&cfg.PKey, rocev2.DefaultPKey)
	if !rocev2.ValidPKey(cfg.PKey) {
		return nil, fmt.Errorf("uc: P_Key %#04x: partition 0 is the invalid P_Key", cfg.PKey)
	}
	r := &Receiver{cfg: cfg, qps: map[uint32]*rqp{}}
	var qps []uint32
	for _, q := range cfg.QPs {
		r.qps[q.QP&rocev2.PSNMask] = &rqp{cfg: q, st: QPStats{QP: q.QP}}
		qps = append(qps, q.QP)
	}
	c, err := rawsock.OpenIn(cfg.Netns, rawsock.Config{DestQPs: qps, RcvBuf: 4 << 20})
	if err != nil {
		return nil, err
	}
	r.conn = c
	r.bad.log = cfg.Log
	return r, nil
}

// Run receives until ctx ends, then closes the sockets.
func (r *Receiver) Run(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		r.conn.Close()
	}()
	b := make([]byte, 9000)
	var f rocev2.Frame
	var p rocev2.Packet
	var out []byte
	var id uint16
	for {
		n, err := r.conn.Recv(b)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return fmt.Errorf("uc receiver: %w", err)
		}
		if err := rocev2.DecodeIPInto(b[:n], &f, &p); err != nil {
			r.bad.note(err, "receiver")
			continue
		}
		replies := r.take(&f, &p, n, time.Now())
		for i := range replies {
			id++
			if id == 0 {
				id = 1
			}
			rf := rocev2.Frame{Src: f.Dst, Dst: f.Src, TOS: r.cfg.DSCP << 2, TTL: 64, ID: id, DF: true, SrcPort: f.SrcPort}
			out = rf.Append(out[:0], &replies[i])
			if err := r.conn.Send(out); err != nil && !errors.Is(err, os.ErrClosed) {
				return fmt.Errorf("uc receiver: %w", err)
			}
		}
	}
}

// take counts one received packet of n bytes and returns the replies it
// calls for (a CNP, an ACK). A packet of a served QP is first matched
// against the QP's P_Key, as a responder does; a mismatch is dropped.
func (r *Receiver) take(f *rocev2.Frame, p *rocev2.Packet, n int, now time.Time) []rocev2.Packet {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.qps[p.BTH.DestQP]
	if q == nil || isAck(p.BTH.Opcode) || p.BTH.Opcode == rocev2.CNP {
		r.oth++
		return nil
	}
	st := &q.st
	if !rocev2.PKeyMatch(p.BTH.PKey, r.cfg.PKey) {
		st.BadPKey++
		return nil
	}
	if q.seen && p.BTH.PSN != (st.LastPSN+1)&rocev2.PSNMask {
		st.Gaps++
	}
	q.seen = true
	st.Packets++
	st.Bytes += uint64(n)
	st.LastPSN = p.BTH.PSN
	st.From = f.Src
	st.LastSeen = now
	ce := f.TOS&3 == 3
	if ce {
		st.CE++
	}
	var replies []rocev2.Packet
	if ce && r.cfg.NP && (q.lastCNP.IsZero() || now.Sub(q.lastCNP) >= r.cfg.CNPInterval) && q.cfg.PeerQP != 0 {
		q.lastCNP = now
		st.CNPs++
		replies = append(replies, rocev2.NewCNP(q.cfg.PeerQP))
	}
	if !q.cfg.NoAck && q.cfg.PeerQP != 0 && (st.Packets%uint64(r.cfg.AckEvery) == 0 || p.BTH.AckReq) {
		st.ACKs++
		replies = append(replies, rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.RCAcknowledge, PKey: r.cfg.PKey,
			DestQP: q.cfg.PeerQP, PSN: p.BTH.PSN}, AETH: rocev2.AETH{Syndrome: rocev2.SyndromeACK | 0x1F, MSN: uint32(st.Packets) & rocev2.PSNMask}})
	}
	return replies
}

// Stats returns a copy of the counters, QPs in configuration order.
func (r *Receiver) Stats() ReceiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var st ReceiverStats
	for _, q := range r.cfg.QPs {
		st.QPs = append(st.QPs, r.qps[q.QP&rocev2.PSNMask].st)
	}
	st.Other = r.oth
	st.Errors = r.bad.counts.Map()
	return st
}

// isAck: an acknowledgement of any transport (low five bits 0x11 or 0x12).
func isAck(op rocev2.Opcode) bool {
	o := uint8(op) & 0x1F
	return op != rocev2.CNP && (o == rocev2.OpAcknowledge || o == rocev2.OpAtomicAcknowledge)
}
