package inject

import (
	"slices"
	"time"

	"github.com/fared/fared/isis/packet"
)

// Flooding: the LSPs the injector originates and those the RUT floods
// back, acknowledgements (PSNPs), database descriptions (CSNPs),
// requests, retransmissions and re-origination.

// lsp is one version of one injected (or received) LSP; immutable.
type lsp struct {
	id       packet.LSPID
	seq      uint32
	checksum uint16
	raw      []byte // lifetime field as originated
	born     time.Time
	lifetime uint16
	heldAt   time.Time // loop-owned: first confirmation that the RUT holds this version
}

func (l *lsp) remaining(now time.Time) uint16 {
	age := now.Sub(l.born) / time.Second
	if age >= time.Duration(l.lifetime) {
		return 0
	}
	return l.lifetime - uint16(age)
}

func (l *lsp) entry(now time.Time) packet.LSPEntry {
	return packet.LSPEntry{Lifetime: l.remaining(now), ID: l.id, Seq: l.seq, Checksum: l.checksum}
}

// queue hands LSPs to the circuit's writer and marks them unacknowledged.
func (in *Injector) queue(c *circuit, ids []packet.LSPID, now time.Time) {
	batch := make([]*lsp, 0, len(ids))
	for _, id := range ids {
		if l := in.db[id]; l != nil {
			batch = append(batch, l)
			c.unacked[id] = now
		}
	}
	c.counters.LSPsSent += uint64(len(batch))
	c.w.lsps(batch)
}

func (in *Injector) rxLSP(c *circuit, p *packet.LSP, now time.Time) {
	c.counters.LSPsRcvd++
	if c.state != adjUp {
		c.counters.NotAdjacent++
		return
	}
	if p.Type != packet.TypeL2LSP {
		return
	}
	c.ssn[p.ID] = true // acknowledge whatever it is
	if mine := in.db[p.ID]; mine != nil {
		in.compare(c, mine, p.Seq, p.Lifetime, now)
		return
	}
	c.counters.ForeignLSPsRcvd++
	if cur := in.rut[p.ID]; cur == nil || p.Seq > cur.seq {
		in.rut[p.ID] = &lsp{id: p.ID, seq: p.Seq, checksum: p.Checksum, born: now, lifetime: p.Lifetime}
	}
}

// compare handles the RUT's view (seq, lifetime) of one of our LSPs.
func (in *Injector) compare(c *circuit, mine *lsp, seq uint32, life uint16, now time.Time) {
	switch {
	case seq == mine.seq && life != 0:
		delete(c.unacked, mine.id)
		in.markHeld(mine, now)
	case seq < mine.seq || (seq == mine.seq && life == 0):
		c.counters.RUTOlder++
		if _, waiting := c.unacked[mine.id]; !waiting && in.serves(c) {
			c.counters.Requests++
			in.queue(c, []packet.LSPID{mine.id}, now)
		}
	default:
		// The RUT has a newer copy of an LSP we originate: never happens
		// unless a previous run left it; out-bid it.
		in.reoriginate(mine.id, seq+1, now)
	}
}

func (in *Injector) markHeld(l *lsp, now time.Time) {
	if l.heldAt.IsZero() {
		l.heldAt = now
		in.held++
		in.lastHeld = now
	}
}

func (in *Injector) rxEntry(c *circuit, en packet.LSPEntry, now time.Time) {
	if mine := in.db[en.ID]; mine != nil {
		in.compare(c, mine, en.Seq, en.Lifetime, now)
	}
}

