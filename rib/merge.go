package rib

import (
	"maps"
	"math"
	"net/netip"
	"slices"

	"github.com/fared/fared/spf"
)

// build merges the topologies (selection.go) and resolves next hops. A route
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
	keys := slices.Sorted(maps.Keys(m.levels)) // deterministic merge order
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
	ranks := make([]uint64, 0, nRoutes) // of snap.Routes, while merging
	rankers := m.rankers(keys)
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
			var rank uint64
			if rk := rankers[g.Protocol]; rk != nil {
				var use bool
				if rank, use = rk(g, fr, sr); !use {
					continue
				}
			}
			r := m.route(g, res, st, fr, sr, maxW)
			j, dup := byPrefix[fr.Prefix]
			switch {
			case !dup:
				byPrefix[fr.Prefix] = len(snap.Routes)
				snap.Routes = append(snap.Routes, r)
				ranks = append(ranks, rank)
			case better(r, rank, m.distance(r.Protocol), snap.Routes[j], ranks[j], m.distance(snap.Routes[j].Protocol)):
				snap.Routes[j], ranks[j] = r, rank
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

func prefixLess(a, b netip.Prefix) bool {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c < 0
	}
	return a.Bits() < b.Bits()
}
