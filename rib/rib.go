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
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/netip"
	"slices"
	"sort"
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
	// (config.DefaultDistance has FRR's values, OSPF 110 before IS-IS 115).
	Distance uint8
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
}

type update struct {
	g        *lsdb.Graph
	triggers []string
}

type levelState struct {
	g      *lsdb.Graph // latest submitted
	done   *lsdb.Graph // last computed
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
		levels: map[string]*levelState{}}
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

// Run computes until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	m.started = m.cfg.Now()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.mail:
			m.takeMail()
		case <-m.retry:
			m.retryArmed = false
			if !m.holding() {
				// The hold ended, maybe while a computation waits out the
				// SPF back-off: compute from the newest snapshots now, so
				// the first write reflects the converged database.
				var trig []string
				var ran []*protoState
				for _, ps := range m.protoSet {
					trig = append(trig, ps.triggers...)
					if !ps.due.IsZero() {
						ran = append(ran, ps)
					}
					ps.triggers, ps.due = nil, time.Time{}
				}
				m.compute(nil, append(trig, "initial convergence"))
				for _, ps := range ran {
					ps.delay.Ran(m.cfg.Now())
				}
			} else {
				m.armRetry()
			}
		case <-timer.C:
		}
		m.runDue()
		if next := m.nextDue(); !next.IsZero() {
			timer.Reset(max(0, next.Sub(m.cfg.Now())))
		}
	}
}

// takeMail moves what Submit, SetRouting and Drop left into Run's state
// and arms the affected protocols' SPF timers.
func (m *Manager) takeMail() {
	m.mu.Lock()
	pending, changed, dropped := m.pending, m.changed, m.dropped
	m.pending, m.changed, m.dropped = map[string]update{}, map[string]bool{}, map[string]bool{}
	routing := maps.Clone(m.routing)
	m.mu.Unlock()
	now := m.cfg.Now()
	for p := range dropped {
		for k := range m.levels {
			if strings.HasPrefix(k, p+"/") {
				delete(m.levels, k)
			}
		}
		delete(m.protoSet, p)
		m.delays.Delete(p)
		m.compute(nil, []string{p + " stopped"})
	}
	for p := range changed {
		ps := m.proto(p)
		r := routing[p]
		if r.Delay != ps.routing.Delay {
			// New timers: a fresh back-off machine (in QUIET) that uses them.
			ps.delay = spf.NewDelay(r.Delay, m.cfg.Now)
			m.delays.Store(p, ps.delay)
		}
		if r.ECMPOnly != ps.routing.ECMPOnly {
			for k, ls := range m.levels {
				if strings.HasPrefix(k, p+"/") {
					ls.done, ls.result = nil, nil // full recompute in the new mode
				}
			}
			m.arm(ps, now, "ecmp-only changed")
		}
		ps.routing = r
	}
	for k, u := range pending {
		if m.levels[k] == nil {
			m.levels[k] = &levelState{}
		}
		m.levels[k].g = u.g
		m.arm(m.proto(u.g.Protocol), now, u.triggers...)
	}
}

// arm records an SPF event for the protocol: RFC 8405 gives the time of
// the computation; a computation already armed keeps its time.
func (m *Manager) arm(ps *protoState, now time.Time, triggers ...string) {
	ps.triggers = append(ps.triggers, triggers...)
	at := ps.delay.Event(now)
	if ps.due.IsZero() {
		ps.due = at
	}
}

func (m *Manager) nextDue() time.Time {
	var next time.Time
	for _, ps := range m.protoSet {
		if !ps.due.IsZero() && (next.IsZero() || ps.due.Before(next)) {
			next = ps.due
		}
	}
	return next
}

// runDue computes every protocol whose SPF time has come, in one pass.
func (m *Manager) runDue() {
	now := m.cfg.Now()
	var due []string
	var trig []string
	for p, ps := range m.protoSet {
		if !ps.due.IsZero() && !ps.due.After(now) {
			due = append(due, p)
			trig = append(trig, ps.triggers...)
			ps.due, ps.triggers = time.Time{}, nil
		}
	}
	if len(due) == 0 {
		return
	}
	m.compute(due, trig)
	for _, p := range due {
		m.protoSet[p].delay.Ran(m.cfg.Now())
	}
}