func (in *Injector) rxCSNP(c *circuit, p *packet.CSNP, now time.Time) {
	listed := map[packet.LSPID]bool{}
	for _, en := range p.TLVs.LSPEntries() {
		listed[en.ID] = true
		in.rxEntry(c, en, now)
	}
	// Ours in the CSNP's range that it does not list: the RUT lacks them.
	lo, _ := slices.BinarySearchFunc(in.ids, p.Start, func(a, b packet.LSPID) int { return a.Compare(b) })
	var missing []packet.LSPID
	for _, id := range in.ids[lo:] {
		if id.Compare(p.End) > 0 {
			break
		}
		if _, waiting := c.unacked[id]; !listed[id] && !waiting {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 && in.serves(c) {
		c.counters.Requests += uint64(len(missing))
		in.queue(c, missing, now)
	}
}

func (in *Injector) sendPSNP(c *circuit, now time.Time) {
	ids := make([]packet.LSPID, 0, len(c.ssn))
	for id := range c.ssn {
		ids = append(ids, id)
	}
	clear(c.ssn)
	slices.SortFunc(ids, func(a, b packet.LSPID) int { return a.Compare(b) })
	var es []packet.LSPEntry
	for _, id := range ids {
		if l := in.db[id]; l != nil {
			es = append(es, l.entry(now))
		} else if l := in.rut[id]; l != nil {
			es = append(es, l.entry(now))
		}
	}
	per := snpEntries(in.cfg.LSPMTU, packet.PSNPHeaderLen)
	for len(es) > 0 {
		n := min(per, len(es))
		p := &packet.PSNP{Header: packet.Header{Type: packet.TypeL2PSNP}, SourceID: packet.MakeNodeID(c.sysID, 0),
			TLVs: packet.TLVs(packet.PackLSPEntries(es[:n]))}
		c.counters.PSNPsSent++
		c.w.ctrl(p.AppendTo(nil))
		es = es[n:]
	}
}

// snpEntries is how many LSP entries fit an SNP PDU of at most mtu bytes
// with a fixed part of hdr bytes (TLV 9 holds 15 entries).
func snpEntries(mtu, hdr int) int {
	room := mtu - hdr
	full := room / (2 + 15*16)
	n := full * 15
	if rest := room - full*(2+15*16); rest >= 2+16 {
		n += (rest - 2) / 16
	}
	return max(n, 1)
}

// sendCSNPs describes the whole database (ours and the RUT's) in ranges.
func (in *Injector) sendCSNPs(c *circuit, now time.Time) {
	all := make([]packet.LSPEntry, 0, len(in.ids)+len(in.rut))
	for _, id := range in.ids {
		all = append(all, in.db[id].entry(now))
	}
	for _, l := range in.rut {
		if l.remaining(now) > 0 {
			all = append(all, l.entry(now))
		}
	}
	slices.SortFunc(all, func(a, b packet.LSPEntry) int { return a.ID.Compare(b.ID) })
	per := snpEntries(in.cfg.LSPMTU, packet.CSNPHeaderLen)
	start := packet.LSPID{}
	for {
		n := min(per, len(all))
		end := packet.LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		if n < len(all) {
			end = all[n-1].ID
		}
		p := &packet.CSNP{Header: packet.Header{Type: packet.TypeL2CSNP}, SourceID: packet.MakeNodeID(c.sysID, 0),
			Start: start, End: end, TLVs: packet.TLVs(packet.PackLSPEntries(all[:n]))}
		c.counters.CSNPsSent++
		c.w.ctrl(p.AppendTo(nil))
		all = all[n:]
		if len(all) == 0 {
			return
		}
		start = end.Next()
	}
}

// reoriginate installs a new version of an LSP with the given sequence
// number and floods it.
func (in *Injector) reoriginate(id packet.LSPID, seq uint32, now time.Time) {
	n := -1
	for i, fr := range in.frags {
		if len(fr) > 0 && fr[0].ID.SystemID() == id.SystemID() {
			n = i
			break
		}
	}
	if n < 0 || int(id.Fragment()) >= len(in.frags[n]) {
		return
	}
	in.install(in.frags[n][id.Fragment()], seq, now)
}

func (in *Injector) install(fr Fragment, seq uint32, now time.Time) {
	if old := in.db[fr.ID]; old != nil && !old.heldAt.IsZero() {
		in.held--
	}
	in.db[fr.ID] = in.newLSP(fr, seq, now)
	for _, c := range in.circuits {
		delete(c.unacked, fr.ID)
		if c.state == adjUp && (in.cfg.Flood == FloodAll || c == in.primary) {
			in.queue(c, []packet.LSPID{fr.ID}, now)
		}
	}
}
