package ospf

import (
	"math"
	"net/netip"
	"sort"
	"time"

	"github.com/fared/fared/ospf/packet"
)

// MaxPathBandwidth is the default Path Bandwidth: draft-xu-lsr-fare's
// "maximum bandwidth value", read as no constraint (the largest finite
// float32), never derived from an interface speed.
const MaxPathBandwidth = math.MaxFloat32

// Router LSA flags and link types (RFC 2328 A.4.2).
const (
	flagB = 0x01
	flagE = 0x02

	linkP2P     = 1
	linkTransit = 2
	linkStub    = 3
	linkVirtual = 4
)

// Extended Prefix route types (RFC 7684 §2.1) and flags.
const (
	routeIntra    = 1
	routeInter    = 3
	routeExternal = 5
	extFlagA      = 0x80 // attach (set by an ABR)
	extFlagN      = 0x40 // node: the prefix identifies the advertiser
)

// wantLSA is one LSA we want in a database.
type wantLSA struct {
	typ     uint8
	id      netip.Addr
	options uint8
	body    packet.LSABody
}

func (w wantLSA) key(rid netip.Addr) lsaKey { return lsaKey{typ: w.typ, id: w.id, adv: rid} }

// stub is one prefix of our Router LSA in an area.
type stub struct {
	prefix netip.Prefix
	metric uint16
	pb     float32
}

// originate builds our LSAs for one area, installs what changed with the
// next sequence number, floods it, and flushes what we no longer originate.
func (in *Instance) originate(a *area, now time.Time) {
	a.regen = false
	a.lastGen = now
	want := map[lsaKey]wantLSA{}
	add := func(w wantLSA) { want[w.key(in.rid)] = w }

	rl, stubs := in.routerLSA(a)
	add(wantLSA{typ: packet.LSARouter, id: in.rid, options: optE, body: rl})
	for _, ifc := range in.ifaces {
		if nl, ok := ifc.networkLSA(); ok && ifc.area == a {
			add(wantLSA{typ: packet.LSANetwork, id: ifc.addr.Addr(), options: optE, body: nl})
		}
	}
	// TE: the Router Address (opaque id 0) and one Link TLV per adjacency.
	add(opaqueWant(packet.LSAOpaqueArea, packet.OpaqueTE, 0, []packet.TLV{packet.TERouterTLV(in.rid)}))
	for _, ifc := range in.ifaces {
		if ifc.area != a {
			continue
		}
		if l, ok := ifc.teLink(); ok {
			add(opaqueWant(packet.LSAOpaqueArea, packet.OpaqueTE, uint32(ifc.idx+1), []packet.TLV{packet.TELinkTLV(l)}))
		}
	}
	// Extended Prefix LSAs: every stub prefix, with its Path Bandwidth.
	for _, s := range stubs {
		flags := uint8(0)
		if s.prefix.Bits() == 32 && s.prefix.Addr() == in.rid {
			flags |= extFlagN
		}
		add(in.extPrefixWant(packet.LSAOpaqueArea, routeIntra, flags, s.prefix, s.pb))
	}
	// ABR: summaries of the other areas' routes.
	for p, s := range a.summaries {
		add(wantLSA{typ: packet.LSASummary, id: p.Addr(), options: optE, body: packet.SummaryLSA{Mask: maskAddr(p.Bits()), Metric: s.metric}})
		add(in.extPrefixWant(packet.LSAOpaqueArea, routeInter, extFlagA, p, s.pb))
	}
	in.installWanted(a, want, now)
}

