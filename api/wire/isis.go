package wire

// The shapes of `farectl isis ...` (GET /v1/isis/...).

// ISISNeighbor is one adjacency.
type ISISNeighbor struct {
	SystemID  string   `json:"system_id"`
	Hostname  string   `json:"hostname,omitempty"`
	Interface string   `json:"interface"`
	Level     string   `json:"level"`
	State     string   `json:"state"`
	Type      string   `json:"type"` // p2p | lan
	SNPA      string   `json:"snpa"`
	HoldTime  int      `json:"hold_time"`
	ExpiresIn float64  `json:"expires_in"`
	Priority  int      `json:"priority,omitempty"`
	LANID     string   `json:"lan_id,omitempty"`
	Areas     []string `json:"areas"`
	IPv4      []string `json:"ipv4,omitempty"`
	IPv6      []string `json:"ipv6,omitempty"`
	UpSince   string   `json:"up_since,omitempty"`
	Flaps     int      `json:"flaps"`
}

// ISISInterface is one circuit with its counters.
type ISISInterface struct {
	Name           string            `json:"name"`
	Index          int               `json:"ifindex"`
	Type           string            `json:"type"`
	State          string            `json:"state"`
	Passive        bool              `json:"passive"`
	MTU            int               `json:"mtu"`
	MAC            string            `json:"mac"`
	Metric         uint32            `json:"metric"`
	BandwidthBytes float32           `json:"bandwidth_bytes"`
	BandwidthBPS   *uint64           `json:"bandwidth_bps"`
	CircuitID      int               `json:"circuit_id"`
	Addresses      []string          `json:"addresses"`
	HelloInterval  float64           `json:"hello_interval"`
	HoldTime       float64           `json:"hold_time"`
	Priority       int               `json:"priority,omitempty"`
	Levels         []ISISLANLevel    `json:"levels,omitempty"`
	Adjacencies    int               `json:"adjacencies_up"`
	Counters       map[string]uint64 `json:"counters"`

	// BandwidthOverride is the run-time override in force (farectl
	// ... bandwidth IFACE BW), "" when none.
	BandwidthOverride string `json:"bandwidth_override,omitempty"`
}

// ISISLANLevel is the DIS state of one level on a LAN.
type ISISLANLevel struct {
	Level int    `json:"level"`
	DIS   bool   `json:"is_dis"`
	LANID string `json:"lan_id,omitempty"`
}

// ISISLSP is one database entry.
type ISISLSP struct {
	LSPID     string           `json:"lsp_id"`
	Hostname  string           `json:"hostname,omitempty"`
	Level     int              `json:"level"`
	Seq       uint32           `json:"sequence"`
	SeqHex    string           `json:"sequence_hex"`
	Checksum  uint16           `json:"checksum"`
	ChecksumX string           `json:"checksum_hex"`
	Lifetime  uint16           `json:"remaining_lifetime"`
	Length    int              `json:"length"`
	Own       bool             `json:"own"`
	Attached  bool             `json:"attached"`
	Overload  bool             `json:"overload"`
	ISType    uint8            `json:"is_type"`
	Purged    bool             `json:"purged,omitempty"`
	TLVs      []map[string]any `json:"tlvs,omitempty"`
	Raw       string           `json:"raw_hex,omitempty"`
}

// ISISLeak is one leaked prefix for `farectl isis leaks`.
type ISISLeak struct {
	Prefix         string   `json:"prefix"`
	FromLevel      int      `json:"from_level"`
	IntoLevel      int      `json:"into_level"`
	Metric         uint32   `json:"metric"`
	Down           bool     `json:"down"`
	PathBW         float64  `json:"path_bandwidth"`
	OrigPathBW     *float64 `json:"original_path_bandwidth,omitempty"`
	Capacity       float64  `json:"capacity_to_advertisers"`
	PathBPS        *uint64  `json:"path_bandwidth_bps"`
	OrigPathBPS    *uint64  `json:"original_path_bandwidth_bps"`
	CapacityBPS    *uint64  `json:"capacity_to_advertisers_bps"`
	Advertisers    []string `json:"advertisers"`
	Recomputations uint64   `json:"recomputations"`
}

