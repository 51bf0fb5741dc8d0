// Package bfd is fared's BFD speaker: asynchronous-mode sessions of RFC
// 5880 over single-hop UDP (RFC 5881), for the IGPs' adjacencies and
// iNOF's BGP sessions (RFC 5882), with the authentication of RFC 5880 §6.7
// and key chains (auth.go). No echo, no demand mode.
//
// One Manager per daemon (the core owns it: daemon.Core.BFD) owns every
// session in one goroutine; socket readers post received packets to it,
// and clients (the IS-IS and OSPF instances, iNOF) add and remove sessions
// by key and hear of state changes through a callback. Every client asking
// for the same (interface, peer) shares one session, as FRR's bfdd does
// (RFC 5882 §2). The session machine (session.go) is pure and driven with
// explicit times.
package bfd

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
)

// IO is the network side of a Manager (UDP sockets in production,
// in-memory pipes in tests).
type IO interface {
	// Listen receives packets until ctx ends, handing each to deliver.
	Listen(ctx context.Context, deliver func(Received)) error
	// Open returns the sender of one session.
	Open(k Key, local netip.Addr, ifname string) (Sender, error)
}

// Sender sends one session's packets.
type Sender interface {
	Send(b []byte) error
	Close() error
}

// Received is one packet off the wire with what RFC 5881 checks.
type Received struct {
	IfIndex int
	Src     netip.Addr
	TTL     int // IPv4 TTL or IPv6 hop limit; -1 = unknown
	Data    []byte
	At      time.Time
}

// Options of a Manager.
type Options struct {
	Logger *slog.Logger
	IO     IO // default UDP (io_linux.go)
	Now    func() time.Time
	// Guard recovers a panic of the receive path and the manager's loop
	// (default: guard.New("bfd")).
	Guard *guard.Guard
}

// Manager runs sessions.
type Manager struct {
	log   *slog.Logger
	io    IO
	now   func() time.Time
	guard *guard.Guard
	ev    chan any

	mu      sync.Mutex // clients' ids
	nextCID int

	// Owned by Run.
	sessions map[Key]*entry
	byDisc   map[uint32]*entry
	counters map[string]uint64
	logged   map[string]bool
	seqs     map[Key]uint32 // sequence numbers of removed sessions (keepSeq)
	rx       chan Received
	listener *listener // nil: no session, no socket
}

type entry struct {
	s       *session
	local   netip.Addr
	ifname  string
	tx      Sender
	clients map[*Client]Params
}

// Client is one user of the manager (a protocol instance, iNOF's BGP).
type Client struct {
	m      *Manager
	name   string
	id     int // order of registration: the first client's key chain wins a conflict
	notify func(Event)
}

// New returns a manager; call Run.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Guard == nil {
		o.Guard = guard.New("bfd", o.Logger)
	}
	if o.IO == nil {
		o.IO = UDP{Guard: o.Guard}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{log: o.Logger.With("proto", "bfd"), io: o.IO, now: o.Now, guard: o.Guard, ev: make(chan any, 1024),
		sessions: map[Key]*entry{}, byDisc: map[uint32]*entry{}, counters: map[string]uint64{}, logged: map[string]bool{},
		seqs: map[Key]uint32{}, rx: make(chan Received, 256)}
}

// NewClient registers a client named name ("isis", "ospf", "inof": the
// API shows who uses a session); notify is called on the manager's
// goroutine for every state change of the client's sessions and must not
// block.
func (m *Manager) NewClient(name string, notify func(Event)) *Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextCID++
	return &Client{m: m, name: name, id: m.nextCID, notify: notify}
}

type setEvent struct {
	c      *Client
	k      Key
	local  netip.Addr
	ifname string
	p      Params
}

type removeEvent struct {
	c   *Client
	k   Key
	all bool
}

type queryEvent struct{ f func() }

