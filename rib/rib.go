// Package rib turns topology snapshots into kernel routes: it runs SPF
// (full, or route-only when only prefixes or bandwidths changed) under the
// RFC 8405 back-off, weighs the next hops with FARE, resolves them to
// (gateway, interface) through Self's adjacencies, and hands the result to
// the fib package.
//
// One goroutine (Run) owns the state; protocol instances Submit snapshots;
// readers get the immutable Snapshot.
package rib

import (
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Installer is what the manager needs of the kernel FIB (fib.FIB in
// production; tests may record calls instead).
type Installer interface {
	Sync(routes []fib.Route) (fib.Stats, error)
	Capabilities() fib.Capabilities
}

// Routing is what the manager applies to one protocol's topologies: FARE
// or plain ECMP, and the RFC 8405 back-off of its SPF runs. Each protocol
// has its own back-off, as each IGP instance has in RFC 8405: churn in one
// does not delay the other.
type Routing struct {
	ECMPOnly bool
	Delay    spf.DelayConfig
	// Distance ranks protocols when several know a prefix: the lower wins
	// (the protocols' config sections have FRR's defaults).
	Distance uint8
	// Damping is the per-link rule for capacity changes, which never
	// wait for the back-off (capacity.go).
	Damping DampConfig
	// Select is the protocol's part of the merge (selection.go): which of
	// its routes take part and how they rank against each other. nil:
	// every route, ranked by metric alone.
	Select Selection
}

// Config tunes a Manager.
type Config struct {
	// Routing per protocol ("isis", "ospf"); a protocol without an entry
	// gets Default.
	Routing map[string]Routing
	Default Routing
	FIB     Installer // nil: compute only
	// Ready reports that the protocols finished their initial database
	// sync. Until then (at most StartupHold, default 15 s) the kernel keeps
	// what a previous run installed, so a restart leaves no forwarding gap.
	Ready       func() bool
	StartupHold time.Duration
	Log         *slog.Logger
	Now         func() time.Time
	// Observe, when set, hears of every computation (metrics), on the
	// manager's goroutine: it must not block.
	Observe func(Observation)
}

// Manager is the routing table of one daemon.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	spfLog spf.Log

	// The mailbox keeps the newest graph per topology: a burst in one
	// topology replaces its own pending graph and never pushes out another
	// topology's only one.
	mu       sync.Mutex
	pending  map[string]update
	routing  map[string]Routing // protocol -> settings (owned by mu until Run takes them)
	changed  map[string]bool    // protocols whose settings changed
	dropped  map[string]bool    // protocols to forget
	mail     chan struct{}      // something is pending (capacity 1)
	subsMu   sync.Mutex
	subs     map[*Subscription]struct{}
	protoSet map[string]*protoState // owned by Run
	delays   sync.Map               // protocol -> *spf.Delay, for readers (Delays)

	// One state per topology: IS-IS level or OSPF area, keyed by topoKey.
	levels  map[string]*levelState
	snap    atomic.Pointer[Snapshot]
	lastFIB fib.Stats
	fibErr  string
	started time.Time
	synced  bool // the first Sync happened
	retry   chan struct{}
	// retryArmed: one hold re-check is pending (owned by Run).
	retryArmed bool
	// The capacity path (capacity.go), owned by Run: per-link damping,
	// and the topologies to compute at once with their triggers.
	damp     map[linkKey]*linkDamp
	capacity []string
	capTrig  []string
}

type update struct {
	g        *lsdb.Graph
	triggers []string
}

type levelState struct {
	g      *lsdb.Graph // latest to compute: adv, held bandwidths as applied
	adv    *lsdb.Graph // latest submitted (as advertised)
	done   *lsdb.Graph // last computed
	why    string      // the capacity change g holds (capacity.go)
	result *spf.Result
	routes []spf.Route // spf.Routes(result); table.Routes[i] is routes[i] weighed
	table  fare.Table
}

// protoState is one protocol's back-off: its delay machine, the time its
// next computation is due (zero: none armed) and what triggered it.
type protoState struct {
	routing  Routing
	delay    *spf.Delay
	due      time.Time
	triggers []string
	// seen: an event came; settled: the start-up flood is over for this
	// protocol (see arm).
	seen, settled bool
}

// New returns a Manager; call Run.
func New(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StartupHold == 0 {
		cfg.StartupHold = 15 * time.Second
	}
	m := &Manager{cfg: cfg, log: cfg.Log.With("sub", "rib"), retry: make(chan struct{}, 1),
		pending: map[string]update{}, routing: map[string]Routing{}, changed: map[string]bool{}, dropped: map[string]bool{},
		mail: make(chan struct{}, 1), subs: map[*Subscription]struct{}{}, protoSet: map[string]*protoState{},
		levels: map[string]*levelState{}, damp: map[linkKey]*linkDamp{}}
	for p, r := range cfg.Routing {
		m.routing[p] = r
	}
	m.snap.Store(&Snapshot{Routes: []Route{}, Delays: map[string]spf.DelayView{}})
	return m
}

// Submit hands a new snapshot of one topology to the manager. It never
// blocks: only the newest snapshot per topology matters, and a newer one
// replaces a pending one of the same topology only.
func (m *Manager) Submit(g *lsdb.Graph, trigger string) {
	k := topoKey(g)
	m.mu.Lock()
	u := m.pending[k]
	u.g = g
	if len(u.triggers) < 8 {
		u.triggers = append(u.triggers, trigger)
	}
	m.pending[k] = u
	m.mu.Unlock()
	m.kick()
}

func (m *Manager) kick() {
	select {
	case m.mail <- struct{}{}:
	default:
	}
}

// SetRouting changes one protocol's settings (a reload): new SPF timers
// take effect from the next event, and switching ECMP-only recomputes that
// protocol's topologies in full.
func (m *Manager) SetRouting(protocol string, r Routing) {
	m.mu.Lock()
	m.routing[protocol] = r
	m.changed[protocol] = true
	m.mu.Unlock()
	m.kick()
}

// Routing returns the settings in force for a protocol.
func (m *Manager) Routing(protocol string) Routing {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.routing[protocol]; ok {
		return r
	}
	return m.cfg.Default
}

// SetECMPOnly switches FARE weights off or on for every protocol.
func (m *Manager) SetECMPOnly(on bool) {
	m.mu.Lock()
	m.cfg.Default.ECMPOnly = on
	for p, r := range m.routing {
		r.ECMPOnly = on
		m.routing[p] = r
		m.changed[p] = true
	}
	m.mu.Unlock()
	m.kick()
}

// Drop forgets every topology of a protocol (its module stopped): its
// routes leave the table, and the kernel, at once.
func (m *Manager) Drop(protocol string) {
	m.mu.Lock()
	m.dropped[protocol] = true
	for k := range m.pending {
		if strings.HasPrefix(k, protocol+"/") {
			delete(m.pending, k)
		}
	}
	m.mu.Unlock()
	m.kick()
}

// Delays returns each protocol's RFC 8405 back-off as it is now (the
// snapshot's Delays are as of its computation).
func (m *Manager) Delays() map[string]spf.DelayView {
	out := map[string]spf.DelayView{}
	m.delays.Range(func(k, v any) bool {
		out[k.(string)] = v.(*spf.Delay).View()
		return true
	})
	return out
}

// Snapshot returns the latest computed state.
func (m *Manager) Snapshot() *Snapshot { return m.snap.Load() }

// Subscription delivers the newest Snapshot after each computation. A slow
// reader misses intermediate snapshots, never the latest.
type Subscription struct {
	m *Manager
	c chan *Snapshot
}

// C receives snapshots.
func (s *Subscription) C() <-chan *Snapshot { return s.c }

// Close stops the deliveries.
func (s *Subscription) Close() {
	s.m.subsMu.Lock()
	delete(s.m.subs, s)
	s.m.subsMu.Unlock()
}

// Subscribe returns a subscription whose channel first holds the current
// snapshot. Modules that follow the topology or the routes (INC builds its
// trees from it) read it instead of polling.
func (m *Manager) Subscribe() *Subscription {
	s := &Subscription{m: m, c: make(chan *Snapshot, 1)}
	s.c <- m.snap.Load()
	m.subsMu.Lock()
	m.subs[s] = struct{}{}
	m.subsMu.Unlock()
	return s
}

func (m *Manager) publish(snap *Snapshot) {
	m.snap.Store(snap)
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	for s := range m.subs {
		select {
		case <-s.c: // drop the stale one
		default:
		}
		s.c <- snap
	}
}

func (m *Manager) proto(p string) *protoState {
	ps := m.protoSet[p]
	if ps == nil {
		m.mu.Lock()
		r, ok := m.routing[p]
		if !ok {
			r = m.cfg.Default
		}
		m.mu.Unlock()
		ps = &protoState{routing: r, delay: spf.NewDelay(r.Delay, m.cfg.Now)}
		m.delays.Store(p, ps.delay)
		m.protoSet[p] = ps
	}
	return ps
}
