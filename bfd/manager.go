// Package bfd is fared's BFD speaker: asynchronous-mode sessions of RFC
// 5880 over single-hop UDP (RFC 5881), for the IGPs' adjacencies (RFC
// 5882). No echo, no demand mode, no authentication.
//
// One Manager per process owns every session in one goroutine; socket
// readers post received packets to it, and clients (the IS-IS and OSPF
// instances) add and remove sessions by key and hear of state changes
// through a callback. Two clients asking for the same (interface, peer)
// share one session, as RFC 5882 §2 asks. The session machine
// (session.go) is pure and driven with explicit times.
package bfd

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/fared/fared/bfd/packet"
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
}

// Manager runs sessions.
type Manager struct {
	log *slog.Logger
	io  IO
	now func() time.Time
	ev  chan any

	// Owned by Run.
	sessions map[Key]*entry
	byDisc   map[uint32]*entry
	counters map[string]uint64
	logged   map[string]bool
}

type entry struct {
	s       *session
	local   netip.Addr
	ifname  string
	tx      Sender
	clients map[*Client]Params
}

// Client is one user of the manager (a protocol instance).
type Client struct {
	m      *Manager
	notify func(Event)
}

// New returns a manager; call Run.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.IO == nil {
		o.IO = UDP{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{log: o.Logger.With("proto", "bfd"), io: o.IO, now: o.Now, ev: make(chan any, 1024),
		sessions: map[Key]*entry{}, byDisc: map[uint32]*entry{}, counters: map[string]uint64{}, logged: map[string]bool{}}
}

// NewClient registers a client; notify is called on the manager's
// goroutine for every state change of the client's sessions and must not
// block.
func (m *Manager) NewClient(notify func(Event)) *Client { return &Client{m: m, notify: notify} }

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

// Run owns the sessions until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	rx := make(chan Received, 256)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.listen(lctx, rx)
	}()
	defer func() {
		stop()
		wg.Wait()
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
					m.handle(ev)
				default:
					return
				}
			}
		case r := <-rx:
			m.receive(r)
		case ev := <-m.ev:
			m.handle(ev)
		case <-timer.C:
		}
		now := m.now()
		next := m.runDue(now)
		timer.Stop()
		select {
		case <-timer.C:
		default:
		}
		if !next.IsZero() {
			timer.Reset(max(0, next.Sub(m.now())))
		}
	}
}

// listen keeps the receive sockets open, retrying when they cannot be
// (another BFD speaker holds the port): sessions cannot come up
// meanwhile, which the log says once.
func (m *Manager) listen(ctx context.Context, rx chan<- Received) {
	for {
		err := m.io.Listen(ctx, func(r Received) {
			select {
			case rx <- r:
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
			for c, p := range keep {
				en.clients[c] = p
			}
			m.sessions[e.k] = en
			m.byDisc[en.s.localDisc] = en
			m.log.Info("session added", "iface", e.ifname, "peer", e.k.Peer, "local", e.local,
				"interval", e.p.Interval, "multiplier", e.p.Multiplier, "my_disc", en.s.localDisc)
		}
		en.clients[e.c] = e.p
		en.s.reconfigure(merged(en.clients), now)
	case removeEvent:
		for k, en := range m.sessions {
			if _, ok := en.clients[e.c]; !ok || (!e.all && k != e.k) {
				continue
			}
			delete(en.clients, e.c)
			if len(en.clients) == 0 {
				m.remove(en)
			} else {
				en.s.reconfigure(merged(en.clients), now)
			}
		}
	case queryEvent:
		e.f()
	}
}

// merged is the fastest timers any client of a session asked for.
func merged(cs map[*Client]Params) Params {
	var p Params
	for _, c := range cs {
		if p.Interval == 0 || c.Interval < p.Interval {
			p.Interval = c.Interval
		}
		if p.Multiplier == 0 || c.Multiplier < p.Multiplier {
			p.Multiplier = c.Multiplier
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

// receive finds the session of a packet (§6.8.6, RFC 5881 §3) and runs it.
func (m *Manager) receive(r Received) {
	if r.TTL != 255 {
		// RFC 5881 §5: without authentication, only TTL 255 proves the
		// packet came from the link (GTSM).
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
	if ev := en.s.receive(c, at); ev != nil {
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
	if err := en.tx.Send(c.AppendTo(make([]byte, 0, packet.Len))); err != nil {
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
}

// Sessions returns a copy of every session, sorted by interface and peer.
func (m *Manager) Sessions(ctx context.Context) ([]SessionView, map[string]uint64, error) {
	var out []SessionView
	var ctr map[string]uint64
	done := make(chan struct{})
	select {
	case m.ev <- queryEvent{f: func() {
		for _, en := range m.sessions {
			s := en.s
			out = append(out, SessionView{Interface: en.ifname, IfIndex: s.key.IfIndex, Peer: s.key.Peer, Local: en.local,
				State: s.state.String(), RemoteState: s.remoteState.String(), Diag: s.diag.String(),
				LocalDisc: s.localDisc, RemoteDisc: s.remoteDisc, Interval: s.params.Interval, Multiplier: s.params.Multiplier,
				TxInterval: s.txInterval(), DetectTime: s.detectTime(), RemoteMinRx: dur(s.remoteMinRx), RemoteMinTx: dur(s.remoteDesiredX),
				RemoteMult: int(s.remoteMult), UpSince: s.upSince, Stats: s.stats})
		}
		ctr = make(map[string]uint64, len(m.counters))
		for k, v := range m.counters {
			ctr[k] = v
		}
		close(done)
	}}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	slices.SortFunc(out, func(a, b SessionView) int {
		if a.Interface != b.Interface {
			if a.Interface < b.Interface {
				return -1
			}
			return 1
		}
		return a.Peer.Compare(b.Peer)
	})
	return out, ctr, nil
}

// The process-wide manager: every protocol instance of a fared shares one,
// because one UDP port 3784 serves every session of the namespace.
var shared struct {
	mu     sync.Mutex
	m      *Manager
	refs   int
	cancel context.CancelFunc
	done   chan struct{}
}

// Acquire returns the shared manager, started on first use.
func Acquire(log *slog.Logger) *Manager {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.m == nil {
		m := New(Options{Logger: log})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.Run(ctx)
		}()
		shared.m, shared.cancel, shared.done = m, cancel, done
	}
	shared.refs++
	return shared.m
}

// Release gives the shared manager back; the last release stops it.
func Release(m *Manager) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if m == nil || m != shared.m {
		return
	}
	shared.refs--
	if shared.refs == 0 {
		shared.cancel()
		<-shared.done
		shared.m = nil
	}
}