// Set asks for a session to peer k.Peer on interface k.IfIndex (named
// ifname), sent from local, with the client's timers; a second Set
// changes the timers.
func (c *Client) Set(k Key, local netip.Addr, ifname string, p Params) {
	c.m.ev <- setEvent{c: c, k: k, local: local, ifname: ifname, p: p}
}

// Remove ends the client's interest in a session; the last client's
// Remove ends the session.
func (c *Client) Remove(k Key) { c.m.ev <- removeEvent{c: c, k: k} }

// Close removes every session of the client.
func (c *Client) Close() { c.m.ev <- removeEvent{c: c, all: true} }

// Run owns the sessions until ctx ends. The receive sockets are open
// while there is a session (a daemon without BFD leaves UDP 3784 alone).
func (m *Manager) Run(ctx context.Context) {
	defer func() {
		m.stopListening()
		for _, e := range m.sessions {
			m.close(e)
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			// Removals a client posted just before the end still tell
			// their peers AdminDown.
			for {
				select {
				case ev := <-m.ev:
					m.guarded("event", nil, func() { m.handle(ev) })
				default:
					return
				}
			}
		case r := <-m.rx:
			m.guarded("rx", r.Data, func() { m.receive(r) })
		case ev := <-m.ev:
			m.guarded("event", nil, func() { m.handle(ev) })
			m.listen(ctx)
		case <-timer.C:
		}
		wait := time.Duration(-1) // no session: no timer
		if !m.guard.Do("timers", nil, func() {
			if next := m.runDue(m.now()); !next.IsZero() {
				wait = max(0, next.Sub(m.now()))
			}
		}) {
			wait = 10 * time.Millisecond // try again soon: sessions must not stall
		}
		timer.Stop()
		select {
		case <-timer.C:
		default:
		}
		if wait >= 0 {
			timer.Reset(wait)
		}
	}
}

// guarded runs f under the manager's panic guard: a bug that one packet
// or request triggers drops it, is counted and logged once, and every
// other session runs on.
func (m *Manager) guarded(site string, input []byte, f func()) { m.guard.Do(site, input, f) }

type listener struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// listen opens the receive sockets when the first session appears and
// closes them when the last one goes.
func (m *Manager) listen(ctx context.Context) {
	switch {
	case len(m.sessions) > 0 && m.listener == nil:
		lctx, cancel := context.WithCancel(ctx)
		l := &listener{cancel: cancel, done: make(chan struct{})}
		m.listener = l
		go func() {
			defer close(l.done)
			m.receiveLoop(lctx)
		}()
	case len(m.sessions) == 0 && m.listener != nil:
		m.stopListening()
	}
}

func (m *Manager) stopListening() {
	if m.listener != nil {
		m.listener.cancel()
		<-m.listener.done
		m.listener = nil
	}
}

