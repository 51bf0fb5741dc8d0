// Package fabric is the switch side of iNOF: the hosts a switch learns on
// its ports (from the host agent's L2 protocol and from LLDP), the
// records it exchanges with the other switches, the zone configuration,
// and the notifications it sends its hosts about their zone peers. It is
// a state machine driven by its owner's goroutine: no sockets, no
// goroutines, no clock of its own, so tests run it with a fake clock.
package fabric

import (
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// Tx sends a message out of a port.
type Tx interface {
	Send(port string, dst net.HardwareAddr, m *l2.Message)
}

// Exchange carries records to the other switches (package ibgp).
type Exchange interface {
	Publish(add []record.Record, withdraw []record.Key) error
}

// Config of a switch.
type Config struct {
	RouterID netip.Addr
	Name     string
	// Reflector: the switch holds the zone configuration (Zones, Stamp)
	// and originates it; other switches take it from the reflectors.
	Reflector bool
	Zones     *zones.Config
	Stamp     uint64
	// Ports face hosts: the L2 protocol and LLDP run on them.
	Ports []string
	// MinHold and MaxHold clamp the hold time hosts ask for.
	MinHold, MaxHold time.Duration
	// Retransmit is how long a notification waits for its ack.
	Retransmit time.Duration
	// Window is how many notifications a host may have unacknowledged.
	Window int
	// Tombstone is how long a departed host's record stays advertised
	// with its reason before it is withdrawn.
	Tombstone time.Duration
	// MaxHosts bounds the hosts registered on this switch.
	MaxHosts int
	// MaxHostsPerPort bounds the bindings of one port (its hosts, and
	// those away whose binding has not expired): one port cannot fill the
	// switch. Static bindings do not count.
	MaxHostsPerPort int
	// Attempts is how many times an unacknowledged notification is sent
	// again (each wait twice the last, from Retransmit) before the switch
	// gives up on the host.
	Attempts int
	// BindingHold is how long a binding stays after its host went; < 0:
	// until released.
	BindingHold time.Duration
	// DualHomeWindow is how long after an id was first bound an
	// unpinned claim of it (same MAC) may add a new switch/port: a
	// dual-homed host brings its links up together; later, a new port
	// needs a key, a static binding or a release. < 0: any time (the MAC
	// alone identifies the host).
	DualHomeWindow time.Duration
	// Static bindings pin ids to ports (and MACs) of this switch.
	Static []Static
	// Keys: hosts that sign their requests, by id.
	Keys map[string][]l2.Key
	// Conflicts is how many kinds of refused claim the view keeps.
	Conflicts int
	// Events is how many notifications the event log keeps.
	Events int
}

// Defaults fills unset fields.
func (c *Config) Defaults() {
	c.MinHold = cmp.Or(c.MinHold, 300*time.Millisecond)
	c.MaxHold = cmp.Or(c.MaxHold, 10*time.Minute)
	c.Retransmit = cmp.Or(c.Retransmit, 250*time.Millisecond)
	c.Window = cmp.Or(c.Window, 64)
	c.Tombstone = cmp.Or(c.Tombstone, 3*time.Second)
	c.MaxHosts = cmp.Or(c.MaxHosts, 10000)
	c.MaxHostsPerPort = cmp.Or(c.MaxHostsPerPort, 4)
	c.Attempts = cmp.Or(c.Attempts, 6)
	c.BindingHold = cmp.Or(c.BindingHold, 24*time.Hour)
	c.DualHomeWindow = cmp.Or(c.DualHomeWindow, time.Minute)
	c.Conflicts = cmp.Or(c.Conflicts, 256)
	c.Events = cmp.Or(c.Events, 20000)
	if c.Zones == nil {
		c.Zones = zones.New(false)
	}
}

// localKey identifies a host on one of our ports.
type localKey struct {
	port string
	id   string
}

// local is a host registered on one of our ports.
type local struct {
	key localKey
	// host is what it registered; host.MAC is its identity MAC (the
	// Register's MAC TLV, else the frame's source).
	host l2.Host
	// src is the frame source it registered from: answers go there, and
	// its keepalives, deregistration and acks must come from it.
	src     net.HardwareAddr
	source  l2.Source
	pinned  bool
	hold    time.Duration
	expires time.Time
	since   time.Time
	rec     *record.Host // what we advertise for it
	note    notes        // notification state (agent hosts only)
	lldpTTL time.Duration
	chassis string // LLDP chassis id: what a shutdown LLDPDU names
}

// Switch is one switch's iNOF state.
type Switch struct {
	cfg   Config
	log   *slog.Logger
	tx    Tx
	ex    Exchange
	nonce uint32
	now   time.Time

	locals  map[localKey]*local
	records map[record.Key]*record.Host // every Up or departing host record: ours and the fabric's
	tombs   map[record.Key]time.Time    // our departed records, withdrawn at the time given

	collector *zones.Collector
	ix        *zones.Index
	zoneFrom  netip.Addr // reflector whose configuration is in use
	zoneStamp uint64
	ready     bool // a zone configuration is known

	seq     uint32
	pendAdd map[record.Key]record.Record
	pendDel map[record.Key]bool

	// Identity (identity.go).
	ids       map[string]*idState
	portBinds map[string][]*bind
	static    map[string]*Static
	conflicts map[conflictKey]*Conflict
	ports     map[string]*PortStats
	nextExp   time.Time

	// Notification state (notify.go): host records as small indices.
	peers *peerTable

	events   []Event
	evStart  int // ring start once full
	counters map[string]uint64
	lim      limiter
	unknownZ map[string]bool
}

// New returns a switch. nonce identifies this run to its hosts.
func New(cfg Config, log *slog.Logger, tx Tx, ex Exchange, nonce uint32, now time.Time) *Switch {
	cfg.Defaults()
	s := &Switch{cfg: cfg, log: log, tx: tx, ex: ex, nonce: nonce, now: now,
		locals: map[localKey]*local{}, records: map[record.Key]*record.Host{}, tombs: map[record.Key]time.Time{},
		collector: zones.NewCollector(), pendAdd: map[record.Key]record.Record{}, pendDel: map[record.Key]bool{},
		counters: map[string]uint64{}, unknownZ: map[string]bool{},
		ids: map[string]*idState{}, portBinds: map[string][]*bind{}, static: map[string]*Static{},
		conflicts: map[conflictKey]*Conflict{}, ports: map[string]*PortStats{}, peers: newPeerTable()}
	if cfg.Reflector {
		s.useZones(cfg.Zones, cfg.RouterID, cfg.Stamp)
		s.originateZones(nil)
	}
	s.setStatic(cfg.Static)
	return s
}

func (s *Switch) count(name string) { s.counters[name]++ }

// Frame handles an L2 protocol message received on a port.
func (s *Switch) Frame(port string, src net.HardwareAddr, m *l2.Message) {
	s.count("frames_rx")
	switch m.Type {
	case l2.TypeRegister:
		s.register(port, src, m)
	case l2.TypeKeepalive:
		s.keepalive(port, src, m)
	case l2.TypeDeregister:
		s.deregister(port, src, m)
	case l2.TypeNotifyAck:
		s.notifyAck(port, src, m)
	default:
		// Answers a host never sends: count them, they do no harm.
		s.count("frames_unexpected")
	}
}

// BadFrame counts and logs (rate-limited) a frame that did not decode.
func (s *Switch) BadFrame(port string, err error) {
	s.count("bad_frames")
	if s.lim.allow("frame:"+port, s.now) {
		s.log.Warn("inof: malformed frame", "port", port, "err", err)
	}
}

func (s *Switch) reply(port string, dst net.HardwareAddr, m *l2.Message) {
	s.count("frames_tx")
	s.tx.Send(port, dst, m)
}

func (s *Switch) register(port string, src net.HardwareAddr, m *l2.Message) {
	k := localKey{port, m.Host.ID}
	keyed, signed := s.verify(port, m)
	if keyed && !signed {
		s.authFailed(port, m)
		s.refuse(port, src, m)
		return
	}
	host := m.Host
	if len(host.MAC) == 0 {
		host.MAC = src
	}
	c := claim{port: port, id: host.ID, mac: host.MAC, src: src, signed: signed, source: l2.SourceAgent}
	if r := s.admit(c); r != nil {
		s.refused(c, r)
		s.refuse(port, src, m)
		return
	}
	b := s.bindTo(c)
	if signed {
		b.counter = m.Auth.Counter
	}
	hold := min(max(m.Hold, s.cfg.MinHold), s.cfg.MaxHold)
	l := s.locals[k]
	if l != nil && l.source != l2.SourceAgent {
		// An agent takes over from LLDP: its registration says more.
		s.dropNotes(l)
		l = nil
	}
	if l == nil {
		s.count("registrations")
		l = &local{key: k, since: b.since, note: newNotes()}
		s.locals[k] = l
		s.log.Info("inof: host registered", "host", host.ID, "port", port, "role", host.Role, "addrs", host.Addrs, "mac", host.MAC.String(), "pinned", b.pinned)
	}
	resync := l.note.mute
	l.host, l.src, l.source, l.hold, l.expires, l.pinned = host, slices.Clone(src), l2.SourceAgent, hold, s.now.Add(hold), b.pinned
	l.note.mute = false
	s.reply(port, src, &l2.Message{Type: l2.TypeRegisterAck, Seq: m.Seq, Status: l2.StatusOK, Switch: s.cfg.RouterID,
		SwitchName: s.cfg.Name, Port: port, Hold: hold, Nonce: s.nonce})
	s.advertise(l)
	if resync {
		// It stopped acknowledging, was asked to register again: it is
		// told everything again.
		s.syncHost(l)
	}
}

// refuse answers a Register that was refused.
func (s *Switch) refuse(port string, src net.HardwareAddr, m *l2.Message) {
	s.reply(port, src, &l2.Message{Type: l2.TypeRegisterAck, Seq: m.Seq, Status: l2.StatusRefused, Switch: s.cfg.RouterID,
		Port: port, Hold: max(m.Hold, time.Millisecond), Nonce: s.nonce})
}

// refused counts a refused claim: a cap (per port too), or a conflict
// (the conflicts view, logged once).
func (s *Switch) refused(c claim, r *refusal) {
	if r.reason == "" {
		s.count(r.counter)
		if r.counter == "refused_port_cap" {
			s.portStat(c.port).Refused++
			if s.lim.allow("cap:"+c.port, s.now) {
				s.log.Warn("inof: port full, registration refused", "port", c.port, "host", c.id, "max-hosts-per-port", s.cfg.MaxHostsPerPort)
			}
		}
		return
	}
	s.noteConflict(conflictKey{c.port, c.id, c.mac.String()}, r.counter, r.reason, r.against)
}

// owner returns the registration a host's request names, if the request
// comes from it: from its MAC and, for a host with a key, signed. A
// request from another MAC (a shared port) or unsigned is counted and
// refused (nil, true); no registration is (nil, false).
func (s *Switch) owner(port string, src net.HardwareAddr, m *l2.Message) (l *local, refused bool) {
	l = s.locals[localKey{port, m.Host.ID}]
	if l == nil || l.source != l2.SourceAgent {
		return nil, false
	}
	if !bytes.Equal(l.src, src) {
		s.foreign(port, src, m)
		return nil, true
	}
	if m.Type == l2.TypeNotifyAck {
		return l, false
	}
	if keyed, ok := s.verify(port, m); keyed {
		if !ok {
			s.authFailed(port, m)
			return nil, true
		}
		if b := s.bindAt(port, m.Host.ID); b != nil {
			b.counter = m.Auth.Counter
		}
	}
	return l, false
}

// ownerStatus is the owner of a keepalive's or deregistration's host
// and the status it answers: refused or unknown (no owner), else OK.
func (s *Switch) ownerStatus(port string, src net.HardwareAddr, m *l2.Message) (*local, l2.Status) {
	l, refused := s.owner(port, src, m)
	switch {
	case refused:
		return nil, l2.StatusRefused
	case l == nil:
		return nil, l2.StatusUnknownHost
	}
	return l, l2.StatusOK
}

func (s *Switch) keepalive(port string, src net.HardwareAddr, m *l2.Message) {
	l, st := s.ownerStatus(port, src, m)
	switch {
	case l == nil:
	case l.note.mute:
		// It gave up acknowledging notifications: registering again
		// resends it everything; until then its hold runs out.
		st = l2.StatusUnknownHost
	default:
		l.expires = s.now.Add(l.hold)
	}
	s.reply(port, src, &l2.Message{Type: l2.TypeKeepaliveAck, Seq: m.Seq, Status: st, Nonce: s.nonce})
}

func (s *Switch) deregister(port string, src net.HardwareAddr, m *l2.Message) {
	l, st := s.ownerStatus(port, src, m)
	if l != nil {
		s.count("deregistrations")
		s.log.Info("inof: host deregistered", "host", m.Host.ID, "port", port)
		s.depart(l, record.StateLeft)
	}
	s.reply(port, src, &l2.Message{Type: l2.TypeDeregisterAck, Seq: m.Seq, Status: st, Nonce: s.nonce})
}

// LLDP handles an LLDPDU received on a port.
func (s *Switch) LLDP(port string, h l2.LLDPHost) {
	s.count("lldp_rx")
	if !h.Found {
		if h.TTL == 0 {
			// A shutdown LLDPDU: the host that sent it leaves (only from
			// the MAC it was learnt from: a shared port).
			for _, l := range s.sortedLocals() {
				if l.key.port == port && l.source == l2.SourceLLDP && l.chassis == h.ChassisID {
					if !bytes.Equal(l.src, h.Src) {
						s.foreign(port, h.Src, &l2.Message{Type: 0, Host: l.host})
						continue
					}
					s.log.Info("inof: LLDP host shut down", "host", l.host.ID, "port", port)
					s.depart(l, record.StateLeft)
				}
			}
		}
		return
	}
	k := localKey{port, h.Host.ID}
	l := s.locals[k]
	if l != nil && l.source == l2.SourceAgent {
		return // the agent's registration says more than LLDP
	}
	if h.TTL == 0 {
		if l != nil {
			if !bytes.Equal(l.src, h.Src) {
				s.foreign(port, h.Src, &l2.Message{Host: h.Host})
				return
			}
			s.depart(l, record.StateLeft)
		}
		return
	}
	host := h.Host
	if len(host.MAC) == 0 {
		if mac, err := net.ParseMAC(h.ChassisID); err == nil && len(mac) == 6 {
			host.MAC = mac
		} else {
			host.MAC = h.Src
		}
	}
	c := claim{port: port, id: host.ID, mac: host.MAC, src: h.Src, source: l2.SourceLLDP}
	if r := s.admit(c); r != nil {
		s.refused(c, r)
		return
	}
	b := s.bindTo(c)
	if l == nil {
		s.count("lldp_hosts")
		l = &local{key: k, since: b.since, note: newNotes()}
		s.locals[k] = l
		s.log.Info("inof: LLDP host", "host", h.Host.ID, "port", port, "role", h.Host.Role, "addrs", h.Host.Addrs, "mac", host.MAC.String())
	}
	// The TTL is the hold time the host asks for: clamped like an agent's.
	hold := min(max(h.TTL, s.cfg.MinHold), s.cfg.MaxHold)
	l.host, l.src, l.source, l.lldpTTL, l.hold, l.expires, l.chassis, l.pinned =
		host, slices.Clone(h.Src), l2.SourceLLDP, h.TTL, hold, s.now.Add(hold), h.ChassisID, b.pinned
	s.advertise(l)
}

// BadLLDP counts and logs an LLDPDU whose iNOF TLV did not decode.
func (s *Switch) BadLLDP(port string, err error) {
	s.count("bad_lldp")
	if s.lim.allow("lldp:"+port, s.now) {
		s.log.Warn("inof: malformed LLDP iNOF TLV", "port", port, "err", err)
	}
}

// LinkDown: every host on the port is unreachable.
func (s *Switch) LinkDown(port string) {
	for _, l := range s.sortedLocals() {
		if l.key.port == port {
			s.log.Info("inof: host link down", "host", l.host.ID, "port", port)
			s.depart(l, record.StateUnreachable)
		}
	}
}

// advertise (re)originates a local host's record and tells everyone
// concerned.
func (s *Switch) advertise(l *local) {
	r := &record.Host{Switch: s.cfg.RouterID, SwitchName: s.cfg.Name, Port: l.key.port, Host: l.host,
		Source: l.source, State: record.StateUp, Zones: s.zonesOf(l.host.ID), Since: l.since.Truncate(time.Millisecond),
		Pinned: l.pinned}
	if l.rec != nil && string(record.AppendTo(nil, l.rec)) == string(record.AppendTo(nil, r)) {
		return
	}
	l.rec = r
	if b := s.bindAt(l.key.port, l.key.id); b != nil {
		b.rec = r
	}
	k := r.Key()
	delete(s.tombs, k)
	s.queueAdd(r)
	s.recordChanged(k, r)
	if l.source == l2.SourceAgent && l.rec != nil {
		s.syncHost(l)
	}
}

// depart: a local host left (StateLeft) or failed (StateUnreachable):
// its record is re-advertised with the reason, withdrawn after the
// tombstone time.
func (s *Switch) depart(l *local, st record.State) {
	delete(s.locals, l.key)
	s.dropNotes(l)
	b := s.bindAt(l.key.port, l.key.id)
	if b != nil {
		b.left = s.now
	}
	if l.rec == nil {
		return
	}
	r := *l.rec
	r.State = st
	k := r.Key()
	if b != nil {
		b.rec = &r
	}
	s.queueAdd(&r)
	s.tombs[k] = s.now.Add(s.cfg.Tombstone)
	s.recordChanged(k, &r)
}

func (s *Switch) queueAdd(r record.Record) {
	k := r.Key()
	delete(s.pendDel, k)
	s.pendAdd[k] = r
}

func (s *Switch) queueDel(k record.Key) {
	delete(s.pendAdd, k)
	s.pendDel[k] = true
}

// zonesOf is a host's zones (nil until a configuration is known).
func (s *Switch) zonesOf(id string) []string {
	if s.ix == nil {
		return nil
	}
	return s.ix.Of(id)
}

// Tick runs the timers: keepalive and LLDP expiry, tombstones,
// retransmissions.
func (s *Switch) Tick(now time.Time) {
	s.now = now
	for _, l := range s.sortedLocals() {
		if now.After(l.expires) {
			s.count("expirations")
			s.log.Info("inof: host hold time expired", "host", l.host.ID, "port", l.key.port, "source", l.source)
			s.depart(l, record.StateUnreachable)
		}
	}
	for k, t := range s.tombs {
		if now.After(t) {
			delete(s.tombs, k)
			s.tombstoneEnds(k)
		}
	}
	for _, l := range s.locals {
		s.retransmit(l)
	}
	if now.After(s.nextExp) {
		s.nextExp = now.Add(time.Second)
		s.expireBindings()
	}
}

// tombstoneEnds: a departed host's record has said why long enough; the
// binding stays advertised (state bound) while it lasts.
func (s *Switch) tombstoneEnds(k record.Key) {
	r := s.records[k]
	if r != nil {
		if b := s.bindAt(r.Port, r.Host.ID); b != nil && s.locals[b.key] == nil {
			s.advertiseBound(b)
			return
		}
	}
	s.queueDel(k)
	s.recordChanged(k, nil)
}

// Settle sends what the last events queued to the exchange, in one call.
func (s *Switch) Settle(now time.Time) {
	s.now = now
	if len(s.pendAdd) == 0 && len(s.pendDel) == 0 {
		return
	}
	add := make([]record.Record, 0, len(s.pendAdd))
	for _, r := range s.pendAdd {
		add = append(add, r)
	}
	del := make([]record.Key, 0, len(s.pendDel))
	for k := range s.pendDel {
		del = append(del, k)
	}
	s.pendAdd, s.pendDel = map[record.Key]record.Record{}, map[record.Key]bool{}
	if err := s.ex.Publish(add, del); err != nil {
		s.count("publish_errors")
		s.log.Error("inof: publishing records", "err", err)
	}
}

// SetNow moves the clock without running timers (events carry no time).
func (s *Switch) SetNow(now time.Time) { s.now = now }

func (s *Switch) sortedLocals() []*local {
	return slices.SortedFunc(maps.Values(s.locals), func(a, b *local) int {
		return cmp.Or(cmp.Compare(a.key.port, b.key.port), cmp.Compare(a.key.id, b.key.id))
	})
}

// RecordUpdate: the exchange has a new best route for a record.
func (s *Switch) RecordUpdate(k record.Key, r record.Record) {
	if k.Origin == s.cfg.RouterID {
		return // our own records live in s.locals, not in what BGP echoes
	}
	switch r := r.(type) {
	case *record.Host:
		s.checkZones(r)
		s.remoteHost(k, r)
		s.recordChanged(k, r)
	case *record.Zone, *record.Manifest:
		s.collector.Put(r)
		s.zonesChanged()
	}
}

// RecordWithdraw: no route of a record is left.
func (s *Switch) RecordWithdraw(k record.Key) {
	if k.Origin == s.cfg.RouterID {
		return
	}
	switch k.Kind {
	case record.KindHost:
		s.remoteHost(k, nil)
		s.recordChanged(k, nil)
	default:
		s.collector.Remove(k)
		s.zonesChanged()
	}
}

// BadRecord counts and logs a route the exchange could not decode.
func (s *Switch) BadRecord(from netip.Addr, nlri string, err error) {
	s.count("bad_records")
	if s.lim.allow("record:"+from.String(), s.now) {
		s.log.Warn("inof: malformed BGP record, ignored", "from", from, "nlri", nlri, "err", err)
	}
}

func (s *Switch) checkZones(r *record.Host) {
	if s.ix == nil {
		return
	}
	for _, z := range r.Zones {
		if _, ok := s.ix.Config().Zones[z]; !ok {
			s.count("unknown_zones")
			if !s.unknownZ[z] {
				s.unknownZ[z] = true
				s.log.Warn("inof: record names a zone this switch does not know; memberships come from the zone configuration", "zone", z, "host", r.Host.ID, "switch", r.Switch)
			}
		}
	}
}

// zonesChanged recomputes the configuration from the reflectors'
// records (non-reflectors only).
func (s *Switch) zonesChanged() {
	if s.cfg.Reflector {
		return
	}
	cfg, origin, stamp, ok := s.collector.Best()
	if !ok {
		return // keep what we have: a reflector's update is not complete yet, or all are gone
	}
	if s.ready && origin == s.zoneFrom && stamp == s.zoneStamp {
		return
	}
	s.useZones(cfg, origin, stamp)
}

// useZones installs a configuration: local records get their new zones,
// every host's notifications are brought in line.
func (s *Switch) useZones(cfg *zones.Config, origin netip.Addr, stamp uint64) {
	same := s.ix != nil && s.ix.Config().Equal(cfg)
	oldIx := s.ix
	s.ix, s.zoneFrom, s.zoneStamp, s.ready = cfg.Index(), origin, stamp, true
	if same {
		return
	}
	s.log.Info("inof: zone configuration", "from", origin, "stamp", stamp, "zones", len(cfg.Zones))
	clear(s.unknownZ)
	for _, l := range s.sortedLocals() {
		if l.rec != nil && !slices.Equal(l.rec.Zones, s.zonesOf(l.host.ID)) {
			l.rec = nil
			s.advertise(l)
		}
	}
	for _, l := range s.sortedLocals() {
		if l.source == l2.SourceAgent {
			s.syncHostFrom(l, oldIx)
		}
	}
}

// Zones returns the configuration in use and where it comes from.
func (s *Switch) Zones() (*zones.Config, netip.Addr, uint64, bool) {
	if s.ix == nil {
		return nil, s.zoneFrom, 0, false
	}
	return s.ix.Config(), s.zoneFrom, s.zoneStamp, s.ready
}

// SetZones replaces a reflector's configuration (reload or API).
func (s *Switch) SetZones(cfg *zones.Config, stamp uint64) error {
	if !s.cfg.Reflector {
		return fmt.Errorf("zones are configured on a reflector")
	}
	old := s.cfg.Zones
	s.cfg.Zones, s.cfg.Stamp = cfg, stamp
	s.useZones(cfg, s.cfg.RouterID, stamp)
	s.originateZones(old)
	return nil
}

// originateZones advertises the reflector's configuration (all of it,
// with the new stamp) and withdraws chunks that no longer exist.
func (s *Switch) originateZones(old *zones.Config) {
	recs := s.cfg.Zones.Records(s.cfg.RouterID, s.cfg.Stamp)
	keep := map[record.Key]bool{}
	for _, r := range recs {
		keep[r.Key()] = true
		s.queueAdd(r)
	}
	if old != nil {
		for _, r := range old.Records(s.cfg.RouterID, 0) {
			if !keep[r.Key()] {
				s.queueDel(r.Key())
			}
		}
	}
}

// Reconfigure applies settings that can change live.
func (s *Switch) Reconfigure(cfg Config) {
	cfg.Defaults()
	zcfg, stamp := s.cfg.Zones, s.cfg.Stamp
	s.cfg.Name, s.cfg.MinHold, s.cfg.MaxHold, s.cfg.Retransmit, s.cfg.Window, s.cfg.Tombstone, s.cfg.MaxHosts =
		cfg.Name, cfg.MinHold, cfg.MaxHold, cfg.Retransmit, cfg.Window, cfg.Tombstone, cfg.MaxHosts
	s.cfg.MaxHostsPerPort, s.cfg.Attempts, s.cfg.BindingHold, s.cfg.Keys, s.cfg.Conflicts =
		cfg.MaxHostsPerPort, cfg.Attempts, cfg.BindingHold, cfg.Keys, cfg.Conflicts
	s.setStatic(cfg.Static)
	removed := map[string]bool{}
	for _, p := range s.cfg.Ports {
		removed[p] = !slices.Contains(cfg.Ports, p)
	}
	s.cfg.Ports = cfg.Ports
	for p, gone := range removed {
		if gone {
			s.LinkDown(p)
		}
	}
	if s.cfg.Reflector && !zcfg.Equal(cfg.Zones) {
		s.SetZones(cfg.Zones, cfg.Stamp)
	} else {
		s.cfg.Stamp = stamp
	}
}

// limiter allows one log line per key per second.
type limiter map[string]time.Time

func (l *limiter) allow(key string, now time.Time) bool {
	if *l == nil {
		*l = map[string]time.Time{}
	}
	if t, ok := (*l)[key]; ok && now.Sub(t) < time.Second {
		return false
	}
	(*l)[key] = now
	return true
}
