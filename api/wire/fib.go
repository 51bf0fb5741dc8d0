package wire

import (
	"net/netip"
	"time"
)

// FIBView is GET /v1/fib: what the kernel holds for fared's protocol, read
// back over netlink (not from fared's memory).
type FIBView struct {
	Capabilities FIBCapabilities `json:"capabilities"`
	Routes       []KernelRoute   `json:"routes"`
	Nexthops     []KernelNexthop `json:"nexthops"`
	// Conflicts are the prefixes fared computed but did not install:
	// another protocol's route holds them.
	Conflicts []FIBConflict `json:"conflicts"`
}

// FIBCapabilities is what the kernel supports (GET /v1/fib/capabilities).
type FIBCapabilities struct {
	NexthopObjects bool `json:"nexthop_objects"` // RTM_NEWNEXTHOP (Linux 5.3)
	Weight16       bool `json:"weight16"`        // nexthop_grp.weight_high (Linux 6.12)
	Resilient      bool `json:"resilient"`       // NEXTHOP_GRP_TYPE_RES (Linux 5.13)
}

// FIBStats counts what the last kernel update did.
type FIBStats struct {
	RoutesAdded     int `json:"routes_added"`
	RoutesReplaced  int `json:"routes_replaced"`
	RoutesDeleted   int `json:"routes_deleted"`
	GroupsAdded     int `json:"groups_added"`
	GroupsReplaced  int `json:"groups_replaced"`
	GroupsDeleted   int `json:"groups_deleted"`
	NexthopsAdded   int `json:"nexthops_added"`
	NexthopsDeleted int `json:"nexthops_deleted"`
	// RoutesUnresolved counts prefixes left with no usable next hop (none
	// given, or all on links reported down): they are not in the kernel.
	RoutesUnresolved int `json:"routes_unresolved"`
	// RoutesConflicting counts prefixes not installed because another
	// protocol's route holds the same table, prefix and metric; Conflicts
	// lists them. Both describe the state after the Sync.
	RoutesConflicting int           `json:"routes_conflicting"`
	Conflicts         []FIBConflict `json:"conflicts,omitempty"`
	Messages          int           `json:"messages"`
}

// FIBConflict is one prefix fared did not install because another
// protocol's route holds the same table, prefix and metric.
type FIBConflict struct {
	Prefix       netip.Prefix `json:"prefix"`
	Table        int          `json:"table"`
	Metric       uint32       `json:"metric"`
	Protocol     uint8        `json:"protocol"`      // the holder's rtm_protocol
	ProtocolName string       `json:"protocol_name"` // iproute2's name for it
	Type         string       `json:"type"`          // the holder's route type: unicast, blackhole, ...
	Since        time.Time    `json:"since"`
}

// KernelNexthop is one nexthop object as the kernel reports it.
type KernelNexthop struct {
	ID        uint32         `json:"id"`
	Protocol  uint8          `json:"protocol"`
	Family    string         `json:"family,omitempty"` // inet, inet6; empty for groups and blackholes
	Gateway   netip.Addr     `json:"gateway,omitzero"`
	IfIndex   int            `json:"ifindex,omitempty"`
	Blackhole bool           `json:"blackhole,omitempty"`
	Flags     uint32         `json:"flags,omitempty"` // RTNH_F_*
	Group     []GroupMember  `json:"group,omitempty"` // weights decoded with weight_high
	GroupType string         `json:"group_type,omitempty"`
	Resilient *ResilientInfo `json:"resilient,omitempty"`
}

// GroupMember is one member of a nexthop group with its weight.
type GroupMember struct {
	ID     uint32 `json:"id"`
	Weight uint32 `json:"weight"` // 1..65536 (1..256 on kernels without weight_high)
}

// ResilientInfo is the NHA_RES_GROUP nest read back from the kernel.
type ResilientInfo struct {
	Buckets         uint16        `json:"buckets"`
	IdleTimer       time.Duration `json:"idle_timer"`
	UnbalancedTimer time.Duration `json:"unbalanced_timer"`
	UnbalancedTime  time.Duration `json:"unbalanced_time"` // how long it has been unbalanced
}

// KernelRoute is one unicast route as the kernel reports it.
type KernelRoute struct {
	Prefix   netip.Prefix `json:"prefix"`
	Table    int          `json:"table"`
	Protocol uint8        `json:"protocol"`
	Metric   uint32       `json:"metric"`
	NhID     uint32       `json:"nh_id,omitempty"` // RTA_NH_ID; 0 for routes without a nexthop object
	// Paths are the legacy next hops (RTA_GATEWAY/RTA_OIF or RTA_MULTIPATH)
	// for routes without a nexthop object; weight is rtnh_hops+1.
	Paths []KernelPath `json:"paths,omitempty"`
}

// KernelPath is one legacy next hop of a route.
type KernelPath struct {
	Gateway netip.Addr `json:"gateway,omitzero"`
	IfIndex int        `json:"ifindex"`
	Weight  uint32     `json:"weight"`
}
