package ospf

import (
	"errors"
	"net/netip"
	"time"

	"github.com/fared/fared/ospf/packet"
)

// DBD flag bits (RFC 2328 A.3.3).
const (
	ddMaster = 0x01
	ddMore   = 0x02
	ddInit   = 0x04
)

// receive is the entry for every packet from the wire (RFC 2328 §8.2).
func (in *Instance) receive(ifc *iface, src, dst netip.Addr, b []byte) {
	if !ifc.running || ifc.cfg.Passive {
		return
	}
	ifc.count("rx_packets")
	// A bug triggered by one packet costs that packet, not the daemon
	// and every adjacency with it (internal/guard: logged once per
	// interface with the stack and the packet's head).
	defer in.guard.Recover(ifc.rxSite, b, func(any) { ifc.count("rx_rejected_panic") })
	if in.rxFault != nil {
		in.rxFault(b)
	}
	pkt, err := packet.Decode(b)
	if err != nil {
		kind := "malformed"
		var de *packet.DecodeError
		if errors.As(err, &de) {
			kind = de.Kind.String()
		}
		ifc.reject(kind, "malformed packet dropped", "err", err, "from", src, "len", len(b))
		return
	}
	h := pkt.PacketHeader()
	av, ok := ifc.authOK(b, h.RouterID, src)
	if !ok {
		return
	}
	defer ifc.noteCryptSeq(av, h.RouterID, src)
	if h.AreaID != areaAddr(ifc.area.id) {
		ifc.reject("area_mismatch", "packet for another area dropped", "area", h.AreaID, "ours", ifc.area.name, "from", src)
		return
	}
	if h.RouterID == in.rid {
		ifc.reject("own_router_id", "packet with our own router id (looped back or duplicate router id)", "from", src)
		return
	}
	// Destination checks: AllDRouters is for the DR and BDR only; a
	// unicast must be for our address.
	switch {
	case dst == AllDRouters:
		if ifc.state != IfDR && ifc.state != IfBackup {
			ifc.count("rx_not_dr")
			return
		}
	case dst == AllSPFRouters || !dst.IsValid():
	case dst != ifc.addr.Addr():
		ifc.count("rx_not_for_us")
		return
	}
	// On broadcast links the sender must be on our subnet.
	if !ifc.isP2P() && !ifc.addr.Contains(src) {
		ifc.reject("wrong_subnet", "packet from outside the interface subnet", "from", src, "subnet", ifc.addr.Masked())
		return
	}
	now := in.opt.Now()
	switch p := pkt.(type) {
	case *packet.Hello:
		ifc.count("rx_hello")
		ifc.rxHello(p, src, now)
	case *packet.DBD:
		ifc.fromNeighbor("dbd", h.RouterID, src, func(n *neighbor) { n.rxDBD(p, now) })
	case *packet.LSR:
		ifc.fromNeighbor("lsr", h.RouterID, src, func(n *neighbor) { n.rxLSR(p, now) })
	case *packet.LSU:
		ifc.fromNeighbor("lsu", h.RouterID, src, func(n *neighbor) { in.rxLSU(n, p, now) })
	case *packet.LSAck:
		ifc.fromNeighbor("lsack", h.RouterID, src, func(n *neighbor) { n.rxAck(p, now) })
	}
}

// fromNeighbor counts a packet of kind (dbd, lsr, lsu, lsack) and hands it
// to the neighbour that sent it; only hellos come from routers without a
// neighbour entry.
func (ifc *iface) fromNeighbor(kind string, rid, src netip.Addr, rx func(*neighbor)) {
	ifc.count("rx_" + kind)
	if n := ifc.nbrFor(rid, src); n != nil {
		rx(n)
		return
	}
	ifc.reject("unknown_neighbor", "packet from a router without a neighbour entry", "type", kind, "router_id", rid, "from", src)
}

// nbrFor finds the neighbour that sent a packet.
func (ifc *iface) nbrFor(rid, src netip.Addr) *neighbor {
	if ifc.isP2P() {
		return ifc.nbrs[rid]
	}
	if n := ifc.nbrs[src]; n != nil && n.rid == rid {
		return n
	}
	return nil
}

