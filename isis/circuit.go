package isis

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/isis/packet"
)

// circuit is one IS-IS interface.
type circuit struct {
	in   *Instance
	idx  int
	cfg  Interface
	name string
	// rxSite names the circuit's receive path in the panic guard's log
	// (built once: the guard takes it on every PDU).
	rxSite string

	ifi      net.Interface
	mac      [6]byte
	mtu      int
	addrs4   []netip.Prefix
	addrs6   []netip.Prefix // global IPv6 (LSP TLV 232, connected prefixes)
	ll6      []netip.Addr   // IPv6 link-local (IIH TLV 232, RFC 5308 §4)
	bw       float32        // bytes/s for sub-TLV 9; 0 = unknown
	running  bool
	port     Port
	lastPoll time.Time

	// bwOverride is a bandwidth set at run time (farectl isis bandwidth),
	// 0 when the configured one (or the interface speed) is in force.
	bwOverride config.Bandwidth

	// reqs: what the CSNP said of each LSP we request in our next PSNP
	// (ISO 10589 §7.3.15.2 b.5: the request is an entry with sequence
	// number 0 and the reported lifetime and checksum).
	reqs [2]map[packet.LSPID]packet.LSPEntry

	// localID is the one-byte circuit id: the pseudonode id on a LAN and
	// the local circuit id in P2P hellos.
	localID uint8

	// P2P: one adjacency; LAN: one set per level.
	p2p      *adjacency
	lan      [2]*lanLevel
	helloDue [2]time.Time // LAN per level; P2P uses [0]

	// Flooding state per level: SRM holds the last send time (UnixNano, or
	// unsent), SSN the LSPs to acknowledge or request in the next PSNP.
	srm     [2]map[packet.LSPID]int64
	ssn     [2]map[packet.LSPID]struct{}
	psnpDue [2]time.Time
	csnpDue [2]time.Time
	// pace spaces the LSPs sent on the circuit (lsp-pacing, flood.go).
	pace pacer

	counters map[string]uint64
	// rxBusyDrops counts PDUs the reader dropped because the bulk queue
	// was full (written by the reader, copied into counters by tick).
	rxBusyDrops atomic.Uint64
	logged      map[string]bool
	// keyFallback: per chain ("hello", "level-1", "level-2"), PDUs go out
	// with an expired key (auth.go).
	keyFallback map[string]*config.KeyFallback
}

type lanLevel struct {
	adjs     map[[6]byte]*adjacency
	dis      bool // we are the DIS
	lanID    packet.NodeID
	disSince time.Time
	disMAC   [6]byte
	// electAt delays the first election until we have heard the LAN for
	// two hello intervals, so we do not briefly claim DIS on start-up.
	electAt time.Time
}

func newCircuit(in *Instance, idx int, ic Interface) *circuit {
	c := &circuit{in: in, idx: idx, cfg: ic, name: ic.Name, rxSite: "rx " + ic.Name, localID: uint8(idx + 1),
		counters: map[string]uint64{}, logged: map[string]bool{}, keyFallback: map[string]*config.KeyFallback{}}
	for l := 0; l < 2; l++ {
		c.srm[l] = map[packet.LSPID]int64{}
		c.ssn[l] = map[packet.LSPID]struct{}{}
		if !c.isP2P() {
			c.lan[l] = &lanLevel{adjs: map[[6]byte]*adjacency{}}
		}
	}
	return c
}

func (c *circuit) isP2P() bool { return c.cfg.Type == "p2p" }

// levelOn reports whether this circuit runs level l (1 or 2): the
// interface's circuit type (config guarantees it is within the instance's).
func (c *circuit) levelOn(l int) bool { return c.cfg.Level&l != 0 && c.in.levelEnabled(l) }

func (c *circuit) circuitType() uint8 { return uint8(c.cfg.Level & c.in.icfg.Level) }