// originateAS builds our AS-scope LSAs: AS-External LSAs for prefixes
// configured as external, with AS-scope Extended Prefix LSAs.
func (in *Instance) originateAS(now time.Time) {
	a := in.as
	a.regen = false
	a.lastGen = now
	want := map[lsaKey]wantLSA{}
	for _, p := range in.ocfg.Prefixes {
		if !p.External {
			continue
		}
		w := wantLSA{typ: packet.LSAExternal, id: p.Prefix.Addr(), options: optE,
			body: packet.ExternalLSA{Mask: maskAddr(p.Prefix.Bits()), EBit: true, Metric: p.Metric, Forward: netip.AddrFrom4([4]byte{})}}
		want[w.key(in.rid)] = w
		pb := float32(MaxPathBandwidth)
		if p.PathBandwidth > 0 {
			pb = p.PathBandwidth.BytesPerSec()
		}
		x := in.extPrefixWant(packet.LSAOpaqueAS, routeExternal, 0, p.Prefix, pb)
		want[x.key(in.rid)] = x
	}
	in.installWanted(a, want, now)
}

func opaqueWant(typ, otype uint8, oid uint32, tlvs []packet.TLV) wantLSA {
	return wantLSA{typ: typ, id: opaqueID(otype, oid), options: optE | optO,
		body: packet.OpaqueLSA{OpaqueType: otype, OpaqueID: oid, TLVs: tlvs}}
}

func opaqueID(otype uint8, oid uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{otype, byte(oid >> 16), byte(oid >> 8), byte(oid)})
}

// extPrefixWant is the Extended Prefix LSA of one prefix.
func (in *Instance) extPrefixWant(typ, routeType, flags uint8, p netip.Prefix, pb float32) wantLSA {
	id, ok := in.pfxIDs[p]
	if !ok {
		in.nextPfxID++
		id = in.nextPfxID
		in.pfxIDs[p] = id
	}
	tlv := packet.ExtPrefixTLV(packet.ExtPrefix{RouteType: routeType, Flags: flags, Prefix: p,
		SubTLVs: []packet.TLV{packet.PathBandwidthTLV(in.pbCode, pb)}})
	return opaqueWant(typ, packet.OpaqueExtPrefix, id, []packet.TLV{tlv})
}

// installWanted originates what changed in want and flushes what we
// originated before and no longer want.
func (in *Instance) installWanted(a *area, want map[lsaKey]wantLSA, now time.Time) {
	keys := make([]lsaKey, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lessKey(keys[i], keys[j]) })
	for _, k := range keys {
		w := want[k]
		if _, ok := a.wrap[k]; ok {
			a.wrap[k] = w // originated at InitialSequenceNumber once the flush is acknowledged
			continue
		}
		e := a.db[k]
		if e != nil && e.own && e.age(now) < MaxAge && e.lsa.Options == w.options && len(e.lsa.Raw) >= 20 &&
			string(e.lsa.Raw[20:]) == string(w.body.AppendBody(nil)) {
			continue
		}
		if e == nil {
			in.newOwn(a, w, packet.InitialSequenceNumber, now)
			continue
		}
		in.advance(a, e, w, e.lsa.Seq, now)
	}
	for k := range a.own {
		if _, ok := want[k]; ok {
			continue
		}
		// No longer wanted: a pending wrap only has its flush left to finish.
		delete(a.wrap, k)
		if e := a.db[k]; e != nil && e.age(now) < MaxAge {
			in.flush(a, e, now)
		}
	}
	a.own = map[lsaKey]bool{}
	for k := range want {
		a.own[k] = true
	}
}

// nextSeq is the sequence number of our next instance after cur and above
// (a copy of ours seen in the network), or false when that would pass
// MaxSequenceNumber (RFC 2328 §12.1.6). It never returns the reserved
// 0x80000000.
func nextSeq(cur, above int32) (int32, bool) {
	s := max(int64(cur), int64(above)) + 1
	if s > int64(packet.MaxSequenceNumber) {
		return 0, false
	}
	return int32(max(s, int64(packet.InitialSequenceNumber))), true
}

