package inject

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/isis/packet"
)

// The circuits: one point-to-point IS-IS adjacency per cable of the RUT's
// leaf (RFC 5303 three-way handshake), its hellos, hold timer and per
// circuit timers (PSNPs, CSNPs, retransmissions), and its counters.

// Circuit is one link between the injector and the RUT: a cable of the
// fabric's Self, on which the injector plays the node at the far end.
type Circuit struct {
	Cable   int
	Node    int          // the node the injector plays here
	Iface   string       // interface name, the same at both ends (separate namespaces)
	Addr    netip.Prefix // the injector's end
	RUTAddr netip.Prefix // the RUT's end
	BW      float32      // bytes/s
	Metric  uint32
}

// Circuits lists Self's cables. Interfaces are named after the played
// node, "-k" for the k-th cable to it: "S3-1", "P0S12-2".
func Circuits(f *closgen.Fabric) ([]Circuit, error) {
	if err := Limits(f); err != nil {
		return nil, err
	}
	var out []Circuit
	count := map[int]int{}
	for _, c := range f.CablesOf(f.Self) {
		cb := f.Cables[c]
		peer := cb.A
		if peer == f.Self {
			peer = cb.B
		}
		count[peer]++
		name := fmt.Sprintf("%s-%d", f.Nodes[peer].Name, count[peer])
		if len(name) > 15 {
			return nil, fmt.Errorf("interface name %q longer than 15 bytes", name)
		}
		rut, inj := EndAddr(f, c, f.Self)
		out = append(out, Circuit{Cable: c, Node: peer, Iface: name, Addr: inj, RUTAddr: rut, BW: cb.BW, Metric: cb.Metric})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("node %s has no cables", f.Nodes[f.Self].Name)
	}
	return out, nil
}

// Adjacency states.
const (
	adjDown = iota
	adjInit
	adjUp
)

type circuit struct {
	Circuit
	idx    int
	sysID  packet.SystemID // the played node's
	port   isis.Port
	w      *writer
	state  int
	nbr    packet.SystemID
	nbrExt uint32
	heard  time.Time
	hold   time.Duration
	upAt   time.Time
	ups    int
	// queued: LSPs handed to the writer or waiting for it; unacked: sent
	// and not yet acknowledged (value: when sent); ssn: to acknowledge.
	unacked   map[packet.LSPID]time.Time
	ssn       map[packet.LSPID]bool
	nextHello time.Time
	nextCSNP  time.Time
	counters  Counters
}

// Counters are per-circuit PDU counts.
type Counters struct {
	HellosSent, HellosRcvd    uint64
	LSPsSent, LSPsRcvd        uint64
	Retransmits               uint64
	PSNPsSent, PSNPsRcvd      uint64
	CSNPsSent, CSNPsRcvd      uint64
	BadChecksum, DecodeErrors uint64
	RUTOlder, Requests, Flaps uint64
	// AdjDowns counts adjacencies lost; HoldExpired those the injector
	// timed out (the rest the RUT reset: its hellos said Down).
	AdjDowns, HoldExpired        uint64
	NotAdjacent, ForeignLSPsRcvd uint64
}

func (c *Counters) add(o Counters) {
	c.HellosSent += o.HellosSent
	c.HellosRcvd += o.HellosRcvd
	c.LSPsSent += o.LSPsSent
	c.LSPsRcvd += o.LSPsRcvd
	c.Retransmits += o.Retransmits
	c.PSNPsSent += o.PSNPsSent
	c.PSNPsRcvd += o.PSNPsRcvd
	c.CSNPsSent += o.CSNPsSent
	c.CSNPsRcvd += o.CSNPsRcvd
	c.BadChecksum += o.BadChecksum
	c.DecodeErrors += o.DecodeErrors
	c.RUTOlder += o.RUTOlder
	c.Requests += o.Requests
	c.Flaps += o.Flaps
	c.AdjDowns += o.AdjDowns
	c.HoldExpired += o.HoldExpired
	c.NotAdjacent += o.NotAdjacent
	c.ForeignLSPsRcvd += o.ForeignLSPsRcvd
}

func (in *Injector) rxHello(c *circuit, h *packet.P2PHello, now time.Time) {
	c.counters.HellosRcvd++
	if h.CircuitType&packet.CircuitL2 == 0 {
		return
	}
	areaOK := false
	for _, a := range h.TLVs.Areas() {
		areaOK = areaOK || bytes.Equal(a, in.area)
	}
	tw, ok := h.TLVs.ThreeWay()
	if !areaOK || !ok {
		return
	}
	c.heard = now
	c.hold = time.Duration(h.HoldTime) * time.Second
	if c.state != adjDown && (h.SourceID != c.nbr || (tw.HasExtCircuit && tw.ExtCircuitID != c.nbrExt)) {
		in.adjDown(c, "neighbour changed")
	}
	c.nbr, c.nbrExt = h.SourceID, tw.ExtCircuitID
	old := c.state
	if tw.HasNeighbor && (tw.NeighborID != c.sysID || (!tw.NoNeighborExtCircuit && tw.NeighborExtCircuitID != c.extCircuit())) {
		// It names another system or circuit (RFC 5303 §3.2): no adjacency.
		in.adjDown(c, "neighbour names another system")
		return
	}
	// RFC 5303 §3.1's state table, by our state and the one received.
	switch {
	case tw.State == packet.ThreeWayDown && old == adjUp:
		in.adjDown(c, "neighbour reset")
		c.state = adjInit
	case tw.State == packet.ThreeWayDown:
		c.state = adjInit
	case tw.State == packet.ThreeWayInitializing:
		c.state = adjUp
	case tw.State == packet.ThreeWayUp && old != adjDown:
		c.state = adjUp
	}
	if c.state != old {
		in.sendHello(c, now)
		if c.state == adjUp {
			in.adjUp(c, now)
		}
	}
}