func (c *circuit) holdTime() time.Duration {
	return c.cfg.HelloInterval * time.Duration(c.cfg.HelloMultiplier)
}

// advertisable reports whether an interface address may be advertised
// (as a prefix, or in TLV 132/232): not loopback scope (127/8, ::1), not
// link-local (169.254/16, fe80::/10), not unspecified or multicast.
func advertisable(a netip.Addr) bool {
	return !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsUnspecified() && !a.IsMulticast()
}

// KernelInterface reads an interface from the kernel.
var KernelInterface = netif.Lookup

// refresh polls the interface: existence, oper state, addresses, speed. The
// netlink monitor of the fib package will replace the polling; until then a
// one-second poll bounds the time to notice a cut link.
func (c *circuit) refresh(now time.Time) {
	c.lastPoll = now
	info, err := c.in.opt.Interfaces(c.name)
	if err != nil {
		if c.running {
			c.in.log.Warn("interface gone", "iface", c.name, "err", err)
			c.setDown(now)
		}
		return
	}
	var a4, a6 []netip.Prefix
	var ll []netip.Addr
	for _, p := range info.Addrs {
		switch {
		case !advertisable(p.Addr()) && !(p.Addr().Is6() && p.Addr().IsLinkLocalUnicast()):
			// 127/8 and ::1 on a passive lo, IPv4 link-local: never
			// advertised, never in hellos (FRR leaves them out too).
		case p.Addr().Is4():
			a4 = append(a4, p)
		case p.Addr().IsLinkLocalUnicast():
			ll = append(ll, p.Addr())
		case p.Addr().Is6():
			a6 = append(a6, p)
		}
	}
	c.ll6 = ll
	bw := float32(0)
	if c.bwOverride > 0 {
		bw = c.bwOverride.BytesPerSec()
	} else if c.cfg.Bandwidth > 0 {
		bw = c.cfg.Bandwidth.BytesPerSec()
	} else if info.SpeedBps > 0 {
		bw = float32(info.SpeedBps / 8)
	}
	// An MTU change may change the LSP size (lspMTU) and the hellos.
	changed := !slices.Equal(a4, c.addrs4) || !slices.Equal(a6, c.addrs6) || bw != c.bw || info.Iface.MTU != c.mtu
	c.addrs4, c.addrs6, c.bw = a4, a6, bw
	c.ifi = info.Iface
	copy(c.mac[:], info.Iface.HardwareAddr)
	c.mtu = info.Iface.MTU
	if info.Running && !c.running {
		if err := c.setUp(now); err != nil {
			c.logOnce("open", "cannot open interface", "err", err)
			return
		}
		changed = true
	} else if !info.Running && c.running {
		c.in.log.Info("interface down", "iface", c.name)
		c.setDown(now)
		changed = true
	}
	if changed {
		c.in.scheduleAll()
	}
}

func (c *circuit) setUp(now time.Time) error {
	if !c.cfg.Passive && c.port == nil {
		p, err := c.in.opt.OpenPort(&c.ifi)
		if err != nil {
			return err
		}
		c.port = p
		c.in.wg.Add(1)
		go c.reader(p)
	}
	c.running = true
	c.in.log.Info("interface up", "iface", c.name, "type", c.cfg.Type, "mtu", c.mtu, "bandwidth_bytes", c.bw)
	for l := 0; l < 2; l++ {
		c.helloDue[l] = now
		if c.lan[l] != nil {
			c.lan[l].electAt = now.Add(2 * c.cfg.HelloInterval)
		}
	}
	return nil
}

// setDown drops every adjacency at once: a cut link must not wait for the
// hold timer.
func (c *circuit) setDown(now time.Time) {
	c.running = false
	if c.p2p != nil {
		c.adjDown(c.p2p, now, "interface down")
		c.p2p = nil
	}
	for l := 0; l < 2; l++ {
		if ll := c.lan[l]; ll != nil {
			for mac, a := range ll.adjs {
				c.adjDown(a, now, "interface down")
				delete(ll.adjs, mac)
			}
			c.resignDIS(l+1, now)
		}
		clear(c.srm[l])
		clear(c.ssn[l])
	}
}