// rxHello is RFC 2328 §10.5.
func (ifc *iface) rxHello(h *packet.Hello, src netip.Addr, now time.Time) {
	rid := h.RouterID
	if !ifc.isP2P() {
		if mask := maskBits(h.Mask); mask != ifc.addr.Bits() {
			ifc.reject("netmask_mismatch", "hello with another network mask", "mask", h.Mask, "ours", ifc.addr.Bits(), "from", src)
			return
		}
	}
	if time.Duration(h.HelloInterval)*time.Second != ifc.cfg.HelloInterval {
		ifc.reject("hello_interval_mismatch", "hello with another hello interval", "hello_interval", h.HelloInterval, "ours", ifc.cfg.HelloInterval.Seconds(), "from", src)
		return
	}
	if time.Duration(h.DeadInterval)*time.Second != ifc.cfg.DeadInterval {
		ifc.reject("dead_interval_mismatch", "hello with another dead interval", "dead_interval", h.DeadInterval, "ours", ifc.cfg.DeadInterval.Seconds(), "from", src)
		return
	}
	if h.Options&optE == 0 {
		// We only run normal areas: the E bit must be set (§10.5).
		ifc.reject("options_mismatch", "hello without the E bit (stub area?)", "options", h.Options, "from", src)
		return
	}
	key := src
	if ifc.isP2P() {
		key = rid
	}
	n := ifc.nbrs[key]
	if n != nil && n.rid != rid {
		// Another router now uses this address.
		n.kill(now, "router id changed")
		delete(ifc.nbrs, key)
		n = nil
	}
	if n == nil {
		n = newNeighbor(ifc, rid, src)
		ifc.nbrs[key] = n
	}
	n.addr = src
	n.deadAt = now.Add(time.Duration(h.DeadInterval) * time.Second)
	if n.state == NbrDown {
		n.setState(NbrInit, now, "HelloReceived")
	}
	oldPrio, oldDR, oldBDR := n.prio, n.dr, n.bdr
	n.prio, n.dr, n.bdr, n.options = h.Priority, declared(h.DR), declared(h.BDR), h.Options
	seesUs := false
	for _, x := range h.Neighbors {
		if x == ifc.in.rid {
			seesUs = true
			break
		}
	}
	if !seesUs {
		if n.state >= Nbr2Way {
			// 1-WayReceived.
			n.clearLists()
			n.setState(NbrInit, now, "1-WayReceived")
			ifc.neighborChange(now)
		}
		return
	}
	was2Way := n.state >= Nbr2Way
	if n.state == NbrInit {
		// Answer at once so the neighbour sees us without waiting.
		ifc.helloDue = now
		n.twoWayReceived(now)
	}
	if ifc.isP2P() {
		return
	}
	me := n.addr
	switch {
	case ifc.state == IfWaiting && ((n.dr == me && !n.bdr.IsValid()) || n.bdr == me):
		// BackupSeen (§10.5, §9.3): the neighbour is BDR, or is DR and
		// says there is no BDR; no need to wait out the wait timer.
		ifc.elect(now, "BackupSeen")
	case !was2Way && n.state >= Nbr2Way:
		ifc.neighborChange(now)
	case oldPrio != n.prio:
		ifc.neighborChange(now)
	case (n.dr == me) != (oldDR == me) || (n.bdr == me) != (oldBDR == me):
		ifc.neighborChange(now)
	}
}

// declared turns a hello's DR or BDR field into an address, 0.0.0.0
// ("none", RFC 2328 A.3.2) into the zero Addr: the decoder returns the
// field as it is on the wire.
func declared(a netip.Addr) netip.Addr {
	if !a.IsValid() || a.IsUnspecified() {
		return netip.Addr{}
	}
	return a
}

func maskBits(m netip.Addr) int {
	if !m.Is4() {
		return -1
	}
	b := m.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := 0
	for v&0x80000000 != 0 {
		n++
		v <<= 1
	}
	if v != 0 {
		return -1 // not contiguous
	}
	return n
}

func maskAddr(bits int) netip.Addr {
	v := uint32(0)
	if bits > 0 {
		v = ^uint32(0) << (32 - bits)
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func areaAddr(a uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)})
}

