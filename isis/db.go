package isis

import (
	"bytes"
	"encoding/binary"
	"sort"
	"time"

	"github.com/fared/fared/isis/packet"
)

// level is one level's link-state database and origination state.
type level struct {
	n  int
	db map[packet.LSPID]*lspEntry

	// Origination: regen asks for a new run; lastGen enforces the minimum
	// LSP generation interval; ownFrags remembers which of our LSP ids we
	// originated last time, so fragments that vanish get purged.
	regen    bool
	lastGen  time.Time
	ownFrags map[packet.LSPID]bool

	// seqWait holds our LSP ids whose sequence numbers ran out, purged and
	// not to be originated before the time (seqExhausted).
	seqWait  map[packet.LSPID]time.Time
	seqWraps uint64

	graphDirty bool
	changes    uint64
	originated uint64 // LSPs (all fragments, pseudonodes too) we originated
}

func newLevel(n int) *level {
	return &level{n: n, db: map[packet.LSPID]*lspEntry{}, ownFrags: map[packet.LSPID]bool{}, seqWait: map[packet.LSPID]time.Time{}, regen: true}
}

// lspEntry is one LSP as stored: the raw PDU (flooded as received, with only
// the remaining lifetime rewritten) and its decoded form.
type lspEntry struct {
	raw      []byte
	lsp      *packet.LSP
	rcvd     time.Time
	expires  time.Time // when the remaining lifetime reaches zero
	purged   time.Time // zero: live; else when it reached lifetime 0
	own      bool
	fromIf   string
	fromSys  packet.SystemID
	received bool // learned from the wire (not originated here)
}

func (e *lspEntry) remaining(now time.Time) uint16 {
	if !e.purged.IsZero() {
		return 0
	}
	d := e.expires.Sub(now)
	if d <= 0 {
		return 0
	}
	return uint16((d + time.Second - 1) / time.Second)
}

// compareLSP orders two LSP instances (ISO 10589 §7.3.16): a higher sequence
// number is newer; at equal numbers a purge is newer than a live copy.
func compareLSP(seqA uint32, lifeA uint16, seqB uint32, lifeB uint16) int {
	switch {
	case seqA > seqB:
		return 1
	case seqA < seqB:
		return -1
	case lifeA == 0 && lifeB != 0:
		return 1
	case lifeA != 0 && lifeB == 0:
		return -1
	}
	return 0
}

func (in *Instance) level(l int) *level {
	if l < 1 || l > 2 {
		return nil
	}
	return in.levels[l-1]
}

// adjacentOn reports whether the sender has an Up adjacency at level l on c,
// the precondition for accepting its LSPs and SNPs.
func (c *circuit) adjacentOn(l int, src [6]byte) bool {
	if c.isP2P() {
		return c.p2p != nil && c.p2p.state == AdjUp && c.p2p.usesLevel(l)
	}
	a := c.lan[l-1].adjs[src]
	return a != nil && a.state == AdjUp
}