func (c *circuit) close() {
	if c.port != nil {
		c.port.Close()
		c.port = nil
	}
}

// reader turns frames into events; it does no protocol work. Hellos go
// straight to the loop's urgent queue; everything else through the
// circuit's bulk queue (forward), so a loop busy with a flood of LSPs
// never holds the reader back from the hellos behind them in the socket.
func (c *circuit) reader(p Port) {
	defer c.in.wg.Done()
	bulk := make(chan rxEvent, rxBulkQueue)
	c.in.wg.Add(1)
	go c.forward(bulk)
	defer close(bulk)
	buf := make([]byte, 9216+64)
	for {
		src, pdu, err := p.Recv(buf)
		if err != nil {
			retry, closed := loop.ReadResult(err)
			if retry {
				continue
			}
			if !closed {
				c.in.log.Debug("reader stopped", "iface", c.name, "err", err)
			}
			return
		}
		cp := make([]byte, len(pdu))
		copy(cp, pdu)
		ev := rxEvent{c: c, src: src, pdu: cp}
		if isHello(cp) {
			// Liveness first: a hello must not wait behind a flood of
			// LSPs while the adjacency's hold time runs out.
			c.in.lp.PostUrgent(ev)
			continue
		}
		select {
		case bulk <- ev:
		default:
			// What the kernel would otherwise drop at the socket, hellos
			// included; the sender retransmits, CSNPs repair.
			c.rxBusyDrops.Add(1)
		}
	}
}

// rxBulkQueue is how many non-hello PDUs a circuit holds for a busy loop
// (on top of the loop's own queue): two full CSNP-requested syncs of a
// 1,000-LSP database.
const rxBulkQueue = 2048

// forward moves the bulk queue's PDUs into the loop, waiting while the
// loop is busy; it ends when the reader closes the queue, dropping what
// is left once the instance stops.
func (c *circuit) forward(bulk <-chan rxEvent) {
	defer c.in.wg.Done()
	for ev := range bulk {
		c.in.lp.PostUntil(ev, c.in.stopping)
	}
}

// count increments a named counter of this interface.
func (c *circuit) count(name string) { c.counters[name]++ }

// reject counts a dropped PDU and logs only the first of each kind per
// interface, so a misbehaving neighbour cannot flood the log.
func (c *circuit) reject(kind string, msg string, args ...any) {
	c.counters["rx_rejected_"+kind]++
	c.logOnce(kind, msg, args...)
}

func (c *circuit) logOnce(kind, msg string, args ...any) {
	if c.logged[kind] {
		return
	}
	c.logged[kind] = true
	c.in.log.Warn(msg, append([]any{"iface", c.name, "kind", kind, "note", "further occurrences are only counted"}, args...)...)
}

func (c *circuit) send(dst [6]byte, pdu packet.PDU, kind string) {
	if c.port == nil || !c.running {
		return
	}
	b := c.encode(pdu)
	c.sendRaw(dst, b, kind)
}

func (c *circuit) sendRaw(dst [6]byte, b []byte, kind string) {
	if c.port == nil || !c.running {
		return
	}
	if err := c.port.Send(dst, b); err != nil {
		c.count("tx_errors")
		c.logOnce("tx", "send failed", "err", err)
		return
	}
	c.count("tx_" + kind)
}

