package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

// RingAllReduce is the baseline: the classic ring (reduce-scatter then
// allgather, 2(N−1) steps) between the members, host to host over the
// same IRN transport. Each rank sends 2(N−1)/N of the buffer and
// receives as much; packets are pipelined: chunk j of step s+1 leaves as
// soon as chunk j of step s has arrived (it is the same segment).
//
// Numerics: fp16 partial sums are rounded to fp16 at every hop, as on
// the wire; fp32 and fp64 add in their own type.
func (c *Client) RingAllReduce(ctx context.Context, buf []byte, dt packet.DType, op packet.Op) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Stats{Bytes: len(buf), Mode: "ring"}
	es := dt.Size()
	if es == 0 || len(buf)%es != 0 {
		return st, fmt.Errorf("buffer of %d bytes is not a whole number of %s elements", len(buf), dt)
	}
	a, err := c.Current(ctx) // the member list; any state but dismantled
	if err != nil {
		return st, err
	}
	N, r := int(a.Size), int(a.Rank)
	if len(a.Members) != N {
		return st, fmt.Errorf("ring: %d members known of %d", len(a.Members), N)
	}
	start := time.Now()
	if N == 1 || len(buf) == 0 {
		return st, nil
	}
	next, prev := a.Members[(r+1)%N], a.Members[(r+N-1)%N]
	nextAddr, err1 := netip.ParseAddr(next.Address)
	prevAddr, err2 := netip.ParseAddr(prev.Address)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("ring: bad member address %q / %q", next.Address, prev.Address)
	}
	n := len(buf) / es
	per := max(c.cfg.Payload/es, 1)
	segStart := func(k int) int { return k * n / N }
	segPk := func(k int) int { return (segStart(k+1) - segStart(k) + per - 1) / per }
	mod := func(x int) int { return ((x % N) + N) % N }
	steps := 2 * (N - 1)
	// Packet index of (step, chunk) for a sender of rank q: steps are laid
	// end to end. sendSeg(q, s) = (q − s) mod N.
	layout := func(q int) (off []int, total int) {
		off = make([]int, steps+1)
		for s := range steps {
			off[s+1] = off[s] + segPk(mod(q-s))
		}
		return off, off[steps]
	}
	sOff, sTotal := layout(r)
	rOff, rTotal := layout(mod(r - 1))
	locate := func(off []int, i int) (s, j int) {
		for s = 0; s < steps && off[s+1] <= i; s++ {
		}
		return s, i - off[s]
	}
	sendBase, recvBase := c.ringSend, c.ringRecv
	c.ringSend += uint32(sTotal)
	c.ringRecv += uint32(rTotal)

	rcv := transport.NewReceiver(rTotal)
	snd := transport.NewSender(c.transportCfg(), sTotal)
	snd.NACKIsAck, snd.Adaptive = true, true
	snd.CanSend = func(i int) bool {
		s, j := locate(sOff, i)
		if s == 0 {
			return true
		}
		// chunk j of the segment received at step s−1 (same segment).
		return rcv.Has(rOff[s-1] + j)
	}
	chunk := func(k, j int) (lo, hi int) {
		lo = segStart(k) + j*per
		return lo, min(lo+per, segStart(k+1))
	}
	send := func(i int, _ bool) {
		s, j := locate(sOff, i)
		lo, hi := chunk(mod(r-s), j)
		if err := c.ep.SendRing(nextAddr, next.Qpn, sendBase+uint32(i), uint64(lo*es), a.GroupKey, buf[lo*es:hi*es]); err != nil {
			c.log.Warn("send", "error", err)
		}
	}
	ack := func() { c.ep.SendACK(prevAddr, prev.Qpn, recvBase+uint32(rcv.Cum())-1) }
	handle := func(p *packetView) {
		switch p.kind {
		case packet.KindRing:
			if p.src != prevAddr || p.rkey != a.GroupKey || p.qp != c.cfg.QPN {
				st.Refused++
				return
			}
			i := int(rocev2.PSNDiff(p.psn, recvBase&rocev2.PSNMask))
			if i < 0 {
				c.lingerAnswer(p) // an old operation's retransmission
				return
			}
			if i >= rTotal {
				st.Stale++
				return
			}
			arr := rcv.Receive(i)
			if arr.Fresh {
				s, j := locate(rOff, i)
				lo, hi := chunk(mod(r-1-s), j)
				if len(p.payload) != (hi-lo)*es || p.va != uint64(lo*es) {
					st.Stale++
					return
				}
				if s < N-1 {
					reduceInto(buf[lo*es:hi*es], p.payload, dt, op)
				} else {
					copy(buf[lo*es:hi*es], p.payload)
				}
			}
			switch {
			case arr.NACK:
				c.ep.SendNACK(prevAddr, prev.Qpn, recvBase+uint32(rcv.Cum()), p.psn)
			case arr.Dup || rcv.AckDue(16):
				ack()
				rcv.Acked()
			}
		case packet.KindACK, packet.KindNACK:
			if p.src != nextAddr || p.qp != c.cfg.QPN {
				st.Refused++ // acknowledgements come from the next rank only
				return
			}
			if p.kind == packet.KindNACK {
				snd.NACK(int(rocev2.PSNDiff(p.psn, sendBase&rocev2.PSNMask)), int(rocev2.PSNDiff(p.trig, sendBase&rocev2.PSNMask)), time.Now())
				return
			}
			snd.AckUpTo(int(rocev2.PSNDiff(p.psn, sendBase&rocev2.PSNMask))+1, time.Now())
		default:
			st.Stale++
		}
	}
	for !snd.Done() || !rcv.Complete() {
		if err := ctx.Err(); err != nil {
			st.add(snd.Stats())
			return st, fmt.Errorf("ring allreduce: %w (sent %d/%d acked, received %d/%d)", err, sTotal-snd.InFlight(), sTotal, rcv.Cum(), rTotal)
		}
		snd.Poll(time.Now(), send)
		dl := snd.NextDeadline()
		if rcv.Pending() {
			// Packets arrived since the last ACK: ACK before sleeping.
			ack()
			rcv.Acked()
		}
		if err := c.pump(dl, handle); err != nil {
			return st, err
		}
	}
	c.ringRecvDone = recvBase + uint32(rTotal)
	st.add(snd.Stats())
	st.Duration = time.Since(start)
	return st, nil
}