func (in *Instance) rxLSP(c *circuit, p *packet.LSP, raw []byte, src [6]byte) {
	l := p.Header.Level()
	lv := in.level(l)
	if lv == nil {
		c.reject("level_mismatch", "LSP for a level we do not run", "level", l)
		return
	}
	if !c.adjacentOn(l, src) {
		c.reject("not_adjacent", "LSP from a system without an Up adjacency", "lsp", p.ID.String(), "from", macString(src))
		return
	}
	if p.Lifetime != 0 && !packet.LSPChecksumOK(raw) {
		c.reject("bad_checksum", "LSP with a bad checksum dropped", "lsp", p.ID.String(), "seq", p.Seq, "checksum", p.Checksum, "offset", 24)
		return
	}
	now := in.opt.Now()
	cur := lv.db[p.ID]
	own := p.ID.SystemID() == in.sysID
	if cur == nil && p.Lifetime == 0 {
		// ISO 10589 §7.3.16.4: a purge of an LSP we never had is
		// acknowledged but neither stored nor flooded.
		c.count("rx_purge_unknown")
		c.logOnce("purge_unknown", "purge of an unknown LSP acknowledged and dropped", "lsp", p.ID.String(), "seq", p.Seq)
		if c.isP2P() {
			c.ssn[l-1][p.ID] = struct{}{}
		}
		return
	}
	cmp := 1
	if cur != nil {
		cmp = compareLSP(p.Seq, p.Lifetime, cur.lsp.Seq, cur.remaining(now))
	}
	switch {
	case own && (cmp > 0 || (cmp == 0 && p.Lifetime != 0 && cur.purged.IsZero() && p.Checksum != cur.lsp.Checksum)):
		// Our own LSP came back newer than ours (we restarted, or someone
		// purged it): outbid it. Fragments we no longer originate are purged.
		c.count("rx_own_lsp_newer")
		in.outbidOwn(lv, p, now)
		if c.isP2P() {
			c.ssn[l-1][p.ID] = struct{}{}
		}
	case cmp > 0:
		if p.Lifetime == 0 {
			p, raw = in.addPOI(c, l, p, raw, src)
		}
		e := &lspEntry{raw: raw, lsp: p, rcvd: now, fromIf: c.name, received: true}
		e.expires = now.Add(time.Duration(p.Lifetime) * time.Second)
		if p.Lifetime == 0 {
			e.purged = now
		}
		if n := int(binary.BigEndian.Uint16(raw[8:10])); n < len(raw) {
			e.raw = raw[:n] // drop link-layer padding
		}
		lv.db[p.ID] = e
		lv.changes++
		lv.graphDirty = true
		for _, o := range in.circuits {
			if o == c {
				continue
			}
			o.setSRM(l, p.ID)
		}
		c.clearSRM(l, p.ID)
		if c.isP2P() {
			c.ssn[l-1][p.ID] = struct{}{}
		}
	case cmp == 0:
		c.clearSRM(l, p.ID)
		if c.isP2P() {
			c.ssn[l-1][p.ID] = struct{}{}
		}
	default:
		// Ours is newer: send it back to the sender.
		c.setSRM(l, p.ID)
		delete(c.ssn[l-1], p.ID)
	}
}

// addPOI: RFC 6232 §3 — a purge received without a Purge Originator
// Identification TLV gets one naming us and the neighbour it came from,
// so whoever looks at it later can trace it back. Receivers do not verify
// a purge's checksum (fared sends 0, FRR a computed one); the field is
// kept as received.
func (in *Instance) addPOI(c *circuit, l int, p *packet.LSP, raw []byte, src [6]byte) (*packet.LSP, []byte) {
	if _, ok := p.TLVs.PurgeOriginator(); ok {
		return p, raw
	}
	var from packet.SystemID
	if c.isP2P() {
		from = c.p2p.sysID
	} else if a := c.lan[l-1].adjs[src]; a != nil {
		from = a.sysID
	}
	np := *p
	np.TLVs = append(packet.TLVs{&packet.PurgeOriginator{Generator: in.sysID, HasSender: true, Sender: from}}, p.TLVs...)
	b := np.AppendToKeepChecksum(nil)
	if len(b) > in.lspMTU() {
		return p, raw // a purge padded with content: flood it as it came
	}
	d, err := packet.Decode(b)
	if err != nil {
		return p, raw
	}
	c.count("rx_purge_poi_added")
	return d.(*packet.LSP), b
}

// outbidOwn handles a copy of one of our LSPs that is newer than what we
// hold: re-originate above its sequence number, or purge it if we no longer
// originate that fragment.
func (in *Instance) outbidOwn(lv *level, p *packet.LSP, now time.Time) {
	cur := lv.db[p.ID]
	if cur != nil && cur.own && cur.purged.IsZero() {
		cur.lsp.Seq = p.Seq // originate() bumps it past this
		in.reoriginate(lv, cur, now)
		return
	}
	// Not ours any more: purge at the received sequence number.
	e := &lspEntry{lsp: &packet.LSP{Header: p.Header, ID: p.ID, Seq: p.Seq, Flags: p.Flags}, own: true}
	in.purgeEntry(lv, e, now)
	lv.db[p.ID] = e
}