// rxDBD is RFC 2328 §10.6.
func (n *neighbor) rxDBD(p *packet.DBD, now time.Time) {
	ifc := n.ifc
	if int(p.MTU) > ifc.mtu && ifc.mtu > 0 {
		ifc.reject("mtu_mismatch", "DBD with an interface MTU larger than ours: no adjacency", "mtu", p.MTU, "ours", ifc.mtu, "neighbor", n.rid)
		return
	}
	n.nbrMTU = int(p.MTU)
	dup := n.lastRcvd.valid && n.lastRcvd.flags == p.Flags && n.lastRcvd.seq == p.Seq && n.lastRcvd.options == p.Options
	switch n.state {
	case NbrDown, NbrAttempt, Nbr2Way:
		return
	case NbrInit:
		n.twoWayReceived(now)
		if n.state != NbrExStart {
			return
		}
		fallthrough
	case NbrExStart:
		switch {
		case p.Flags&(ddInit|ddMore|ddMaster) == ddInit|ddMore|ddMaster && len(p.LSAs) == 0 && p.RouterID.Compare(ifc.in.rid) > 0:
			n.master = false
			n.ddSeq = p.Seq
			n.opaque = p.Options&optO != 0
			n.negotiationDone(now)
		case p.Flags&(ddInit|ddMaster) == 0 && p.Seq == n.ddSeq && p.RouterID.Compare(ifc.in.rid) < 0:
			n.master = true
			n.opaque = p.Options&optO != 0
			n.negotiationDone(now)
		default:
			return
		}
		n.acceptDBD(p, now)
	case NbrExchange:
		switch {
		case dup:
			if !n.master && n.lastSent != nil {
				ifc.sendRaw(ifc.nbrDst(n), n.lastSent, "dbd")
			}
			return
		case (p.Flags&ddMaster != 0) == n.master:
			n.seqMismatch(now, "master/slave bit mismatch")
			return
		case p.Flags&ddInit != 0:
			n.seqMismatch(now, "unexpected init bit")
			return
		case p.Options != n.lastRcvd.options && n.lastRcvd.valid:
			n.seqMismatch(now, "options changed")
			return
		case n.master && p.Seq != n.ddSeq:
			n.seqMismatch(now, "sequence number mismatch")
			return
		case !n.master && p.Seq != n.ddSeq+1:
			n.seqMismatch(now, "sequence number mismatch")
			return
		}
		n.acceptDBD(p, now)
	case NbrLoading, NbrFull:
		if dup {
			if !n.master && n.lastSent != nil {
				ifc.sendRaw(ifc.nbrDst(n), n.lastSent, "dbd")
			}
			return
		}
		n.seqMismatch(now, "DBD after the exchange")
	}
}

func (n *neighbor) negotiationDone(now time.Time) {
	n.setState(NbrExchange, now, "NegotiationDone")
	// The summary list: every LSA of the link, the area and the AS
	// scope, MaxAge ones excepted (§10.3, RFC 5250 §3).
	in := n.ifc.in
	n.summary = n.summary[:0]
	for _, a := range []*area{n.ifc.linkDB, n.ifc.area, in.as} {
		for k, e := range a.db {
			if !n.wants(k.typ) {
				continue
			}
			if e.age(now) >= MaxAge {
				n.rxmt[k] = time.Time{} // send it, it is being flushed
				continue
			}
			n.summary = append(n.summary, e.header(now))
		}
	}
}

// acceptDBD processes the headers of an accepted DBD and answers it.
func (n *neighbor) acceptDBD(p *packet.DBD, now time.Time) {
	n.lastRcvd.flags, n.lastRcvd.seq, n.lastRcvd.options, n.lastRcvd.valid = p.Flags, p.Seq, p.Options, true
	in := n.ifc.in
	for _, h := range p.LSAs {
		a := in.scopeOf(n.ifc, h.Type)
		e := a.db[keyOf(h)]
		if e == nil || compareLSA(h, e.header(now)) > 0 {
			n.addRequest(h)
		}
	}
	more := p.Flags&ddMore != 0
	if n.master {
		n.ddSeq++
		if !more && !n.lastSentM {
			n.exchangeDone(now)
			n.lastSent = nil
			return
		}
		n.sendDBD(now, ddMaster, n.nextSummary())
		return
	}
	n.ddSeq = p.Seq
	n.sendDBD(now, 0, n.nextSummary())
	if !more && !n.lastSentM {
		n.slaveHold = now.Add(n.ifc.cfg.DeadInterval)
		n.exchangeDone(now)
	}
}

// nextSummary takes the headers for the next DBD off the summary list.
func (n *neighbor) nextSummary() []lsaHeader {
	room := (n.ifc.maxPacket() - packet.HeaderLen - 8) / 20
	if n.nbrMTU > 0 {
		room = min(room, (n.nbrMTU-ipHeaderLen-packet.HeaderLen-8)/20)
	}
	room = max(room, 1)
	k := min(room, len(n.summary))
	out := append([]lsaHeader(nil), n.summary[:k]...)
	n.summary = n.summary[k:]
	return out
}

// seqMismatch is SeqNumberMismatch / BadLSReq: restart the exchange.
func (n *neighbor) seqMismatch(now time.Time, why string) {
	n.ifc.count("seq_mismatch")
	n.ifc.in.log.Info("database exchange restarted", "iface", n.ifc.name, "neighbor", n.rid, "reason", why)
	n.startExchange(now, "SeqNumberMismatch: "+why)
}

