package wire

import (
	"encoding/json"
	"time"
)

// INC: in-network computing (module "inc"). Bandwidths are bits/s in the
// _bps fields; bottleneck_bandwidth (bytes/s) is their deprecated alias.

// INCGroup is one collective group (GET /v1/inc/groups, on the manager).
type INCGroup struct {
	Name       string    `json:"name"`
	Size       int       `json:"size"`
	Joined     int       `json:"joined"`
	State      string    `json:"state"` // waiting, programming, ready, no-tree, dismantled
	Reason     string    `json:"reason,omitempty"`
	Generation uint64    `json:"generation"`
	TreeID     uint16    `json:"tree_id,omitempty"`
	Root       string    `json:"root,omitempty"`
	Created    time.Time `json:"created"`
	Rebuilds   int       `json:"rebuilds"`
	Timeouts   int       `json:"timeout_reports"`
}

// INCTree is a group's aggregation tree (GET /v1/inc/trees).
type INCTree struct {
	Group      string `json:"group"`
	TreeID     uint16 `json:"tree_id"`
	Generation uint64 `json:"generation"`
	Root       string `json:"root"`
	RootAddr   string `json:"root_address"`
	Levels     int    `json:"levels"`
	Members    int    `json:"members"`
	// Bottleneck is bytes/s, nil when no link on the tree advertises a
	// bandwidth. Its JSON name bottleneck_bandwidth is deprecated (a float
	// of bytes/s); BottleneckBPS is filled from it when JSON is written.
	Bottleneck    *float64        `json:"bottleneck_bandwidth"`
	BottleneckBPS *uint64         `json:"bottleneck_bps"` // bits/s; null: unconstrained
	Ready         bool            `json:"ready"`          // every switch applied it
	Topology      string          `json:"topology"`       // the LSDB it was computed from, "isis L2"
	Switches      []INCTreeSwitch `json:"switches"`
	Excluded      []string        `json:"excluded,omitempty"` // switches not allowed as root (timeout reports)
}

// MarshalJSON writes bottleneck_bps from the bytes field.
func (t INCTree) MarshalJSON() ([]byte, error) {
	type plain INCTree
	t.BottleneckBPS = bpsPtr(t.Bottleneck)
	return json.Marshal(plain(t))
}

// INCTreeSwitch is one switch of a tree.
type INCTreeSwitch struct {
	Switch   string   `json:"switch"`
	Address  string   `json:"address"`
	Role     string   `json:"role"` // root, leaf
	Parent   string   `json:"parent,omitempty"`
	QP       uint32   `json:"qpn"`
	Children []string `json:"children"` // "rank 3" or a switch id
	Applied  bool     `json:"applied"`
}

// INCClient is one client known to the manager (GET /v1/inc/clients).
type INCClient struct {
	ID          string  `json:"id"`
	Group       string  `json:"group"`
	Rank        int     `json:"rank"`
	Address     string  `json:"address"`
	QP          uint32  `json:"qpn"`
	Host        string  `json:"host,omitempty"`
	LastSeenAgo float64 `json:"last_heartbeat_s"`
	Generation  uint64  `json:"generation"` // the tree generation it last reported using
	Attach      string  `json:"attach,omitempty"`
	Timeouts    int     `json:"timeout_reports"`
	// The client's task statistics since it joined, as its heartbeats
	// report them (docs/inc.md, "Client statistics").
	Bytes            uint64 `json:"bytes"`             // of the buffers of completed operations
	Operations       uint64 `json:"operations"`        // run, failed ones included
	FailedOperations uint64 `json:"failed_operations"` // an error or a wrong result
	Retransmissions  uint64 `json:"retransmissions"`   // packets the transport sent again
	RTOs             uint64 `json:"timeouts"`          // retransmissions a timeout (RTO) caused
}

// INCRegisteredSwitch is a switch registered with the manager (GET
// /v1/inc/switches).
type INCRegisteredSwitch struct {
	ID         string `json:"id"`
	Address    string `json:"address"`
	Alive      bool   `json:"alive"`
	MaxTrees   int    `json:"max_trees"`
	MaxSlots   int    `json:"max_slots"`
	MaxRanks   int    `json:"max_ranks"`
	MaxPayload int    `json:"max_payload"`
	Trees      int    `json:"trees"`
	Version    uint64 `json:"config_version"`
	Applied    uint64 `json:"applied_version"`
	Error      string `json:"error,omitempty"`
	InTopology bool   `json:"in_topology"`
}

