package rib

import (
	"net/netip"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Snapshot is the immutable result of one computation (farectl route,
// fare, spf log).
type Snapshot struct {
	Computed  time.Time
	Routes    []Route
	WeightMax uint32 // 65535 with 16-bit kernel weights, else 255
	Anomalies fare.Anomalies
	FIB       fib.Stats // what the last kernel write did
	FIBError  string
	Log       []spf.LogEntry
	// Delays is the RFC 8405 back-off of each protocol.
	Delays map[string]spf.DelayView
	// Graphs are the topologies the routes were computed from, sorted by
	// protocol and level or area.
	Graphs []*lsdb.Graph
}

// Route is one prefix with its weighted next hops, from the topology of
// Protocol at Level (IS-IS) or Area (OSPF).
type Route struct {
	Prefix   netip.Prefix
	Protocol string
	Level    int
	Area     string
	Metric   uint64
	Mode     string // fare.Mode*
	// Advertisers are the names (else ids) of the advertising nodes.
	Advertisers []string
	// PathBW is the sum of the advertisers' Path Bandwidth (bytes/s);
	// HasPathBW: every advertiser sent one.
	PathBW    float64
	HasPathBW bool
	Down      bool
	NextHops  []NextHop
	// QuantError is the largest |intended − kernel| share, in percentage
	// points.
	QuantError float64
}

// NextHop is one kernel next hop with the numbers behind its weight
// (fare.NextHop's, bytes/s), resolved to an adjacency.
type NextHop struct {
	Neighbor     string // node id
	NeighborName string
	Gateway      netip.Addr
	Interface    string
	IfIndex      int
	Unresolved   bool // no adjacency/address to reach it (not installed)
	LinkBW       float64
	NeighborBW   float64
	DownCap      float64
	PathBW       float64
	Weight       float64 // FARE weight
	Share        float64 // Weight / total
	KernelWeight uint32
	KernelShare  float64
}

// Lookup returns the route for an exact prefix or, for an address, the
// longest match.
func (s *Snapshot) Lookup(q string) (*Route, bool) {
	if p, err := netip.ParsePrefix(q); err == nil {
		for i := range s.Routes {
			if s.Routes[i].Prefix == p.Masked() {
				return &s.Routes[i], true
			}
		}
		return nil, false
	}
	a, err := netip.ParseAddr(q)
	if err != nil {
		return nil, false
	}
	var best *Route
	for i := range s.Routes {
		r := &s.Routes[i]
		if r.Prefix.Contains(a) && (best == nil || r.Prefix.Bits() > best.Prefix.Bits()) {
			best = r
		}
	}
	return best, best != nil
}

// fibRoutes is what goes to the kernel: resolved next hops with a kernel
// weight; a route without any is withdrawn. The next hops of all routes
// share one allocation.
func (s *Snapshot) fibRoutes() []fib.Route {
	out := make([]fib.Route, 0, len(s.Routes))
	n := 0
	for i := range s.Routes {
		n += len(s.Routes[i].NextHops)
	}
	slab := make([]fib.NextHop, 0, n)
	for i := range s.Routes {
		r := &s.Routes[i]
		fr := fib.Route{Prefix: r.Prefix}
		h0 := len(slab)
		for j := range r.NextHops {
			h := &r.NextHops[j]
			if h.Unresolved || h.KernelWeight == 0 || !h.Gateway.IsValid() {
				continue
			}
			slab = append(slab, fib.NextHop{Gateway: h.Gateway, IfIndex: h.IfIndex, Weight: h.KernelWeight})
		}
		if len(slab) > h0 {
			fr.NextHops = slab[h0:len(slab):len(slab)]
		}
		out = append(out, fr)
	}
	return out
}

// sameKernel reports whether routes a and b look the same to the kernel:
// the same next hops (gateway, interface, weight), in order. A nil a has
// none. (Compared field by field: formatting every next hop of every route
// as text cost 40 ms per full run of a 5-stage fabric.)
func sameKernel(a, b *Route) bool {
	var ah []NextHop
	if a != nil {
		ah = a.NextHops
	}
	if len(ah) != len(b.NextHops) {
		return false
	}
	for i := range ah {
		x, y := &ah[i], &b.NextHops[i]
		if x.Gateway != y.Gateway || x.IfIndex != y.IfIndex || x.KernelWeight != y.KernelWeight {
			return false
		}
	}
	return true
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
