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
	"github.com/fared/fared/inc/protos"
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
	a, err := c.begin(ctx, buf, dt) // the member list; any state but dismantled
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
	o := &ringOp{c: c, a: a, buf: buf, dt: dt, op: op, st: &st, N: N, r: r, es: dt.Size()}
	o.next, o.prev = a.Members[(r+1)%N], a.Members[(r+N-1)%N]
	var err1, err2 error
	o.nextAddr, err1 = netip.ParseAddr(o.next.Address)
	o.prevAddr, err2 = netip.ParseAddr(o.prev.Address)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("ring: bad member address %q / %q", o.next.Address, o.prev.Address)
	}
	o.layout(c.cfg.Payload)
	o.sendBase, o.recvBase = c.ringSend, c.ringRecv
	c.ringSend += uint32(o.sTotal)
	c.ringRecv += uint32(o.rTotal)

	o.rcv = transport.NewReceiver(o.rTotal)
	o.snd = transport.NewSender(c.flowCfg(a, o.per*o.es), o.sTotal)
	o.snd.NACKIsAck, o.snd.Adaptive = true, true
	o.snd.CanSend = func(i int) bool {
		s, j := o.locate(o.sOff, i)
		if s == 0 {
			return true
		}
		// chunk j of the segment received at step s−1 (same segment).
		return o.rcv.Has(o.rOff[s-1] + j)
	}
	for !o.snd.Done() || !o.rcv.Complete() {
		if err := ctx.Err(); err != nil {
			st.add(o.snd.Stats())
			return st, fmt.Errorf("ring allreduce: %w (sent %d/%d acked, received %d/%d)", err, o.sTotal-o.snd.InFlight(), o.sTotal, o.rcv.Cum(), o.rTotal)
		}
		o.snd.Poll(time.Now(), o.send)
		dl := o.snd.NextDeadline()
		if o.rcv.Pending() {
			// Packets arrived since the last ACK: ACK before sleeping.
			o.ack()
		}
		if err := c.pump(dl, &st, o.receive); err != nil {
			return st, err
		}
	}
	c.ringRecvDone = o.recvBase + uint32(o.rTotal)
	st.add(o.snd.Stats())
	st.Duration = time.Since(start)
	return st, nil
}

// begin starts an operation on buf: buf must hold whole elements of dt;
// it returns the client's current tree assignment.
func (c *Client) begin(ctx context.Context, buf []byte, dt packet.DType) (*protos.TreeAssignment, error) {
	es := dt.Size()
	if es == 0 || len(buf)%es != 0 {
		return nil, fmt.Errorf("buffer of %d bytes is not a whole number of %s elements", len(buf), dt)
	}
	return c.Current(ctx)
}

// ringOp is one ring allreduce at rank r of N: rank r sends to next and
// receives from prev. The buffer's n elements are N segments; a segment
// travels as packets ("chunks") of per elements. At step s rank q sends
// segment (q − s) mod N; steps are laid end to end in packet numbers.
type ringOp struct {
	c                  *Client
	a                  *protos.TreeAssignment
	buf                []byte
	dt                 packet.DType
	op                 packet.Op
	st                 *Stats
	N, r               int
	es, n, per, steps  int
	next, prev         *protos.Member
	nextAddr, prevAddr netip.Addr
	// sOff[s], rOff[s]: the packet number of step s's first chunk, sent
	// (by r) and received (sent by r−1); sTotal, rTotal: packets in all.
	sOff, rOff         []int
	sTotal, rTotal     int
	sendBase, recvBase uint32 // PSN of packet 0
	snd                *transport.Sender
	rcv                *transport.Receiver
}

// layout lays out the segments and steps for payloads of payload bytes.
func (o *ringOp) layout(payload int) {
	o.n = len(o.buf) / o.es
	o.per = max(payload/o.es, 1)
	o.steps = 2 * (o.N - 1)
	o.sOff, o.sTotal = o.offsets(o.r)
	o.rOff, o.rTotal = o.offsets(o.mod(o.r - 1))
}

func (o *ringOp) mod(x int) int { return ((x % o.N) + o.N) % o.N }