// tick: interface polling, hellos, hold timers, DIS election, CSNPs.
func (c *circuit) tick(now time.Time) {
	if n := c.rxBusyDrops.Load(); n > 0 {
		c.counters["rx_dropped_busy"] = n
	}
	if now.Sub(c.lastPoll) >= time.Second {
		c.refresh(now)
	}
	if !c.running || c.cfg.Passive {
		return
	}
	if c.isP2P() {
		if a := c.p2p; a != nil && now.After(a.expires) {
			c.adjDown(a, now, "hold time expired")
			c.p2p = nil
		}
		if !now.Before(c.helloDue[0]) {
			c.sendP2PHello()
			c.helloDue[0] = now.Add(jitter(c.cfg.HelloInterval))
		}
		for l := 1; l <= 2; l++ {
			if c.p2p != nil && c.p2p.state == AdjUp && c.p2p.usesLevel(l) && !c.csnpDue[l-1].IsZero() && !now.Before(c.csnpDue[l-1]) {
				c.sendCSNPs(l, now)
				c.csnpDue[l-1] = now.Add(c.in.icfg.CSNPInterval)
			}
		}
		return
	}
	for l := 1; l <= 2; l++ {
		if !c.levelOn(l) {
			continue
		}
		ll := c.lan[l-1]
		for mac, a := range ll.adjs {
			if now.After(a.expires) {
				c.adjDown(a, now, "hold time expired")
				delete(ll.adjs, mac)
				c.elect(l, now)
			}
		}
		if !now.Before(c.helloDue[l-1]) {
			c.sendLANHello(l)
			iv := c.cfg.HelloInterval
			if ll.dis {
				iv /= 3 // the DIS hellos faster so a dead DIS is noticed sooner
			}
			c.helloDue[l-1] = now.Add(jitter(iv))
		}
		if !ll.electAt.IsZero() && !now.Before(ll.electAt) {
			ll.electAt = time.Time{}
			c.elect(l, now)
		}
		if ll.dis && !now.Before(c.csnpDue[l-1]) {
			c.sendCSNPs(l, now)
			c.csnpDue[l-1] = now.Add(c.in.icfg.CSNPInterval)
		}
	}
}

// jitter shortens an interval by up to 10% (ISO 10589 §10.1) so routers do
// not synchronise their hellos.
func jitter(d time.Duration) time.Duration {
	n := time.Now().UnixNano()
	return d - time.Duration(n%int64(d/10+1))
}

// maxLLCPayload is the largest 802.3 LLC frame payload: the 802.3 length
// field holds at most 1500, and a value of 1536 or more is an EtherType,
// which the receiving kernel hands to EtherType sockets, never to the
// 802.2 socket IS-IS listens on. On a jumbo-frame link IS-IS PDUs
// therefore stay within 1500 bytes, LLC header included.
const maxLLCPayload = 1500

// pduMax is the largest IS-IS PDU this circuit can send: its MTU, at most
// an 802.3 LLC frame's payload, less the LLC header; 0 while the MTU is
// unknown.
func (c *circuit) pduMax() int {
	if c.mtu <= 0 {
		return 0
	}
	return min(c.mtu, maxLLCPayload) - len(llc)
}

// helloRoom is how many TLV bytes a hello with a fixed part of fixed
// bytes may carry: pduMax (the lsp-mtu while the MTU is unknown).
func (c *circuit) helloRoom(fixed int) int {
	mtu := c.in.icfg.LSPMTU
	if m := c.pduMax(); m > 0 {
		mtu = m
	}
	return mtu - fixed - authRoom(c.cfg.Authentication)
}

// fitList appends TLVs of at most per items of size bytes each, as many
// items as the room left allows; it returns how many went in.
func fitList[T any](tlvs packet.TLVs, room *int, items []T, size, per int, mk func([]T) packet.TLV) (packet.TLVs, int) {
	done := 0
	for done < len(items) && *room >= 2+size {
		n := min(per, len(items)-done, (*room-2)/size)
		tlvs = append(tlvs, mk(items[done:done+n:done+n]))
		*room -= 2 + n*size
		done += n
	}
	return tlvs, done
}

