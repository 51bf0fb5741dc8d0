// Package agent is the host side of iNOF (fared with `inof: {role:
// host}`): it registers the host on every switch-facing interface, keeps
// the registrations alive, acknowledges notifications and keeps the table
// of zone peers they describe. A peer path is up while any of the host's
// switches says so; each change is an event for the hook (nvme connect,
// disconnect). Like package fabric it is a state machine without sockets,
// goroutines or a clock of its own.
package agent

import (
	"cmp"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/fared/fared/inof/l2"
)

// Tx sends a message out of an interface.
type Tx interface {
	Send(iface string, dst net.HardwareAddr, m *l2.Message)
}

// Config of the agent.
type Config struct {
	ID         string
	Role       l2.Role
	NQN        string
	Interfaces []string
	// Hold is the registration lifetime asked for; keepalives go every
	// Hold/3, and a registration is lost after Hold without an answer.
	Hold time.Duration
	// Retry is the interval between unanswered Register (or Deregister)
	// messages.
	Retry time.Duration
	// Events is how many events the log keeps.
	Events int
	// MAC is the host's identity MAC, sent in every registration: a
	// switch binds the host's id to it (docs/inof.md, "Identity"), and a
	// dual-homed host must show the same one to all its switches. Nil:
	// the MAC of the first interface of Interfaces that has one.
	MAC net.HardwareAddr
	// Key, if set, signs every registration, keepalive and deregistration
	// (the switches hold the same key for this id).
	Key *l2.Key
}

// Defaults fills unset fields.
func (c *Config) Defaults() {
	c.Hold = cmp.Or(c.Hold, 3*time.Second)
	c.Retry = cmp.Or(c.Retry, 500*time.Millisecond)
	c.Events = cmp.Or(c.Events, 20000)
	c.Role = cmp.Or(c.Role, l2.RoleInitiator)
}

// Link states.
const (
	Down         = "down"         // interface down
	Registering  = "registering"  // Register sent, no answer yet
	Registered   = "registered"   // answered, kept alive
	Deregistered = "deregistered" // by request: silent until Register
)

type link struct {
	name  string
	mac   net.HardwareAddr
	addrs []netip.Addr
	up    bool
	state string

	switchID   netip.Addr
	switchName string
	port       string
	nonce      uint32
	hold       time.Duration

	seq      uint32    // of our last request
	nextSend time.Time // next Register / Keepalive / Deregister
	deregEnd time.Time // stop repeating an unanswered Deregister then
	lastAck  time.Time
	since    time.Time

	// lastSeq per peer path: notifications older than the last applied
	// one are stale retransmissions.
	lastSeq map[PathKey]uint32
}

// PathKey identifies one path to a peer: the peer on one port of one
// switch (a dual-homed peer has two).
type PathKey struct {
	ID     string
	Switch netip.Addr
	Port   string
}

// Peer is one path to a zone peer as the host knows it.
type Peer struct {
	Key        PathKey
	Host       l2.Host
	SwitchName string
	Zones      []string
	Source     l2.Source
	Since      time.Time
	// via: which of our links currently report the path up; stale marks
	// a report from a switch that restarted and has not repeated it yet.
	via   map[string]bool
	stale map[string]time.Time
}

// Up reports whether any switch says the path is up.
func (p *Peer) Up() bool {
	for _, v := range p.via {
		if v {
			return true
		}
	}
	return false
}