// setSRM marks an LSP to be sent on this circuit at level l.
func (c *circuit) setSRM(l int, id packet.LSPID) {
	if !c.running || c.cfg.Passive {
		return
	}
	c.srm[l-1][id] = time.Time{}
}

func (c *circuit) clearSRM(l int, id packet.LSPID) { delete(c.srm[l-1], id) }

// setSRMAll marks an LSP for every circuit.
func (in *Instance) setSRMAll(l int, id packet.LSPID) {
	for _, c := range in.circuits {
		c.setSRM(l, id)
	}
}

func (in *Instance) rxCSNP(c *circuit, p *packet.CSNP, src [6]byte) {
	l := p.Header.Level()
	lv := in.level(l)
	if lv == nil || !c.adjacentOn(l, src) {
		c.reject("not_adjacent", "CSNP from a system without an Up adjacency", "from", macString(src))
		return
	}
	now := in.opt.Now()
	seen := map[packet.LSPID]bool{}
	for _, t := range p.TLVs {
		es, ok := t.(*packet.LSPEntries)
		if !ok {
			continue
		}
		for _, en := range es.Entries {
			seen[en.ID] = true
			in.snpEntry(c, lv, en, now)
		}
	}
	// Every LSP we hold in the CSNP's range that it does not list is missing
	// on the other side (ISO 10589 §7.3.15.2 b.8).
	for id, e := range lv.db {
		if seen[id] || id.Compare(p.Start) < 0 || id.Compare(p.End) > 0 {
			continue
		}
		if e.remaining(now) == 0 {
			continue
		}
		c.setSRM(l, id)
	}
}

func (in *Instance) rxPSNP(c *circuit, p *packet.PSNP, src [6]byte) {
	l := p.Header.Level()
	lv := in.level(l)
	if lv == nil || !c.adjacentOn(l, src) {
		c.reject("not_adjacent", "PSNP from a system without an Up adjacency", "from", macString(src))
		return
	}
	// On a LAN only the DIS answers PSNPs (ISO 10589 §7.3.15.2 a).
	if !c.isP2P() && !c.lan[l-1].dis {
		return
	}
	now := in.opt.Now()
	for _, t := range p.TLVs {
		if es, ok := t.(*packet.LSPEntries); ok {
			for _, en := range es.Entries {
				in.snpEntry(c, lv, en, now)
			}
		}
	}
}

// snpEntry compares one SNP entry with the database (ISO 10589 §7.3.15.2).
func (in *Instance) snpEntry(c *circuit, lv *level, en packet.LSPEntry, now time.Time) {
	l := lv.n
	e := lv.db[en.ID]
	if e == nil {
		if en.Lifetime != 0 && en.Seq != 0 && en.Checksum != 0 {
			// We lack it: request it.
			c.ssn[l-1][en.ID] = struct{}{}
		}
		return
	}
	switch compareLSP(en.Seq, en.Lifetime, e.lsp.Seq, e.remaining(now)) {
	case 0:
		c.clearSRM(l, en.ID) // acknowledged
	case -1:
		c.setSRM(l, en.ID) // theirs is older
	case 1:
		if e.own && en.ID.SystemID() == in.sysID {
			// The network has a newer copy of our LSP than we do.
			c.ssn[l-1][en.ID] = struct{}{}
			return
		}
		c.ssn[l-1][en.ID] = struct{}{}
		c.clearSRM(l, en.ID)
	}
}

