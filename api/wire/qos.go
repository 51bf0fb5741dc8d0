package wire

// The qos module's API, below /v1/qos/ (docs/qos.md):
//
//	GET  status        QoSStatus: backend, features per interface, ECN overlay tunnels
//	GET  pfc           QoSPFC: per interface and priority
//	GET  watchdog      QoSWatchdog: states, detections, recoveries, limit
//	GET  ecn           QoSECN: profiles and marks per queue
//	GET  flows         QoSFlows: elephant/mice classification, bytes per class
//	GET  ipcc          QoSIPCC: flow table, watched queues, CNPs, bad packets
//	GET  ecn-tuning    QoSTuning: AI ECN / Adaptive RED thresholds and decisions
//	POST pfc/restore   QoSRestoreRequest -> QoSRestore

// QoSStatus is GET /v1/qos/status.
type QoSStatus struct {
	Backend     string  `json:"backend"`
	PollSeconds float64 `json:"poll_seconds"`
	// Applied: the backend took the desired state at the last attempt.
	Applied bool `json:"applied"`
	// LastError is the last backend error ("" when none).
	LastError  string           `json:"last_error,omitempty"`
	Polls      uint64           `json:"polls"`
	Interfaces []QoSIfaceStatus `json:"interfaces"`
	// ECNOverlay is the ecn-overlay section's tunnels (absent: no section).
	ECNOverlay *QoSECNOverlay `json:"ecn_overlay,omitempty"`
}

// QoSIfaceStatus lists what the backend can do on one interface.
type QoSIfaceStatus struct {
	Name     string       `json:"name"`
	Features []QoSFeature `json:"features"`
}

