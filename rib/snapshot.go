package rib

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/spf"
)

// Snapshot is the immutable result of one computation (farectl route,
// fare, spf log).
type Snapshot struct {
	Computed  time.Time      `json:"computed"`
	Routes    []Route        `json:"routes"`
	WeightMax uint32         `json:"weight_max"` // 65535 with 16-bit kernel weights, else 255
	Anomalies fare.Anomalies `json:"anomalies"`
	FIB       fib.Stats      `json:"fib_last_sync"`
	FIBError  string         `json:"fib_error,omitempty"`
	Log       []spf.LogEntry `json:"-"`
	Delay     spf.DelayView  `json:"-"`
}

// Route is one prefix with its weighted next hops.
type Route struct {
	Prefix      netip.Prefix `json:"prefix"`
	Protocol    string       `json:"protocol"`
	Level       int          `json:"level,omitempty"` // IS-IS
	Area        string       `json:"area,omitempty"`  // OSPF
	Metric      uint64       `json:"metric"`
	Mode        string       `json:"mode"` // fare.Mode*
	Advertisers []string     `json:"advertisers"`
	PathBW      *float64     `json:"path_bandwidth,omitempty"` // bytes/s, when every advertiser sent one
	Down        bool         `json:"down,omitempty"`
	NextHops    []NextHop    `json:"next_hops"`
	QuantError  float64      `json:"quantisation_error_pp"` // largest |intended − kernel| share, percentage points
}

// NextHop is one kernel next hop with the numbers behind its weight.
type NextHop struct {
	Neighbor     string     `json:"neighbor"`
	NeighborName string     `json:"neighbor_name,omitempty"`
	Gateway      netip.Addr `json:"gateway,omitzero"`
	Interface    string     `json:"interface,omitempty"`
	IfIndex      int        `json:"ifindex,omitempty"`
	Unresolved   bool       `json:"unresolved,omitempty"` // no adjacency/address to reach it (not installed)
	LinkBW       float64    `json:"link_bandwidth"`       // bytes/s of this link
	NeighborBW   float64    `json:"neighbor_bandwidth"`   // bw(self, N): sum of parallel links
	DownCap      float64    `json:"downstream_capacity"`  // cap(N→D)
	PathBW       float64    `json:"path_bandwidth"`
	Weight       float64    `json:"weight"` // FARE weight, bytes/s
	Share        float64    `json:"share"`  // Weight / total
	KernelWeight uint32     `json:"kernel_weight"`
	KernelShare  float64    `json:"kernel_share"`
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
// weight; a route without any is withdrawn.
func (s *Snapshot) fibRoutes() []fib.Route {
	out := make([]fib.Route, 0, len(s.Routes))
	for _, r := range s.Routes {
		fr := fib.Route{Prefix: r.Prefix}
		for _, h := range r.NextHops {
			if h.Unresolved || h.KernelWeight == 0 || !h.Gateway.IsValid() {
				continue
			}
			fr.NextHops = append(fr.NextHops, fib.NextHop{Gateway: h.Gateway, IfIndex: h.IfIndex, Weight: h.KernelWeight})
		}
		out = append(out, fr)
	}
	return out
}

// sig identifies what the kernel sees of a route.
func (r *Route) sig() string {
	var b strings.Builder
	for _, h := range r.NextHops {
		fmt.Fprintf(&b, "%s%%%d*%d,", h.Gateway, h.IfIndex, h.KernelWeight)
	}
	return b.String()
}