// helloTLVs builds a hello's TLVs within room bytes: areas, protocols and
// with multi-topology on the topologies (TLV 229), then extra (the P2P three-way TLV), the IPv4 addresses (RFC 1195) and
// IPv6 link-local addresses (RFC 5308 §4: the next hops of IPv6 routes),
// each list over as many TLVs as it needs. left is the room that remains;
// cut counts addresses that did not fit.
func (c *circuit) helloTLVs(room int, extra ...packet.TLV) (tlvs packet.TLVs, left, cut int) {
	tlvs = packet.TLVs{
		&packet.AreaAddresses{Areas: c.in.areas},
		&packet.ProtocolsSupported{NLPIDs: c.in.nlpids()},
	}
	if mt := c.in.helloMTs(); mt != nil {
		tlvs = append(tlvs, mt)
	}
	tlvs = append(tlvs, extra...)
	room -= tlvs.Len()
	as := make([]netip.Addr, 0, len(c.addrs4))
	for _, p := range c.addrs4 {
		as = append(as, p.Addr())
	}
	tlvs, n := fitList(tlvs, &room, as, 4, packet.MaxIPv4PerTLV, func(s []netip.Addr) packet.TLV { return &packet.IPv4Addresses{Addrs: s} })
	cut += len(as) - n
	if c.in.ipv6() {
		tlvs, n = fitList(tlvs, &room, c.ll6, 16, packet.MaxIPv6PerTLV, func(s []netip.Addr) packet.TLV { return &packet.IPv6Addresses{Addrs: s} })
		cut += len(c.ll6) - n
	}
	return tlvs, room, cut
}

// pad fills a hello up to the MTU with TLV 8 so an MTU mismatch stops the
// adjacency from coming up (ISO 10589 §8.2.3). room is what is left.
func (c *circuit) pad(tlvs packet.TLVs, room int) packet.TLVs {
	if !c.in.icfg.HelloPadding || c.mtu == 0 {
		return tlvs
	}
	return append(tlvs, packet.PaddingTLVs(room)...)
}

// p2pHello builds the point-to-point IIH.
func (c *circuit) p2pHello() *packet.P2PHello {
	tw := &packet.ThreeWay{State: 2, HasExtCircuit: true, ExtCircuitID: uint32(c.ifi.Index)}
	if a := c.p2p; a != nil {
		tw.State = uint8(a.state.threeWay())
		tw.HasNeighbor = true
		tw.NeighborID = a.sysID
		tw.NeighborExtCircuitID = a.extCircuitID
	}
	tlvs, room, cut := c.helloTLVs(c.helloRoom(packet.P2PHelloHeaderLen), tw)
	c.noteHelloCut(cut, 0)
	return &packet.P2PHello{
		Header:         packet.Header{Type: packet.TypeP2PHello},
		CircuitType:    c.circuitType(),
		SourceID:       c.in.sysID,
		HoldTime:       uint16(c.holdTime().Round(time.Second) / time.Second),
		LocalCircuitID: c.localID,
		TLVs:           c.pad(tlvs, room),
	}
}

func (c *circuit) sendP2PHello() {
	c.send(MACAllISs, c.p2pHello(), "p2p_hello")
}

// lanNeighbors picks the SNPAs of the IS Neighbours TLVs: every system
// heard at level l, in MAC order. When they do not all fit the hello
// (about 237 at MTU 1500), Up adjacencies go first, so a flood of new or
// spoofed neighbours cannot push out the ones that work.
func (c *circuit) lanNeighbors(l int, room int) (snpas [][6]byte, cut int) {
	ll := c.lan[l-1]
	const full = 2 + 6*packet.MaxSNPAsPerTLV
	capacity := 0
	if room > 0 {
		capacity = (room/full)*packet.MaxSNPAsPerTLV + max(0, (room%full-2)/6)
	}
	all := make([]*adjacency, 0, len(ll.adjs))
	for _, a := range ll.adjs {
		all = append(all, a)
	}
	if len(all) > capacity {
		slices.SortFunc(all, func(a, b *adjacency) int {
			if (a.state == AdjUp) != (b.state == AdjUp) {
				if a.state == AdjUp {
					return -1
				}
				return 1
			}
			return bytes.Compare(a.snpa[:], b.snpa[:])
		})
		cut = len(all) - capacity
		all = all[:capacity]
	}
	snpas = make([][6]byte, len(all))
	for i, a := range all {
		snpas[i] = a.snpa
	}
	slices.SortFunc(snpas, func(a, b [6]byte) int { return bytes.Compare(a[:], b[:]) })
	return snpas, cut
}