// advance originates w as the next instance after e (our current copy)
// and above; past MaxSequenceNumber it starts the wrap of §12.1.6
// instead. e must hold the highest instance known (the one a wrap
// flushes).
func (in *Instance) advance(a *area, e *lsaEntry, w wantLSA, above int32, now time.Time) {
	k := w.key(in.rid)
	if _, ok := a.wrap[k]; ok {
		a.wrap[k] = w
		return
	}
	seq, ok := nextSeq(e.lsa.Seq, above)
	if ok {
		in.newOwn(a, w, seq, now)
		return
	}
	// RFC 2328 §12.1.6: the instance at MaxSequenceNumber is flushed
	// (premature aging, §14.1) and the new one is originated at
	// InitialSequenceNumber only once every adjacency acknowledged the
	// flush (finishWraps). Originating at once would leave neighbours
	// preferring the MaxSequenceNumber copy until it ages out.
	in.log.Info("LSA sequence number wraps: flushing the instance at MaxSequenceNumber first", "lsa", lsaName(k), "scope", a.name)
	a.wrap[k] = w
	if e.age(now) < MaxAge {
		in.flush(a, e, now)
	}
}

// finishWraps originates, at InitialSequenceNumber, the LSAs whose
// MaxSequenceNumber instance has been flushed and is on no neighbour's
// retransmission list any more (§12.1.6).
func (in *Instance) finishWraps(a *area, now time.Time) {
	if len(a.wrap) == 0 {
		return
	}
	ifs := in.floodIfaces(a)
	for k, w := range a.wrap {
		acked := true
		for _, ifc := range ifs {
			for _, n := range ifc.nbrs {
				if _, ok := n.rxmt[k]; ok {
					acked = false
				}
			}
		}
		if !acked {
			continue
		}
		delete(a.wrap, k)
		a.own[k] = true
		in.newOwn(a, w, packet.InitialSequenceNumber, now)
	}
}

// newOwn installs and floods one of our LSAs with sequence number seq.
func (in *Instance) newOwn(a *area, w wantLSA, seq int32, now time.Time) {
	l := packet.NewLSA(packet.LSAHeader{Options: w.options, Type: w.typ, ID: w.id, AdvRouter: in.rid, Seq: seq}, w.body)
	e := &lsaEntry{lsa: l, at: now, own: true}
	in.install(a, e, now)
	in.flood(a, e, nil, now)
}

// reoriginate re-issues an LSA of ours with a sequence number above both
// ours and above (refresh, or a newer copy came back from the network).
func (in *Instance) reoriginate(a *area, e *lsaEntry, above int32, now time.Time) {
	in.advance(a, e, wantLSA{typ: e.lsa.Type, id: e.lsa.ID, options: e.lsa.Options, body: e.lsa.Body}, above, now)
}

func (in *Instance) refreshOwn(a *area, e *lsaEntry, now time.Time) {
	if e.lsa.Body == nil {
		return
	}
	in.reoriginate(a, e, e.lsa.Seq, now)
}

// flush prematurely ages an LSA (RFC 2328 §14.1) and floods it.
func (in *Instance) flush(a *area, e *lsaEntry, now time.Time) {
	raw := append([]byte(nil), e.lsa.Raw...)
	packet.SetLSAAge(raw, MaxAge)
	e.lsa.Raw = raw
	e.lsa.Age = MaxAge
	e.age0, e.at, e.flushed = MaxAge, now, true
	a.changes++
	a.graphDirty = true
	in.flood(a, e, nil, now)
}

