package isis

import (
	"bytes"
	"encoding/binary"
	"slices"
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
	// lastBuild ended the last graph build, which took buildCost (real
	// time): settle spaces builds of large graphs by them.
	lastBuild time.Time
	buildCost time.Duration
	// ids is db's keys in order (sortedIDs), rebuilt when idsStale.
	ids        []packet.LSPID
	idsStale   bool
	changes    uint64
	originated uint64 // LSPs (all fragments, pseudonodes too) we originated
}

func newLevel(n int) *level {
	return &level{n: n, db: map[packet.LSPID]*lspEntry{}, ownFrags: map[packet.LSPID]bool{}, seqWait: map[packet.LSPID]time.Time{}, regen: true}
}

// Graph builds of a level are spaced by buildSpacing times the cost of the
// last one, once a build costs minSpacedBuild or more.
const (
	buildSpacing   = 4
	minSpacedBuild = 2 * time.Millisecond
)

// put stores an entry; remove drops one. Both keep sortedIDs current.
func (lv *level) put(id packet.LSPID, e *lspEntry) {
	if _, had := lv.db[id]; !had {
		lv.idsStale = true
	}
	lv.db[id] = e
}

func (lv *level) remove(id packet.LSPID) {
	if _, had := lv.db[id]; had {
		lv.idsStale = true
	}
	delete(lv.db, id)
}

// sortedIDs returns the database's LSP ids in ISO 10589 order (bytewise),
// sorted again only after ids came or went. The result is shared: callers
// must not keep it across changes of the database.
func (lv *level) sortedIDs() []packet.LSPID {
	// The length check also catches entries stored without put (tests).
	if lv.idsStale || len(lv.ids) != len(lv.db) {
		lv.ids = lv.ids[:0]
		for id := range lv.db {
			lv.ids = append(lv.ids, id)
		}
		slices.SortFunc(lv.ids, func(a, b packet.LSPID) int { return bytes.Compare(a[:], b[:]) })
		lv.idsStale = false
	}
	return lv.ids
}

// lspEntry is one LSP as stored: the raw PDU (flooded as received, with only
// the remaining lifetime rewritten) and its decoded form. A received LSP
// keeps only the decoded header (stripped): what the graph needs of its
// TLVs is in topo, and the rare full view decodes raw again (tlvs).
type lspEntry struct {
	raw      []byte
	lsp      *packet.LSP
	topo     *lspTopo // nil: not extracted yet (topology)
	stripped bool     // lsp.TLVs dropped; raw has them
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
		if p.Lifetime != 0 {
			e.strip()
		}
		lv.put(p.ID, e)
		lv.changes++
		lv.graphDirty = true
		in.floodReceived(c, l, p.ID, src)
		c.clearSRM(l, p.ID)
		if c.isP2P() {
			c.ssn[l-1][p.ID] = struct{}{}
		}
	case cmp == 0:
		c.count("rx_lsp_duplicate") // the copy we hold: flooding sent it twice
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
	var b []byte
	if _, signed := p.TLVs.Auth(); signed || in.lspAuth(l) != nil {
		// The TLV breaks the sender's signature: sign again with our
		// level key, or, without one, flood the purge as it came.
		if in.lspAuth(l) == nil {
			return p, raw
		}
		b = in.encodeLSP(l, &np, true)
	} else {
		b = np.AppendToKeepChecksum(nil)
	}
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
	lv.put(p.ID, e)
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
				lv.remove(id)
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
			lv.remove(id)
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
	e.raw = in.encodeLSP(lv.n, p, true) // RFC 6233: a purge keeps its authentication
	if d, err := packet.Decode(e.raw); err == nil {
		p = d.(*packet.LSP)
	}
	e.lsp, e.topo, e.stripped = p, nil, false
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
