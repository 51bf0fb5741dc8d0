package isis

import (
	"bytes"
	"net"
	"net/netip"
	"time"

	"github.com/fared/fared/isis/packet"
)

// AdjState is an adjacency state (RFC 5303 names).
type AdjState uint8

const (
	AdjDown AdjState = iota
	AdjInit
	AdjUp
)

func (s AdjState) String() string {
	switch s {
	case AdjInit:
		return "Initializing"
	case AdjUp:
		return "Up"
	}
	return "Down"
}

// threeWay maps our state to the TLV 240 encoding (0 Up, 1 Init, 2 Down).
func (s AdjState) threeWay() int {
	switch s {
	case AdjUp:
		return 0
	case AdjInit:
		return 1
	}
	return 2
}

type adjacency struct {
	sysID        packet.SystemID
	snpa         [6]byte
	state        AdjState
	level        int   // P2P: levels in use (bitmask 1|2); LAN: the level
	nbrType      uint8 // neighbour's circuit type
	hold         time.Duration
	expires      time.Time
	priority     uint8
	lanID        packet.NodeID
	areas        [][]byte
	addrs4       []netip.Addr
	addrs6       []netip.Addr
	mts          []uint16 // topologies of the neighbour's TLV 229 (mt.go)
	extCircuitID uint32
	since        time.Time
	flaps        int
}

func (a *adjacency) usesLevel(l int) bool { return a.level&l != 0 }

// helloCommon applies the checks shared by both hello kinds; ok=false means
// the hello was rejected (and counted).
func (c *circuit) helloCommon(src packet.SystemID, tlvs packet.TLVs, mac [6]byte) (areas [][]byte, a4, a6 []netip.Addr, ok bool) {
	if src == c.in.sysID {
		c.reject("own_system_id", "hello carries our own system id (looped back or duplicate system id)", "from", macString(mac))
		return nil, nil, nil, false
	}
	for _, t := range tlvs {
		switch v := t.(type) {
		case *packet.AreaAddresses:
			areas = append(areas, v.Areas...)
		case *packet.IPv4Addresses:
			a4 = append(a4, v.Addrs...)
		case *packet.IPv6Addresses:
			a6 = append(a6, v.Addrs...)
		}
	}
	if len(areas) == 0 {
		c.reject("no_area", "hello without area addresses", "from", macString(mac))
		return nil, nil, nil, false
	}
	return areas, a4, a6, true
}

func (in *Instance) areaMatch(areas [][]byte) bool {
	for _, a := range areas {
		for _, b := range in.areas {
			if bytes.Equal(a, b) {
				return true
			}
		}
	}
	return false
}

// p2pLevels is the set of levels an adjacency on a P2P circuit may use:
// common circuit types, and L1 only within one area (ISO 10589 §8.2.5.2).
func (c *circuit) p2pLevels(nbrType uint8, areas [][]byte) int {
	l := int(nbrType) & int(c.circuitType())
	if l&1 != 0 && !c.in.areaMatch(areas) {
		l &^= 1
	}
	return l
}