// lingerAnswer answers a ring packet of an operation that is over here:
// its sender did not get our last ACK.
func (c *Client) lingerAnswer(p *packetView) {
	a := c.loadTree()
	if a == nil || p.kind != packet.KindRing || int(a.Size) < 2 {
		return
	}
	prev := a.Members[(int(a.Rank)+int(a.Size)-1)%int(a.Size)]
	if c.ringRecvDone != 0 && rocev2.PSNDiff(p.psn, c.ringRecvDone&rocev2.PSNMask) < 0 {
		c.ep.SendACK(p.src, prev.Qpn, c.ringRecvDone-1)
	}
}

// reduceInto folds src into dst element-wise.
func reduceInto(dst, src []byte, dt packet.DType, op packet.Op) {
	f := func(a, b float64) float64 {
		switch op {
		case packet.Min:
			return math.Min(a, b)
		case packet.Max:
			return math.Max(a, b)
		}
		return a + b
	}
	switch dt {
	case packet.FP16:
		for i := 0; i+1 < len(dst); i += 2 {
			a := aggregator.F16To32(binary.LittleEndian.Uint16(dst[i:]))
			b := aggregator.F16To32(binary.LittleEndian.Uint16(src[i:]))
			binary.LittleEndian.PutUint16(dst[i:], aggregator.F32To16(float32(f(float64(a), float64(b)))))
		}
	case packet.FP32:
		for i := 0; i+3 < len(dst); i += 4 {
			a := math.Float32frombits(binary.LittleEndian.Uint32(dst[i:]))
			b := math.Float32frombits(binary.LittleEndian.Uint32(src[i:]))
			var v float32
			switch op {
			case packet.Min:
				v = min(a, b)
			case packet.Max:
				v = max(a, b)
			default:
				v = a + b
			}
			binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(v))
		}
	case packet.FP64:
		for i := 0; i+7 < len(dst); i += 8 {
			a := math.Float64frombits(binary.LittleEndian.Uint64(dst[i:]))
			b := math.Float64frombits(binary.LittleEndian.Uint64(src[i:]))
			binary.LittleEndian.PutUint64(dst[i:], math.Float64bits(f(a, b)))
		}
	}
}