// sendDBD builds and sends one DBD with the given flags (M is added when
// the summary list is not empty) and headers.
func (n *neighbor) sendDBD(now time.Time, flags uint8, hs []lsaHeader) {
	ifc := n.ifc
	if len(n.summary) > 0 || flags&ddInit != 0 {
		flags |= ddMore
	}
	n.lastSentM = flags&ddMore != 0
	p := &packet.DBD{MTU: uint16(ifc.mtu), Options: optE | optO, Flags: flags, Seq: n.ddSeq, LSAs: hs}
	b := ifc.encode(p)
	n.lastSent = b
	n.ddDue = now.Add(ifc.in.ocfg.RetransmitInterval)
	ifc.sendRaw(ifc.nbrDst(n), b, "dbd")
}

// sendLSR requests what the request list holds, as much as fits a packet.
func (n *neighbor) sendLSR(now time.Time) {
	ifc := n.ifc
	room := max(1, (ifc.maxPacket()-packet.HeaderLen)/12)
	var reqs []packet.LSRequest
	for _, k := range n.reqOrder {
		if len(reqs) == room {
			break
		}
		reqs = append(reqs, packet.LSRequest{Type: uint32(k.typ), ID: k.id, AdvRouter: k.adv})
	}
	if len(reqs) == 0 {
		return
	}
	ifc.send(ifc.nbrDst(n), &packet.LSR{Requests: reqs}, "lsr")
	n.lsrDue = now.Add(ifc.in.ocfg.RetransmitInterval)
}

// rxLSR answers requests from our database (§10.7).
func (n *neighbor) rxLSR(p *packet.LSR, now time.Time) {
	if n.state < NbrExchange {
		n.ifc.reject("not_adjacent", "LSR from a neighbour not in Exchange or later", "neighbor", n.rid, "state", n.state.String())
		return
	}
	in := n.ifc.in
	var out []*lsaEntry
	for _, r := range p.Requests {
		k := lsaKey{typ: uint8(r.Type), id: r.ID, adv: r.AdvRouter}
		e := in.scopeOf(n.ifc, k.typ).db[k]
		if e == nil {
			n.ifc.count("rx_bad_lsreq")
			n.seqMismatch(now, "BadLSReq: "+lsaName(k))
			return
		}
		out = append(out, e)
	}
	n.ifc.sendLSAs(n.ifc.nbrDst(n), out, now)
}

// rxAck removes acknowledged LSAs from the retransmission list (§13.7).
func (n *neighbor) rxAck(p *packet.LSAck, now time.Time) {
	if n.state < NbrExchange {
		return
	}
	for _, h := range p.LSAs {
		k := keyOf(h)
		if _, ok := n.rxmt[k]; !ok {
			continue
		}
		e := n.ifc.in.scopeOf(n.ifc, k.typ).db[k]
		if e == nil || compareLSA(h, e.header(now)) == 0 {
			delete(n.rxmt, k)
		} else {
			n.ifc.count("rx_ack_mismatch")
		}
	}
}

// rxLSU is the flooding procedure of RFC 2328 §13 for each LSA.
func (in *Instance) rxLSU(n *neighbor, p *packet.LSU, now time.Time) {
	ifc := n.ifc
	if n.state < NbrExchange {
		ifc.reject("not_adjacent", "LSU from a neighbour not in Exchange or later", "neighbor", n.rid, "state", n.state.String())
		return
	}
	for _, l := range p.LSAs {
		if n.state < NbrExchange {
			return // a BadLSReq below restarted the exchange
		}
		in.rxLSA(n, l, now)
	}
	n.loadingDone(now)
}

