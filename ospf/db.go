package ospf

import (
	"net/netip"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf/packet"
)

type lsaHeader = packet.LSAHeader

// lsaKey identifies an LSA in a database (RFC 2328 §12.1).
type lsaKey struct {
	typ uint8
	id  netip.Addr
	adv netip.Addr
}

func keyOf(h lsaHeader) lsaKey { return lsaKey{typ: h.Type, id: h.ID, adv: h.AdvRouter} }

// area is one area's database and origination state; the AS-scope
// database (types 5 and 11) is an area with as=true, and each interface's
// link-scope database (type 9, RFC 5250 §3) an area with link set.
type area struct {
	in   *Instance
	id   uint32
	name string
	as   bool
	link *iface
	db   map[lsaKey]*lsaEntry

	// Origination: regen asks for a new run; lastGen enforces the minimum
	// generation interval; own is what we originated last time, so LSAs we
	// stop originating get flushed.
	regen   bool
	lastGen time.Time
	own     map[lsaKey]bool
	// wrap: LSAs whose sequence number passed MaxSequenceNumber, waiting
	// for the flush of the old instance to be acknowledged before being
	// originated at InitialSequenceNumber (RFC 2328 §12.1.6).
	wrap map[lsaKey]wantLSA

	graph      *lsdb.Graph
	graphDirty bool
	changes    uint64
	// interArea: prefixes of this area's graph that come from Summary
	// LSAs (an ABR only re-advertises intra-area routes, and backbone
	// inter-area routes into non-backbone areas).
	interArea map[prefixAdv]bool
	// summaries: what we originate into this area as an ABR;
	// summaryViews explains each one (`farectl ospf summaries`).
	summaries    map[netip.Prefix]summary
	summaryViews []SummaryView
}

type prefixAdv struct {
	p   netip.Prefix
	adv string
}

func newArea(in *Instance, id uint32, as bool) *area {
	name := config.AreaString(id)
	if as {
		name = "AS"
	}
	return &area{in: in, id: id, name: name, as: as, db: map[lsaKey]*lsaEntry{}, own: map[lsaKey]bool{},
		wrap: map[lsaKey]wantLSA{}, regen: true}
}

// newLinkDB is the link-scope database of an interface: its LSAs never
// leave the link, so two links to the same neighbour each hold their own
// instance of one LSA key.
func newLinkDB(ifc *iface) *area {
	a := newArea(ifc.in, ifc.area.id, false)
	a.link, a.regen = ifc, false
	return a
}

// lsaEntry is one LSA as stored: the raw bytes (flooded as received, only
// the age rewritten) and the decoded form.
type lsaEntry struct {
	lsa       packet.LSA
	age0      uint16    // age when stored
	at        time.Time // when stored
	own       bool      // originated by us
	installed time.Time // for MinLSArrival
	sentBack  time.Time // last time we answered an older copy with this one
	fromIf    string
	flushed   bool // reached MaxAge and was flooded as such
}

func (e *lsaEntry) age(now time.Time) uint16 {
	if e.age0 >= MaxAge {
		return MaxAge
	}
	a := int64(e.age0) + int64(now.Sub(e.at)/time.Second)
	if a >= MaxAge {
		return MaxAge
	}
	return uint16(a)
}

// header returns the stored header with the current age.
func (e *lsaEntry) header(now time.Time) lsaHeader {
	h := e.lsa.LSAHeader
	h.Age = e.age(now)
	return h
}

// wire returns the raw LSA with the age it leaves with (age + InfTransDelay).
func (e *lsaEntry) wire(now time.Time) packet.LSA {
	raw := make([]byte, len(e.lsa.Raw))
	copy(raw, e.lsa.Raw)
	age := min(MaxAge, e.age(now)+infTransDelay)
	packet.SetLSAAge(raw, age)
	l := e.lsa
	l.Raw = raw
	l.Age = age
	return l
}

// compareLSA orders two instances of one LSA (RFC 2328 §13.1): > 0 when a
// is newer.
func compareLSA(a, b lsaHeader) int {
	switch {
	case a.Seq != b.Seq:
		if a.Seq > b.Seq {
			return 1
		}
		return -1
	case a.Checksum != b.Checksum:
		if a.Checksum > b.Checksum {
			return 1
		}
		return -1
	case (a.Age >= MaxAge) != (b.Age >= MaxAge):
		if a.Age >= MaxAge {
			return 1
		}
		return -1
	}
	d := int(a.Age) - int(b.Age)
	if d > packet.MaxAgeDiff {
		return -1
	}
	if d < -packet.MaxAgeDiff {
		return 1
	}
	return 0
}

// scopeOf returns the database an LSA type lives in for an interface:
// the AS, the interface's link (type 9, RFC 5250 §3) or its area.
func (in *Instance) scopeOf(ifc *iface, typ uint8) *area {
	switch typ {
	case packet.LSAExternal, packet.LSAOpaqueAS:
		return in.as
	case packet.LSAOpaqueLink:
		return ifc.linkDB
	}
	return ifc.area
}