func (c *circuit) rxP2PHello(h *packet.P2PHello, mac [6]byte) {
	if !c.isP2P() {
		c.reject("p2p_hello_on_lan", "P2P hello on a LAN interface", "from", macString(mac))
		return
	}
	areas, a4, a6, ok := c.helloCommon(h.SourceID, h.TLVs, mac)
	if !ok {
		return
	}
	levels := c.p2pLevels(h.CircuitType, areas)
	if levels == 0 {
		if int(h.CircuitType)&int(c.circuitType())&1 != 0 {
			c.reject("area_mismatch", "no common area for a level-1 adjacency", "areas", formatAreas(areas), "from", macString(mac))
		} else {
			c.reject("level_mismatch", "no common level", "circuit_type", h.CircuitType, "from", macString(mac))
		}
		return
	}
	var tw *packet.ThreeWay
	for _, t := range h.TLVs {
		if v, ok := t.(*packet.ThreeWay); ok {
			tw = v
		}
	}
	now := c.in.opt.Now()
	a := c.p2p
	if a != nil && a.sysID != h.SourceID {
		// A different router now answers on this link: the old one is gone.
		c.adjDown(a, now, "neighbour system id changed")
		c.p2p, a = nil, nil
	}
	if a != nil && a.state == AdjUp && a.level != levels {
		// ISO 10589 §8.2.5.2: the levels an Up adjacency may use changed
		// (a circuit type or area changed at either end). It goes down and
		// comes back, so that each level's database is synchronised from
		// the start (CSNPs at adjacency up); FRR does the same ("Wrong
		// System"). Keeping it Up left a level it gained unsynchronised.
		c.adjDown(a, now, "usable levels changed")
		c.p2p, a = nil, nil
	}
	if tw != nil && tw.HasNeighbor && (tw.NeighborID != c.in.sysID || (tw.HasExtCircuit && tw.NeighborExtCircuitID != 0 && tw.NeighborExtCircuitID != uint32(c.ifi.Index))) {
		// RFC 5303 §3.2: the neighbour speaks of another adjacency; ignore.
		c.reject("three_way_mismatch", "three-way TLV names another system or circuit", "neighbor", tw.NeighborID.String(), "from", macString(mac))
		return
	}
	if a == nil {
		a = &adjacency{sysID: h.SourceID, snpa: mac, state: AdjDown}
		c.p2p = a
	}
	a.nbrType, a.areas, a.addrs4, a.addrs6 = h.CircuitType, areas, a4, a6
	a.mts = neighborMTs(h.TLVs)
	a.hold = time.Duration(h.HoldTime) * time.Second
	a.expires = now.Add(a.hold)
	if tw != nil && tw.HasExtCircuit {
		a.extCircuitID = tw.ExtCircuitID
	}
	old := a.state
	next := old
	recv := AdjDown
	if tw == nil {
		// No TLV 240: classic two-way P2P (ISO 10589): up on first hello.
		recv = AdjUp
		next = AdjUp
	} else {
		switch tw.State {
		case 0:
			recv = AdjUp
		case 1:
			recv = AdjInit
		}
		// RFC 5303 §3.2 state table.
		switch {
		case recv == AdjDown:
			next = AdjInit
		case recv == AdjInit:
			next = AdjUp
		case recv == AdjUp && old == AdjDown:
			next = AdjDown
		case recv == AdjUp:
			next = AdjUp
		}
	}
	if old == AdjUp && next == AdjInit {
		c.adjDown(a, now, "neighbour restarted its adjacency")
	}
	levelsChanged := a.level != levels
	a.level = levels
	a.state = next
	if next != old || (next == AdjUp && levelsChanged) {
		c.adjChanged(a, old, now)
		// Answer at once so the three-way handshake takes one round trip.
		c.sendP2PHello()
		c.helloDue[0] = now.Add(jitter(c.cfg.HelloInterval))
	}
}

func (c *circuit) rxLANHello(h *packet.LANHello, mac [6]byte) {
	if c.isP2P() {
		c.reject("lan_hello_on_p2p", "LAN hello on a P2P interface", "from", macString(mac))
		return
	}
	l := h.Header.Level()
	if !c.levelOn(l) || int(h.CircuitType)&l == 0 {
		c.reject("level_mismatch", "LAN hello for a level we do not run", "level", l, "from", macString(mac))
		return
	}
	areas, a4, a6, ok := c.helloCommon(h.SourceID, h.TLVs, mac)
	if !ok {
		return
	}
	if l == 1 && !c.in.areaMatch(areas) {
		c.reject("area_mismatch", "no common area for a level-1 adjacency", "areas", formatAreas(areas), "from", macString(mac))
		return
	}
	now := c.in.opt.Now()
	ll := c.lan[l-1]
	a := ll.adjs[mac]
	if a != nil && a.sysID != h.SourceID {
		c.adjDown(a, now, "system id changed on this SNPA")
		delete(ll.adjs, mac)
		a = nil
	}
	if a == nil {
		a = &adjacency{sysID: h.SourceID, snpa: mac, state: AdjDown, level: l}
		ll.adjs[mac] = a
	}
	a.nbrType, a.areas, a.addrs4, a.addrs6 = h.CircuitType, areas, a4, a6
	a.mts = neighborMTs(h.TLVs)
	a.hold = time.Duration(h.HoldTime) * time.Second
	a.expires = now.Add(a.hold)
	prioChanged := a.priority != h.Priority || a.lanID != h.LANID
	a.priority, a.lanID = h.Priority, h.LANID
	seesUs := false
	for _, t := range h.TLVs {
		if v, ok := t.(*packet.ISNeighbors); ok {
			for _, s := range v.SNPAs {
				if s == c.mac {
					seesUs = true
				}
			}
		}
	}
	old := a.state
	next := AdjInit
	if seesUs {
		next = AdjUp
	}
	a.state = next
	if old == AdjUp && next != AdjUp {
		c.adjDown(a, now, "neighbour no longer lists us")
		a.state = next
	}
	if next != old {
		c.adjChanged(a, old, now)
		if old == AdjDown {
			// Tell the newcomer we heard it, without waiting a full interval.
			c.helloDue[l-1] = now
		}
	}
	if next != old || prioChanged {
		if ll.electAt.IsZero() {
			c.elect(l, now)
		}
	}
}

