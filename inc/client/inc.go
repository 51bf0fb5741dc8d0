package client

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/rocev2"
)

// AllReduce reduces buf (the host's memory: little-endian elements of dt)
// across the group in the fabric and leaves the result in buf.
//
// Message i carries elements [i·per, (i+1)·per) and goes to slot
// (base+i) mod S of the client's switch; a result overwrites its chunk
// (the chunk's input is no longer needed: it is never retransmitted
// once its result is in). Up to min(S, BDP-FC's cap) messages are in
// flight: message m is only sent once m−S has its result, which frees
// its slot.
func (c *Client) AllReduce(ctx context.Context, buf []byte, dt packet.DType, op packet.Op) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Stats{Bytes: len(buf), Mode: "inc"}
	a, err := c.begin(ctx, buf, dt)
	if err != nil {
		return st, err
	}
	es := dt.Size()
	if a.State != protos.GroupState_GROUP_STATE_READY {
		return st, fmt.Errorf("%w: %s", ErrNoTree, a.Reason)
	}
	dst, err := netip.ParseAddr(a.SwitchAddress)
	if err != nil {
		return st, fmt.Errorf("tree: switch address %q", a.SwitchAddress)
	}
	payload := min(c.cfg.Payload, int(a.MaxPayload))
	per := max(payload/es, 1)
	n := len(buf) / es
	npk := (n + per - 1) / per
	start := time.Now()
	if npk == 0 {
		return st, nil
	}
	slots := int(a.Slots)
	cfg := c.flowCfg(a, payload)
	cfg.Window = min(cfg.Cap(), slots)
	base := c.msg
	c.msg += uint32(npk)
	snd := transport.NewSender(cfg, npk)
	snd.OnReport = func(i, k int) { go c.report(a, base+uint32(i), k) }

	send := func(i int, retx bool) {
		cnt := min(per, n-i*per)
		m := base + uint32(i)
		d := packet.Data{DestQP: a.SwitchQpn, PSN: m, VA: uint64(i * per * es), RKey: a.GroupKey,
			Hdr: packet.Header{Collective: packet.AllReduce, DType: dt, Op: op, Tree: uint16(a.TreeId),
				Slot: uint16(m % uint32(slots)), Msg: m, Rank: uint16(a.ChildIndex), Count: uint16(cnt)},
			Payload: buf[i*per*es : (i*per+cnt)*es]}
		if retx {
			d.Hdr.Flags = packet.FlagRetransmit
		}
		if err := c.ep.SendINC(dst, &d); err != nil {
			c.log.Warn("send", "error", err)
		}
	}
	iop := &incOp{a: a, sw: dst, qpn: c.cfg.QPN, buf: buf, dt: dt, per: per, n: n, base: base, snd: snd, st: &st, refused: c.noteRefused}
	handle := func(p *packetView) {
		if p.kind == packet.KindRing {
			c.lingerAnswer(p)
			return
		}
		iop.receive(p, time.Now())
	}
	for !snd.Done() {
		if err := ctx.Err(); err != nil {
			st.add(snd.Stats())
			return st, fmt.Errorf("allreduce: %w (%d of %d results, first missing: message %d)", err, snd.Acked(), npk, base+uint32(snd.Lowest()))
		}
		if c.changed(a) {
			st.add(snd.Stats())
			return st, ErrTreeChanged
		}
		now := time.Now()
		snd.Poll(now, send)
		if err := c.pump(snd.NextDeadline(), &st, handle); err != nil {
			return st, err
		}
	}
	st.add(snd.Stats())
	st.Duration = time.Since(start)
	return st, nil
}

// flowCfg is the transport configuration of a flow of packets of payload
// bytes on a's fabric: BDP-FC's bandwidth is the tree's bottleneck when
// the manager knows it (the configured value otherwise), its MTU the
// payload.
func (c *Client) flowCfg(a *protos.TreeAssignment, payload int) transport.Config {
	cfg := c.transportCfg()
	if a.BottleneckBps > 0 {
		cfg.BandwidthBps = a.BottleneckBps
	}
	cfg.MTU = payload
	return cfg
}

// incOp is the receiving half of one INC allreduce: results fill the
// buffer, NACKs drive the sender. It takes packets only from the tree's
// switch (its parent) with the tree's key, to its own QP: anything else
// is counted as refused (Stats.Refused) and dropped, so a host that
// forges results cannot change the buffer.
type incOp struct {
	a       *protos.TreeAssignment
	sw      netip.Addr // the parent: the tree's switch
	qpn     uint32     // this client's QP
	buf     []byte
	dt      packet.DType
	per, n  int // elements per message, in the buffer
	base    uint32
	snd     *transport.Sender
	st      *Stats
	refused func(reason string, p *packetView)
}

