package rib

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/spf"
)

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
			m.retryHold()
		case <-timer.C:
		}
		m.runDue()
		m.releaseDue(m.cfg.Now())
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
		m.pruneDamp(now)
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
	m.pruneDamp(now)
	for _, k := range slices.Sorted(maps.Keys(pending)) {
		u := pending[k]
		ls := m.levels[k]
		if ls == nil {
			ls = &levelState{}
			m.levels[k] = ls
		}
		if m.capacityChange(k, ls, u, now) {
			continue
		}
		// Topology (or prefixes, adjacencies): the back-off schedules it,
		// and its computation applies every bandwidth as advertised.
		m.releaseLevel(k)
		ls.g, ls.adv, ls.why = u.g, u.g, ""
		m.arm(m.proto(u.g.Protocol), now, u.triggers...)
	}
	m.runCapacity()
}

// arm records an SPF event for the protocol: RFC 8405 gives the time of
// the computation; a computation already armed keeps its time.
//
// Start-up is not churn: the initial flood drives the back-off into
// LONG_WAIT while the kernel is held, and the LSPs that arrive after the
// hold ended (a big database floods for longer than the hold's quiet
// second) would each wait LONG_SPF_DELAY, about 5 s, with the kernel
// incomplete. So after the first kernel write and until the back-off
// has once gone back to QUIET (a holddown without events), a computation
// waits at most SHORT_SPF_DELAY. A protocol started later (a reload adds
// it) gets the same for its own flood. The back-off still sees every
// event.
func (m *Manager) arm(ps *protoState, now time.Time, triggers ...string) {
	ps.triggers = append(ps.triggers, triggers...)
	if m.synced && !ps.settled && ps.seen && ps.delay.State() == spf.Quiet {
		ps.settled = true
	}
	ps.seen = true
	at := ps.delay.Event(now)
	if short := now.Add(ps.delay.Short()); m.synced && !ps.settled && short.Before(at) {
		at = short
	}
	if ps.due.IsZero() || at.Before(ps.due) {
		ps.due = at
	}
}

func (m *Manager) nextDue() time.Time {
	next := m.nextRelease()
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
	m.compute(func(k string) bool { p, _, _ := strings.Cut(k, "/"); return slices.Contains(due, p) }, trig)
	for _, p := range due {
		m.protoSet[p].delay.Ran(m.cfg.Now())
	}
}

// compute runs SPF and FARE where the topologies pick chooses (nil: all)
// changed, and installs the merged table.
func (m *Manager) compute(pick func(topo string) bool, triggers []string) {
	start := m.cfg.Now()
	full, capacity := false, true
	nodes := 0
	var reasons []string
	for _, k := range slices.Sorted(maps.Keys(m.levels)) {
		ls := m.levels[k]
		if ls == nil || ls.g == nil || ls.g == ls.done || (pick != nil && !pick(k)) {
			continue
		}
		f, why := m.computeLevel(ls)
		full = full || f
		capacity = capacity && ls.why != ""
		reasons = append(reasons, k+" "+why)
		ls.done, ls.why = ls.g, ""
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
	entry := spf.LogEntry{At: start, Trigger: listed(triggers), Full: full, Reason: listed(reasons), Capacity: capacity && len(reasons) > 0,
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
	m.log.Debug("routes computed", "kind", entry.Kind(), "reason", entry.Reason, "routes", len(snap.Routes), "changed", changed, "took", m.cfg.Now().Sub(start))
}

// computeLevel runs SPF and FARE on the level's new snapshot: route-only
// when its topology is the last computed one's, else in full. It says
// which, and why.
func (m *Manager) computeLevel(ls *levelState) (full bool, why string) {
	opt := fare.Options{ECMPOnly: m.proto(ls.g.Protocol).routing.ECMPOnly}
	same, changed := topologyDiff(ls)
	if !same {
		ls.result = spf.Run(ls.g)
		ls.routes = spf.Routes(ls.result)
		ls.table = fare.ComputeTable(ls.result, ls.routes, opt)
		if ls.done == nil {
			return true, "full: first computation"
		}
		return true, "full: topology"
	}
	// Only prefixes or bandwidths changed: keep the DAG, redo FARE only
	// below the links whose bandwidth changed.
	prevR := ls.result
	ls.result = spf.ReuseChanged(prevR, ls.g, changed)
	ls.routes = spf.Routes(ls.result)
	ls.table = fare.Update(ls.table, prevR, ls.result, ls.routes, changed, opt)
	if ls.why != "" {
		return false, "route-only: " + ls.why
	}
	return false, "route-only: prefixes or adjacencies"
}

// topologyDiff compares the level's new snapshot with the last computed
// one (false when there is none, or the mode changed).
func topologyDiff(ls *levelState) (bool, []int32) {
	if ls.result == nil || ls.done == nil {
		return false, nil
	}
	return spf.TopologyDiff(ls.done, ls.g, true)
}

// listed joins distinct items, at most four and a count of the rest.
func listed(ts []string) string {
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
	return strings.Join(out, ", ")
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

// retryHold: if the start-up hold ended, maybe while a computation waits
// out the SPF back-off, compute from the newest snapshots now, so the first
// write reflects the converged database; otherwise look again shortly.
func (m *Manager) retryHold() {
	if m.holding() {
		m.armRetry()
		return
	}
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
}

func (m *Manager) armRetry() {
	if m.retryArmed {
		return
	}
	m.retryArmed = true
	time.AfterFunc(100*time.Millisecond, func() { m.retry <- struct{}{} })
}