// ISISLevel is one level's summary (`farectl isis levels`).
type ISISLevel struct {
	Level          int    `json:"level"`
	LSPs           int    `json:"lsps"`
	Originated     uint64 `json:"lsps_originated"`
	Attached       bool   `json:"attached,omitempty"` // L1 of an L1L2 router: ATT set in our LSPs
	LeakedInto     int    `json:"prefixes_leaked_into"`
	Recomputations uint64 `json:"leak_recomputations_from"`
	Converged      bool   `json:"converged"`
	// SeqWraps counts our LSPs whose sequence number reached 0xFFFFFFFF;
	// SeqWaiting is how many of them are still purged, waiting to restart.
	SeqWraps   uint64 `json:"seq_wraps,omitempty"`
	SeqWaiting int    `json:"lsps_waiting_seq_wrap,omitempty"`
	// Overload is the overload bit in our LSPs at this level (the
	// run-time setting of `farectl isis overload`, else the config's).
	Overload bool `json:"overload"`
}

// ISISOverloadRequest is the body of POST /v1/isis/overload: "on", "off",
// or "config" to drop the run-time setting.
type ISISOverloadRequest struct {
	Overload string `json:"overload"`
}

// ISISOverload answers GET and POST /v1/isis/overload.
type ISISOverload struct {
	Overload   bool `json:"overload"`   // in force
	Configured bool `json:"configured"` // the config file's value
	// RunTime is true when the bit was set at run time; it survives
	// reloads that leave `overload` in the file unchanged.
	RunTime bool `json:"run_time"`
}

// ISISClearRequest is the body of POST /v1/isis/clear-adjacency: one
// interface, or every one when Interface is empty.
type ISISClearRequest struct {
	Interface string `json:"interface,omitempty"`
}

// Cleared answers the clear commands: how many adjacencies (IS-IS) or
// neighbours (OSPF) were dropped to re-form.
type Cleared struct {
	Cleared int `json:"cleared"`
}

// ISISFlooding answers GET /v1/isis/flooding: distributed flooding
// reduction (draft-ietf-lsr-distoptflood) and what each interface gets.
type ISISFlooding struct {
	Reduction  bool                    `json:"reduction"`  // flooding-reduction in force
	Reflooders int                     `json:"reflooders"` // reflooders each two-hop neighbour needs
	Interfaces []ISISFloodingInterface `json:"interfaces"`
}

// ISISFloodingInterface is one circuit. Refloods is "all" (every new LSP
// goes out), "when_chosen" (the neighbour runs the reduction: it gets an
// LSP when this router is chosen as its reflooder, or the database cannot
// vouch for it) or "none" (no adjacency); Why says why, in the words of
// the decisions' reasons.
type ISISFloodingInterface struct {
	Name            string `json:"name"`
	Type            string `json:"type"`
	Neighbor        string `json:"neighbor,omitempty"` // p2p: hostname, else system id
	NeighborReduces bool   `json:"neighbor_reduces"`   // advertises the algorithm
	Refloods        string `json:"refloods"`
	Why             string `json:"why"`
	// The last decision taken for an LSP received elsewhere.
	LastReason string `json:"last_reason,omitempty"`
	LastLSP    string `json:"last_lsp,omitempty"`
	LastBy     string `json:"last_covered_by,omitempty"` // the reflooder chosen instead of us
	// LSPs sent on the interface, not sent because of the reduction,
	// received, and received as duplicates (the copy we already held).
	LSPsSent       uint64 `json:"lsps_sent"`
	LSPsSuppressed uint64 `json:"lsps_suppressed"`
	LSPsReceived   uint64 `json:"lsps_received"`
	Duplicates     uint64 `json:"lsps_duplicate"`
	// Decisions counts the decisions taken for the interface by reason.
	Decisions map[string]uint64 `json:"decisions"`
}