// QoSFeature is one feature's support; Reason says why not, or how.
type QoSFeature struct {
	Feature   string `json:"feature"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// QoSPFC is GET /v1/qos/pfc.
type QoSPFC struct {
	Interfaces []QoSPFCIface `json:"interfaces"`
}

// QoSPFCIface is one interface's PFC.
type QoSPFCIface struct {
	Name string `json:"name"`
	// Mode is the watchdog's state of the interface: normal, recovering
	// (auto-recover timer) or limited (until restore).
	Mode       string       `json:"mode"`
	Priorities []QoSPFCPrio `json:"priorities"`
}

// QoSPFCPrio is one priority of an interface.
type QoSPFCPrio struct {
	Priority   int  `json:"priority"`
	Configured bool `json:"configured"` // PFC asked for by the config
	Enabled    bool `json:"enabled"`    // PFC applied now
	// XOFF: the peer has the priority paused now (absent when the
	// backend cannot tell).
	XOFF       *bool  `json:"xoff,omitempty"`
	PauseRx    uint64 `json:"pause_rx"`
	PauseTx    uint64 `json:"pause_tx"`
	XOFFOnsets uint64 `json:"xoff_onsets"`
	XOFFBytes  uint64 `json:"xoff_threshold"`
	XONBytes   uint64 `json:"xon_threshold"`
	Headroom   uint64 `json:"headroom"`
}

// QoSWatchdog is GET /v1/qos/watchdog.
type QoSWatchdog struct {
	Enabled            bool               `json:"enabled"`
	DetectionSeconds   float64            `json:"detection_seconds"`
	RestorationSeconds float64            `json:"restoration_seconds"`
	PollSeconds        float64            `json:"poll_seconds"`
	Action             string             `json:"action"`
	Limit              int                `json:"limit"`
	WindowSeconds      float64            `json:"limit_window_seconds"`
	Interfaces         []QoSWatchdogIface `json:"interfaces"`
	Queues             []QoSWatchdogQueue `json:"queues"`
	Events             []QoSWatchdogEvent `json:"events"`
}

// QoSWatchdogIface is one interface's watchdog state.
type QoSWatchdogIface struct {
	Name       string `json:"name"`
	Mode       string `json:"mode"`
	Detections int    `json:"detections"`
	Recoveries int    `json:"recoveries"`
	LimitHits  int    `json:"limit_hits"`
	InWindow   int    `json:"detections_in_window"`
	// RecoversAt is when the auto-recover timer ends (RFC 3339), when
	// recovering.
	RecoversAt string `json:"recovers_at,omitempty"`
}

// QoSWatchdogQueue is one watched queue.
type QoSWatchdogQueue struct {
	Interface  string `json:"interface"`
	Priority   int    `json:"priority"`
	Mode       string `json:"mode"`
	XOFFSince  string `json:"xoff_since,omitempty"`
	Detections int    `json:"detections"`
	LastDetect string `json:"last_detection,omitempty"`
}

// QoSWatchdogEvent is one watchdog action.
type QoSWatchdogEvent struct {
	At        string `json:"at"`
	Kind      string `json:"kind"` // detected | recovered | limit | restored
	Interface string `json:"interface"`
	Priority  int    `json:"priority"` // -1: the whole interface
	// LatencySeconds: for a detection, how long after the queue's XOFF
	// run began.
	LatencySeconds float64 `json:"latency_seconds,omitempty"`
}

// QoSECN is GET /v1/qos/ecn.
type QoSECN struct {
	Profiles []QoSProfile  `json:"profiles"`
	Queues   []QoSECNQueue `json:"queues"`
}

// QoSProfile is a WRED/ECN profile.
type QoSProfile struct {
	Name   string    `json:"name"`
	ECN    string    `json:"ecn"`  // SONiC's names: ecn_none ... ecn_all
	Mark   string    `json:"mark"` // enqueue | dequeue (fast ECN)
	Colors []QoSWRED `json:"colors"`
}

// QoSWRED is one colour of a profile (bytes, percent).
type QoSWRED struct {
	Color       string `json:"color"`
	Min         uint64 `json:"min"`
	Max         uint64 `json:"max"`
	Probability int    `json:"probability"`
}

// QoSECNQueue is one queue with a profile.
type QoSECNQueue struct {
	Interface string `json:"interface"`
	Priority  int    `json:"priority"`
	Profile   string `json:"profile"`
	Marks     uint64 `json:"marks"`
	Drops     uint64 `json:"drops"`
	Depth     uint64 `json:"depth_bytes"`
}

// QoSFlows is GET /v1/qos/flows.
type QoSFlows struct {
	Rule       *QoSElephantRule `json:"rule,omitempty"`
	Interfaces []QoSFlowsIface  `json:"interfaces"`
}

// QoSElephantRule is the large-flow rule.
type QoSElephantRule struct {
	RateBps  float64 `json:"rate_bps"`
	Size     uint64  `json:"size_bytes"`
	Priority int     `json:"priority"`
	Color    string  `json:"color"`
}

// QoSFlowsIface is one interface's classification.
type QoSFlowsIface struct {
	Name          string     `json:"name"`
	ElephantBytes uint64     `json:"elephant_bytes"`
	MiceBytes     uint64     `json:"mice_bytes"`
	Classes       []QoSClass `json:"classes,omitempty"`
	Flows         []QoSFlow  `json:"flows,omitempty"`
}

// QoSClass is a traffic class's counters (Linux HTB classes).
type QoSClass struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
	Bytes    uint64 `json:"bytes"`
	Packets  uint64 `json:"packets"`
	Backlog  uint64 `json:"backlog"`
	Drops    uint64 `json:"drops"`
}

// QoSFlow is one tracked flow.
type QoSFlow struct {
	Key      string `json:"key"`
	Elephant bool   `json:"elephant"`
}

// QoSRestoreRequest is the body of POST /v1/qos/pfc/restore.
type QoSRestoreRequest struct {
	Interface string `json:"interface"`
}

// QoSRestore is its answer.
type QoSRestore struct {
	Interface string `json:"interface"`
	// Restored is false when the interface was not limited or
	// recovering (nothing to do).
	Restored bool   `json:"restored"`
	Mode     string `json:"mode"`
}

// QoSIPCC is GET /v1/qos/ipcc: the IPCC runtime's state.
type QoSIPCC struct {
	Enabled bool `json:"enabled"`
	// Runtime says where IPCC runs ("linux: AF_PACKET copies, HTB backlog,
	// raw-socket CNPs", "sim", or why it does not run).
	Runtime string `json:"runtime"`
	// Configuration.
	Capture         []string `json:"capture,omitempty"`
	Watched         []string `json:"watched,omitempty"`
	Priorities      []int    `json:"priorities,omitempty"`
	PollSeconds     float64  `json:"poll_seconds"`
	IntervalSeconds float64  `json:"cnp_interval_seconds"`
	Low             uint64   `json:"low_bytes"`
	High            uint64   `json:"high_bytes"`
	Few             int      `json:"few"`
	More            int      `json:"more"`
	// Counters.
	Observed   uint64 `json:"observed"`
	Captured   uint64 `json:"captured"`
	Overflow   uint64 `json:"overflow"`
	NoRoute    uint64 `json:"no_route"`
	Learned    uint64 `json:"qps_learned"`
	Ambiguous  uint64 `json:"ambiguous"`
	Unmatched  uint64 `json:"unmatched"`
	CNPs       uint64 `json:"cnps_ordered"`
	Sent       uint64 `json:"cnps_sent"`
	SendErrors uint64 `json:"send_errors"`
	NoQP       uint64 `json:"skipped_no_qp"`
	RateLimit  uint64 `json:"skipped_interval"`
	Expired    uint64 `json:"expired"`
	Polls      uint64 `json:"polls"`
	// The flow table's bounds (docs/qos.md, "IPCC trust") and what they
	// did: flows in the table, idle flows evicted to make room, new flows
	// refused because every flow of the full table / port / source sent
	// since the last poll, data packets of a flow on another port than
	// its own.
	FlowCount         int    `json:"flow_count"`
	MaxFlows          int    `json:"max_flows"`
	MaxFlowsPerPort   int    `json:"max_flows_per_port"`
	MaxFlowsPerSource int    `json:"max_flows_per_source"`
	FlowsEvicted      uint64 `json:"flows_evicted"`
	RefusedTableFull  uint64 `json:"flows_refused_table_full"`
	RefusedPortCap    uint64 `json:"flows_refused_port_cap"`
	RefusedSourceCap  uint64 `json:"flows_refused_source_cap"`
	PortMismatch      uint64 `json:"port_mismatch"`
	// Sender QP learning: PSN-matched ACKs naming another QP than the
	// learnt one, and learnt QPs they replaced.
	QPConflict uint64 `json:"ack_qp_conflict"`
	QPReplaced uint64 `json:"qps_replaced"`
	// The linux runtime's egress lookup cache.
	RouteCacheEntries int               `json:"route_cache_entries"`
	RouteLookups      uint64            `json:"route_lookups"`
	RouteCacheEvicted uint64            `json:"route_cache_evicted"`
	RouteCacheExpired uint64            `json:"route_cache_expired"`
	BadPackets        map[string]uint64 `json:"bad_packets,omitempty"` // by kind: truncated, bad_icrc, unknown_opcode, ...
	LastError         string            `json:"last_error,omitempty"`
	Queues            []QoSIPCCQueue    `json:"queues"`
	Flows             []QoSIPCCFlow     `json:"flows"`
}

// QoSIPCCQueue is a watched egress queue.
type QoSIPCCQueue struct {
	Interface string `json:"interface"`
	Priority  int    `json:"priority"`
	Depth     uint64 `json:"depth_bytes"`
	Trend     string `json:"trend"`      // growing | shrinking
	Use       string `json:"buffer_use"` // none | low | high
	Count     int    `json:"cnps_per_interval"`
	Flows     int    `json:"active_flows"`
	CNPs      uint64 `json:"cnps"`
	Congested uint64 `json:"congested_polls"`
}

// QoSIPCCFlow is one RoCEv2 flow-table entry.
type QoSIPCCFlow struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	DestQP   uint32 `json:"dest_qp"`
	SrcQP    uint32 `json:"src_qp"` // the sender's QP, when learned
	Learned  bool   `json:"learned"`
	In       string `json:"in"`
	Out      string `json:"out"`
	Priority int    `json:"priority"`
	Packets  uint64 `json:"packets"`
	Bytes    uint64 `json:"bytes"`
	CNPs     uint64 `json:"cnps"`
	LastSeen string `json:"last_seen"`
}

// QoSTuning is GET /v1/qos/ecn-tuning: AI ECN or Adaptive RED.
type QoSTuning struct {
	Enabled         bool                `json:"enabled"`
	Algorithm       string              `json:"algorithm,omitempty"`
	IntervalSeconds float64             `json:"interval_seconds"`
	UtilTarget      float64             `json:"utilisation_target"`
	MinThreshold    uint64              `json:"min_threshold"`
	MaxThreshold    uint64              `json:"max_threshold"`
	Queues          []QoSTunedQueue     `json:"queues"`
	Decisions       []QoSTuningDecision `json:"decisions"`
}

// QoSTunedQueue is one tuned queue.
type QoSTunedQueue struct {
	Interface string  `json:"interface"`
	Priority  int     `json:"priority"`
	Model     string  `json:"model,omitempty"` // AI ECN's traffic model
	Base      QoSWRED `json:"configured"`
	Applied   QoSWRED `json:"applied"`
	// The last interval's observation.
	Utilisation float64 `json:"utilisation"` // -1 unknown
	MiceShare   float64 `json:"mice_share"`  // -1 without a classifier
	Marks       uint64  `json:"marks"`
	MeanDepth   float64 `json:"mean_depth_bytes"`
	Reason      string  `json:"reason,omitempty"`
}

// QoSTuningDecision is one change with its reason.
type QoSTuningDecision struct {
	At        string  `json:"at"`
	Interface string  `json:"interface"`
	Priority  int     `json:"priority"`
	Before    QoSWRED `json:"before"`
	After     QoSWRED `json:"after"`
	Reason    string  `json:"reason"`
}

// QoSECNOverlay is what the backend found, and set, on the tunnels the
// ecn-overlay section names (RFC 6040 ECN across VXLAN; docs/qos.md).
type QoSECNOverlay struct {
	Decap string `json:"decap"` // asked: "standard" | "copy_from_outer"
	DSCP  string `json:"dscp,omitempty"`
	// CheckedAt is when the backend last read (and set) the tunnels: at
	// start, on a reload and when a tunnel comes up.
	CheckedAt string             `json:"checked_at,omitempty"`
	Error     string             `json:"error,omitempty"`
	Tunnels   []QoSOverlayTunnel `json:"tunnels"`
}

// QoSOverlayTunnel is one tunnel's ECN handling.
type QoSOverlayTunnel struct {
	Name string `json:"name"`
	// Kind: "vxlan" (a Linux device) or the SONiC CONFIG_DB table
	// ("VXLAN_TUNNEL", "TUNNEL"); "" when not found.
	Kind   string `json:"kind"`
	VNI    uint32 `json:"vni,omitempty"`
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
	// DSCP is the outer DSCP's source: "inherit", "fixed" (OuterTOS is
	// the byte), "metadata" (flow-based device) or "" (not told).
	DSCP     string `json:"dscp,omitempty"`
	OuterTOS *uint8 `json:"outer_tos,omitempty"`
	// EncapECN and DecapECN are the modes in force: "copy_from_inner";
	// "standard" (RFC 6040 §4.2) or "copy_from_outer".
	EncapECN string `json:"encap_ecn,omitempty"`
	DecapECN string `json:"decap_ecn,omitempty"`
	// Conforms: the tunnel does what the section asks.
	Conforms bool     `json:"conforms"`
	Changed  []string `json:"changed,omitempty"`
	// ECNDropPackets: packets dropped at decapsulation for an outer CE
	// over a Not-ECT inner header (absent: the backend cannot count).
	ECNDropPackets *uint64 `json:"ecn_drop_packets,omitempty"`
	Note           string  `json:"note,omitempty"`
}