// receive handles one packet of the operation.
func (o *incOp) receive(p *packetView, now time.Time) {
	if r := fromParent(o.sw, o.a.GroupKey, o.qpn, p); r != "" {
		o.st.Refused++
		if o.refused != nil {
			o.refused(r, p)
		}
		return
	}
	es := o.dt.Size()
	idx := func(psn uint32) int { return int(rocev2.PSNDiff(psn&rocev2.PSNMask, o.base&rocev2.PSNMask)) }
	switch {
	case p.kind == packet.KindINC && p.result && p.tree == uint16(o.a.TreeId):
		i := int(p.msg - o.base)
		if i < 0 || i*o.per >= o.n || p.count != min(o.per, o.n-i*o.per) || p.dtype != o.dt {
			o.st.Stale++
			return
		}
		if !o.snd.Outstanding(i) {
			// Not sent yet (its buffer chunk is still input) or answered
			// already: nothing to copy.
			o.st.Stale++
			return
		}
		copy(o.buf[i*o.per*es:], p.payload)
		o.snd.Ack(i, now)
	case p.kind == packet.KindNACK:
		o.snd.NACK(max(idx(p.psn), 0), idx(p.trig), now)
	default:
		o.st.Stale++
	}
}

// fromParent checks that an INC packet (a result or a NACK) comes from
// the client's parent: the switch of its tree assignment, with the tree's
// key (results carry it in RETH), to the client's own QP. It returns why
// not ("" when it does). The source address is what a UC packet says of
// its sender; that an on-path host cannot forge it is the switches'
// ingress check and the leaf's reverse-path filter (docs/inc.md).
func fromParent(sw netip.Addr, key, qpn uint32, p *packetView) string {
	switch {
	case p.kind != packet.KindINC && p.kind != packet.KindNACK:
		return "" // ring traffic: its own checks
	case p.src != sw:
		return "source"
	case p.qp != qpn:
		return "qp"
	case p.kind == packet.KindINC && p.rkey != key:
		return "rkey"
	}
	return ""
}

// packetView is what the operation loops need of a received packet
// (copied out of the endpoint's buffer for the INC fields; payload still
// aliases it and is consumed before the next receive).
type packetView struct {
	kind    packet.Kind
	result  bool
	tree    uint16
	msg     uint32
	count   int
	dtype   packet.DType
	psn     uint32
	trig    uint32
	va      uint64
	src     netip.Addr
	qp      uint32
	rkey    uint32 // RETH R_Key (INC and ring data)
	payload []byte
}

// pump waits for packets until deadline (at most 20 ms, so the caller
// checks its context and the tree), then drains what is queued. Only
// packets of the client's partition reach handle (admit); the others
// are counted in st.Refused (st nil: between operations).
func (c *Client) pump(deadline time.Time, st *Stats, handle func(*packetView)) error {
	limit := time.Now().Add(20 * time.Millisecond)
	if deadline.IsZero() || deadline.After(limit) {
		deadline = limit
	}
	p, err := c.ep.Recv(deadline)
	if err == transport.ErrTimeout {
		return nil
	}
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	for p != nil {
		if v, ok := c.admit(p, st); ok {
			c.dispatch(handle, &v)
		}
		p = c.ep.TryRecv()
	}
	return nil
}

// admit is the receive check every packet passes first, as an RNIC's
// responder checks the BTH P_Key against its QP's: a packet whose P_Key
// does not match the client's (IBTA's P_Key matching) is dropped,
// counted in st.Refused and logged once. Otherwise it returns the view
// the operations take.
func (c *Client) admit(p *packet.Parsed, st *Stats) (packetView, bool) {
	v := packetView{kind: p.Kind, result: p.Hdr.IsResult(), tree: p.Hdr.Tree, msg: p.Hdr.Msg, count: int(p.Hdr.Count),
		dtype: p.Hdr.DType, psn: p.PSN(), trig: p.Trigger(), va: p.RoCE.RETH.VA, src: p.Frame.Src, qp: p.RoCE.BTH.DestQP,
		rkey: p.RoCE.RETH.RKey, payload: p.Payload}
	if rocev2.PKeyMatch(p.RoCE.BTH.PKey, c.pkey) {
		return v, true
	}
	if st != nil {
		st.Refused++
	}
	c.noteRefused("pkey", &v)
	return v, false
}

// dispatch hands one received packet to the operation, recovering a
// panic through the client's guard: the packet is dropped, the operation
// goes on (its transport repairs a lost packet).
func (c *Client) dispatch(handle func(*packetView), v *packetView) {
	defer c.guard.Recover("rx", c.ep.Raw(), nil)
	handle(v)
}

// noteRefused logs the first packet refused for each reason (counted in
// the operation's Stats.Refused).
func (c *Client) noteRefused(reason string, p *packetView) {
	if c.refusedLogged[reason] {
		return
	}
	if c.refusedLogged == nil {
		c.refusedLogged = map[string]bool{}
	}
	c.refusedLogged[reason] = true
	c.log.Warn("packet refused: not of this client's partition (pkey), or not from this rank's parent with the tree's key; dropped", "reason", reason, "from", p.src,
		"qp", p.qp, "tree", p.tree, "message", p.msg, "note", "logged once per reason; counted in the operation's refused")
}
