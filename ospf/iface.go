package ospf

import (
	"net"
	"net/netip"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/fared/fared/ospf/packet"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/loop"
)

// IfState is an interface state (RFC 2328 §9.1).
type IfState uint8

const (
	IfDown IfState = iota
	IfLoopback
	IfWaiting
	IfP2P
	IfDROther
	IfBackup
	IfDR
)

func (s IfState) String() string {
	return [...]string{"Down", "Loopback", "Waiting", "Point-to-Point", "DROther", "Backup", "DR"}[s]
}

// iface is one OSPF interface.
type iface struct {
	in   *Instance
	idx  int
	cfg  Interface
	name string
	// rxSite names the interface's receive path in the panic guard's log
	// (built once: the guard takes it on every packet).
	rxSite string
	area   *area

	ifi      net.Interface
	addr     netip.Prefix // primary IPv4 address: the interface's identity
	addrs    []netip.Prefix
	mtu      int
	bw       float32 // bytes/s; 0 = unknown
	running  bool
	port     Port
	lastPoll time.Time

	state     IfState
	waitUntil time.Time
	helloDue  time.Time
	dr, bdr   netip.Addr // interface addresses of DR and BDR (broadcast)
	allDR     bool       // joined AllDRouters

	// Neighbours: by router id on P2P, by interface address on broadcast
	// (RFC 2328 §10).
	nbrs map[netip.Addr]*neighbor

	// bwOverride is a bandwidth set at run time (farectl ospf bandwidth),
	// 0 when the configured one (or the interface speed) is in force.
	bwOverride config.Bandwidth

	// linkDB holds the link-scope (type 9) LSAs of this link.
	linkDB *area

	// Pending transmissions, sent by flush: LSAs to flood (multicast) and
	// delayed acknowledgements.
	floodQ []lsaKey
	acks   []lsaHeader

	counters map[string]uint64
	logged   map[string]bool

	cryptSeq uint32 // last cryptographic sequence number sent (auth.go)
	// keyFallback: packets go out with an expired key (auth.go).
	keyFallback config.KeyFallback

	// ordered: the interface uses cryptographic authentication, whose
	// sequence numbers must arrive in order (RFC 2328 D.3): its hellos
	// may not overtake other packets in the loop's urgent lane. Written
	// by the loop (setCfg), read by the reader.
	ordered atomic.Bool
}

// setCfg installs the interface's configuration (the loop only).
func (ifc *iface) setCfg(ic Interface) {
	ifc.cfg = ic
	crypto := false
	if a := ic.Authentication; a != nil {
		for _, k := range a.Keys {
			crypto = crypto || k.Algorithm != "clear"
		}
	}
	ifc.ordered.Store(crypto)
}

func newIface(in *Instance, idx int, ic Interface) *iface {
	ifc := &iface{in: in, idx: idx, name: ic.Name, rxSite: "rx " + ic.Name, area: in.area(ic.Area),
		nbrs: map[netip.Addr]*neighbor{}, counters: map[string]uint64{}, logged: map[string]bool{}}
	ifc.setCfg(ic)
	ifc.linkDB = newLinkDB(ifc)
	return ifc
}

func (ifc *iface) isP2P() bool { return ifc.cfg.Type == "p2p" }

func (in *Instance) iface(name string) *iface {
	for _, ifc := range in.ifaces {
		if ifc.name == name {
			return ifc
		}
	}
	return nil
}