// segStart is the first element of segment k.
func (o *ringOp) segStart(k int) int { return k * o.n / o.N }

// segPk is the number of chunks of segment k.
func (o *ringOp) segPk(k int) int { return (o.segStart(k+1) - o.segStart(k) + o.per - 1) / o.per }

// offsets is the packet index of (step, chunk) for a sender of rank q.
func (o *ringOp) offsets(q int) (off []int, total int) {
	off = make([]int, o.steps+1)
	for s := range o.steps {
		off[s+1] = off[s] + o.segPk(o.mod(q-s))
	}
	return off, off[o.steps]
}

// locate turns packet number i into (step, chunk).
func (o *ringOp) locate(off []int, i int) (s, j int) {
	for s = 0; s < o.steps && off[s+1] <= i; s++ {
	}
	return s, i - off[s]
}

// chunk is the element range of chunk j of segment k.
func (o *ringOp) chunk(k, j int) (lo, hi int) {
	lo = o.segStart(k) + j*o.per
	return lo, min(lo+o.per, o.segStart(k+1))
}

// send sends packet i to the next rank.
func (o *ringOp) send(i int, _ bool) {
	s, j := o.locate(o.sOff, i)
	lo, hi := o.chunk(o.mod(o.r-s), j)
	es := o.es
	if err := o.c.ep.SendRing(o.nextAddr, o.next.Qpn, o.sendBase+uint32(i), uint64(lo*es), o.a.GroupKey, o.buf[lo*es:hi*es]); err != nil {
		o.c.log.Warn("send", "error", err)
	}
}

// ack acknowledges what has arrived in order from the previous rank.
func (o *ringOp) ack() {
	o.c.ep.SendACK(o.prevAddr, o.prev.Qpn, o.recvBase+uint32(o.rcv.Cum())-1)
	o.rcv.Acked()
}

// receive handles one packet: ring data from the previous rank, or
// acknowledgements from the next.
func (o *ringOp) receive(p *packetView) {
	switch p.kind {
	case packet.KindRing:
		o.receiveData(p)
	case packet.KindACK, packet.KindNACK:
		if p.src != o.nextAddr || p.qp != o.c.cfg.QPN {
			o.st.Refused++ // acknowledgements come from the next rank only
			return
		}
		if p.kind == packet.KindNACK {
			o.snd.NACK(int(rocev2.PSNDiff(p.psn, o.sendBase&rocev2.PSNMask)), int(rocev2.PSNDiff(p.trig, o.sendBase&rocev2.PSNMask)), time.Now())
			return
		}
		o.snd.AckUpTo(int(rocev2.PSNDiff(p.psn, o.sendBase&rocev2.PSNMask))+1, time.Now())
	default:
		o.st.Stale++
	}
}

// receiveData takes a chunk from the previous rank: during reduce-scatter
// (the first N−1 steps) it is folded into the buffer, during allgather
// it is the result.
func (o *ringOp) receiveData(p *packetView) {
	if p.src != o.prevAddr || p.rkey != o.a.GroupKey || p.qp != o.c.cfg.QPN {
		o.st.Refused++
		return
	}
	i := int(rocev2.PSNDiff(p.psn, o.recvBase&rocev2.PSNMask))
	if i < 0 {
		o.c.lingerAnswer(p) // an old operation's retransmission
		return
	}
	if i >= o.rTotal {
		o.st.Stale++
		return
	}
	arr := o.rcv.Receive(i)
	if arr.Fresh {
		s, j := o.locate(o.rOff, i)
		lo, hi := o.chunk(o.mod(o.r-1-s), j)
		es := o.es
		if len(p.payload) != (hi-lo)*es || p.va != uint64(lo*es) {
			o.st.Stale++
			return
		}
		if s < o.N-1 {
			reduceInto(o.buf[lo*es:hi*es], p.payload, o.dt, o.op)
		} else {
			copy(o.buf[lo*es:hi*es], p.payload)
		}
	}
	switch {
	case arr.NACK:
		o.c.ep.SendNACK(o.prevAddr, o.prev.Qpn, o.recvBase+uint32(o.rcv.Cum()), p.psn)
	case arr.Dup || o.rcv.AckDue(16):
		o.ack()
	}
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
