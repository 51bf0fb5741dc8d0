package wire

// The shapes of `farectl ospf ...` (GET /v1/ospf/...).

// OSPFNeighbor is one neighbour.
type OSPFNeighbor struct {
	RouterID   string  `json:"router_id"`
	Address    string  `json:"address"`
	Interface  string  `json:"interface"`
	Area       string  `json:"area"`
	State      string  `json:"state"`
	Priority   int     `json:"priority"`
	DR         string  `json:"dr,omitempty"`
	BDR        string  `json:"bdr,omitempty"`
	Role       string  `json:"role,omitempty"` // master | slave during and after the exchange
	DeadIn     float64 `json:"dead_in"`
	Requests   int     `json:"requests_pending"`
	Retransmit int     `json:"retransmit_pending"`
	UpSince    string  `json:"up_since,omitempty"`
	// FullAfterMs is how long the last exchange took (ExStart to Full).
	FullAfterMs int64 `json:"full_after_ms,omitempty"`
	Flaps       int   `json:"flaps"`
}

// OSPFInterface is one OSPF interface with its counters.
type OSPFInterface struct {
	Name           string            `json:"name"`
	Index          int               `json:"ifindex"`
	Area           string            `json:"area"`
	Type           string            `json:"type"`
	State          string            `json:"state"`
	Passive        bool              `json:"passive"`
	MTU            int               `json:"mtu"`
	Cost           int               `json:"cost"`
	BandwidthBytes float32           `json:"bandwidth_bytes"`
	BandwidthBPS   *uint64           `json:"bandwidth_bps"`
	Address        string            `json:"address,omitempty"`
	HelloInterval  float64           `json:"hello_interval"`
	DeadInterval   float64           `json:"dead_interval"`
	Priority       int               `json:"priority"`
	DR             string            `json:"dr,omitempty"`
	BDR            string            `json:"bdr,omitempty"`
	Neighbors      int               `json:"neighbors"`
	Adjacencies    int               `json:"adjacencies_full"`
	Counters       map[string]uint64 `json:"counters"`

	// BandwidthOverride is the run-time override in force (farectl
	// ... bandwidth IFACE BW), "" when none.
	BandwidthOverride string `json:"bandwidth_override,omitempty"`
}

// OSPFLSA is one database entry.
type OSPFLSA struct {
	Area      string         `json:"area"`                // "AS" for AS-scope LSAs
	Interface string         `json:"interface,omitempty"` // the link of a link-scope (type 9) LSA
	Type      int            `json:"type"`
	TypeName  string         `json:"type_name"`
	ID        string         `json:"id"`
	AdvRouter string         `json:"adv_router"`
	Seq       int32          `json:"sequence"`
	SeqHex    string         `json:"sequence_hex"`
	Checksum  uint16         `json:"checksum"`
	ChecksumX string         `json:"checksum_hex"`
	Age       uint16         `json:"age"`
	Length    int            `json:"length"`
	Options   string         `json:"options"`
	Own       bool           `json:"own"`
	Detail    map[string]any `json:"detail,omitempty"`
	Raw       string         `json:"raw_hex,omitempty"`
}

// OSPFSummary is one Summary LSA an ABR originates into an area, with the
// Path Bandwidth re-advertisement behind it (draft-xu-lsr-fare §4.2):
// PathBW = min(OrigPathBW, Capacity), Capacity = Σ_N min(bw(self,N),
// cap(N→D)) toward the advertiser D in FromArea. Bandwidths in bytes/s;
// OrigPathBW is omitted when the advertiser sent none (no constraint).
type OSPFSummary struct {
	Area        string   `json:"area"`
	Prefix      string   `json:"prefix"`
	Metric      uint32   `json:"metric"`
	FromArea    string   `json:"from_area"`
	Advertisers []string `json:"advertisers"`
	OrigPathBW  *float32 `json:"orig_path_bw,omitempty"`
	Capacity    float32  `json:"capacity"`
	PathBW      float32  `json:"path_bw"`
	PathBPS     *uint64  `json:"path_bandwidth_bps"`
	OrigPathBPS *uint64  `json:"original_path_bandwidth_bps"`
	CapacityBPS *uint64  `json:"capacity_bps"`
}

// OSPFClearRequest is the body of POST /v1/ospf/clear-neighbor: one
// neighbour by router id, or every one when RouterID is empty.
type OSPFClearRequest struct {
	RouterID string `json:"router_id,omitempty"`
}