// Via lists the interfaces through which the path was reported up.
func (p *Peer) Via() []string {
	var out []string
	for l, v := range p.via {
		if v {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// Event is one change of the peer table (what the hook is run for).
type Event struct {
	Time   time.Time
	Type   l2.Event
	Peer   Peer
	Via    string // the interface whose switch said so ("" for a local loss)
	Reason string // for a local loss: "link down", "switch lost"
}

// Agent is the host agent's state.
type Agent struct {
	cfg     Config
	log     *slog.Logger
	tx      Tx
	onEvent func(Event)
	now     time.Time

	links    map[string]*link
	peers    map[PathKey]*Peer
	events   []Event
	evStart  int
	counters map[string]uint64
	badLog   map[string]time.Time
	identity net.HardwareAddr // fixed at the first registration
	counter  uint64           // of the last signed request
}

// New returns an agent; onEvent is called for every change of the peer
// table, in order, from the caller's goroutine.
func New(cfg Config, log *slog.Logger, tx Tx, onEvent func(Event), now time.Time) *Agent {
	cfg.Defaults()
	a := &Agent{cfg: cfg, log: log, tx: tx, onEvent: onEvent, now: now,
		links: map[string]*link{}, peers: map[PathKey]*Peer{}, counters: map[string]uint64{}, badLog: map[string]time.Time{}}
	for _, n := range cfg.Interfaces {
		a.links[n] = &link{name: n, state: Down, lastSeq: map[PathKey]uint32{}}
	}
	return a
}

// Interface tells the agent an interface's state and addresses.
func (a *Agent) Interface(name string, mac net.HardwareAddr, addrs []netip.Addr, up bool) {
	l := a.links[name]
	if l == nil {
		return
	}
	changed := !slices.Equal(addrs, l.addrs) || l.mac.String() != mac.String()
	l.mac, l.addrs = mac, addrs
	switch {
	case !up && l.up:
		l.up = false
		a.lose(l, "link down")
		l.state = Down
	case up && !l.up:
		l.up = true
		if l.state != Deregistered {
			a.startRegister(l)
		}
	case up && changed && l.state != Deregistered:
		a.startRegister(l) // tell the switch the new addresses
	}
}

func (a *Agent) startRegister(l *link) {
	l.state = Registering
	a.sendRegister(l)
}

func (a *Agent) sendRegister(l *link) {
	l.nextSend = a.now.Add(a.cfg.Retry)
	mac := a.identityMAC()
	if mac == nil {
		return // no interface has told its MAC yet
	}
	l.seq++
	a.send(l, &l2.Message{Type: l2.TypeRegister, Seq: l.seq, Hold: a.cfg.Hold,
		Host: l2.Host{ID: a.cfg.ID, Role: a.cfg.Role, NQN: a.cfg.NQN, MAC: mac, Addrs: l.addrs}})
}

// identityMAC is the MAC the host registers with on every link: the
// configured one, else the first interface's (in configuration order)
// that is known, fixed for the run once used.
func (a *Agent) identityMAC() net.HardwareAddr {
	if a.identity == nil {
		a.identity = a.cfg.MAC
	}
	for _, name := range a.cfg.Interfaces {
		if a.identity != nil {
			break
		}
		if m := a.links[name].mac; len(m) == 6 {
			a.identity = slices.Clone(m)
		}
	}
	return a.identity
}

// send sends a request to the switch of link l, signed if the host has a
// key: the counter is the clock in milliseconds, kept strictly increasing.
func (a *Agent) send(l *link, m *l2.Message) {
	a.counters["frames_tx"]++
	if a.cfg.Key != nil {
		a.counter = max(a.counter+1, uint64(a.now.UnixMilli()))
		m.Sign(*a.cfg.Key, a.counter)
	}
	a.tx.Send(l.name, l2.GroupMAC, m)
}

// Frame handles a message from a switch.
func (a *Agent) Frame(iface string, src net.HardwareAddr, m *l2.Message) {
	l := a.links[iface]
	if l == nil {
		return
	}
	a.counters["frames_rx"]++
	switch m.Type {
	case l2.TypeRegisterAck:
		if l.state != Registering || m.Seq != l.seq {
			return
		}
		if m.Status != l2.StatusOK {
			a.counters["refused"]++
			a.log.Warn("inof: switch refused the registration", "iface", iface, "status", m.Status)
			l.nextSend = a.now.Add(a.cfg.Hold)
			return
		}
		restarted := l.nonce != 0 && l.nonce != m.Nonce
		l.state, l.switchID, l.switchName, l.port, l.hold, l.lastAck, l.since = Registered, m.Switch, m.SwitchName, m.Port, m.Hold, a.now, a.now
		if restarted || l.nonce == 0 {
			a.switchRestarted(l, m.Nonce)
		}
		l.nextSend = a.now.Add(l.hold / 3)
		a.log.Info("inof: registered", "iface", iface, "switch", m.Switch, "name", m.SwitchName, "port", m.Port, "hold", m.Hold)
	case l2.TypeKeepaliveAck:
		if l.state != Registered {
			return
		}
		if m.Status == l2.StatusUnknownHost || m.Nonce != l.nonce {
			// The switch forgot us (restart, hold expired): register again.
			a.counters["reregistrations"]++
			a.startRegister(l)
			return
		}
		l.lastAck = a.now
	case l2.TypeDeregisterAck:
		if l.state == Deregistered {
			l.nextSend = time.Time{}
		}
	case l2.TypeNotify:
		a.notify(l, src, m)
	}
}

// BadFrame counts and logs (once a second per interface) a frame that
// did not decode.
func (a *Agent) BadFrame(iface string, err error) {
	a.counters["bad_frames"]++
	if t, ok := a.badLog[iface]; !ok || a.now.Sub(t) >= time.Second {
		a.badLog[iface] = a.now
		a.log.Warn("inof: malformed frame", "iface", iface, "err", err)
	}
}

// switchRestarted: reports from a previous run of the switch are stale
// until it repeats them (it tells a new registration everything again).
func (a *Agent) switchRestarted(l *link, nonce uint32) {
	l.nonce = nonce
	clear(l.lastSeq)
	for _, p := range a.peers {
		if p.via[l.name] {
			p.stale[l.name] = a.now.Add(2 * max(l.hold, a.cfg.Hold))
		}
	}
}

func (a *Agent) notify(l *link, src net.HardwareAddr, m *l2.Message) {
	// Always acknowledge, duplicates too: the first ack may have been lost.
	a.counters["notifications"]++
	a.tx.Send(l.name, src, &l2.Message{Type: l2.TypeNotifyAck, Seq: m.Seq, Host: l2.Host{ID: a.cfg.ID}})
	if l.state != Registered || m.Nonce != l.nonce {
		return // from a switch run we are not registered with
	}
	k := PathKey{ID: m.Host.ID, Switch: m.Switch, Port: m.Port}
	if last, ok := l.lastSeq[k]; ok && seqNotAfter(m.Seq, last) {
		a.counters["notifications_stale"]++
		return
	}
	l.lastSeq[k] = m.Seq
	p := a.peers[k]
	if p == nil {
		if m.Event != l2.EventJoin {
			return
		}
		p = &Peer{Key: k, via: map[string]bool{}, stale: map[string]time.Time{}}
		a.peers[k] = p
	}
	delete(p.stale, l.name)
	wasUp := p.Up()
	if m.Event == l2.EventJoin {
		// What the hook acts on: the peer's identity and addresses. Two
		// switches describe a path with different sources (agent where it
		// is attached, bgp elsewhere): not a change.
		changed := !wasUp || !sameHost(p.Host, m.Host)
		if !wasUp || m.Source != l2.SourceBGP {
			p.Source = m.Source
		}
		p.Host, p.SwitchName, p.Zones = m.Host, m.SwitchName, m.Zones
		p.via[l.name] = true
		if !wasUp {
			p.Since = a.now
		}
		if changed {
			a.emit(Event{Time: a.now, Type: l2.EventJoin, Peer: *p, Via: l.name})
		}
		return
	}
	p.via[l.name] = false
	if wasUp && !p.Up() {
		a.emit(Event{Time: a.now, Type: m.Event, Peer: *p, Via: l.name})
	}
	if !p.Up() {
		delete(a.peers, k)
	}
}

// seqNotAfter: a is the same as or older than b (serial arithmetic).
func seqNotAfter(a, b uint32) bool { return int32(a-b) <= 0 }

func sameHost(x, y l2.Host) bool {
	return x.ID == y.ID && x.Role == y.Role && x.NQN == y.NQN && x.MAC.String() == y.MAC.String() && slices.Equal(x.Addrs, y.Addrs)
}

// lose: a link's switch can no longer tell us anything; paths only it
// reported become unreachable.
func (a *Agent) lose(l *link, why string) { a.loseAs(l, l2.EventUnreachable, why) }

func (a *Agent) loseAs(l *link, ev l2.Event, why string) {
	for _, k := range a.sortedPeers() {
		p := a.peers[k]
		if !p.via[l.name] {
			continue
		}
		wasUp := p.Up()
		delete(p.via, l.name)
		delete(p.stale, l.name)
		if wasUp && !p.Up() {
			a.emit(Event{Time: a.now, Type: ev, Peer: *p, Reason: why})
			delete(a.peers, k)
		}
	}
	clear(l.lastSeq)
}

func (a *Agent) sortedPeers() []PathKey {
	return slices.SortedFunc(maps.Keys(a.peers), func(x, y PathKey) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), x.Switch.Compare(y.Switch), cmp.Compare(x.Port, y.Port))
	})
}

