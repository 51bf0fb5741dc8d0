package isis

import (
	"bytes"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/isis/packet"
)

// MaxPathBandwidth is the default Path Bandwidth: draft-xu-lsr-fare §4.1's
// "maximum bandwidth value", read as no constraint (the largest finite
// float32) rather than anything derived from an interface speed.
const MaxPathBandwidth = math.MaxFloat32

// originate builds our LSPs (and pseudonode LSPs where we are DIS) for one
// level, installs what changed with a higher sequence number, floods it,
// and purges fragments we no longer need.
func (in *Instance) originate(lv *level, now time.Time) {
	lv.regen = false
	lv.lastGen = now
	want := map[packet.LSPID]packet.TLVs{}
	for i, tl := range in.fragment(in.ownTLVs(lv.n)) {
		want[packet.MakeLSPID(in.sysID, 0, uint8(i))] = tl
	}
	for _, c := range in.circuits {
		if c.isP2P() || !c.levelOn(lv.n) || !c.running {
			continue
		}
		if ll := c.lan[lv.n-1]; ll.dis {
			for i, tl := range in.fragment(in.pseudoTLVs(c, lv.n)) {
				want[packet.MakeLSPID(in.sysID, c.localID, uint8(i))] = tl
			}
		}
	}
	for id, tlvs := range want {
		if until, ok := lv.seqWait[id]; ok && now.Before(until) {
			continue // sequence numbers exhausted: quiet until every old copy is gone
		}
		e := lv.db[id]
		body := tlvs.AppendTo(nil)
		if e != nil && e.own && e.purged.IsZero() && bytes.Equal(e.body(), body) && e.lsp.Flags == in.lspFlags(lv, id) {
			continue
		}
		seq := uint32(0)
		if e != nil {
			seq = e.lsp.Seq
		}
		in.install(lv, id, seq+1, tlvs, now)
	}
	for id := range lv.ownFrags {
		if _, ok := want[id]; ok {
			continue
		}
		if e := lv.db[id]; e != nil && e.purged.IsZero() {
			in.purgeEntry(lv, e, now)
		}
	}
	lv.ownFrags = map[packet.LSPID]bool{}
	for id := range want {
		lv.ownFrags[id] = true
	}
}

// reoriginate refreshes one of our LSPs with the next sequence number.
func (in *Instance) reoriginate(lv *level, e *lspEntry, now time.Time) {
	in.install(lv, e.lsp.ID, e.lsp.Seq+1, e.tlvs(), now)
}

// install originates one LSP with sequence number seq; seq 0 means the
// previous instance was at the maximum, 0xFFFFFFFF, and nothing is
// installed (see seqExhausted).
func (in *Instance) install(lv *level, id packet.LSPID, seq uint32, tlvs packet.TLVs, now time.Time) {
	if seq == 0 {
		in.seqExhausted(lv, id, now)
		return
	}
	if _, err := tlvs.Fit(); err != nil {
		in.LogOnce("lsp_fit", "LSP content that cannot be encoded is left out", "lsp", id.String(), "err", err)
	}
	life := uint16(in.icfg.LSPLifetime / time.Second)
	p := &packet.LSP{Header: packet.Header{Type: lspType(lv.n)}, Lifetime: life, ID: id, Seq: seq, Flags: in.lspFlags(lv, id), TLVs: tlvs}
	raw := in.encodeLSP(lv.n, p, false)
	dec, err := packet.Decode(raw)
	if err != nil {
		in.log.Error("originated LSP does not decode", "lsp", id.String(), "err", err)
		return
	}
	e := &lspEntry{raw: raw, lsp: dec.(*packet.LSP), rcvd: now, own: true, expires: now.Add(time.Duration(life) * time.Second)}
	lv.put(id, e)
	lv.changes++
	lv.originated++
	lv.graphDirty = true
	in.setSRMAll(lv.n, id)
}

// seqExhausted handles an LSP whose sequence number cannot grow: ISO 10589
// §7.3.16.1 has the source purge it and stay silent for MaxAge +
// ZeroAgeLifetime, so that every copy at 0xFFFFFFFF has aged out of the
// domain, before it starts again at 1. Re-originating at 1 at once (what
// the old code did, as uint32 wrapped) made the network return the copy at
// 0xFFFFFFFF, which outbid ours again, for ever. The wait is per LSP id:
// other fragments and the other level carry on. MaxAge is the larger of
// ISO's 1200 s and our own configured lifetime (the lifetime copies of our
// LSPs were issued with).
func (in *Instance) seqExhausted(lv *level, id packet.LSPID, now time.Time) {
	wait := max(maxAge, in.icfg.LSPLifetime) + zeroAgeLifetime
	e := lv.db[id]
	if e == nil || !e.own {
		e = &lspEntry{lsp: &packet.LSP{Header: packet.Header{Type: lspType(lv.n)}, ID: id, Flags: in.lspFlags(lv, id)}, own: true}
		lv.put(id, e)
	}
	e.lsp.Seq = math.MaxUint32
	in.purgeEntry(lv, e, now)
	lv.seqWait[id] = now.Add(wait)
	lv.seqWraps++
	in.log.Warn("LSP sequence number reached 0xFFFFFFFF: LSP purged, re-originated at 1 after MaxAge + ZeroAgeLifetime (ISO 10589 §7.3.16.1)",
		"lsp", id.String(), "level", lv.n, "wait", wait)
}

