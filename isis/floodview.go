package isis

import (
	"slices"
	"time"

	"github.com/fared/fared/isis/packet"
)

// Signalling of distributed flooding reduction: a Router CAPABILITY TLV
// (242, RFC 7981) in fragment 0 of our LSP carrying a one-octet sub-TLV
// that names the flooding algorithm in use. The draft's code points are
// still TBD: these are the values implementations use for interop testing
// today (sub-TLV 40 of draft-prz-lsr-interop-flood-reduction-architecture,
// algorithm 2 for distoptflood). A router without the sub-TLV (FRR) is
// treated as not running the algorithm: it keeps receiving every LSP.
const (
	tlvRouterCapability = 242
	capSubFloodAlgo     = 40
	floodAlgoDistOpt    = 2
)

// floodCapTLV is our Router CAPABILITY TLV: router id (0.0.0.0 without an
// IPv4 one, RFC 7981 §2), flags 0 (neither S nor D: the level only), and
// the flooding algorithm sub-TLV.
func (in *Instance) floodCapTLVs() packet.TLVs {
	if !in.icfg.FloodingReduction {
		return nil
	}
	v := make([]byte, 4, 8)
	if in.cfg.RouterID.Is4() {
		a := in.cfg.RouterID.As4()
		copy(v, a[:])
	}
	v = append(v, 0, capSubFloodAlgo, 1, floodAlgoDistOpt)
	return packet.TLVs{&packet.Unknown{T: tlvRouterCapability, Value: v}}
}

// capReduces reads a Router CAPABILITY TLV's value: does it announce the
// algorithm? A malformed one announces nothing.
func capReduces(v []byte) bool {
	if len(v) < 5 {
		return false
	}
	for s := v[5:]; len(s) >= 2; {
		t, n := s[0], int(s[1])
		if len(s) < 2+n {
			return false
		}
		if t == capSubFloodAlgo && n >= 1 && s[2] == floodAlgoDistOpt {
			return true
		}
		s = s[2+n:]
	}
	return false
}

// lsdbFloodView is a floodView over one level's database, built lazily for
// one decision: a decision reads a few dozen systems of the database.
type lsdbFloodView struct {
	lv    *level
	now   time.Time
	links map[packet.NodeID]nodeLinks
	nodes map[packet.SystemID]floodNode
}

// nodeLinks is what a node's live LSPs say, one way.
type nodeLinks struct {
	to      []packet.NodeID
	reduces bool
	ok      bool
}

func newFloodView(lv *level, now time.Time) *lsdbFloodView {
	return &lsdbFloodView{lv: lv, now: now, links: map[packet.NodeID]nodeLinks{}, nodes: map[packet.SystemID]floodNode{}}
}

// oneWay collects a node's links from its fragments 0, 1, ... up to the
// first one missing or dead. A node whose fragment 0 is not live is not
// there (ISO 10589 §7.2.5). A fragment after a gap is not seen: the view
// then misses links, which only makes the decision flood more.
func (w *lsdbFloodView) oneWay(n packet.NodeID) nodeLinks {
	if nl, ok := w.links[n]; ok {
		return nl
	}
	var nl nodeLinks
	for f := 0; f < 256; f++ {
		e := w.lv.db[packet.MakeLSPID(n.SystemID(), n.Pseudo(), uint8(f))]
		if e == nil || e.remaining(w.now) == 0 {
			break
		}
		nl.ok = true
		t := e.topology()
		nl.reduces = nl.reduces || t.reduces
		for _, l := range t.links {
			nl.to = append(nl.to, l.nb)
		}
	}
	w.links[n] = nl
	return nl
}

func (w *lsdbFloodView) node(s packet.SystemID) (floodNode, bool) {
	if fn, ok := w.nodes[s]; ok {
		return fn, fn.nbrs != nil
	}
	me := packet.MakeNodeID(s, 0)
	own := w.oneWay(me)
	fn := floodNode{reduces: own.reduces}
	if own.ok {
		fn.nbrs = []packet.SystemID{}
		for _, nb := range own.to {
			fn.nbrs = append(fn.nbrs, w.across(me, nb)...)
		}
		slices.SortFunc(fn.nbrs, compareSys)
		fn.nbrs = slices.Compact(fn.nbrs)
	}
	w.nodes[s] = fn
	return fn, own.ok
}

