package ospf

import (
	"net/netip"
	"time"

	"github.com/fared/fared/ospf/packet"
)

// NbrState is a neighbour state (RFC 2328 §10.1).
type NbrState uint8

const (
	NbrDown NbrState = iota
	NbrAttempt
	NbrInit
	Nbr2Way
	NbrExStart
	NbrExchange
	NbrLoading
	NbrFull
)

func (s NbrState) String() string {
	return [...]string{"Down", "Attempt", "Init", "2-Way", "ExStart", "Exchange", "Loading", "Full"}[s]
}

// neighbor is one OSPF neighbour on one interface.
type neighbor struct {
	ifc     *iface
	rid     netip.Addr
	addr    netip.Addr
	prio    uint8
	dr, bdr netip.Addr // as declared in its hellos
	options uint8
	state   NbrState
	deadAt  time.Time
	since   time.Time // when it last reached Full

	cryptSeq    uint32 // its last cryptographic sequence number (auth.go)
	cryptSeqSet bool
	flaps       int

	// Database exchange (§10.6-10.8).
	master   bool // we are master
	ddSeq    uint32
	lastRcvd struct {
		flags, options uint8
		seq            uint32
		valid          bool
	}
	lastSent    []byte    // last DBD sent (retransmitted by the master, echoed by the slave)
	lastSentM   bool      // the last DBD we sent had the M bit
	ddDue       time.Time // master: retransmission of lastSent
	slaveHold   time.Time // slave: keep lastSent until then after Exchange
	summary     []lsaHeader
	requests    map[lsaKey]lsaHeader
	reqOrder    []lsaKey
	lsrDue      time.Time
	rxmt        map[lsaKey]time.Time // LSAs awaiting acknowledgement: last send time
	directAcks  []lsaHeader
	nbrMTU      int
	exchangeAt  time.Time
	fullAfterMs int64

	// opaque: the neighbour set the O bit in its DBDs (RFC 5250 §3);
	// opaque LSAs are neither described nor flooded to one that did not.
	opaque bool
}

func newNeighbor(ifc *iface, rid, addr netip.Addr) *neighbor {
	return &neighbor{ifc: ifc, rid: rid, addr: addr, state: NbrDown,
		requests: map[lsaKey]lsaHeader{}, rxmt: map[lsaKey]time.Time{}}
}

// setState changes state and does what every transition implies: logs,
// counters, origination, graph.
func (n *neighbor) setState(s NbrState, now time.Time, why string) {
	old := n.state
	if old == s {
		return
	}
	n.state = s
	ifc := n.ifc
	lvl := ifc.in.log.Debug
	if s == NbrFull || old == NbrFull {
		lvl = ifc.in.log.Info
	}
	lvl("neighbor state", "iface", ifc.name, "neighbor", n.rid, "address", n.addr, "from", old.String(), "to", s.String(), "event", why)
	if s == NbrFull {
		n.since = now
		ifc.count("adjacency_full")
		if !n.exchangeAt.IsZero() {
			n.fullAfterMs = now.Sub(n.exchangeAt).Milliseconds()
		}
	}
	if old == NbrFull {
		ifc.count("adjacency_down")
		n.flaps++
	}
	n.repair(old, s)
	// Full changes the Router LSA (and the DR's Network LSA); reaching or
	// leaving 2-Way changes the next hops of the graph.
	if s == NbrFull || old == NbrFull || (old < Nbr2Way) != (s < Nbr2Way) {
		ifc.in.scheduleRegen(ifc.area)
		ifc.area.graphDirty = true
	}
}

// clearLists empties the exchange and flooding lists (§10.3 on leaving the
// adjacency).
func (n *neighbor) clearLists() {
	n.summary = nil
	clear(n.requests)
	n.reqOrder = nil
	clear(n.rxmt)
	n.directAcks = nil
	n.lastSent = nil
	n.lastRcvd.valid = false
}

// kill is KillNbr / LLDown / InactivityTimer: the neighbour is gone.
func (n *neighbor) kill(now time.Time, why string) {
	n.clearLists()
	n.setState(NbrDown, now, why)
}