func (in *Instance) rxLSA(n *neighbor, l packet.LSA, now time.Time) {
	ifc := n.ifc
	k := keyOf(l.LSAHeader)
	// (1) checksum.
	if !packet.LSAChecksumOK(l.Raw) {
		ifc.reject("bad_lsa_checksum", "LSA with a bad checksum dropped", "lsa", lsaName(k), "seq", seqHex(l.Seq), "checksum", l.Checksum)
		return
	}
	// (2) unknown types are kept and flooded as area-scoped opaque data:
	// not an error (counted for visibility).
	if !knownType(k.typ) {
		ifc.count("rx_unknown_lsa_type")
		ifc.logOnce("unknown_lsa_type", "LSA of an unknown type stored and flooded unchanged", "lsa", lsaName(k))
	}
	a := in.scopeOf(ifc, k.typ)
	cur := a.db[k]
	// (4) MaxAge LSA we do not have, with no neighbour exchanging: ack and drop.
	if l.Age >= MaxAge && cur == nil && !in.anyExchanging(a) {
		n.directAcks = append(n.directAcks, l.LSAHeader)
		return
	}
	cmp := 1
	if cur != nil {
		cmp = compareLSA(l.LSAHeader, cur.header(now))
	}
	switch {
	case cmp > 0:
		// (5a) MinLSArrival.
		if cur != nil && !cur.own && now.Sub(cur.installed) < in.ocfg.MinLSArrival {
			ifc.count("rx_lsa_too_soon")
			return
		}
		if in.selfOriginated(l.LSAHeader) {
			in.ownNewer(a, n, l, now)
			return
		}
		e := &lsaEntry{lsa: l, age0: min(l.Age, MaxAge), at: now, fromIf: ifc.name}
		if e.age0 >= MaxAge {
			e.flushed = true
		}
		in.install(a, e, now)
		ifc.count("rx_lsa_new")
		back := in.flood(a, e, n, now)
		// (5e) delayed ack, unless it went back out of this interface.
		if !back && (ifc.state != IfBackup || n.addr == ifc.dr) {
			ifc.acks = append(ifc.acks, l.LSAHeader)
		}
	case func() bool { _, ok := n.requests[k]; return ok && n.state < NbrFull }():
		// (6) an instance we asked for but not newer than ours.
		n.seqMismatch(now, "BadLSReq: "+lsaName(k))
	case cmp == 0:
		// (7) duplicate: implied or direct acknowledgement.
		if _, ok := n.rxmt[k]; ok {
			delete(n.rxmt, k)
			if ifc.state == IfBackup && n.addr == ifc.dr {
				ifc.acks = append(ifc.acks, l.LSAHeader)
			}
		} else {
			n.directAcks = append(n.directAcks, l.LSAHeader)
		}
	default:
		// (8) ours is newer: send it back, at most once per MinLSArrival.
		if cur.age(now) >= MaxAge && cur.lsa.Seq == packet.MaxSequenceNumber {
			return
		}
		if now.Sub(cur.sentBack) >= in.ocfg.MinLSArrival {
			cur.sentBack = now
			ifc.sendLSAs(ifc.nbrDst(n), []*lsaEntry{cur}, now)
		}
	}
}

// anyExchanging reports whether a neighbour in the LSA's scope is in
// Exchange or Loading.
func (in *Instance) anyExchanging(a *area) bool {
	for _, ifc := range in.floodIfaces(a) {
		for _, n := range ifc.nbrs {
			if n.state == NbrExchange || n.state == NbrLoading {
				return true
			}
		}
	}
	return false
}

// ownNewer handles a received self-originated LSA newer than ours (§13.4):
// re-originate above its sequence number, or flush it if we no longer
// originate it.
func (in *Instance) ownNewer(a *area, n *neighbor, l packet.LSA, now time.Time) {
	n.ifc.count("rx_own_lsa_newer")
	k := keyOf(l.LSAHeader)
	// Acknowledge it: the sender must stop retransmitting.
	n.directAcks = append(n.directAcks, l.LSAHeader)
	cur := a.db[k]
	if cur != nil && cur.own && a.own[k] && cur.age(now) < MaxAge {
		w := wantLSA{typ: cur.lsa.Type, id: cur.lsa.ID, options: cur.lsa.Options, body: cur.lsa.Body}
		if l.Seq == packet.MaxSequenceNumber {
			// Nothing can outbid the network's MaxSequenceNumber copy: it
			// is the instance the wrap flushes (§12.1.6).
			e := &lsaEntry{lsa: l, age0: min(l.Age, MaxAge), at: now, own: true}
			e.flushed = e.age0 >= MaxAge
			in.install(a, e, now)
			if e.flushed {
				in.flood(a, e, n, now)
			}
			cur = e
		}
		in.advance(a, cur, w, l.Seq, now)
		return
	}
	if l.Age >= MaxAge {
		// Already being flushed: store it so the flush completes.
		e := &lsaEntry{lsa: l, age0: MaxAge, at: now, own: true, flushed: true}
		in.install(a, e, now)
		in.flood(a, e, n, now)
		return
	}
	e := &lsaEntry{lsa: l, age0: min(l.Age, MaxAge), at: now, own: true}
	in.install(a, e, now)
	in.flush(a, e, now)
}

func knownType(t uint8) bool {
	return t >= packet.LSARouter && t <= packet.LSAExternal || t >= packet.LSAOpaqueLink && t <= packet.LSAOpaqueAS
}