func (a *Agent) emit(e Event) {
	e.Peer.via, e.Peer.stale = nil, nil
	if len(a.events) < a.cfg.Events {
		a.events = append(a.events, e)
	} else {
		a.events[a.evStart] = e
		a.evStart = (a.evStart + 1) % len(a.events)
	}
	a.counters["events"]++
	if a.onEvent != nil {
		a.onEvent(e)
	}
}

// Tick runs the timers: register retries, keepalives, loss of a switch,
// stale reports.
func (a *Agent) Tick(now time.Time) {
	a.now = now
	for _, name := range a.cfg.Interfaces {
		l := a.links[name]
		if !l.up {
			continue
		}
		switch l.state {
		case Registering:
			if !now.Before(l.nextSend) {
				a.sendRegister(l)
			}
		case Registered:
			if now.Sub(l.lastAck) > l.hold {
				a.counters["switch_lost"]++
				a.log.Warn("inof: switch stopped answering", "iface", name, "switch", l.switchID)
				a.lose(l, "switch lost")
				a.startRegister(l)
				continue
			}
			if !now.Before(l.nextSend) {
				l.seq++
				a.send(l, &l2.Message{Type: l2.TypeKeepalive, Seq: l.seq, Host: l2.Host{ID: a.cfg.ID}})
				l.nextSend = now.Add(l.hold / 3)
			}
		case Deregistered:
			if !l.nextSend.IsZero() && !now.Before(l.nextSend) {
				if now.After(l.deregEnd) {
					l.nextSend = time.Time{} // the switch is gone: its hold time ends it
					continue
				}
				a.sendDeregister(l)
			}
		}
	}
	for _, k := range a.sortedPeers() {
		p := a.peers[k]
		for ifn, t := range p.stale {
			if now.After(t) {
				delete(p.stale, ifn)
				wasUp := p.Up()
				delete(p.via, ifn)
				if wasUp && !p.Up() {
					a.emit(Event{Time: now, Type: l2.EventUnreachable, Peer: *p, Reason: "switch restarted and forgot it"})
					delete(a.peers, k)
				}
			}
		}
	}
}