// shouldAdjacent is the "should an adjacency be established" test of §10.4.
func (n *neighbor) shouldAdjacent() bool {
	ifc := n.ifc
	if ifc.isP2P() {
		return true
	}
	me := ifc.addr.Addr()
	return ifc.dr == me || ifc.bdr == me || n.addr == ifc.dr || n.addr == ifc.bdr
}

// adjOK is the AdjOK? event.
func (n *neighbor) adjOK(now time.Time) {
	switch {
	case n.state == Nbr2Way && n.shouldAdjacent():
		n.startExchange(now, "AdjOK?")
	case n.state >= NbrExStart && !n.shouldAdjacent():
		n.clearLists()
		n.setState(Nbr2Way, now, "AdjOK? (no longer adjacent)")
	}
}

// startExchange enters ExStart (§10.3 state 2-Way/ExStart, and the restart
// after SeqNumberMismatch or BadLSReq).
func (n *neighbor) startExchange(now time.Time, why string) {
	n.clearLists()
	if n.ddSeq == 0 {
		n.ddSeq = uint32(now.UnixNano()>>20) | 1
	} else {
		n.ddSeq++
	}
	n.master = true
	n.setState(NbrExStart, now, why)
	n.exchangeAt = now
	n.sendDBD(now, ddInit|ddMore|ddMaster, nil)
}

// tick: retransmissions of DBDs, LSRs and LSUs.
func (n *neighbor) tick(now time.Time) {
	rx := n.ifc.in.ocfg.RetransmitInterval
	switch n.state {
	case NbrExStart, NbrExchange:
		if n.master && n.lastSent != nil && !now.Before(n.ddDue) {
			n.ifc.sendRaw(n.ifc.nbrDst(n), n.lastSent, "dbd")
			n.ifc.count("tx_dbd_retransmit")
			n.ddDue = now.Add(rx)
		}
	}
	if !n.master && n.state >= NbrLoading && !n.slaveHold.IsZero() && now.After(n.slaveHold) {
		n.lastSent, n.slaveHold = nil, time.Time{}
	}
	if (n.state == NbrExchange || n.state == NbrLoading) && len(n.requests) > 0 && !now.Before(n.lsrDue) {
		n.sendLSR(now)
	}
	if n.state >= NbrExchange && len(n.rxmt) > 0 {
		n.retransmit(now)
	}
}

// twoWayReceived handles a hello that lists us.
func (n *neighbor) twoWayReceived(now time.Time) {
	if n.state != NbrInit {
		return
	}
	if n.shouldAdjacent() {
		n.setState(Nbr2Way, now, "2-WayReceived")
		n.startExchange(now, "2-WayReceived")
		return
	}
	n.setState(Nbr2Way, now, "2-WayReceived")
}

// exchangeDone is ExchangeDone (§10.3): Loading while requests remain.
func (n *neighbor) exchangeDone(now time.Time) {
	if len(n.requests) == 0 {
		n.setState(NbrFull, now, "ExchangeDone")
		return
	}
	n.setState(NbrLoading, now, "ExchangeDone")
	n.sendLSR(now)
}

// loadingDone moves to Full when the last requested LSA arrived.
func (n *neighbor) loadingDone(now time.Time) {
	if n.state == NbrLoading && len(n.requests) == 0 {
		n.setState(NbrFull, now, "LoadingDone")
	}
}

// removeRequest drops one entry of the request list.
func (n *neighbor) removeRequest(k lsaKey) {
	if _, ok := n.requests[k]; !ok {
		return
	}
	delete(n.requests, k)
	for i, x := range n.reqOrder {
		if x == k {
			n.reqOrder = append(n.reqOrder[:i], n.reqOrder[i+1:]...)
			break
		}
	}
}

func (n *neighbor) addRequest(h lsaHeader) {
	k := keyOf(h)
	if _, ok := n.requests[k]; !ok {
		n.reqOrder = append(n.reqOrder, k)
	}
	n.requests[k] = h
}

// wants reports whether an LSA type may be sent to this neighbour: opaque
// LSAs (types 9-11) only to an opaque-capable one (RFC 5250 §3). FRR's
// ospfd without "capability opaque" refuses the whole exchange otherwise
// ("Opaque capability mismatch").
func (n *neighbor) wants(typ uint8) bool {
	return n.opaque || typ < packet.LSAOpaqueLink || typ > packet.LSAOpaqueAS
}