// refresh polls the interface: existence, oper state, addresses, speed.
func (ifc *iface) refresh(now time.Time) {
	ifc.lastPoll = now
	info, err := ifc.in.opt.Interfaces(ifc.name)
	if err != nil {
		if ifc.running {
			ifc.in.log.Warn("interface gone", "iface", ifc.name, "err", err)
			ifc.setDown(now)
		}
		return
	}
	var a4 []netip.Prefix
	for _, p := range info.Addrs {
		// 127/8 on a passive lo and IPv4 link-local are never advertised
		// (FRR leaves them out too), nor the interface's identity.
		if a := p.Addr(); a.Is4() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsUnspecified() && !a.IsMulticast() {
			a4 = append(a4, p)
		}
	}
	bw := float32(0)
	if ifc.bwOverride > 0 {
		bw = ifc.bwOverride.BytesPerSec()
	} else if ifc.cfg.Bandwidth > 0 {
		bw = ifc.cfg.Bandwidth.BytesPerSec()
	} else if info.SpeedBps > 0 {
		bw = float32(info.SpeedBps / 8)
	}
	changed := !slices.Equal(a4, ifc.addrs) || bw != ifc.bw
	ifc.ifi = info.Iface
	ifc.mtu = info.Iface.MTU
	if changed && ifc.running && len(a4) > 0 && a4[0] != ifc.addr {
		// A new primary address is a new identity on the link.
		ifc.in.log.Info("interface address changed", "iface", ifc.name, "old", ifc.addr, "new", a4[0])
		ifc.setDown(now)
	}
	ifc.addrs, ifc.bw = a4, bw
	if len(a4) > 0 {
		ifc.addr = a4[0]
	} else {
		ifc.addr = netip.Prefix{}
	}
	up := info.Running && ifc.addr.IsValid()
	if up && !ifc.running {
		if err := ifc.setUp(now); err != nil {
			ifc.logOnce("open", "cannot open interface", "err", err)
			return
		}
		changed = true
	} else if !up && ifc.running {
		ifc.in.log.Info("interface down", "iface", ifc.name)
		ifc.setDown(now)
		changed = true
	}
	if changed {
		ifc.in.scheduleAll()
		ifc.area.graphDirty = true
	}
}

// setUp is the InterfaceUp event (RFC 2328 §9.3).
func (ifc *iface) setUp(now time.Time) error {
	if !ifc.cfg.Passive && ifc.port == nil {
		p, err := ifc.in.opt.OpenPort(&ifc.ifi, ifc.addr.Addr())
		if err != nil {
			return err
		}
		ifc.port = p
		ifc.in.wg.Add(1)
		go ifc.reader(p)
	}
	ifc.running = true
	ifc.dr, ifc.bdr = netip.Addr{}, netip.Addr{}
	switch {
	case ifc.cfg.Passive:
		ifc.state = IfLoopback
	case ifc.isP2P():
		ifc.state = IfP2P
	case ifc.cfg.Priority == 0:
		ifc.state = IfDROther
	default:
		ifc.state = IfWaiting
		ifc.waitUntil = now.Add(ifc.cfg.DeadInterval)
	}
	ifc.helloDue = now
	ifc.in.log.Info("interface up", "iface", ifc.name, "area", ifc.area.name, "type", ifc.cfg.Type, "state", ifc.state.String(),
		"address", ifc.addr, "mtu", ifc.mtu, "bandwidth_bytes", ifc.bw)
	return nil
}

// setDown is the InterfaceDown event: every neighbour goes at once.
func (ifc *iface) setDown(now time.Time) {
	ifc.running = false
	for k, n := range ifc.nbrs {
		n.kill(now, "interface down")
		delete(ifc.nbrs, k)
	}
	ifc.state = IfDown
	ifc.dr, ifc.bdr = netip.Addr{}, netip.Addr{}
	ifc.setAllDR(false)
	ifc.floodQ, ifc.acks = nil, nil
	// With every neighbour gone nobody is left to flood a flush to: the
	// link's LSAs go, and the next adjacency brings the current ones.
	ifc.linkDB = newLinkDB(ifc)
	ifc.in.scheduleAll()
	ifc.area.graphDirty = true
}

func (ifc *iface) close() {
	if ifc.port != nil {
		ifc.port.Close()
		ifc.port = nil
	}
}

// reader turns packets into events; it does no protocol work.
func (ifc *iface) reader(p Port) {
	defer ifc.in.wg.Done()
	buf := make([]byte, 65536)
	for {
		src, dst, pkt, err := p.Recv(buf)
		if err != nil {
			retry, closed := loop.ReadResult(err)
			if retry {
				continue
			}
			if !closed {
				ifc.in.log.Debug("reader stopped", "iface", ifc.name, "err", err)
			}
			return
		}
		cp := make([]byte, len(pkt))
		copy(cp, pkt)
		if len(cp) > 1 && cp[1] == packet.TypeHello && !ifc.ordered.Load() {
			// Liveness first: a hello must not wait behind a burst of
			// LSUs while the neighbour's dead interval runs out.
			ifc.in.lp.PostUrgent(rxEvent{ifc: ifc, src: src, dst: dst, pkt: cp})
			continue
		}
		ifc.in.lp.Post(rxEvent{ifc: ifc, src: src, dst: dst, pkt: cp})
	}
}