// lanHello builds the level-l LAN IIH. Every neighbour heard goes in IS
// Neighbours TLVs of at most 42 MACs each: a LAN IIH may repeat TLV 6
// (ISO 10589 §9.5-9.6; FRR packs its neighbours the same way), and one
// TLV holding 43 used to crash the encoder. Everything stays within the MTU.
func (c *circuit) lanHello(l int) *packet.LANHello {
	ll := c.lan[l-1]
	tlvs, room, cut := c.helloTLVs(c.helloRoom(packet.LANHelloHeaderLen))
	snpas, ncut := c.lanNeighbors(l, room)
	tlvs, _ = fitList(tlvs, &room, snpas, 6, packet.MaxSNPAsPerTLV, func(s [][6]byte) packet.TLV { return &packet.ISNeighbors{SNPAs: s} })
	c.noteHelloCut(cut, ncut)
	hold := c.holdTime()
	if ll.dis {
		hold /= 3
	}
	lanID := ll.lanID
	if lanID == (packet.NodeID{}) {
		lanID = packet.MakeNodeID(c.in.sysID, c.localID)
	}
	typ := uint8(packet.TypeL1LANHello)
	if l == 2 {
		typ = packet.TypeL2LANHello
	}
	return &packet.LANHello{
		Header:      packet.Header{Type: typ},
		CircuitType: c.circuitType(),
		SourceID:    c.in.sysID,
		HoldTime:    uint16(max(1, hold.Round(time.Second)/time.Second)),
		Priority:    c.cfg.Priority,
		LANID:       lanID,
		TLVs:        c.pad(tlvs, room),
	}
}

// noteHelloCut counts and logs (once) a hello that could not carry every
// address or neighbour within the MTU.
func (c *circuit) noteHelloCut(addrs, nbrs int) {
	if addrs+nbrs == 0 {
		return
	}
	c.count("tx_hello_truncated")
	c.logOnce("hello_truncated", "hello does not fit the MTU: addresses or neighbours left out", "mtu", c.mtu, "addresses_left_out", addrs, "neighbors_left_out", nbrs)
}

func (c *circuit) sendLANHello(l int) {
	dst := MACAllL1ISs
	if l == 2 {
		dst = MACAllL2ISs
	}
	c.send(dst, c.lanHello(l), fmt.Sprintf("l%d_lan_hello", l))
}

func (in *Instance) nlpids() []uint8 {
	if in.ipv6() {
		return []uint8{0xCC, 0x8E}
	}
	return []uint8{0xCC}
}

// ipv6 reports whether the instance routes IPv6: it has an IPv6 prefix to
// advertise or a global IPv6 address on an IS-IS interface.
func (in *Instance) ipv6() bool {
	for _, p := range in.icfg.Prefixes {
		if p.Prefix.Addr().Is6() {
			return true
		}
	}
	for _, c := range in.circuits {
		if len(c.addrs6) > 0 {
			return true
		}
	}
	return false
}

// isHello peeks at the PDU type (ISO 10589 §9.5: the fifth byte) without
// decoding; anything malformed takes the normal path.
func isHello(pdu []byte) bool {
	if len(pdu) < 5 {
		return false
	}
	switch pdu[4] & 0x1f {
	case packet.TypeL1LANHello, packet.TypeL2LANHello, packet.TypeP2PHello:
		return true
	}
	return false
}