// routerLSA is our Router LSA for area a (RFC 2328 §12.4.1) and the stub
// prefixes in it.
func (in *Instance) routerLSA(a *area) (packet.RouterLSA, []stub) {
	var rl packet.RouterLSA
	if in.isABR() {
		rl.Flags |= flagB
	}
	if in.isASBR() {
		rl.Flags |= flagE
	}
	var stubs []stub
	seen := map[netip.Prefix]bool{}
	addStub := func(p netip.Prefix, metric uint16, pb float32) {
		p = p.Masked()
		if seen[p] {
			return
		}
		seen[p] = true
		rl.Links = append(rl.Links, packet.RouterLink{ID: p.Addr(), Data: maskAddr(p.Bits()), Type: linkStub, Metric: metric})
		stubs = append(stubs, stub{prefix: p, metric: metric, pb: pb})
	}
	// A configured prefix wins over what an interface (a passive lo
	// carrying it) would derive: its metric and Path Bandwidth are the
	// config's. One configured in another area or as external is not also
	// a stub here.
	configured := map[netip.Prefix]bool{}
	for _, p := range in.ocfg.Prefixes {
		configured[p.Prefix.Masked()] = true
	}
	ifStub := func(p netip.Prefix, metric uint16) {
		if !configured[p.Masked()] {
			addStub(p, metric, MaxPathBandwidth)
		}
	}
	for _, ifc := range in.ifaces {
		if ifc.area != a || !ifc.running {
			continue
		}
		cost := ifc.cfg.Cost
		switch {
		case ifc.cfg.Passive:
			for _, p := range ifc.addrs {
				m := cost
				if p.Bits() == 32 {
					m = 0 // a host address (loopback): cost 0, as FRR does
				}
				ifStub(p, m)
			}
		case ifc.isP2P():
			for _, n := range ifc.sortedNbrs() {
				if n.state == NbrFull {
					rl.Links = append(rl.Links, packet.RouterLink{ID: n.rid, Data: ifc.addr.Addr(), Type: linkP2P, Metric: cost})
				}
			}
			ifStub(ifc.addr, cost)
		default:
			if ifc.transit() {
				rl.Links = append(rl.Links, packet.RouterLink{ID: ifc.dr, Data: ifc.addr.Addr(), Type: linkTransit, Metric: cost})
			} else {
				ifStub(ifc.addr, cost)
			}
		}
	}
	for _, p := range in.ocfg.Prefixes {
		if p.External || p.Area != a.id {
			continue
		}
		pb := float32(MaxPathBandwidth)
		if p.PathBandwidth > 0 {
			pb = p.PathBandwidth.BytesPerSec()
		}
		addStub(p.Prefix, uint16(p.Metric), pb)
	}
	return rl, stubs
}

// transit reports whether a broadcast interface is a transit link in our
// Router LSA: a DR is elected and we are fully adjacent to it, or we are
// the DR with a Full neighbour (§12.4.1.2).
func (ifc *iface) transit() bool {
	if ifc.isP2P() || ifc.state == IfWaiting || !ifc.dr.IsValid() {
		return false
	}
	if ifc.state == IfDR {
		return ifc.hasFull()
	}
	n := ifc.nbrs[ifc.dr]
	return n != nil && n.state == NbrFull
}

// networkLSA is the Network LSA of a broadcast link where we are DR with
// at least one Full neighbour (§12.4.2).
func (ifc *iface) networkLSA() (packet.NetworkLSA, bool) {
	if ifc.isP2P() || !ifc.running || ifc.state != IfDR || !ifc.hasFull() {
		return packet.NetworkLSA{}, false
	}
	nl := packet.NetworkLSA{Mask: maskAddr(ifc.addr.Bits()), Routers: []netip.Addr{ifc.in.rid}}
	for _, n := range ifc.sortedNbrs() {
		if n.state == NbrFull {
			nl.Routers = append(nl.Routers, n.rid)
		}
	}
	return nl, true
}

// teLink is the TE Link TLV of an interface with an adjacency (RFC 3630
// §2.5): P2P to the Full neighbour, multi-access to the DR.
func (ifc *iface) teLink() (packet.TELink, bool) {
	if !ifc.running || ifc.cfg.Passive {
		return packet.TELink{}, false
	}
	l := packet.TELink{Local: []netip.Addr{ifc.addr.Addr()}, MaxBW: ifc.bw, HasMaxBW: ifc.bw > 0}
	if ifc.isP2P() {
		for _, n := range ifc.sortedNbrs() {
			if n.state == NbrFull {
				l.LinkType, l.LinkID, l.Remote = 1, n.rid, []netip.Addr{n.addr}
				return l, true
			}
		}
		return packet.TELink{}, false
	}
	if !ifc.transit() {
		return packet.TELink{}, false
	}
	l.LinkType, l.LinkID = 2, ifc.dr
	return l, true
}