// floodIfaces returns the interfaces an LSA of database a floods on.
func (in *Instance) floodIfaces(a *area) []*iface {
	if a.link != nil {
		return []*iface{a.link}
	}
	var out []*iface
	for _, ifc := range in.ifaces {
		if a.as || ifc.area == a {
			out = append(out, ifc)
		}
	}
	return out
}

// install stores an LSA and marks what depends on it.
func (in *Instance) install(a *area, e *lsaEntry, now time.Time) {
	k := keyOf(e.lsa.LSAHeader)
	old := a.db[k]
	a.db[k] = e
	e.installed = now
	a.changes++
	// Remove the old instance from every retransmission list (§13 (5c)).
	if old != nil {
		for _, ifc := range in.floodIfaces(a) {
			for _, n := range ifc.nbrs {
				delete(n.rxmt, k)
			}
		}
	}
	if old == nil || !sameContent(old, e) {
		a.graphDirty = true
	}
}

// sameContent: the body is unchanged and both are live or both MaxAge (a
// refresh needs no new graph).
func sameContent(a, b *lsaEntry) bool {
	if (a.age0 >= MaxAge) != (b.age0 >= MaxAge) || len(a.lsa.Raw) != len(b.lsa.Raw) {
		return false
	}
	const hdr = 20
	return string(a.lsa.Raw[hdr:]) == string(b.lsa.Raw[hdr:]) && a.lsa.Options == b.lsa.Options
}

// flood sends an LSA out of the interfaces of its scope (RFC 2328 §13.3):
// a link-scope LSA only back onto its link, where a DR passes it on to
// the other routers of a LAN (RFC 5250 §3).
// from is the neighbour it came from (nil when we originated it). It
// reports whether the LSA went back out of the receiving interface.
func (in *Instance) flood(a *area, e *lsaEntry, from *neighbor, now time.Time) (floodedBack bool) {
	k := keyOf(e.lsa.LSAHeader)
	h := e.header(now)
	for _, ifc := range in.floodIfaces(a) {
		if !ifc.running || ifc.cfg.Passive {
			continue
		}
		added := false
		for _, n := range ifc.nbrs {
			if n.state < NbrExchange || !n.wants(k.typ) {
				continue
			}
			if n.state < NbrFull {
				if req, ok := n.requests[k]; ok {
					c := compareLSA(h, req)
					if c < 0 {
						continue
					}
					n.removeRequest(k)
					n.loadingDone(now)
					if c == 0 {
						continue
					}
				}
			}
			if n == from {
				continue
			}
			n.rxmt[k] = now
			added = true
		}
		if !added {
			continue
		}
		if from != nil && ifc == from.ifc {
			if from.addr == ifc.dr || from.addr == ifc.bdr {
				continue // the DR floods it on this link
			}
			if ifc.state == IfBackup {
				continue
			}
			floodedBack = true
		}
		ifc.floodQ = append(ifc.floodQ, k)
	}
	return floodedBack
}

// age runs once a second over a database: LSAs reaching MaxAge are
// flooded, MaxAge LSAs nobody still needs are removed, our own are
// refreshed.
func (in *Instance) age(a *area, now time.Time) {
	busy := false // a neighbour in Exchange or Loading
	for _, ifc := range in.floodIfaces(a) {
		for _, n := range ifc.nbrs {
			if n.state == NbrExchange || n.state == NbrLoading {
				busy = true
			}
		}
	}
	for k, e := range a.db {
		age := e.age(now)
		if e.own && age < MaxAge && time.Duration(age)*time.Second >= in.ocfg.LSARefresh {
			in.refreshOwn(a, e, now)
			continue
		}
		if age < MaxAge {
			continue
		}
		if !e.flushed {
			// RFC 2328 §14: an LSA reaching MaxAge is flooded as such.
			e.flushed = true
			e.age0, e.at = MaxAge, now
			a.changes++
			a.graphDirty = true
			in.flood(a, e, nil, now)
			continue
		}
		if busy {
			continue
		}
		acked := true
		for _, ifc := range in.floodIfaces(a) {
			for _, n := range ifc.nbrs {
				if _, ok := n.rxmt[k]; ok {
					acked = false
				}
			}
		}
		if acked {
			delete(a.db, k)
			if e.own {
				delete(a.own, k)
			}
			a.changes++
		}
	}
}

// selfOriginated reports whether an LSA is ours (§13.4): our router id as
// advertising router, or a Network LSA for one of our interface addresses.
func (in *Instance) selfOriginated(h lsaHeader) bool {
	if h.AdvRouter == in.rid || in.wasOurs(h.AdvRouter) {
		return true
	}
	if h.Type == packet.LSANetwork {
		for _, ifc := range in.ifaces {
			if ifc.addr.IsValid() && ifc.addr.Addr() == h.ID {
				return true
			}
		}
	}
	return false
}