// INCSwitch is the data plane of an INC switch (GET /v1/inc/switch).
type INCSwitch struct {
	Address    string            `json:"address"`
	Manager    string            `json:"manager"`
	Registered bool              `json:"registered"`
	Version    uint64            `json:"config_version"`
	Error      string            `json:"error,omitempty"`
	SlotsInUse int               `json:"slots_in_use"`
	Totals     INCSwitchCounters `json:"totals"`
	Trees      []INCSwitchTree   `json:"trees"`
	// Bad counts the packets dropped, by kind: malformed ones (the rocev2
	// codec's kinds, inc_* for the INC header) and those the per-packet
	// checks refused: qp, rkey, source, ingress, rank (docs/inc.md).
	Bad     map[string]uint64 `json:"bad_packets"`
	Unknown uint64            `json:"unknown_tree"`
	CPU     *INCSwitchCPU     `json:"cpu,omitempty"`
	// Ingress is the state of the ingress check.
	Ingress INCIngress `json:"ingress_check"`
}

// INCIngress is the state of a switch's ingress check: packets from a
// child (or the parent) must come in on an interface of the route back
// to its address.
type INCIngress struct {
	Enabled bool `json:"enabled"`
	Peers   int  `json:"peers"` // children and parents of the trees
	// Unrouted are peers with no route back: their packets are refused.
	Unrouted []string `json:"unrouted,omitempty"`
	// Error is the last failure to read the routes (the previous
	// interface sets stay in use).
	Error string `json:"error,omitempty"`
	// AgeMS is the time since the interface sets were read.
	AgeMS int64 `json:"age_ms"`
}

// INCSwitchCPU is the data plane goroutine's share of CPU since start.
type INCSwitchCPU struct {
	Seconds float64 `json:"seconds"`
}

// INCSwitchTree is one tree on a switch.
type INCSwitchTree struct {
	TreeID     uint16            `json:"tree_id"`
	QP         uint32            `json:"qpn"`
	Role       string            `json:"role"`
	Children   int               `json:"children"`
	Slots      int               `json:"slots"`
	SlotsInUse int               `json:"slots_in_use"`
	Counters   INCSwitchCounters `json:"counters"`
	Busy       []INCSlot         `json:"busy_slots,omitempty"` // up to 8
}

// INCSlot is a busy slot: what it waits for.
type INCSlot struct {
	Slot    int    `json:"slot"`
	State   string `json:"state"` // collecting, waiting (for the parent's result)
	Msg     uint32 `json:"message"`
	Arrived int    `json:"arrived"`
	Missing []int  `json:"missing,omitempty"` // child indices
	Shadow  uint32 `json:"shadow_message"`
}

// INCSwitchCounters are the aggregator's counters.
type INCSwitchCounters struct {
	Packets        uint64 `json:"packets"`
	Completed      uint64 `json:"completed"`
	Results        uint64 `json:"results_sent"`
	Partials       uint64 `json:"partials_sent"`
	Duplicates     uint64 `json:"duplicates_suppressed"`
	Served         uint64 `json:"retransmissions_served"`
	PartialResends uint64 `json:"partial_resends"`
	DupResults     uint64 `json:"duplicate_results"`
	NACKs          uint64 `json:"nacks_sent"`
	Stale          uint64 `json:"stale"`
	Unexpected     uint64 `json:"unexpected"`
	Mismatch       uint64 `json:"mismatch"`
	// Refused by the per-packet checks (docs/inc.md, "What the key
	// protects"): never counted in packets.
	BadRank    uint64 `json:"bad_rank"`
	BadQP      uint64 `json:"bad_qp"`
	BadRKey    uint64 `json:"bad_rkey"`
	BadSource  uint64 `json:"bad_source"`
	BadIngress uint64 `json:"bad_ingress"`
	BadPKey    uint64 `json:"bad_pkey"` // BTH P_Key not of the switch's partition
}

// INCSecurity is the manager's control-plane trust (GET
// /v1/inc/security; docs/inc.md, "Control-plane trust"): how it
// authenticates, its caps, and what it refused, by reason.
type INCSecurity struct {
	Listen     string `json:"listen"`
	TLS        bool   `json:"tls"`         // TLS, and client certificates for switches
	ClientAuth bool   `json:"client_auth"` // clients need a join token
	// LoopbackOnly: without tls the manager serves its own node only.
	LoopbackOnly bool `json:"loopback_only"`
	// TLSSum identifies the loaded certificate files (it changes when a
	// reload loads new ones).
	TLSSum            string            `json:"tls_files_sha256,omitempty"`
	TokenKeys         int               `json:"token_keys"`
	MaxGroups         int               `json:"max_groups"`
	MaxGroupsPerToken int               `json:"max_groups_per_token"`
	MaxGroupSize      int               `json:"max_group_size"`
	Groups            int               `json:"groups"`
	Refused           map[string]uint64 `json:"refused"`
	Tokens            []INCTokenUse     `json:"tokens"`
}

// INCTokenUse is what one join token holds at the manager.
type INCTokenUse struct {
	Token   string `json:"token"` // its id (jti), "" without client-auth
	Groups  int    `json:"groups"`
	Clients int    `json:"clients"`
}