// flood transmits what SRM and SSN ask for on this circuit.
func (c *circuit) flood(now time.Time) {
	if !c.running || c.cfg.Passive || c.port == nil {
		return
	}
	for l := 1; l <= 2; l++ {
		lv := c.in.level(l)
		if lv == nil {
			continue
		}
		if !c.hasUpAdj(l) {
			clear(c.srm[l-1])
			clear(c.ssn[l-1])
			continue
		}
		dst := c.lspDst(l)
		for id, sent := range c.srm[l-1] {
			e := lv.db[id]
			if e == nil {
				delete(c.srm[l-1], id)
				continue
			}
			if !sent.IsZero() && now.Sub(sent) < lspRetransmit {
				continue
			}
			raw := e.wire(now)
			c.sendRaw(dst, raw, "lsp")
			if c.isP2P() {
				c.srm[l-1][id] = now // kept until acknowledged by a PSNP/CSNP
			} else {
				delete(c.srm[l-1], id) // the DIS's CSNPs make LANs reliable
			}
		}
		if len(c.ssn[l-1]) > 0 && !now.Before(c.psnpDue[l-1]) {
			c.sendPSNP(l, lv, now)
			c.psnpDue[l-1] = now.Add(c.psnpInterval())
		}
	}
}

// psnpInterval: acknowledgements on P2P go out quickly (the neighbour
// retransmits after 5 s); requests on a LAN wait for the configured interval.
func (c *circuit) psnpInterval() time.Duration {
	if c.isP2P() {
		return min(c.in.icfg.PSNPInterval, 500*time.Millisecond)
	}
	return c.in.icfg.PSNPInterval
}

func (c *circuit) hasUpAdj(l int) bool {
	if c.isP2P() {
		return c.p2p != nil && c.p2p.state == AdjUp && c.p2p.usesLevel(l)
	}
	for _, a := range c.lan[l-1].adjs {
		if a.state == AdjUp {
			return true
		}
	}
	return false
}

func (c *circuit) lspDst(l int) [6]byte {
	if c.isP2P() {
		return MACAllISs
	}
	if l == 1 {
		return MACAllL1ISs
	}
	return MACAllL2ISs
}

// wire returns the PDU with the remaining lifetime as of now.
func (e *lspEntry) wire(now time.Time) []byte {
	b := make([]byte, len(e.raw))
	copy(b, e.raw)
	packet.SetLSPLifetime(b, e.remaining(now))
	return b
}