// receiveLoop keeps the receive sockets open, retrying when they cannot
// be (another BFD speaker holds the port): sessions cannot come up
// meanwhile, which the log says once.
func (m *Manager) receiveLoop(ctx context.Context) {
	for {
		err := m.io.Listen(ctx, func(r Received) {
			select {
			case m.rx <- r:
			case <-ctx.Done():
			}
		})
		if ctx.Err() != nil {
			return
		}
		m.log.Error("BFD cannot receive; retrying in 5s", "err", err, "note", "sessions stay down meanwhile")
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func (m *Manager) handle(ev any) {
	now := m.now()
	switch e := ev.(type) {
	case setEvent:
		en := m.sessions[e.k]
		var keep map[*Client]Params
		if en != nil && (en.local != e.local || en.ifname != e.ifname) {
			// A new local address or interface name needs a new sender:
			// the session starts again, with the same clients.
			keep = en.clients
			m.remove(en)
			en = nil
		}
		if en == nil {
			tx, err := m.io.Open(e.k, e.local, e.ifname)
			if err != nil {
				m.count("open_errors")
				m.logOnce("open:"+e.ifname, "cannot open a BFD sender", "iface", e.ifname, "peer", e.k.Peer, "err", err)
				return
			}
			en = &entry{s: newSession(e.k, e.p, m.newDisc(), now), local: e.local, ifname: e.ifname, tx: tx, clients: map[*Client]Params{}}
			if seq, ok := m.seqs[e.k]; ok {
				en.s.auth.xmitSeq = seq // carry on (keepSeq)
				delete(m.seqs, e.k)
			}
			for c, p := range keep {
				en.clients[c] = p
			}
			m.sessions[e.k] = en
			m.byDisc[en.s.localDisc] = en
			m.log.Info("session added", "iface", e.ifname, "peer", e.k.Peer, "local", e.local,
				"interval", e.p.Interval, "multiplier", e.p.Multiplier, "my_disc", en.s.localDisc)
		}
		_, had := en.clients[e.c]
		en.clients[e.c] = e.p
		en.s.reconfigure(m.merged(en), now)
		if !had && en.s.state != packet.Down {
			// A client joining a session that is already Up (another
			// client asked first) hears its state now: no transition
			// would tell it.
			e.c.notify(Event{Key: e.k, Old: en.s.state, State: en.s.state, Remote: en.s.remoteState, At: now})
		}
	case removeEvent:
		for k, en := range m.sessions {
			if _, ok := en.clients[e.c]; !ok || (!e.all && k != e.k) {
				continue
			}
			delete(en.clients, e.c)
			if len(en.clients) == 0 {
				m.remove(en)
			} else {
				en.s.reconfigure(m.merged(en), now)
			}
		}
	case queryEvent:
		e.f()
	}
}

// merged is what a shared session runs: the fastest timers any client
// asked for, and the key chain of the first client (in registration
// order) that asked for one: a client never turns authentication off
// for the others. Clients asking for different chains are logged once
// per session (the configuration should give them the same).
func (m *Manager) merged(en *entry) Params {
	var p Params
	var authBy *Client
	for c, cp := range en.clients {
		if p.Interval == 0 || cp.Interval < p.Interval {
			p.Interval = cp.Interval
		}
		if p.Multiplier == 0 || cp.Multiplier < p.Multiplier {
			p.Multiplier = cp.Multiplier
		}
		if cp.Auth != nil && (authBy == nil || c.id < authBy.id) {
			p.Auth, authBy = cp.Auth, c
		}
	}
	for c, cp := range en.clients {
		if cp.Auth != nil && c != authBy && !reflect.DeepEqual(cp.Auth, p.Auth) {
			m.count("auth_conflicts")
			m.logOnce(fmt.Sprintf("auth-conflict:%d:%s", en.s.key.IfIndex, en.s.key.Peer), "clients of one BFD session ask for different key chains: the first one's is used",
				"iface", en.ifname, "peer", en.s.key.Peer, "used", authBy.name, "ignored", c.name)
		}
	}
	return p
}

// remove ends a session. The peer is told AdminDown (RFC 5880 §6.8.16),
// so a peer whose adjacency is still up does not take it down for the
// silence that follows.
func (m *Manager) remove(en *entry) {
	s := en.s
	if s.state != packet.AdminDown {
		s.state, s.diag = packet.AdminDown, packet.DiagAdminDown
		m.send(en, s.packet(false))
	}
	m.log.Info("session removed", "iface", en.ifname, "peer", s.key.Peer)
	m.close(en)
	delete(m.sessions, s.key)
	delete(m.byDisc, s.localDisc)
	m.keepSeq(s)
}

// maxKeptSeqs bounds the sequence numbers kept for peers whose session
// went (sessions follow adjacencies, which the peers' hellos create).
const maxKeptSeqs = 1024

// keepSeq remembers a removed session's authentication sequence number,
// so the next session to the same peer carries on from it rather than
// from a new random value: a peer that took the old session's last
// packets (its AdminDown) into a new session of its own would refuse a
// number that jumped (BIRD does, until the session is re-created). A
// restart of fared starts at random (RFC 5880 §6.8.1); the peer forgets
// the old number after twice the Detection Time.
func (m *Manager) keepSeq(s *session) {
	if s.params.Auth == nil {
		return
	}
	if len(m.seqs) >= maxKeptSeqs {
		for k := range m.seqs { // any one: the oldest is not worth tracking
			delete(m.seqs, k)
			break
		}
	}
	m.seqs[s.key] = s.auth.xmitSeq
}

func (m *Manager) close(en *entry) {
	if en.tx != nil {
		en.tx.Close()
		en.tx = nil
	}
}

// newDisc picks a free, non-zero local discriminator at random (§6.8.1:
// unique, and random is recommended).
func (m *Manager) newDisc() uint32 {
	for {
		d := rand.Uint32()
		if d != 0 && m.byDisc[d] == nil {
			return d
		}
	}
}

// receive finds the session of a packet (§6.8.6, RFC 5881 §3), checks
// that it comes from the remote system the session learnt and that it
// authenticates (§6.7), and runs it.
func (m *Manager) receive(r Received) {
	if r.TTL != 255 {
		// RFC 5881 §5: only TTL 255 proves the packet came from the link
		// (GTSM), with or without authentication.
		m.reject("ttl", "BFD packet without TTL 255 dropped", "ttl", r.TTL, "from", r.Src)
		return
	}
	c, err := packet.Decode(r.Data)
	if err != nil {
		kind := "malformed"
		if de, ok := err.(*packet.DecodeError); ok {
			kind = de.Kind.String()
		}
		m.reject(kind, "BFD packet dropped", "from", r.Src, "err", err, "len", len(r.Data))
		return
	}
	var en *entry
	if c.YourDisc != 0 {
		en = m.byDisc[c.YourDisc]
	} else {
		en = m.sessions[Key{IfIndex: r.IfIndex, Peer: r.Src}]
	}
	if en == nil || en.s.key.IfIndex != r.IfIndex || en.s.key.Peer != r.Src {
		m.count("rx_no_session")
		return
	}
	at := r.At
	if at.IsZero() {
		at = m.now()
	}
	s := en.s
	why, fallback := s.check(c, r.Data[:r.Data[3]], at)
	switch why {
	case "":
	case rejDisc:
		s.stats.Rejected++
		m.reject(why, "BFD packet with another remote discriminator than the session learnt dropped",
			"iface", en.ifname, "peer", r.Src, "my_disc", c.MyDisc, "learnt", s.remoteDisc, "state", c.State.String())
		return
	default:
		s.stats.Rejected++
		m.reject(why, "BFD packet failed authentication: dropped", "iface", en.ifname, "peer", r.Src,
			"auth_type", c.Auth.Type.String(), "key_id", c.Auth.KeyID, "seq", c.Auth.Seq)
		return
	}
	if fallback {
		m.count("rx_auth_expired_key")
	}
	if ev := s.receive(c, at); ev != nil {
		m.tell(en, ev)
	}
}

// runDue runs every session whose time has come and returns the next
// time one needs the manager.
func (m *Manager) runDue(now time.Time) time.Time {
	var next time.Time
	for _, en := range m.sessions {
		if d := en.s.due(); !d.After(now) {
			out, ev := en.s.run(now)
			for _, c := range out {
				m.send(en, c)
			}
			if ev != nil {
				m.tell(en, ev)
			}
		}
		if d := en.s.due(); next.IsZero() || d.Before(next) {
			next = d
		}
	}
	return next
}

func (m *Manager) send(en *entry, c packet.Control) {
	if en.tx == nil {
		return
	}
	b, fallback := en.s.encode(c, m.now())
	if en.s.auth.fallback.Note(fallback) {
		if fallback {
			m.log.Warn("every BFD send key has expired: sending with the last one until a valid key is configured",
				"iface", en.ifname, "peer", en.s.key.Peer, "key_id", en.s.auth.keyID)
		} else {
			m.log.Info("a BFD send key is valid again", "iface", en.ifname, "peer", en.s.key.Peer, "key_id", en.s.auth.keyID)
		}
	}
	if fallback {
		m.count("tx_auth_expired_key")
	}
	if err := en.tx.Send(b); err != nil {
		m.count("tx_errors")
		m.logOnce("tx:"+en.ifname, "BFD send failed", "iface", en.ifname, "peer", en.s.key.Peer, "err", err)
	}
}

func (m *Manager) tell(en *entry, ev *Event) {
	lvl := m.log.Debug
	if ev.State == packet.Up || ev.Old == packet.Up {
		lvl = m.log.Info
	}
	lvl("session state", "iface", en.ifname, "peer", ev.Key.Peer, "from", ev.Old.String(), "to", ev.State.String(), "diag", ev.Diag.String())
	for c := range en.clients {
		c.notify(*ev)
	}
}

func (m *Manager) count(k string) { m.counters[k]++ }

func (m *Manager) reject(kind, msg string, args ...any) {
	m.count("rx_rejected_" + kind)
	m.logOnce("rx:"+kind, msg, args...)
}

func (m *Manager) logOnce(kind, msg string, args ...any) {
	if m.logged[kind] {
		return
	}
	m.logged[kind] = true
	m.log.Warn(msg, append(args, "kind", kind, "note", "further occurrences are only counted")...)
}

// SessionView is a copy of one session for the API.
type SessionView struct {
	Interface   string
	IfIndex     int
	Peer, Local netip.Addr
	State       string
	RemoteState string
	Diag        string
	LocalDisc   uint32
	RemoteDisc  uint32
	Interval    time.Duration // configured
	Multiplier  int
	TxInterval  time.Duration // in force, before jitter
	DetectTime  time.Duration // in force
	RemoteMinRx time.Duration
	RemoteMinTx time.Duration
	RemoteMult  int
	UpSince     time.Time
	Stats       Stats
	Clients     []string        // who asked for it, sorted
	Auth        packet.AuthType // of the last packet sent; 0: none
	AuthKeyID   int             // of the last packet sent; -1: none
	AuthExpired bool            // sending with a key whose send lifetime ended
}

// Sessions returns a copy of every session, sorted by interface and peer,
// and the manager's counters.
func (m *Manager) Sessions(ctx context.Context) ([]SessionView, map[string]uint64, error) {
	var out []SessionView
	var ctr map[string]uint64
	err := m.query(ctx, func() {
		for _, en := range m.sessions {
			out = append(out, en.view())
		}
		ctr = make(map[string]uint64, len(m.counters))
		for k, v := range m.counters {
			ctr[k] = v
		}
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b SessionView) int {
		return cmp.Or(cmp.Compare(a.Interface, b.Interface), a.Peer.Compare(b.Peer))
	})
	return out, ctr, nil
}

func (en *entry) view() SessionView {
	s := en.s
	v := SessionView{Interface: en.ifname, IfIndex: s.key.IfIndex, Peer: s.key.Peer, Local: en.local,
		State: s.state.String(), RemoteState: s.remoteState.String(), Diag: s.diag.String(),
		LocalDisc: s.localDisc, RemoteDisc: s.remoteDisc, Interval: s.params.Interval, Multiplier: s.params.Multiplier,
		TxInterval: s.txInterval(), DetectTime: s.detectTime(), RemoteMinRx: dur(s.remoteMinRx), RemoteMinTx: dur(s.remoteDesiredX),
		RemoteMult: int(s.remoteMult), UpSince: s.upSince, Stats: s.stats, AuthKeyID: -1}
	if s.params.Auth != nil {
		v.Auth, v.AuthKeyID, v.AuthExpired = s.auth.typ, s.auth.keyID, s.auth.fallback.On()
	}
	for c := range en.clients {
		v.Clients = append(v.Clients, c.name)
	}
	slices.Sort(v.Clients)
	return v
}

// query runs f on the manager's goroutine.
func (m *Manager) query(ctx context.Context, f func()) error {
	return loop.Call(ctx, m.ev, func(run func()) any { return queryEvent{f: run} }, f)
}