// compute runs SPF and FARE where the topologies of the given protocols
// (nil: all) changed, and installs the merged table.
func (m *Manager) compute(protocols []string, triggers []string) {
	start := m.cfg.Now()
	kind := "route-only"
	nodes := 0
	for _, ls := range m.levels {
		if ls == nil || ls.g == nil || ls.g == ls.done {
			continue
		}
		if protocols != nil && !slices.Contains(protocols, ls.g.Protocol) {
			continue
		}
		opt := fare.Options{ECMPOnly: m.proto(ls.g.Protocol).routing.ECMPOnly}
		if same, changed := topologyDiff(ls); same {
			// Only prefixes or bandwidths changed: keep the DAG, redo
			// FARE only below the links whose bandwidth changed.
			prevR := ls.result
			ls.result = spf.ReuseChanged(prevR, ls.g, changed)
			ls.routes = spf.Routes(ls.result)
			ls.table = fare.Update(ls.table, prevR, ls.result, ls.routes, changed, opt)
		} else {
			ls.result = spf.Run(ls.g)
			ls.routes = spf.Routes(ls.result)
			ls.table = fare.ComputeTable(ls.result, ls.routes, opt)
			kind = "full"
		}
		ls.done = ls.g
		nodes += len(ls.g.Nodes)
	}
	prev := m.snap.Load()
	snap := m.build(prev.Routes)
	snap.Computed = m.cfg.Now()
	t1 := snap.Computed
	synced, fibErr := m.install(snap)
	t2 := m.cfg.Now()
	changed := diffRoutes(prev.Routes, snap.Routes)
	end := m.cfg.Now()
	entry := spf.LogEntry{At: start, Trigger: joinTriggers(triggers), Kind: kind, Duration: end.Sub(start),
		Compute: t1.Sub(start) + end.Sub(t2), Install: t2.Sub(t1), Nodes: nodes, RoutesChanged: changed}
	m.spfLog.Add(entry)
	if m.cfg.Observe != nil {
		m.cfg.Observe(Observation{SPF: entry, Synced: synced, FIB: snap.FIB, FIBErrors: countErrors(fibErr), Reweighted: reweighted(prev.Routes, snap.Routes)})
	}
	snap.Log = m.spfLog.Entries()
	snap.Delays = map[string]spf.DelayView{}
	for p, ps := range m.protoSet {
		snap.Delays[p] = ps.delay.View()
	}
	for _, k := range slices.Sorted(maps.Keys(m.levels)) {
		if ls := m.levels[k]; ls.done != nil {
			snap.Graphs = append(snap.Graphs, ls.done)
		}
	}
	m.publish(snap)
	m.log.Debug("routes computed", "kind", kind, "routes", len(snap.Routes), "changed", changed, "took", m.cfg.Now().Sub(start))
}

// topologyDiff compares the level's new snapshot with the last computed
// one (false when there is none, or the mode changed).
func topologyDiff(ls *levelState) (bool, []int32) {
	if ls.result == nil || ls.done == nil {
		return false, nil
	}
	return spf.TopologyDiff(ls.done, ls.g, true)
}

func joinTriggers(ts []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("+%d more", len(out)-4))
	}
	s := ""
	for i, t := range out {
		if i > 0 {
			s += ", "
		}
		s += t
	}
	return s
}

// install writes the snapshot's routes to the kernel, unless the start-up
// hold is still on; then it retries shortly. It reports whether it wrote,
// and the kernel's errors.
func (m *Manager) install(snap *Snapshot) (bool, error) {
	if m.cfg.FIB == nil {
		return false, nil
	}
	if m.holding() {
		snap.FIBError = "holding the kernel table until initial convergence"
		m.armRetry()
		return false, nil
	}
	m.synced = true
	st, err := m.cfg.FIB.Sync(snap.fibRoutes())
	m.lastFIB = st
	m.fibErr = ""
	if err != nil {
		m.fibErr = err.Error()
		m.log.Error("kernel FIB update failed", "err", err)
	}
	snap.FIB, snap.FIBError = m.lastFIB, m.fibErr
	return true, err
}