// across is who me reaches over its link to nb, two-way: nb itself when
// nb lists me back; for a pseudonode that lists me, every system on the
// LAN that lists the pseudonode.
func (w *lsdbFloodView) across(me, nb packet.NodeID) []packet.SystemID {
	far := w.oneWay(nb)
	if !far.ok || !slices.Contains(far.to, me) {
		return nil
	}
	if nb.Pseudo() == 0 {
		if nb.SystemID() == me.SystemID() {
			return nil
		}
		return []packet.SystemID{nb.SystemID()}
	}
	var out []packet.SystemID
	for _, m := range far.to {
		if m.Pseudo() != 0 || m == me {
			continue
		}
		if back := w.oneWay(m); back.ok && slices.Contains(back.to, nb) {
			out = append(out, m.SystemID())
		}
	}
	return out
}

// floodNote is the last decision taken for a circuit (farectl isis
// flooding).
type floodNote struct {
	reason floodReason
	lsp    packet.LSPID
	by     packet.SystemID
	at     time.Time
}

// floodReceived marks a new LSP, stored from circuit from, for flooding on
// the other circuits: everywhere (ISO 10589 §7.3.15.1 e.1), or, with
// flooding reduction on, on LANs and to the point-to-point neighbours
// refloodDecision picks. A neighbour passed over gets a PSNP entry for the
// LSP instead: if it lacks the LSP it asks for it at once, and if it was
// about to send us the LSP the entry acknowledges it. CSNPs (periodic on
// point-to-point circuits too) repair whatever else is missed.
func (in *Instance) floodReceived(from *circuit, l int, id packet.LSPID, src [6]byte) {
	var dec map[packet.SystemID]floodChoice
	if in.icfg.FloodingReduction {
		dec = in.refloodFor(from, l, id, src)
	}
	now := in.opt.Now()
	for _, o := range in.circuits {
		if o == from {
			continue
		}
		ch := circuitChoice(o, l, dec)
		if o.hasUpAdj(l) {
			in.noteFlood(o, ch, id, now)
		}
		if ch.reason.floods() {
			o.setSRM(l, id)
			continue
		}
		if o.running && !o.cfg.Passive && o.hasUpAdj(l) {
			o.ssn[l-1][id] = struct{}{}
		}
	}
}

// Reasons of the circuits the decision does not cover.
const (
	floodOff floodReason = "reduction_off" // flooding-reduction is off
	floodLAN floodReason = "lan"           // LANs keep full flooding (the DIS's CSNPs make them reliable)
)

// circuitChoice is the decision for one circuit: LANs and circuits
// without a decision get everything; a point-to-point one what its
// neighbour's decision says.
func circuitChoice(o *circuit, l int, dec map[packet.SystemID]floodChoice) floodChoice {
	switch {
	case dec == nil:
		return floodChoice{reason: floodOff}
	case !o.isP2P():
		return floodChoice{reason: floodLAN}
	case o.p2p == nil || o.p2p.state != AdjUp || !o.p2p.usesLevel(l):
		return floodChoice{reason: floodNbrUnknown}
	}
	if ch, ok := dec[o.p2p.sysID]; ok {
		return ch
	}
	return floodChoice{reason: floodNbrUnknown}
}

// refloodFor runs the decision for an LSP received on from; nil (flood
// everywhere) when the sender is not known.
func (in *Instance) refloodFor(from *circuit, l int, id packet.LSPID, src [6]byte) map[packet.SystemID]floodChoice {
	sender, ok := senderOf(from, l, src)
	if !ok {
		return map[packet.SystemID]floodChoice{}
	}
	lv := in.level(l)
	fi := floodInput{self: in.sysID, from: sender, lsp: id, copies: in.icfg.FloodingReflooders}
	for _, c := range in.circuits {
		if c.isP2P() && c.p2p != nil && c.p2p.state == AdjUp && c.p2p.usesLevel(l) && !slices.Contains(fi.nbrs, c.p2p.sysID) {
			fi.nbrs = append(fi.nbrs, c.p2p.sysID)
		}
	}
	return refloodDecision(newFloodView(lv, in.opt.Now()), fi)
}

// senderOf is the system id of the neighbour a PDU came from.
func senderOf(c *circuit, l int, src [6]byte) (packet.SystemID, bool) {
	if c.isP2P() {
		if c.p2p == nil {
			return packet.SystemID{}, false
		}
		return c.p2p.sysID, true
	}
	if a := c.lan[l-1].adjs[src]; a != nil {
		return a.sysID, true
	}
	return packet.SystemID{}, false
}

// noteFlood counts a decision on the circuit and remembers it.
func (in *Instance) noteFlood(c *circuit, ch floodChoice, id packet.LSPID, now time.Time) {
	c.count("flood_" + string(ch.reason))
	if !ch.reason.floods() {
		c.count("tx_lsp_suppressed")
	}
	if in.floodLast == nil {
		in.floodLast = map[string]floodNote{}
	}
	in.floodLast[c.name] = floodNote{reason: ch.reason, lsp: id, by: ch.by, at: now}
}
