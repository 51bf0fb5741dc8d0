package rib

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/internal/setting"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// A capacity change is a snapshot that moves bandwidths only (Maximum Link
// Bandwidth, Path Bandwidth; spf.CapacityDiff): it needs no SPF and is
// no topology churn. The rib weighs it at once on the route-only path,
// without telling the protocol's RFC 8405 back-off, whatever state that
// is in. What protects the rib from a link whose capacity flaps is a
// rule of the link's own (DampConfig), not the topology's back-off.

// DampConfig is the per-link damping of capacity changes. A link whose
// bandwidth changed more than Changes times within Window is flapping:
// its newest bandwidth is applied when a hold ends, the first one Hold
// long, each next one twice as long (at most MaxHold) while the link
// keeps flapping. A link that stays at or under Changes per Window is
// never held. Zero fields take DefaultDampConfig's.
type DampConfig struct {
	Changes               int
	Window, Hold, MaxHold time.Duration
}

// DefaultDampConfig: more than 4 changes within 2 s is flapping; holds of
// 1 s doubling up to 30 s. Changes 1 s apart (at most 3 in any 2 s) are
// never held; a link flapping every 100 ms is held after its fifth.
func DefaultDampConfig() DampConfig {
	return DampConfig{Changes: 4, Window: 2 * time.Second, Hold: time.Second, MaxHold: 30 * time.Second}
}

func (c DampConfig) withDefaults() DampConfig {
	setting.Fill(&c, DefaultDampConfig())
	return c
}

// linkKey names a link across snapshots: its topology, its ends' node
// ids and its rank among the parallel links from one to the other.
type linkKey struct {
	topo, from, to string
	nth            int
}

// linkDamp is one link's damping state.
type linkDamp struct {
	times []time.Time   // its last changes, within the window
	hold  time.Duration // the current hold; 0: not flapping
	until time.Time     // the current hold's end
	held  bool          // a change waits for until
	li    int32         // the link's index in its topology's graph (while held)
	name  string        // "l1→s1" for the log
}

// change records a change of the link at now and reports whether its
// new bandwidth must wait for d.until.
func (d *linkDamp) change(now time.Time, c DampConfig) bool {
	cut := now.Add(-c.Window)
	d.times = slices.DeleteFunc(d.times, func(t time.Time) bool { return !t.After(cut) })
	d.times = append(d.times, now)
	if len(d.times) > c.Changes+1 {
		d.times = d.times[len(d.times)-c.Changes-1:]
	}
	switch {
	case now.Before(d.until):
		// Held by the current hold: the newest value goes out at its end.
	case len(d.times) > c.Changes:
		d.hold = min(max(c.Hold, 2*d.hold), c.MaxHold)
		d.until = now.Add(d.hold)
	default:
		d.hold = 0
		return false
	}
	d.held = true
	return true
}

// stale: nothing of the link's state matters any more.
func (d *linkDamp) stale(now time.Time, window time.Duration) bool {
	return !d.held && !now.Before(d.until) && (len(d.times) == 0 || !d.times[len(d.times)-1].After(now.Add(-window)))
}

// keyOf names link li of g in topology topo.
func keyOf(topo string, g *lsdb.Graph, li int32) (linkKey, string) {
	l := g.Links[li]
	n := 0
	for j := g.Nodes[l.From].First; j < li; j++ {
		if g.Links[j].To == l.To {
			n++
		}
	}
	from, to := &g.Nodes[l.From], &g.Nodes[l.To]
	name := nodeName(from) + "→" + nodeName(to)
	if n > 0 {
		name += fmt.Sprintf("#%d", n+1)
	}
	return linkKey{topo, from.ID, to.ID, n}, name
}

func nodeName(n *lsdb.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return n.ID
}