// endSeqWaits ends the waits of seqExhausted that are over: our purge at
// 0xFFFFFFFF is dropped so the next origination starts at 1.
func (in *Instance) endSeqWaits(lv *level, now time.Time) {
	for id, until := range lv.seqWait {
		if now.Before(until) {
			continue
		}
		delete(lv.seqWait, id)
		if e := lv.db[id]; e != nil && e.own && !e.purged.IsZero() {
			lv.remove(id)
		}
		in.scheduleRegen(lv)
	}
}

// body is the TLV part of the stored PDU, used to see whether a new
// origination changes anything; the TLV 10 encodeLSP puts first is not
// part of it.
func (e *lspEntry) body() []byte {
	const fixed = 27
	if len(e.raw) < fixed {
		return nil
	}
	b := e.raw[fixed:]
	if len(b) >= 2 && b[0] == packet.TLVAuth && len(b) >= 2+int(b[1]) {
		b = b[2+int(b[1]):]
	}
	return b
}

func (in *Instance) lspFlags(lv *level, id packet.LSPID) uint8 {
	f := in.isType()
	if in.overloaded() && id.Pseudo() == 0 {
		f |= packet.LSPFlagOverload
	}
	// ATT (default metric bit) in our L1 LSPs while attached to L2.
	if lv.n == 1 && id.Pseudo() == 0 && in.icfg.AttachedBit && in.attached() {
		f |= 0x08
	}
	return f
}

// ownTLVs is the content of our non-pseudonode LSP at level l.
func (in *Instance) ownTLVs(l int) packet.TLVs {
	tlvs := packet.TLVs{
		&packet.AreaAddresses{Areas: in.areas},
		&packet.ProtocolsSupported{NLPIDs: in.nlpids()},
	}
	if in.cfg.Hostname != "" {
		tlvs = append(tlvs, &packet.Hostname{Name: in.cfg.Hostname})
	}
	if in.cfg.RouterID.IsValid() {
		tlvs = append(tlvs, &packet.TERouterID{Addr: in.cfg.RouterID})
	}
	tlvs = append(tlvs, in.floodCapTLVs()...)
	addrs := []netip.Addr{}
	if in.cfg.RouterID.IsValid() {
		addrs = append(addrs, in.cfg.RouterID)
	}
	var a6 []netip.Addr
	for _, c := range in.circuits {
		for _, p := range c.addrs4 {
			if p.Addr() != in.cfg.RouterID {
				addrs = append(addrs, p.Addr())
			}
		}
		for _, p := range c.addrs6 {
			a6 = append(a6, p.Addr())
		}
	}
	if len(addrs) > 0 {
		tlvs = append(tlvs, packet.PackIPv4Addresses(addrs)...)
	}
	if len(a6) > 0 {
		tlvs = append(tlvs, packet.PackIPv6Addresses(a6)...)
	}
	var nbrs []packet.ExtISNeighbor
	var p4 []packet.ExtIPPrefix
	var p6 []packet.IPv6Prefix
	seen := map[netip.Prefix]bool{}
	addPrefix := func(pfx netip.Prefix, metric uint32, pb float32) {
		pfx = pfx.Masked()
		if seen[pfx] {
			return
		}
		seen[pfx] = true
		subs := []packet.SubTLV{packet.FloatSubTLV(in.pbCode, pb)}
		if pfx.Addr().Is4() {
			p4 = append(p4, packet.ExtIPPrefix{Metric: metric, Prefix: pfx, SubTLVs: subs})
		} else {
			p6 = append(p6, packet.IPv6Prefix{Metric: metric, Prefix: pfx, SubTLVs: subs})
		}
	}
	for _, p := range in.icfg.Prefixes {
		pb := float32(MaxPathBandwidth)
		if p.PathBandwidth > 0 {
			pb = p.PathBandwidth.BytesPerSec()
		}
		addPrefix(p.Prefix, p.Metric, pb)
	}
	for _, c := range in.circuits {
		if !c.running {
			continue
		}
		// Connected subnets of IS-IS interfaces, as every router does.
		for _, p := range c.addrs4 {
			addPrefix(p, c.cfg.Metric, MaxPathBandwidth)
		}
		for _, p := range c.addrs6 {
			addPrefix(p, c.cfg.Metric, MaxPathBandwidth)
		}
		if c.cfg.Passive {
			continue
		}
		nbrs = append(nbrs, c.reach(l)...)
	}
	// Prefixes leaked from the other level (L1L2 routers), after our own.
	for _, lk := range in.leaks[l-1] {
		if seen[lk.Prefix] {
			continue
		}
		seen[lk.Prefix] = true
		subs := []packet.SubTLV{packet.FloatSubTLV(in.pbCode, lk.PathBW)}
		if lk.Prefix.Addr().Is4() {
			p4 = append(p4, packet.ExtIPPrefix{Metric: lk.Metric, Down: lk.Down, Prefix: lk.Prefix, SubTLVs: subs})
		} else {
			p6 = append(p6, packet.IPv6Prefix{Metric: lk.Metric, Down: lk.Down, Prefix: lk.Prefix, SubTLVs: subs})
		}
	}
	tlvs = append(tlvs, packet.PackExtISReach(nbrs)...)
	tlvs = append(tlvs, packet.PackExtIPReach(p4)...)
	tlvs = append(tlvs, packet.PackIPv6Reach(p6)...)
	return in.multiTopologyTLVs(tlvs) // mt.go
}