// adjChanged reacts to an adjacency state change.
func (c *circuit) adjChanged(a *adjacency, old AdjState, now time.Time) {
	if a.state == AdjUp && old != AdjUp {
		a.since = now
		c.in.log.Info("adjacency up", "iface", c.name, "neighbor", a.sysID.String(), "level", a.level)
		c.count("adjacency_up")
		c.repairUp(a)
		if c.isP2P() {
			// ISO 10589 §7.3.17: a new P2P adjacency exchanges CSNPs so both
			// sides learn what the other lacks.
			for l := 1; l <= 2; l++ {
				if a.usesLevel(l) {
					c.csnpDue[l-1] = now
				}
			}
		}
	}
	c.in.scheduleAll()
}

// adjDown tears an adjacency down: its flooding state goes with it.
func (c *circuit) adjDown(a *adjacency, now time.Time, reason string) {
	if a.state == AdjUp {
		c.in.log.Info("adjacency down", "iface", c.name, "neighbor", a.sysID.String(), "reason", reason)
		c.count("adjacency_down")
		a.flaps++
		c.repairDown(a)
	}
	a.state = AdjDown
	if c.isP2P() {
		for l := 0; l < 2; l++ {
			clear(c.srm[l])
			clear(c.ssn[l])
			c.csnpDue[l] = time.Time{}
		}
	}
	c.in.scheduleAll()
}

// elect runs the DIS election for level l (ISO 10589 §8.4.5): the highest
// priority wins, then the highest SNPA, among us and the adjacencies Up.
func (c *circuit) elect(l int, now time.Time) {
	ll := c.lan[l-1]
	if !ll.electAt.IsZero() {
		return
	}
	bestPrio, bestMAC := c.cfg.Priority, c.mac
	var best *adjacency
	ups := 0
	for _, a := range ll.adjs {
		if a.state != AdjUp {
			continue
		}
		ups++
		if a.priority > bestPrio || (a.priority == bestPrio && bytes.Compare(a.snpa[:], bestMAC[:]) > 0) {
			bestPrio, bestMAC, best = a.priority, a.snpa, a
		}
	}
	if ups == 0 {
		// Alone on the LAN: no DIS, nothing to describe.
		if ll.dis || ll.lanID != (packet.NodeID{}) {
			c.resignDIS(l, now)
			ll.lanID = packet.NodeID{}
			c.in.scheduleAll()
		}
		return
	}
	if best == nil {
		if !ll.dis {
			ll.dis = true
			ll.disSince = now
			ll.disMAC = c.mac
			ll.lanID = packet.MakeNodeID(c.in.sysID, c.localID)
			c.csnpDue[l-1] = now
			c.helloDue[l-1] = now
			c.in.log.Info("elected DIS", "iface", c.name, "level", l, "lan_id", ll.lanID.String())
			c.count("dis_changes")
			c.in.scheduleAll()
		}
		return
	}
	lanID := best.lanID
	if ll.dis {
		c.resignDIS(l, now)
	}
	if lanID != ll.lanID || ll.disMAC != best.snpa {
		ll.lanID, ll.disMAC, ll.disSince = lanID, best.snpa, now
		c.in.log.Info("DIS is a neighbour", "iface", c.name, "level", l, "dis", best.sysID.String(), "lan_id", lanID.String())
		c.count("dis_changes")
		c.in.scheduleAll()
	}
}

// resignDIS gives up the DIS role; our pseudonode LSP is purged by the next
// origination because the circuit no longer asks for it.
func (c *circuit) resignDIS(l int, now time.Time) {
	ll := c.lan[l-1]
	if !ll.dis {
		return
	}
	ll.dis = false
	c.in.log.Info("resigned DIS", "iface", c.name, "level", l)
	c.count("dis_changes")
	c.in.scheduleAll()
}

func macString(m [6]byte) string { return net.HardwareAddr(m[:]).String() }

func formatAreas(as [][]byte) []string {
	var out []string
	for _, a := range as {
		out = append(out, packet.FormatArea(a))
	}
	return out
}
