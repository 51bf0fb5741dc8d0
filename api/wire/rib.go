package wire

import (
	"net/netip"
	"time"
)

// Route is one prefix with its weighted next hops (GET /v1/route).
type Route struct {
	Prefix      netip.Prefix `json:"prefix"`
	Protocol    string       `json:"protocol"`
	Level       int          `json:"level,omitempty"` // IS-IS
	Area        string       `json:"area,omitempty"`  // OSPF
	Metric      uint64       `json:"metric"`
	Mode        string       `json:"mode"` // fare, ecmp, ... (fare.Mode*)
	Advertisers []string     `json:"advertisers"`
	PathBW      *float64     `json:"path_bandwidth,omitempty"` // bytes/s, when every advertiser sent one
	PathBPS     *uint64      `json:"path_bandwidth_bps"`       // bits/s; null: no limit
	Down        bool         `json:"down,omitempty"`
	NextHops    []NextHop    `json:"next_hops"`
	QuantError  float64      `json:"quantisation_error_pp"` // largest |intended − kernel| share, percentage points
}

// NextHop is one kernel next hop with the numbers behind its weight.
// Bandwidths are bytes/s.
type NextHop struct {
	Neighbor     string     `json:"neighbor"`
	NeighborName string     `json:"neighbor_name,omitempty"`
	Gateway      netip.Addr `json:"gateway,omitzero"`
	Interface    string     `json:"interface,omitempty"`
	IfIndex      int        `json:"ifindex,omitempty"`
	Unresolved   bool       `json:"unresolved,omitempty"` // no adjacency/address to reach it (not installed)
	LinkBW       float64    `json:"link_bandwidth"`       // this link
	NeighborBW   float64    `json:"neighbor_bandwidth"`   // bw(self, N): sum of parallel links
	DownCap      float64    `json:"downstream_capacity"`  // cap(N→D)
	PathBW       float64    `json:"path_bandwidth"`
	Weight       float64    `json:"weight"` // FARE weight
	Share        float64    `json:"share"`  // Weight / total
	KernelWeight uint32     `json:"kernel_weight"`
	KernelShare  float64    `json:"kernel_share"`
	// The same bandwidths in bits/s (null: no limit); LinkBW.. are bytes/s.
	LinkBPS     *uint64 `json:"link_bandwidth_bps"`
	NeighborBPS *uint64 `json:"neighbor_bandwidth_bps"`
	DownCapBPS  *uint64 `json:"downstream_capacity_bps"`
	PathBPS     *uint64 `json:"path_bandwidth_bps"`
	WeightBPS   *uint64 `json:"weight_bps"`
}

// FareView is GET /v1/fare?prefix=P.
type FareView struct {
	Route
	WeightMax uint32 `json:"weight_max"`
}

// SPFView is GET /v1/spf/log.
type SPFView struct {
	// Delay is the first protocol's back-off (isis, else ospf); Delays has
	// every protocol's.
	Delay     SPFDelay            `json:"delay"`
	Delays    map[string]SPFDelay `json:"delays"`
	Log       []SPFLogEntry       `json:"log"`
	LastSync  FIBStats            `json:"fib_last_sync"`
	FIBError  string              `json:"fib_error,omitempty"`
	Anomalies FareAnomalies       `json:"fare_anomalies"`
}

// SPFDelay is the RFC 8405 back-off state of one protocol.
type SPFDelay struct {
	State      string    `json:"state"`
	SPFAt      time.Time `json:"spf_at,omitzero"`
	LearnAt    time.Time `json:"learn_at,omitzero"`
	HolddownAt time.Time `json:"holddown_at,omitzero"`
}

// SPFLogEntry is one SPF computation.
type SPFLogEntry struct {
	At      time.Time `json:"at"`
	Trigger string    `json:"trigger"`
	Kind    string    `json:"kind"` // "full" | "route-only"
	// Reason says, per topology, which path the computation took and
	// why: "isis/L2 route-only: bandwidth change on s1→l1", "isis/L2
	// full: topology", "... route-only: prefixes or adjacencies".
	Reason string `json:"reason"`
	// Capacity: a capacity change (bandwidths only) computed at once,
	// outside the RFC 8405 back-off (docs/fare.md).
	Capacity bool `json:"capacity"`
	// Duration is the whole computation: Compute + Install.
	Duration time.Duration `json:"duration_ns"`
	// Compute is SPF, FARE, route building and next-hop resolution, and
	// the count of changed routes: everything but the kernel write (what
	// FRR's "last run duration" covers, which excludes zebra). Install is
	// the kernel write (fib Sync), 0 while the start-up hold keeps the
	// kernel table.
	Compute       time.Duration `json:"compute_ns"`
	Install       time.Duration `json:"install_ns"`
	Nodes         int           `json:"nodes"`
	RoutesChanged int           `json:"routes_changed"`
}

// FareAnomalies counts the bad bandwidth values FARE met and the rule it
// applied to each (docs/fare.md).
type FareAnomalies struct {
	LinkMissing  int `json:"link_missing"`  // no Maximum Link Bandwidth sub-TLV
	LinkNaN      int `json:"link_nan"`      // NaN → 0 (unusable)
	LinkInf      int `json:"link_inf"`      // +Inf → largest finite float32
	LinkNegative int `json:"link_negative"` // < 0 or -Inf → 0 (unusable)
	LinkZero     int `json:"link_zero"`     // 0 as received (unusable)
	PathNaN      int `json:"path_nan"`      // Path Bandwidth NaN → 0
	PathInf      int `json:"path_inf"`      // +Inf → largest finite float32
	PathNegative int `json:"path_negative"` // < 0 or -Inf → 0
	PathZero     int `json:"path_zero"`     // 0 as received
	// RoutesMissingBW fell back to ECMP because a hop had no bandwidth.
	RoutesMissingBW int `json:"routes_missing_bandwidth"`
	// RoutesZeroCapacity fell back to ECMP because every first hop had
	// zero capacity.
	RoutesZeroCapacity int `json:"routes_zero_capacity"`
}

// Total is the number of anomalous values and fallbacks.
func (a FareAnomalies) Total() int {
	return a.LinkMissing + a.LinkNaN + a.LinkInf + a.LinkNegative + a.LinkZero +
		a.PathNaN + a.PathInf + a.PathNegative + a.PathZero + a.RoutesMissingBW + a.RoutesZeroCapacity
}

// Add returns the counts of a and b summed (several topologies).
func (a FareAnomalies) Add(b FareAnomalies) FareAnomalies {
	a.LinkMissing += b.LinkMissing
	a.LinkNaN += b.LinkNaN
	a.LinkInf += b.LinkInf
	a.LinkNegative += b.LinkNegative
	a.LinkZero += b.LinkZero
	a.PathNaN += b.PathNaN
	a.PathInf += b.PathInf
	a.PathNegative += b.PathNegative
	a.PathZero += b.PathZero
	a.RoutesMissingBW += b.RoutesMissingBW
	a.RoutesZeroCapacity += b.RoutesZeroCapacity
	return a
}