func (ifc *iface) count(name string) { ifc.counters[name]++ }

// reject counts a dropped packet (or LSA) and logs only the first of each
// kind per interface.
func (ifc *iface) reject(kind, msg string, args ...any) {
	ifc.counters["rx_rejected_"+kind]++
	ifc.logOnce(kind, msg, args...)
}

func (ifc *iface) logOnce(kind, msg string, args ...any) {
	if ifc.logged[kind] {
		return
	}
	ifc.logged[kind] = true
	ifc.in.log.Warn(msg, append([]any{"iface", ifc.name, "kind", kind, "note", "further occurrences are only counted"}, args...)...)
}

func (ifc *iface) setAllDR(join bool) {
	if ifc.allDR == join || ifc.port == nil {
		ifc.allDR = join && ifc.port != nil
		return
	}
	if err := ifc.port.JoinAllDRouters(join); err != nil {
		ifc.logOnce("alldrouters", "cannot change AllDRouters membership", "join", join, "err", err)
	}
	ifc.allDR = join
}

// tick: polling, hellos, wait timer, neighbour timers and retransmissions.
func (ifc *iface) tick(now time.Time) {
	if now.Sub(ifc.lastPoll) >= time.Second {
		ifc.refresh(now)
	}
	if !ifc.running || ifc.cfg.Passive {
		return
	}
	for k, n := range ifc.nbrs {
		if now.After(n.deadAt) {
			n.kill(now, "dead interval expired")
			delete(ifc.nbrs, k)
			ifc.neighborChange(now)
			continue
		}
		n.tick(now)
	}
	if ifc.state == IfWaiting && !now.Before(ifc.waitUntil) {
		ifc.elect(now, "WaitTimer")
	}
	if !now.Before(ifc.helloDue) {
		ifc.sendHello()
		ifc.helloDue = now.Add(jitter(ifc.cfg.HelloInterval))
	}
	ifc.flush(now)
}

// jitter shortens an interval by up to 5% so routers do not synchronise.
func jitter(d time.Duration) time.Duration {
	n := time.Now().UnixNano()
	return d - time.Duration(n%int64(d/20+1))
}

// mcastDst is where LSUs and delayed acks go (RFC 2328 §13.3, §13.5).
func (ifc *iface) mcastDst() netip.Addr {
	if ifc.isP2P() || ifc.state == IfDR || ifc.state == IfBackup {
		return AllSPFRouters
	}
	return AllDRouters
}

// nbrDst is where packets for one neighbour go: its address on
// broadcast links, AllSPFRouters on P2P (works unnumbered, and is what FRR
// does).
func (ifc *iface) nbrDst(n *neighbor) netip.Addr {
	if ifc.isP2P() {
		return AllSPFRouters
	}
	return n.addr
}

func (ifc *iface) hasFull() bool {
	for _, n := range ifc.nbrs {
		if n.state == NbrFull {
			return true
		}
	}
	return false
}

// neighborChange re-runs the DR election where it applies (§9.2).
func (ifc *iface) neighborChange(now time.Time) {
	if ifc.state == IfDR || ifc.state == IfBackup || ifc.state == IfDROther {
		ifc.elect(now, "NeighborChange")
	}
	ifc.in.scheduleRegen(ifc.area)
	ifc.area.graphDirty = true
}

// candidate is one router taking part in the DR election.
type candidate struct {
	rid, addr netip.Addr
	prio      uint8
	dr, bdr   netip.Addr // what it declares
}