func (c *circuit) sendPSNP(l int, lv *level, now time.Time) {
	ids := make([]packet.LSPID, 0, len(c.ssn[l-1]))
	for id := range c.ssn[l-1] {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	typ := uint8(packet.TypeL1PSNP)
	if l == 2 {
		typ = packet.TypeL2PSNP
	}
	for len(ids) > 0 {
		n := min(len(ids), c.snpEntriesPerPDU(8+9))
		var es []packet.LSPEntry
		for _, id := range ids[:n] {
			if e := lv.db[id]; e != nil {
				es = append(es, packet.LSPEntry{Lifetime: e.remaining(now), ID: id, Seq: e.lsp.Seq, Checksum: e.lsp.Checksum})
			} else {
				es = append(es, packet.LSPEntry{ID: id}) // a request: "we have nothing"
			}
		}
		ids = ids[n:]
		p := &packet.PSNP{Header: packet.Header{Type: typ}, SourceID: packet.MakeNodeID(c.in.sysID, 0)}
		p.TLVs = packet.TLVs(packet.PackLSPEntries(es))
		c.send(c.lspDst(l), p, "psnp")
	}
	clear(c.ssn[l-1])
}

// snpEntriesPerPDU is how many 16-byte LSP entries fit one SNP on this
// circuit, each TLV 9 holding at most 15.
func (c *circuit) snpEntriesPerPDU(fixed int) int {
	room := c.in.icfg.LSPMTU - fixed
	if c.mtu > 0 {
		room = min(room, c.mtu-len(llc)-fixed)
	}
	tlvs := room / (2 + 15*16)
	rest := room - tlvs*(2+15*16)
	n := tlvs * 15
	if rest > 2+16 {
		n += (rest - 2) / 16
	}
	return max(n, 1)
}

// sendCSNPs describes the whole database in as many CSNPs as it takes,
// each covering a contiguous LSP id range.
func (c *circuit) sendCSNPs(l int, now time.Time) {
	lv := c.in.level(l)
	ids := make([]packet.LSPID, 0, len(lv.db))
	for id := range lv.db {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	typ := uint8(packet.TypeL1CSNP)
	if l == 2 {
		typ = packet.TypeL2CSNP
	}
	per := c.snpEntriesPerPDU(8 + 25)
	start := packet.LSPID{}
	for {
		n := min(len(ids), per)
		end := packet.LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		if n < len(ids) {
			end = ids[n-1]
		}
		var es []packet.LSPEntry
		for _, id := range ids[:n] {
			e := lv.db[id]
			es = append(es, packet.LSPEntry{Lifetime: e.remaining(now), ID: id, Seq: e.lsp.Seq, Checksum: e.lsp.Checksum})
		}
		p := &packet.CSNP{Header: packet.Header{Type: typ}, SourceID: packet.MakeNodeID(c.in.sysID, 0), Start: start, End: end}
		p.TLVs = packet.TLVs(packet.PackLSPEntries(es))
		c.send(c.lspDst(l), p, "csnp")
		ids = ids[n:]
		if len(ids) == 0 {
			return
		}
		start = nextLSPID(end)
	}
}

func nextLSPID(id packet.LSPID) packet.LSPID {
	for i := len(id) - 1; i >= 0; i-- {
		id[i]++
		if id[i] != 0 {
			break
		}
	}
	return id
}

// ageLevel expires LSPs: others' LSPs that reach lifetime 0 are purged and
// kept for ZeroAgeLifetime; ours are refreshed well before that.
func (in *Instance) ageLevel(lv *level, now time.Time) {
	in.endSeqWaits(lv, now)
	for id, e := range lv.db {
		if e.own {
			if e.purged.IsZero() && now.Sub(e.rcvd) >= in.icfg.LSPRefresh {
				in.reoriginate(lv, e, now)
			}
			if !e.purged.IsZero() && now.Sub(e.purged) >= zeroAgeLifetime {
				delete(lv.db, id)
			}
			continue
		}
		if e.purged.IsZero() && !now.Before(e.expires) {
			// ISO 10589 §7.3.16.4: an expired LSP is purged by whoever
			// notices; its body is dropped, its header kept.
			in.purgeEntry(lv, e, now)
			continue
		}
		if !e.purged.IsZero() && now.Sub(e.purged) >= zeroAgeLifetime {
			delete(lv.db, id)
			lv.changes++
		}
	}
}

// purgeEntry turns an entry into a purge (lifetime 0, the body dropped:
// ISO 10589 §7.3.16.4; checksum 0) and floods it. The purge carries a Purge
// Originator Identification TLV with our system id and our hostname
// (RFC 6232 §3, a SHOULD; RFC 6233 allows both TLVs in purges), whether
// the LSP is ours or an expired one of another router.
func (in *Instance) purgeEntry(lv *level, e *lspEntry, now time.Time) {
	tlvs := packet.TLVs{&packet.PurgeOriginator{Generator: in.sysID}}
	if in.cfg.Hostname != "" {
		tlvs = append(tlvs, &packet.Hostname{Name: in.cfg.Hostname})
	}
	p := &packet.LSP{Header: packet.Header{Type: lspType(lv.n)}, Lifetime: 0, ID: e.lsp.ID, Seq: e.lsp.Seq, Flags: e.lsp.Flags, TLVs: tlvs}
	p.Checksum = 0
	e.raw = p.AppendToKeepChecksum(nil)
	if d, err := packet.Decode(e.raw); err == nil {
		p = d.(*packet.LSP)
	}
	e.lsp = p
	e.purged = now
	e.rcvd = now
	lv.changes++
	lv.graphDirty = true
	in.setSRMAll(lv.n, p.ID)
}

func lspType(l int) uint8 {
	if l == 1 {
		return packet.TypeL1LSP
	}
	return packet.TypeL2LSP
}