// reach is this circuit's contribution to TLV 22 at level l: the P2P
// neighbour, or the LAN's pseudonode, with the TE sub-TLVs (RFC 5305).
func (c *circuit) reach(l int) []packet.ExtISNeighbor {
	var subs []packet.SubTLV
	if len(c.addrs4) > 0 {
		subs = append(subs, packet.AddrSubTLV(packet.SubIPv4IfAddr, c.addrs4[0].Addr()))
	}
	if c.isP2P() {
		a := c.p2p
		if a == nil || a.state != AdjUp || !a.usesLevel(l) {
			return nil
		}
		if len(a.addrs4) > 0 {
			subs = append(subs, packet.AddrSubTLV(packet.SubIPv4NbrAddr, a.addrs4[0]))
		}
		if c.bw > 0 {
			subs = append(subs, packet.FloatSubTLV(packet.SubMaxLinkBW, c.bw))
		}
		return []packet.ExtISNeighbor{{ID: packet.MakeNodeID(a.sysID, 0), Metric: c.cfg.Metric, SubTLVs: subs}}
	}
	ll := c.lan[l-1]
	if ll.lanID == (packet.NodeID{}) || !c.hasUpAdj(l) {
		return nil
	}
	if c.bw > 0 {
		subs = append(subs, packet.FloatSubTLV(packet.SubMaxLinkBW, c.bw))
	}
	return []packet.ExtISNeighbor{{ID: ll.lanID, Metric: c.cfg.Metric, SubTLVs: subs}}
}

// pseudoTLVs is the pseudonode LSP of a LAN where we are DIS: every router
// with an Up adjacency, and us, at metric 0 (ISO 10589 §7.3.8).
func (in *Instance) pseudoTLVs(c *circuit, l int) packet.TLVs {
	nbrs := []packet.ExtISNeighbor{{ID: packet.MakeNodeID(in.sysID, 0)}}
	for _, a := range c.lan[l-1].adjs {
		if a.state == AdjUp {
			nbrs = append(nbrs, packet.ExtISNeighbor{ID: packet.MakeNodeID(a.sysID, 0)})
		}
	}
	sortNeighbors(nbrs)
	return packet.TLVs(packet.PackExtISReach(nbrs))
}

func sortNeighbors(ns []packet.ExtISNeighbor) {
	slices.SortFunc(ns, func(a, b packet.ExtISNeighbor) int { return a.ID.Compare(b.ID) })
}

// minLSPMTU is the smallest LSP size we originate whatever the interface
// MTUs (ISO 10589's lower bound for the originating LSP buffer size, and
// the lowest lsp-mtu the config accepts).
const minLSPMTU = 512

// lspMTU is the size our LSPs are cut to: lsp-mtu, lowered to the smallest
// MTU (less the 3-byte LLC header) of the running non-passive IS-IS
// interfaces, since LSPs are flooded unchanged and must fit every link they
// may cross from here. FRR 8.4.4 only logs "Interface MTU ... is too low to
// support area lsp mtu" and then fails to send on that link.
func (in *Instance) lspMTU() int {
	m := in.icfg.LSPMTU
	for _, c := range in.circuits {
		if c.running && !c.cfg.Passive && c.pduMax() > 0 {
			m = min(m, c.pduMax())
		}
	}
	if m < minLSPMTU {
		in.LogOnce("lsp_mtu", "an IS-IS interface MTU is below the smallest LSP size; LSPs may not cross it", "lsp_size", minLSPMTU)
		m = minLSPMTU
	}
	return m
}

// fragment splits TLVs over as many LSP fragments as the LSP MTU requires.
// TLVs are kept whole and in order, so fragment 0 keeps the node's
// identity (areas, protocols, hostname) first.
func (in *Instance) fragment(tlvs packet.TLVs) []packet.TLVs {
	// The authentication TLV is added at encoding: leave room for it.
	out := packet.SplitFragments(tlvs, in.lspMTU()-in.lspAuthRoom())
	if len(out) > 256 {
		in.log.Error("LSP content exceeds 256 fragments; truncated", "fragments", len(out))
		out = out[:256]
	}
	return out
}
