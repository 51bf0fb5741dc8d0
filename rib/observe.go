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
// (gateway and interface) but other kernel weights.
func reweighted(a, b []Route) int {
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
