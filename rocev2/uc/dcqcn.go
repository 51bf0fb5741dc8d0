// Package uc is a software RoCEv2 UC endpoint pair for the lab: a sender
// that writes RDMA WRITE ONLY packets at a rate a DCQCN reaction point
// controls (it slows down on CNPs), and a receiver that counts what
// arrives and returns ACK-like reverse packets (RC Acknowledge with an
// AETH, to the sender's QP, with the PSN received), so that a switch
// running IPCC can learn the sender's QP. Both speak real frames through
// rocev2/rawsock (raw IPv4 sockets, the ICRC computed over the IP ID the
// sender chose). The INC work reuses it for its UC traffic.
//
// It is a test tool: rates are software-paced (tens to hundreds of Mb/s
// on a veth), and the DCQCN timers are configurable so a lab at such
// rates sees the same shape of reaction as a NIC at 100G.
package uc

import (
	"time"
)

// DCQCN are the reaction point's parameters (Zhu et al., SIGCOMM 2015).
type DCQCN struct {
	G           float64       // alpha gain (1/256)
	AlphaTimer  time.Duration // alpha decays by (1-G) per period without CNPs
	RateTimer   time.Duration // a rate increase per period
	ByteCounter int64         // and per this many bytes
	F           int           // fast recovery steps
	RAI, RHAI   float64       // additive and hyper increase, bits/s
	MinRate     float64       // bits/s
}

// LabDCQCN are the reference parameters scaled to a software lab: a
// switch's CPU reads queues every millisecond or so (an ASIC every few
// microseconds), so the alpha and rate timers are 1 ms instead of 55 µs;
// and the increases are fractions of the line rate (the reference's
// 40 Mb/s additive step is 0.04% of 100G, but most of a 50 Mb/s link).
// g, F and the byte counter are the reference's.
func LabDCQCN(line float64) DCQCN {
	return DCQCN{G: 1.0 / 256, AlphaTimer: time.Millisecond, RateTimer: time.Millisecond,
		ByteCounter: 10_000_000, F: 5, RAI: line / 100, RHAI: line / 20, MinRate: line / 100}
}

// rp is a DCQCN reaction point driven by wall-clock time. Timers are not
// goroutines: advance(now) runs every period that elapsed, so the state
// is exact whatever the pacing loop's granularity.
type rp struct {
	p                DCQCN
	line             float64
	rate, target     float64 // RC, RT
	alpha            float64
	cnpSeen          bool
	tCount, bCount   int
	bBytes           int64
	nextAlpha, nextR time.Time
	minRate          float64
}

func newRP(p DCQCN, line float64, now time.Time) *rp {
	return &rp{p: p, line: line, rate: line, target: line, alpha: 1, minRate: line,
		nextAlpha: now.Add(p.AlphaTimer), nextR: now.Add(p.RateTimer)}
}

// advance runs the alpha and rate timers up to now.
func (r *rp) advance(now time.Time) {
	for !r.nextAlpha.After(now) {
		if !r.cnpSeen {
			r.alpha *= 1 - r.p.G
		}
		r.cnpSeen = false
		r.nextAlpha = r.nextAlpha.Add(r.p.AlphaTimer)
	}
	for !r.nextR.After(now) {
		r.tCount++
		r.increase()
		r.nextR = r.nextR.Add(r.p.RateTimer)
	}
}

// sent counts bytes for the byte-counter stage.
func (r *rp) sent(n int) {
	r.bBytes += int64(n)
	if r.p.ByteCounter > 0 && r.bBytes >= r.p.ByteCounter {
		r.bBytes = 0
		r.bCount++
		r.increase()
	}
}

func (r *rp) increase() {
	switch {
	case max(r.tCount, r.bCount) < r.p.F:
	case min(r.tCount, r.bCount) > r.p.F:
		r.target += r.p.RHAI * float64(min(r.tCount, r.bCount)-r.p.F)
	default:
		r.target += r.p.RAI
	}
	r.target = min(r.target, r.line)
	r.rate = min((r.rate+r.target)/2, r.line)
}

// cnp is a congestion notification: RT = RC, RC x (1 - alpha/2),
// alpha = (1-g) alpha + g; the timers restart from the cut.
func (r *rp) cnp(now time.Time) {
	r.advance(now)
	r.target = r.rate
	r.rate = max(r.rate*(1-r.alpha/2), r.p.MinRate)
	r.minRate = min(r.minRate, r.rate)
	r.alpha = (1-r.p.G)*r.alpha + r.p.G
	r.cnpSeen = true
	r.tCount, r.bCount, r.bBytes = 0, 0, 0
	r.nextAlpha = now.Add(r.p.AlphaTimer)
	r.nextR = now.Add(r.p.RateTimer)
}