// capacityChange takes u on the capacity path when it moves bandwidths
// only, against the last snapshot of the topology taken, and when no
// other change of the topology waits for the back-off (ls.g == ls.done:
// a change joining one that waits is computed with it). It reports
// whether it took u; the level is then in m.capacity when there is
// something to compute.
func (m *Manager) capacityChange(k string, ls *levelState, u update, now time.Time) bool {
	if ls.adv == nil || ls.result == nil || ls.g != ls.done {
		return false
	}
	ok, links, prefixes := spf.CapacityDiff(ls.adv, u.g)
	if !ok {
		return false
	}
	ls.adv = u.g
	cfg := m.proto(u.g.Protocol).routing.Damping.withDefaults()
	var moved, held []string
	for _, li := range links {
		key, name := keyOf(k, u.g, li)
		d := m.damp[key]
		if d == nil {
			d = &linkDamp{}
			m.damp[key] = d
		}
		d.li, d.name = li, name
		if d.change(now, cfg) {
			held = append(held, fmt.Sprintf("%s until %s", name, d.until.Format(time.TimeOnly+".000")))
		} else {
			moved = append(moved, name)
		}
	}
	for _, pi := range prefixes {
		moved = append(moved, "path bandwidth of "+u.g.Prefixes[pi].Prefix.String())
	}
	if len(moved) == 0 {
		// Nothing to weigh now (a refresh, or every change is held): the
		// last computed snapshot still holds what applies.
		return true
	}
	ls.g = m.effective(k, ls.adv, ls.done)
	ls.why = "bandwidth change on " + listed(moved)
	if len(held) > 0 {
		ls.why += "; damped (flapping): " + listed(held)
	}
	m.capacity = append(m.capacity, k)
	m.capTrig = append(m.capTrig, u.triggers...)
	return true
}

// effective is adv with the bandwidths of the topology's held links as
// applied (from applied, the last computed snapshot, of the same
// topology). A new snapshot, not a changed one: graphs are immutable.
func (m *Manager) effective(k string, adv, applied *lsdb.Graph) *lsdb.Graph {
	var links []lsdb.Link
	for key, d := range m.damp {
		if key.topo != k || !d.held {
			continue
		}
		if links == nil {
			links = slices.Clone(adv.Links)
		}
		links[d.li].MaxBW, links[d.li].HasBW = applied.Links[d.li].MaxBW, applied.Links[d.li].HasBW
	}
	if links == nil {
		return adv
	}
	g := *adv
	g.Links = links
	return &g
}

// releaseLevel ends the holds of a topology whose snapshot is not a
// capacity change: its computation applies what is advertised.
func (m *Manager) releaseLevel(k string) {
	for key, d := range m.damp {
		if key.topo == k {
			d.held = false
		}
	}
}

// releaseDue applies the bandwidths whose hold ended, route-only, at once.
func (m *Manager) releaseDue(now time.Time) {
	released := map[string][]string{}
	for key, d := range m.damp {
		if d.held && !now.Before(d.until) {
			d.held = false
			released[key.topo] = append(released[key.topo], d.name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(released)) {
		ls := m.levels[k]
		if ls == nil || ls.adv == nil || ls.g != ls.done {
			continue // gone, or a waiting computation applies them
		}
		ls.g = m.effective(k, ls.adv, ls.done)
		ls.why = "damped bandwidth applied on " + listed(slices.Sorted(slices.Values(released[k])))
		m.capacity = append(m.capacity, k)
	}
	if len(m.capacity) > 0 {
		m.capTrig = append(m.capTrig, "damping hold ended")
		m.runCapacity()
	}
}

// nextRelease is the end of the earliest hold, zero when none.
func (m *Manager) nextRelease() time.Time {
	var next time.Time
	for _, d := range m.damp {
		if d.held && (next.IsZero() || d.until.Before(next)) {
			next = d.until
		}
	}
	return next
}

// pruneDamp forgets the links whose changes are all older than the window
// and that hold nothing.
func (m *Manager) pruneDamp(now time.Time) {
	for key, d := range m.damp {
		p, _, _ := strings.Cut(key.topo, "/")
		if ps := m.protoSet[p]; ps == nil || d.stale(now, ps.routing.Damping.withDefaults().Window) {
			delete(m.damp, key)
		}
	}
}

// runCapacity computes the topologies the capacity path took, now.
func (m *Manager) runCapacity() {
	if len(m.capacity) == 0 {
		return
	}
	keys, trig := m.capacity, m.capTrig
	m.capacity, m.capTrig = nil, nil
	m.compute(func(k string) bool { return slices.Contains(keys, k) }, trig)
}
