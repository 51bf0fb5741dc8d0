package ospf

import (
	"net/netip"
	"sort"
	"time"

	"github.com/fared/fared/ospf/packet"
)

// encode fills the common header and serialises a packet.
func (ifc *iface) encode(p packet.Packet) []byte {
	h := p.PacketHeader()
	h.Version = 2
	h.RouterID = ifc.in.rid
	h.AreaID = areaAddr(ifc.area.id)
	k, ok := ifc.sendKey()
	h.AuType = packet.AuNull
	if ok {
		h.AuType = k.AuType()
	}
	b := p.AppendTo(nil)
	if ok {
		b = ifc.sign(b, k)
	}
	return b
}

func (ifc *iface) send(dst netip.Addr, p packet.Packet, kind string) {
	if ifc.port == nil || !ifc.running {
		return
	}
	ifc.sendRaw(dst, ifc.encode(p), kind)
}

func (ifc *iface) sendRaw(dst netip.Addr, b []byte, kind string) {
	if ifc.port == nil || !ifc.running {
		return
	}
	if err := ifc.port.Send(dst, b); err != nil {
		ifc.count("tx_errors")
		ifc.logOnce("tx", "send failed", "err", err, "dst", dst)
		return
	}
	ifc.count("tx_" + kind)
}

func (ifc *iface) sendHello() {
	h := &packet.Hello{
		Mask:          maskAddr(ifc.addr.Bits()),
		HelloInterval: uint16(ifc.cfg.HelloInterval / time.Second),
		Options:       optE,
		Priority:      ifc.cfg.Priority,
		DeadInterval:  uint32(ifc.cfg.DeadInterval / time.Second),
	}
	if ifc.isP2P() {
		h.Mask = netip.AddrFrom4([4]byte{})
		h.Priority = 0
	} else {
		h.DR, h.BDR = ifc.dr, ifc.bdr
	}
	if !h.DR.IsValid() {
		h.DR = netip.AddrFrom4([4]byte{})
	}
	if !h.BDR.IsValid() {
		h.BDR = netip.AddrFrom4([4]byte{})
	}
	for _, n := range ifc.sortedNbrs() {
		if n.state >= NbrInit {
			h.Neighbors = append(h.Neighbors, n.rid)
		}
	}
	ifc.send(AllSPFRouters, h, "hello")
}

// sendLSAs sends LSAs in as few LSUs as the MTU allows.
func (ifc *iface) sendLSAs(dst netip.Addr, es []*lsaEntry, now time.Time) {
	room := ifc.maxPacket() - packet.HeaderLen - 4
	var batch []packet.LSA
	size := 0
	out := func() {
		if len(batch) > 0 {
			ifc.send(dst, &packet.LSU{LSAs: batch}, "lsu")
			ifc.counters["tx_lsa"] += uint64(len(batch))
		}
		batch, size = nil, 0
	}
	for _, e := range es {
		l := e.wire(now)
		if size+len(l.Raw) > room && len(batch) > 0 {
			out()
		}
		batch = append(batch, l)
		size += len(l.Raw)
	}
	out()
}

// sendAcks sends LSA headers in as few LSAcks as the MTU allows.
func (ifc *iface) sendAcks(dst netip.Addr, hs []lsaHeader) {
	room := max(1, (ifc.maxPacket()-packet.HeaderLen)/20)
	for len(hs) > 0 {
		k := min(room, len(hs))
		ifc.send(dst, &packet.LSAck{LSAs: hs[:k]}, "lsack")
		hs = hs[k:]
	}
}

// flush transmits what events left queued: floods, delayed and direct acks.
func (ifc *iface) flush(now time.Time) {
	if !ifc.running || ifc.port == nil {
		ifc.floodQ, ifc.acks = nil, nil
		return
	}
	if len(ifc.floodQ) > 0 {
		seen := map[lsaKey]bool{}
		var es []*lsaEntry
		for _, k := range ifc.floodQ {
			if seen[k] {
				continue
			}
			seen[k] = true
			if e := ifc.in.scopeOf(ifc, k.typ).db[k]; e != nil {
				es = append(es, e)
			}
		}
		ifc.floodQ = ifc.floodQ[:0]
		ifc.sendLSAs(ifc.mcastDst(), es, now)
	}
	if len(ifc.acks) > 0 {
		ifc.sendAcks(ifc.mcastDst(), ifc.acks)
		ifc.acks = nil
	}
	for _, n := range ifc.nbrs {
		if len(n.directAcks) > 0 {
			ifc.sendAcks(ifc.nbrDst(n), n.directAcks)
			n.directAcks = nil
		}
	}
}

// retransmit resends unacknowledged LSAs to one neighbour, directly.
func (n *neighbor) retransmit(now time.Time) {
	ifc := n.ifc
	rx := ifc.in.ocfg.RetransmitInterval
	var es []*lsaEntry
	var keys []lsaKey
	for k, sent := range n.rxmt {
		if !sent.IsZero() && now.Sub(sent) < rx {
			continue
		}
		e := ifc.in.scopeOf(ifc, k.typ).db[k]
		if e == nil {
			delete(n.rxmt, k)
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return
	}
	sort.Slice(keys, func(i, j int) bool { return lessKey(keys[i], keys[j]) })
	for _, k := range keys {
		es = append(es, ifc.in.scopeOf(ifc, k.typ).db[k])
		if !n.rxmt[k].IsZero() {
			ifc.count("tx_lsa_retransmit")
		}
		n.rxmt[k] = now
	}
	ifc.sendLSAs(ifc.nbrDst(n), es, now)
}

func lessKey(a, b lsaKey) bool {
	if a.typ != b.typ {
		return a.typ < b.typ
	}
	if c := a.id.Compare(b.id); c != 0 {
		return c < 0
	}
	return a.adv.Compare(b.adv) < 0
}