// holding: the kernel keeps the previous run's routes until the protocols
// converged (or the hold expired).
func (m *Manager) holding() bool {
	return !m.synced && m.cfg.Ready != nil && !m.cfg.Ready() && m.cfg.Now().Sub(m.started) < m.cfg.StartupHold
}

func (m *Manager) armRetry() {
	if m.retryArmed {
		return
	}
	m.retryArmed = true
	time.AfterFunc(250*time.Millisecond, func() { m.retry <- struct{}{} })
}

// build merges the levels (see better) and resolves next hops. A route
// whose next hops come out as they are in prev (the last snapshot's
// routes, sorted) shares prev's slice: snapshots are immutable, and after
// a bandwidth change most routes keep theirs (a 5-stage leaf has 65,000
// next hops). New next hops and the advertisers are carved out of a few
// large allocations.
func (m *Manager) build(prev []Route) *Snapshot {
	snap := &Snapshot{Routes: []Route{}}
	maxW := uint32(255)
	if m.cfg.FIB != nil && m.cfg.FIB.Capabilities().Weight16 {
		maxW = 65535
	}
	snap.WeightMax = maxW
	keys := make([]string, 0, len(m.levels))
	for k := range m.levels {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic merge order
	nRoutes, nHops, nAdvs := 0, 0, 0
	for _, k := range keys {
		ls := m.levels[k]
		if ls.result == nil {
			continue
		}
		nRoutes += len(ls.table.Routes)
		aligned := len(ls.routes) == len(ls.table.Routes)
		for i := range ls.table.Routes {
			fr := &ls.table.Routes[i]
			nHops += len(fr.NextHops)
			if aligned && ls.routes[i].Prefix == fr.Prefix {
				nAdvs += len(ls.routes[i].Sources)
			} else {
				nAdvs += len(fr.Advertisers)
			}
		}
	}
	snap.Routes = make([]Route, 0, nRoutes)
	st := &routeStore{prev: prev, need: nHops, advs: make([]string, 0, nAdvs)}
	byPrefix := make(map[netip.Prefix]int, nRoutes)
	kinds := make([]pathKind, 0, nRoutes) // of snap.Routes, while merging
	bbActive := m.ospfBackboneActive()
	for _, k := range keys {
		ls := m.levels[k]
		if ls.result == nil {
			continue
		}
		snap.Anomalies = snap.Anomalies.Add(ls.table.Anomalies)
		g := ls.result.Graph
		res := newHopResolver(g)
		aligned := len(ls.routes) == len(ls.table.Routes)
		for i := range ls.table.Routes {
			fr := &ls.table.Routes[i]
			var sr *spf.Route
			if aligned && ls.routes[i].Prefix == fr.Prefix {
				sr = &ls.routes[i]
			}
			pk := kindOf(sr)
			// RFC 2328 §16.2: an ABR examines only the backbone's
			// Summary LSAs. As FRR's default ABR type (RFC 3509 §2.2),
			// only while the backbone connection is active; without
			// it, inter-area routes of every area count. A router in
			// one area alone never has both.
			if g.Protocol == "ospf" && pk.kind == ospfInter && bbActive && g.Area != ospfBackbone {
				continue
			}
			r := m.route(g, res, st, fr, sr, maxW)
			j, dup := byPrefix[fr.Prefix]
			switch {
			case !dup:
				byPrefix[fr.Prefix] = len(snap.Routes)
				snap.Routes = append(snap.Routes, r)
				kinds = append(kinds, pk)
			case better(r, pk, m.distance(r.Protocol), snap.Routes[j], kinds[j], m.distance(snap.Routes[j].Protocol)):
				snap.Routes[j], kinds[j] = r, pk
			}
		}
	}
	// Prefixes are unique here, so any sort gives the same order; a single
	// topology's table comes sorted already.
	if !slices.IsSortedFunc(snap.Routes, cmpRoute) {
		slices.SortFunc(snap.Routes, cmpRoute)
	}
	return snap
}

func cmpRoute(a, b Route) int {
	switch {
	case prefixLess(a.Prefix, b.Prefix):
		return -1
	case prefixLess(b.Prefix, a.Prefix):
		return 1
	}
	return 0
}

// routeStore is the backing of one build's routes: each route's next
// hops and advertisers are a window of these (appends beyond a window's
// end would reallocate, never overwrite a neighbour's).
type routeStore struct {
	prev []Route   // the last snapshot's, sorted by prefix
	hops []NextHop // the current chunk of new next hops
	need int       // next hops still to place at most (sizes the chunks)
	last []NextHop // the route before's, to share with a run of equal ones
	advs []string
	tmp  []NextHop // one route's next hops, before they are kept
	// Per-route scratch, reused: hop resolutions, their order, weights,
	// kernel weights and advertiser indices.
	res  []resolved
	idx  []int
	ws   []float64
	q    []uint32
	advN []int32
}

// keep returns hops as a route's next hops: the route before's slice
// when equal (a fabric's prefixes come in runs with the same next hops:
// every leaf of a pod seen from another, 16 next hops of ~200 bytes
// each at a 5-stage leaf), else the previous snapshot's slice for the
// prefix when equal, else a copy in the current chunk. Routes share
// next hops read-only.
func (st *routeStore) keep(p netip.Prefix, hops []NextHop) []NextHop {
	st.need -= len(hops)
	if len(hops) > 0 && slices.EqualFunc(st.last, hops, sameHop) {
		return st.last
	}
	st.last = st.keepOwn(p, hops)
	return st.last
}

func (st *routeStore) keepOwn(p netip.Prefix, hops []NextHop) []NextHop {
	if i, ok := slices.BinarySearchFunc(st.prev, p, func(r Route, p netip.Prefix) int {
		switch {
		case prefixLess(r.Prefix, p):
			return -1
		case prefixLess(p, r.Prefix):
			return 1
		}
		return 0
	}); ok && slices.EqualFunc(st.prev[i].NextHops, hops, sameHop) {
		return st.prev[i].NextHops
	}
	if cap(st.hops)-len(st.hops) < len(hops) {
		// Chunks of up to 4096 next hops (~880 kB): all of them when
		// nothing is shared, little waste when most are.
		st.hops = make([]NextHop, 0, max(len(hops), min(st.need+len(hops), 4096)))
	}
	h0 := len(st.hops)
	st.hops = append(st.hops, hops...)
	return st.hops[h0:len(st.hops):len(st.hops)]
}

// sameHop: a and b are equal field for field, floats bit for bit (a 0
// that became -0 is a change of the JSON).
func sameHop(a, b NextHop) bool {
	bits := math.Float64bits
	return a == b && bits(a.LinkBW) == bits(b.LinkBW) && bits(a.NeighborBW) == bits(b.NeighborBW) &&
		bits(a.DownCap) == bits(b.DownCap) && bits(a.PathBW) == bits(b.PathBW) && bits(a.Weight) == bits(b.Weight) &&
		bits(a.Share) == bits(b.Share) && bits(a.KernelShare) == bits(b.KernelShare)
}

type resolved struct {
	gw  netip.Addr
	adj *lsdb.Adjacency
	ok  bool
}

// distance is the administrative distance of a protocol's routes.
func (m *Manager) distance(protocol string) int {
	return int(m.proto(protocol).routing.Distance)
}

// topoKey names the topology of a snapshot: protocol plus level or area.
func topoKey(g *lsdb.Graph) string {
	if g.Area != "" {
		return g.Protocol + "/" + g.Area
	}
	return fmt.Sprintf("%s/L%d", g.Protocol, g.Level)
}

// ospfBackbone is the OSPF backbone's area name (graph Area).
const ospfBackbone = "0.0.0.0"

// ospfBackboneActive reports whether Self has a neighbour in the OSPF
// backbone (FRR: a Full neighbour there, "active backbone connection").
func (m *Manager) ospfBackboneActive() bool {
	ls := m.levels["ospf/"+ospfBackbone]
	return ls != nil && ls.result != nil && len(ls.result.Neighbors) > 0
}

// OSPF path types, best first (RFC 2328 §11).
const (
	ospfIntra = iota
	ospfInter
	ospfE1
	ospfE2
)

// pathKind is what the merge compares beyond Route: the OSPF path type and
// the type-2 metric of a type-2 external.
type pathKind struct {
	kind int
	t2   uint32
}

func kindOf(sr *spf.Route) pathKind {
	switch {
	case sr == nil:
		return pathKind{}
	case sr.External && sr.Type2:
		return pathKind{kind: ospfE2, t2: sr.Type2Metric}
	case sr.External:
		return pathKind{kind: ospfE1}
	case sr.Inter:
		return pathKind{kind: ospfInter}
	}
	return pathKind{}
}

// better reports whether route a (of kind ka, protocol distance da) beats
// route b (kb, db) for the same prefix: the protocol with the lower
// distance first. Then, for two
// OSPF routes (from different areas), the path type (RFC 2328 §11:
// intra-area, inter-area, type-1 external, type-2 external; §16.4(6)(a)-(b));
// for type-2 externals the type-2 metric; then the lower metric (for type
// 2, the distance to the ASBR or forwarding address, §16.4(6)(d)). For
// IS-IS, an up route beats a down one (RFC 5302 §3.3: a prefix an L1L2
// router leaked into L1 never wins over the L2 route it came from); then
// level 1 beats level 2 (ISO 10589 §7.2.12); then the lower metric.
func better(a Route, ka pathKind, da int, b Route, kb pathKind, db int) bool {
	if da != db {
		return da < db
	}
	if a.Protocol == "ospf" && b.Protocol == "ospf" {
		if ka.kind != kb.kind {
			return ka.kind < kb.kind
		}
		if ka.kind == ospfE2 && ka.t2 != kb.t2 {
			return ka.t2 < kb.t2
		}
		return a.Metric < b.Metric
	}
	if a.Down != b.Down {
		return !a.Down
	}
	if a.Level != b.Level {
		return a.Level < b.Level
	}
	return a.Metric < b.Metric
}

func prefixLess(a, b netip.Prefix) bool {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c < 0
	}
	return a.Bits() < b.Bits()
}