// Deregister leaves every switch in good order (their other hosts are
// told "leave"); the agent stays silent until Register.
func (a *Agent) Deregister() {
	for _, name := range a.cfg.Interfaces {
		l := a.links[name]
		wasRegistered := l.state == Registered
		a.loseAs(l, l2.EventLeave, "deregistered")
		l.state = Deregistered
		l.nextSend = time.Time{}
		if wasRegistered && l.up {
			l.deregEnd = a.now.Add(max(l.hold, a.cfg.Hold))
			a.sendDeregister(l)
		}
	}
}

func (a *Agent) sendDeregister(l *link) {
	l.seq++
	a.send(l, &l2.Message{Type: l2.TypeDeregister, Seq: l.seq, Host: l2.Host{ID: a.cfg.ID}})
	l.nextSend = a.now.Add(a.cfg.Retry)
}

// Register undoes Deregister.
func (a *Agent) Register() {
	for _, name := range a.cfg.Interfaces {
		l := a.links[name]
		if l.state == Deregistered {
			l.state = Down
			if l.up {
				a.startRegister(l)
			}
		}
	}
}

// Pending reports whether a deregistration still waits for its answer.
func (a *Agent) Pending() bool {
	for _, l := range a.links {
		if l.state == Deregistered && !l.nextSend.IsZero() && l.up {
			return true
		}
	}
	return false
}

// SetNow moves the clock without running timers.
func (a *Agent) SetNow(now time.Time) { a.now = now }

// LinkView is one interface's registration.
type LinkView struct {
	Name, State, SwitchName, Port string
	Switch                        netip.Addr
	Hold                          time.Duration
	Since                         time.Time
	Addrs                         []netip.Addr
}

// Links returns the registrations.
func (a *Agent) Links() []LinkView {
	var out []LinkView
	for _, name := range a.cfg.Interfaces {
		l := a.links[name]
		v := LinkView{Name: name, State: l.state, Addrs: l.addrs}
		if l.state == Registered {
			v.Switch, v.SwitchName, v.Port, v.Hold, v.Since = l.switchID, l.switchName, l.port, l.hold, l.since
		}
		out = append(out, v)
	}
	return out
}

// Peers returns the paths that are up, with the interfaces reporting
// them.
func (a *Agent) Peers() []PeerView {
	var out []PeerView
	for _, k := range a.sortedPeers() {
		p := a.peers[k]
		if p.Up() {
			out = append(out, PeerView{Peer: *p, Via: p.Via()})
		}
	}
	return out
}

// PeerView is a peer path and the interfaces reporting it.
type PeerView struct {
	Peer
	Via []string
}

// Events returns the event log, oldest first.
func (a *Agent) Events() []Event {
	out := make([]Event, 0, len(a.events))
	out = append(out, a.events[a.evStart:]...)
	return append(out, a.events[:a.evStart]...)
}

// Counters returns a copy of the counters.
func (a *Agent) Counters() map[string]uint64 {
	m := make(map[string]uint64, len(a.counters))
	for k, v := range a.counters {
		m[k] = v
	}
	return m
}
