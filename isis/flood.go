package isis

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fared/fared/isis/packet"
)

// setSRM marks an LSP to be sent on this circuit at level l.
func (c *circuit) setSRM(l int, id packet.LSPID) {
	if !c.running || c.cfg.Passive {
		return
	}
	c.srm[l-1][id] = unsent
}

// SRM flags hold when the LSP was last sent (UnixNano), or unsent: eight
// bytes without a pointer, where a time.Time took 24 with one; a flood of
// 9,000 LSPs over 16 circuits holds 140,000 of them.
const unsent = math.MinInt64

func (c *circuit) clearSRM(l int, id packet.LSPID) { delete(c.srm[l-1], id) }

// setSRMAll marks an LSP for every circuit.
func (in *Instance) setSRMAll(l int, id packet.LSPID) {
	for _, c := range in.circuits {
		c.setSRM(l, id)
	}
}

// snpLevel is the level l of an SNP (kind CSNP or PSNP) from src; nil,
// counted and logged as a rejection, when the level is off here or src has
// no Up adjacency on it.
func (in *Instance) snpLevel(c *circuit, l int, kind string, src [6]byte) *level {
	lv := in.level(l)
	if lv == nil || !c.adjacentOn(l, src) {
		c.reject("not_adjacent", kind+" from a system without an Up adjacency", "from", macString(src))
		return nil
	}
	return lv
}

func (in *Instance) rxCSNP(c *circuit, p *packet.CSNP, src [6]byte) {
	l := p.Header.Level()
	lv := in.snpLevel(c, l, "CSNP", src)
	if lv == nil {
		return
	}
	now := in.opt.Now()
	seen := map[packet.LSPID]bool{}
	for _, en := range p.TLVs.LSPEntries() {
		seen[en.ID] = true
		in.snpEntry(c, lv, en, now)
	}
	// Every LSP we hold in the CSNP's range that it does not list is missing
	// on the other side (ISO 10589 §7.3.15.2 b.8).
	// The range walk reads the sorted ids: a CSNP series of a large
	// database is a hundred PDUs, each covering a slice of it.
	ids := lv.sortedIDs()
	i, _ := slices.BinarySearchFunc(ids, p.Start, func(a, b packet.LSPID) int { return a.Compare(b) })
	for ; i < len(ids) && ids[i].Compare(p.End) <= 0; i++ {
		id := ids[i]
		if seen[id] || lv.db[id].remaining(now) == 0 {
			continue
		}
		c.setSRM(l, id)
	}
}

func (in *Instance) rxPSNP(c *circuit, p *packet.PSNP, src [6]byte) {
	l := p.Header.Level()
	lv := in.snpLevel(c, l, "PSNP", src)
	if lv == nil {
		return
	}
	// On a LAN only the DIS answers PSNPs (ISO 10589 §7.3.15.2 a).
	if !c.isP2P() && !c.lan[l-1].dis {
		return
	}
	now := in.opt.Now()
	for _, en := range p.TLVs.LSPEntries() {
		in.snpEntry(c, lv, en, now)
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
			if c.reqs[l-1] == nil {
				c.reqs[l-1] = map[packet.LSPID]packet.LSPEntry{}
			}
			c.reqs[l-1][en.ID] = en
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
		c.sendLSPs(l, lv, now)
		if len(c.ssn[l-1]) > 0 && !now.Before(c.psnpDue[l-1]) {
			c.sendPSNP(l, lv, now)
			c.psnpDue[l-1] = now.Add(c.psnpInterval())
		}
	}
}

// sendLSPs sends what SRM asks for at level l, as many LSPs as the
// circuit's pacer allows now (the rest wait for the next tick or settle:
// SRM is the queue). New LSPs go before retransmissions: a neighbour
// that lost one gets it again later, one never sent it has not had at
// all. On P2P an LSP stays in SRM until a PSNP or CSNP acknowledges it,
// or the same LSP arrives from the neighbour (rxLSP), which is how a
// paced queue shrinks without sending what the neighbour already has.
func (c *circuit) sendLSPs(l int, lv *level, now time.Time) {
	iv := c.lspPacing()
	budget := c.pace.budget(now, iv)
	if budget == 0 || len(c.srm[l-1]) == 0 {
		return
	}
	dst := c.lspDst(l)
	for _, retransmit := range []bool{false, true} {
		for id, sent := range c.srm[l-1] {
			if budget == 0 {
				c.count("tx_lsp_paced") // a pass ended with LSPs left for later
				return
			}
			e := lv.db[id]
			if e == nil {
				delete(c.srm[l-1], id)
				continue
			}
			if (sent != unsent) != retransmit || (retransmit && now.UnixNano()-sent < int64(lspRetransmit)) {
				continue
			}
			c.sendRaw(dst, e.wire(now), "lsp")
			c.pace.spend(iv)
			budget--
			if c.isP2P() {
				c.srm[l-1][id] = now.UnixNano() // kept until acknowledged by a PSNP/CSNP
			} else {
				delete(c.srm[l-1], id) // the DIS's CSNPs make LANs reliable
			}
		}
	}
}

// lspPacing is the gap between LSPs on this circuit: its own lsp-pacing,
// else the section's (read at each use, so a reload applies at once).
func (c *circuit) lspPacing() time.Duration {
	if c.cfg.LSPPacing != nil {
		return *c.cfg.LSPPacing
	}
	return c.in.icfg.LSPPacing
}

// lspBurst is how many LSPs an interface that has been quiet may send
// back to back before pacing applies: one change (our LSP, a
// pseudonode's, a neighbour's few fragments) goes out at once, a
// database sync at the paced rate.
const lspBurst = 8

// pacer spaces one circuit's LSPs: a token bucket of lspBurst tokens,
// one added per interval. empty is the time at which the bucket would
// have been empty: (now - empty) / interval tokens are available.
type pacer struct{ empty time.Time }

// budget is how many LSPs may go out now at one per iv (no limit when
// iv is 0).
func (p *pacer) budget(now time.Time, iv time.Duration) int {
	if iv <= 0 {
		return math.MaxInt
	}
	if full := now.Add(-lspBurst * iv); p.empty.Before(full) {
		p.empty = full
	}
	return int(now.Sub(p.empty) / iv)
}

// spend takes one token for an LSP sent.
func (p *pacer) spend(iv time.Duration) {
	if iv > 0 {
		p.empty = p.empty.Add(iv)
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
				// A request: sequence number 0 with the lifetime and
				// checksum the CSNP reported (ISO 10589 §7.3.15.2 b.5).
				// An all-zero entry reads as a purge to FRR 8.4.4, which
				// then asks for it back instead of sending its LSP.
				r := c.reqs[l-1][id]
				es = append(es, packet.LSPEntry{ID: id, Lifetime: r.Lifetime, Checksum: r.Checksum})
			}
		}
		ids = ids[n:]
		p := &packet.PSNP{Header: packet.Header{Type: typ}, SourceID: packet.MakeNodeID(c.in.sysID, 0)}
		p.TLVs = packet.TLVs(packet.PackLSPEntries(es))
		c.send(c.lspDst(l), p, "psnp")
	}
	clear(c.ssn[l-1])
	clear(c.reqs[l-1])
}

// snpEntriesPerPDU is how many 16-byte LSP entries fit one SNP on this
// circuit, each TLV 9 holding at most 15.
func (c *circuit) snpEntriesPerPDU(fixed int) int {
	room := c.in.icfg.LSPMTU - fixed - c.in.lspAuthRoom()
	if m := c.pduMax(); m > 0 {
		room = min(room, m-fixed-c.in.lspAuthRoom())
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
		start = end.Next()
	}
}
