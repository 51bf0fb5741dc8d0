package rib

import (
	"errors"
	"net/netip"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/spf"
)

// Observation is what one computation did: the daemon's metrics count
// from it (Config.Observe). Snapshots cannot serve for counting: a reader
// may skip some, and the SPF log keeps only the last runs.
type Observation struct {
	SPF spf.LogEntry
	// Synced: the routes went to the kernel (a FIB is configured and the
	// start-up hold is over); FIB and FIBErrors describe that write.
	Synced bool
	FIB    fib.Stats
	// FIBErrors counts the kernel's refusals: one per object that failed
	// (Sync joins them), or 1 for a failure of the whole write.
	FIBErrors int
	// Reweighted counts routes whose next hops stayed the same while
	// their kernel weights changed: FARE's weight changes.
	Reweighted int
}

// countErrors counts the failures a Sync joined.
func countErrors(err error) int {
	if err == nil {
		return 0
	}
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		return len(j.Unwrap())
	}
	return 1
}

// reweighted counts the routes of b that a holds with the same next hops
// (gateway and interface) but other kernel weights. Snapshots are sorted
// by prefix and unique: a merge walk pairs the routes without maps.
func reweighted(a, b []Route) int {
	if !sortedUnique(a) || !sortedUnique(b) {
		return reweightedMap(a, b)
	}
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case prefixLess(a[i].Prefix, b[j].Prefix):
			i++
		case prefixLess(b[j].Prefix, a[i].Prefix):
			j++
		default:
			if reweightedRoute(a[i].NextHops, b[j].NextHops) {
				n++
			}
			i++
			j++
		}
	}
	return n
}

// reweightedRoute is reweightedMap's test for one prefix, on the (few)
// next hops directly: old is what a map of a's kernel hops would hold
// (the last weight of a repeated hop wins, repeats count once).
func reweightedRoute(old, cur []NextHop) bool {
	kernel := func(h *NextHop) bool { return h.KernelWeight > 0 && !h.Unresolved }
	// lookup returns the weight of the last kernel hop of old at (gw, ix).
	lookup := func(h *NextHop) (uint32, bool) {
		for k := len(old) - 1; k >= 0; k-- {
			o := &old[k]
			if kernel(o) && o.Gateway == h.Gateway && o.IfIndex == h.IfIndex {
				return o.KernelWeight, true
			}
		}
		return 0, false
	}
	distinct := 0 // (gw, ix) pairs of old's kernel hops
	for k := range old {
		o := &old[k]
		if !kernel(o) {
			continue
		}
		first := true
		for l := 0; l < k; l++ {
			if x := &old[l]; kernel(x) && x.Gateway == o.Gateway && x.IfIndex == o.IfIndex {
				first = false
				break
			}
		}
		if first {
			distinct++
		}
	}
	same, changed, n := true, false, 0
	for k := range cur {
		h := &cur[k]
		if !kernel(h) {
			continue
		}
		n++
		w, ok := lookup(h)
		if !ok {
			same = false
			break
		}
		if w != h.KernelWeight {
			changed = true
		}
	}
	return same && changed && n == distinct
}

// reweightedMap is reweighted for route lists that are not sorted.
func reweightedMap(a, b []Route) int {
	type hop struct {
		gw netip.Addr
		ix int
	}
	old := make(map[netip.Prefix]map[hop]uint32, len(a))
	for _, r := range a {
		m := make(map[hop]uint32, len(r.NextHops))
		for _, h := range r.NextHops {
			if h.KernelWeight > 0 && !h.Unresolved {
				m[hop{h.Gateway, h.IfIndex}] = h.KernelWeight
			}
		}
		old[r.Prefix] = m
	}
	n := 0
	for _, r := range b {
		m, ok := old[r.Prefix]
		if !ok {
			continue
		}
		same, changed, cur := true, false, 0
		for _, h := range r.NextHops {
			if h.KernelWeight == 0 || h.Unresolved {
				continue
			}
			cur++
			w, ok := m[hop{h.Gateway, h.IfIndex}]
			if !ok {
				same = false
				break
			}
			if w != h.KernelWeight {
				changed = true
			}
		}
		if same && changed && cur == len(m) {
			n++
		}
	}
	return n
}