// elect runs the DR/BDR election of RFC 2328 §9.4; event is the interface
// event that asked for it (§9.3), for the log.
func (ifc *iface) elect(now time.Time, event string) {
	if ifc.isP2P() || !ifc.running {
		return
	}
	self := candidate{rid: ifc.in.rid, addr: ifc.addr.Addr(), prio: ifc.cfg.Priority, dr: ifc.dr, bdr: ifc.bdr}
	var cands []*candidate
	for _, n := range ifc.nbrs {
		if n.state >= Nbr2Way && n.prio > 0 {
			cands = append(cands, &candidate{rid: n.rid, addr: n.addr, prio: n.prio, dr: n.dr, bdr: n.bdr})
		}
	}
	oldDR, oldBDR := ifc.dr, ifc.bdr
	run := func() (dr, bdr netip.Addr) {
		all := append([]*candidate{}, cands...)
		if self.prio > 0 {
			all = append(all, &self)
		}
		better := func(a, b *candidate) bool {
			if a.prio != b.prio {
				return a.prio > b.prio
			}
			return a.rid.Compare(b.rid) > 0
		}
		// Step 2: the BDR among those not declaring themselves DR;
		// declaring oneself BDR comes first.
		var best *candidate
		bestDecl := false
		for _, c := range all {
			if c.dr == c.addr {
				continue
			}
			decl := c.bdr == c.addr
			if best == nil || (decl && !bestDecl) || (decl == bestDecl && better(c, best)) {
				best, bestDecl = c, decl
			}
		}
		if best != nil {
			bdr = best.addr
		}
		// Step 3: the DR among those declaring themselves DR, else the BDR.
		var bestDR *candidate
		for _, c := range all {
			if c.dr == c.addr && (bestDR == nil || better(c, bestDR)) {
				bestDR = c
			}
		}
		if bestDR != nil {
			dr = bestDR.addr
		} else {
			dr = bdr
		}
		return dr, bdr
	}
	dr, bdr := run()
	me := self.addr
	// Step 4: if we newly became or stopped being DR or BDR, run again.
	if (dr == me) != (oldDR == me) || (bdr == me) != (oldBDR == me) {
		self.dr, self.bdr = dr, bdr
		dr, bdr = run()
	}
	// A router that is DR is not also BDR.
	if dr == bdr && dr.IsValid() {
		bdr = netip.Addr{}
	}
	ifc.dr, ifc.bdr = dr, bdr
	old := ifc.state
	switch {
	case dr == me:
		ifc.state = IfDR
	case bdr == me:
		ifc.state = IfBackup
	default:
		ifc.state = IfDROther
	}
	ifc.setAllDR(ifc.state == IfDR || ifc.state == IfBackup)
	if ifc.state != old || dr != oldDR || bdr != oldBDR {
		ifc.in.log.Info("DR election", "iface", ifc.name, "event", event, "state", ifc.state.String(), "dr", addrOrNone(dr), "bdr", addrOrNone(bdr))
		ifc.count("dr_changes")
		// AdjOK? for every neighbour at least 2-Way (§10.4).
		for _, n := range ifc.nbrs {
			n.adjOK(now)
		}
		if ifc.state != old && old != IfWaiting {
			ifc.helloDue = now
		}
		ifc.in.scheduleRegen(ifc.area)
		ifc.area.graphDirty = true
	}
}

func addrOrNone(a netip.Addr) string {
	if !a.IsValid() {
		return "none"
	}
	return a.String()
}

// drRouterID returns the router id of the DR (us or a neighbour).
func (ifc *iface) drRouterID() netip.Addr {
	if !ifc.dr.IsValid() {
		return netip.Addr{}
	}
	if ifc.dr == ifc.addr.Addr() {
		return ifc.in.rid
	}
	if n := ifc.nbrs[ifc.dr]; n != nil {
		return n.rid
	}
	return netip.Addr{}
}

// sortedNbrs returns the neighbours in router id order.
func (ifc *iface) sortedNbrs() []*neighbor {
	out := make([]*neighbor, 0, len(ifc.nbrs))
	for _, n := range ifc.nbrs {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rid.Compare(out[j].rid) < 0 })
	return out
}

// maxPacket is the largest OSPF packet (without IP header) on this link.
func (ifc *iface) maxPacket() int {
	mtu := ifc.mtu
	if mtu <= 0 {
		mtu = 1500
	}
	return mtu - ipHeaderLen - authRoom(ifc.cfg.Authentication)
}