func (c *circuit) extCircuit() uint32 { return uint32(c.idx + 1) }

func (in *Injector) adjUp(c *circuit, now time.Time) {
	c.upAt = now
	if in.firstUp.IsZero() {
		in.firstUp = now
	}
	c.ups++
	if c.ups > 1 {
		c.counters.Flaps++
	}
	in.cfg.Log.Debug("adjacency up", "iface", c.Iface, "as", in.cfg.Fabric.Nodes[c.Node].Name)
	if in.cfg.Flood == FloodOne && (in.primary == nil || in.primary.state != adjUp) {
		in.primary = c
	}
	c.nextCSNP = now.Add(in.cfg.CSNPInterval)
	switch {
	case !in.serves(c):
	case c.ups == 1:
		in.queue(c, in.ids, now)
	default:
		// Back after a flap: the RUT kept its database (it did not
		// restart, or the neighbour would have changed), so describe ours
		// and send what it asks for. Re-sending everything to a router
		// that flaps under load only feeds the overload.
		c.nextCSNP = now
	}
}

// serves reports whether the injector floods, describes and answers
// requests on c (every circuit, or the primary one).
func (in *Injector) serves(c *circuit) bool {
	return in.cfg.Flood == FloodAll || c == in.primary
}

const whyHold = "hold time expired"

func (in *Injector) adjDown(c *circuit, why string) {
	if c.state == adjUp {
		in.cfg.Log.Info("adjacency down", "iface", c.Iface, "why", why)
		c.counters.AdjDowns++
		if why == whyHold {
			c.counters.HoldExpired++
		}
	}
	c.state = adjDown
	clear(c.unacked)
	clear(c.ssn)
	c.w.flush()
	if c == in.primary {
		// Another Up circuit takes over and gets the whole database.
		in.primary = nil
		for _, o := range in.circuits {
			if o.state == adjUp {
				in.primary = o
				in.queue(o, in.ids, in.now())
				break
			}
		}
	}
}

func (in *Injector) tickCircuit(c *circuit, now time.Time, scan bool) {
	if c.state != adjDown && now.Sub(c.heard) > c.hold {
		in.adjDown(c, whyHold)
	}
	if !now.Before(c.nextHello) {
		in.sendHello(c, now)
	}
	if c.state != adjUp {
		return
	}
	if len(c.ssn) > 0 {
		in.sendPSNP(c, now)
	}
	if !now.Before(c.nextCSNP) && in.serves(c) {
		in.sendCSNPs(c, now)
		c.nextCSNP = now.Add(in.cfg.CSNPInterval)
	}
	if scan {
		var again []packet.LSPID
		for id, at := range c.unacked {
			if now.Sub(at) >= in.cfg.Retransmit {
				again = append(again, id)
			}
		}
		if len(again) > 0 {
			slices.SortFunc(again, func(a, b packet.LSPID) int { return a.Compare(b) })
			c.counters.Retransmits += uint64(len(again))
			in.queue(c, again, now)
		}
	}
}

func (in *Injector) sendHello(c *circuit, now time.Time) {
	tw := &packet.ThreeWay{HasExtCircuit: true, ExtCircuitID: c.extCircuit()}
	switch c.state {
	case adjDown:
		tw.State = packet.ThreeWayDown
	case adjInit:
		tw.State = packet.ThreeWayInitializing
	default:
		tw.State = packet.ThreeWayUp
	}
	if c.state != adjDown {
		tw.HasNeighbor, tw.NeighborID, tw.NeighborExtCircuitID = true, c.nbr, c.nbrExt
	}
	hold := in.cfg.HelloInterval * time.Duration(in.cfg.HoldMultiplier)
	h := &packet.P2PHello{
		Header:         packet.Header{Type: packet.TypeP2PHello},
		CircuitType:    packet.CircuitL2,
		SourceID:       c.sysID,
		HoldTime:       uint16(max(hold/time.Second, 1)),
		LocalCircuitID: 1,
		TLVs: packet.TLVs{
			&packet.AreaAddresses{Areas: [][]byte{in.area}},
			&packet.ProtocolsSupported{NLPIDs: []uint8{packet.NLPIDIPv4}},
			&packet.IPv4Addresses{Addrs: []netip.Addr{c.Addr.Addr()}},
			tw,
		},
	}
	c.counters.HellosSent++
	c.w.ctrl(h.AppendTo(nil))
	c.nextHello = now.Add(in.cfg.HelloInterval)
}