// route resolves one FARE route into kernel next hops. sr, when known,
// is the spf route fr weighs: its advertisers are the advertisements'
// (fr's are where the paths lead: for an OSPF external with a forwarding
// address, the exits toward that address).
func (m *Manager) route(g *lsdb.Graph, res *hopResolver, st *routeStore, fr *fare.Route, sr *spf.Route, maxW uint32) Route {
	r := Route{Prefix: fr.Prefix, Protocol: g.Protocol, Level: g.Level, Area: g.Area, Metric: fr.Metric, Mode: fr.Mode, Down: fr.Down}
	if fr.HasPathBW {
		pb := fr.PathBW
		r.PathBW = &pb
	}
	a0 := len(st.advs)
	if sr != nil {
		st.advN = st.advN[:0]
		for _, s := range sr.Sources {
			if a := g.Prefixes[s.Prefix].Node; !slices.Contains(st.advN, a) {
				st.advN = append(st.advN, a)
				st.advs = append(st.advs, nodeLabel(g, a))
			}
		}
	} else {
		for _, a := range fr.Advertisers {
			st.advs = append(st.advs, nodeLabel(g, a))
		}
	}
	if n := len(st.advs); n > a0 {
		r.Advertisers = st.advs[a0:n:n]
	}
	n := len(fr.NextHops)
	if n == 0 {
		r.NextHops = []NextHop{}
		return r
	}
	// Resolve, then present the next hops in interface order (stable;
	// an unresolved hop has no interface); weights move with them.
	v4 := fr.Prefix.Addr().Is4()
	st.res, st.idx = st.res[:0], st.idx[:0]
	for i, nh := range fr.NextHops {
		gw, adj, ok := res.resolve(nh, v4)
		st.res = append(st.res, resolved{gw, adj, ok})
		st.idx = append(st.idx, i)
	}
	ifname := func(i int) string {
		if x := &st.res[i]; x.ok {
			return x.adj.IfName
		}
		return ""
	}
	idx := st.idx
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && ifname(idx[j]) < ifname(idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	st.tmp, st.ws = st.tmp[:0], st.ws[:0]
	for _, i := range idx {
		nh := &fr.NextHops[i]
		h := NextHop{
			Neighbor: g.Nodes[nh.Neighbor].ID, NeighborName: g.Nodes[nh.Neighbor].Name,
			LinkBW: nh.LinkBW, NeighborBW: nh.NeighborBW, DownCap: nh.DownCap, PathBW: nh.PathBW,
			Weight: nh.Weight, Share: nh.Share,
		}
		if x := &st.res[i]; x.ok {
			h.Gateway, h.Interface, h.IfIndex = x.gw, x.adj.IfName, x.adj.IfIndex
		} else {
			h.Unresolved = true
		}
		st.tmp = append(st.tmp, h)
		st.ws = append(st.ws, nh.Weight)
	}
	q, qerr := fare.QuantizeTo(st.q, st.ws, maxW)
	st.q = q
	var qsum uint64
	for _, x := range q {
		qsum += uint64(x)
	}
	for i := range st.tmp {
		st.tmp[i].KernelWeight = q[i]
		if qsum > 0 {
			st.tmp[i].KernelShare = float64(q[i]) / float64(qsum)
		}
	}
	r.QuantError = qerr
	r.NextHops = st.keep(r.Prefix, st.tmp)
	return r
}

func nodeLabel(g *lsdb.Graph, n int32) string {
	if g.Nodes[n].Name != "" {
		return g.Nodes[n].Name
	}
	return g.Nodes[n].ID
}

// hopResolver turns FARE next hops into (gateway, interface) through
// Self's adjacencies, indexed by neighbour node once per graph.
type hopResolver struct {
	g      *lsdb.Graph
	byNode map[int32][]int32 // indices into g.Adjacencies, in their order
}

func newHopResolver(g *lsdb.Graph) *hopResolver {
	r := &hopResolver{g: g, byNode: make(map[int32][]int32, len(g.Adjacencies))}
	for i := range g.Adjacencies {
		if n := g.Lookup(g.Adjacencies[i].Node); n >= 0 {
			r.byNode[n] = append(r.byNode[n], int32(i))
		}
	}
	return r
}

// resolve finds the gateway and interface of one FARE next hop: the
// adjacency to the first-hop neighbour on the interface that owns the
// local address of Self's link (parallel links differ only there).
func (r *hopResolver) resolve(nh fare.NextHop, v4 bool) (netip.Addr, *lsdb.Adjacency, bool) {
	g := r.g
	var local netip.Addr
	if nh.Link >= 0 && int(nh.Link) < len(g.Links) {
		local = g.LinkAddrs(nh.Link).Local.Addr()
	}
	var cand *lsdb.Adjacency
	for _, i := range r.byNode[nh.Neighbor] {
		a := &g.Adjacencies[i]
		if local.IsValid() && !slices.ContainsFunc(a.Local, func(p netip.Prefix) bool { return p.Addr() == local }) {
			continue
		}
		cand = a
		break
	}
	if cand == nil {
		return netip.Addr{}, nil, false
	}
	for _, x := range cand.NbrAddrs {
		if x.Is4() == v4 {
			return x, cand, true
		}
	}
	return netip.Addr{}, cand, false
}

// diffRoutes counts the prefixes whose kernel state differs between the
// route lists a and b (sameKernel), gone ones included. Snapshots are
// sorted by prefix and unique: then one merge walk does it.
func diffRoutes(a, b []Route) int {
	if sortedUnique(a) && sortedUnique(b) {
		n := 0
		for i, j := 0, 0; i < len(a) || j < len(b); {
			switch {
			case j == len(b) || (i < len(a) && prefixLess(a[i].Prefix, b[j].Prefix)):
				n++ // gone
				i++
			case i == len(a) || prefixLess(b[j].Prefix, a[i].Prefix):
				if !sameKernel(nil, &b[j]) {
					n++
				}
				j++
			default:
				if !sameKernel(&a[i], &b[j]) {
					n++
				}
				i++
				j++
			}
		}
		return n
	}
	am := make(map[netip.Prefix]*Route, len(a))
	for i := range a {
		am[a[i].Prefix] = &a[i]
	}
	n := 0
	seen := make(map[netip.Prefix]bool, len(b))
	for i := range b {
		r := &b[i]
		seen[r.Prefix] = true
		if !sameKernel(am[r.Prefix], r) {
			n++
		}
	}
	for p := range am {
		if !seen[p] {
			n++
		}
	}
	return n
}

// sortedUnique reports whether rs is sorted by prefix without repeats.
func sortedUnique(rs []Route) bool {
	for i := 1; i < len(rs); i++ {
		if !prefixLess(rs[i-1].Prefix, rs[i].Prefix) {
			return false
		}
	}
	return true
}
