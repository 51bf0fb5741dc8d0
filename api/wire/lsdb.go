package wire

// Topology is one topology snapshot as SPF sees it (GET /v1/lsdb,
// /v1/ospf/lsdb): an IS-IS level or an OSPF area.
type Topology struct {
	Protocol string       `json:"protocol"`
	Level    int          `json:"level,omitempty"`
	Area     string       `json:"area,omitempty"`
	Self     string       `json:"self,omitempty"`
	Nodes    []TopoNode   `json:"nodes"`
	Prefixes []TopoPrefix `json:"prefixes"`
}

// TopoNode is one node with its two-way-checked links.
type TopoNode struct {
	ID       string     `json:"id"`
	Name     string     `json:"name,omitempty"`
	Pseudo   bool       `json:"pseudonode,omitempty"`
	Overload bool       `json:"overload,omitempty"`
	Attached bool       `json:"attached,omitempty"`
	RouterID string     `json:"router_id,omitempty"`
	Links    []TopoLink `json:"links"`
}

// TopoLink is one directed link; parallel links appear separately.
type TopoLink struct {
	To         string   `json:"to"`
	ToName     string   `json:"to_name,omitempty"`
	Metric     uint32   `json:"metric"`
	MaxBW      *float64 `json:"max_bandwidth_bytes,omitempty"`
	MaxBPS     *uint64  `json:"max_bandwidth_bps"` // bits/s; null: none advertised or no limit
	LocalAddr  string   `json:"local_addr,omitempty"`
	RemoteAddr string   `json:"remote_addr,omitempty"`
}

// TopoPrefix is one prefix of one advertiser.
type TopoPrefix struct {
	Prefix     string   `json:"prefix"`
	Advertiser string   `json:"advertiser"`
	Name       string   `json:"advertiser_name,omitempty"`
	Metric     uint32   `json:"metric"`
	PathBW     *float64 `json:"path_bandwidth_bytes,omitempty"`
	PathBPS    *uint64  `json:"path_bandwidth_bps"` // bits/s; null: no limit
	Down       bool     `json:"down,omitempty"`
	External   bool     `json:"external,omitempty"`
	InterArea  bool     `json:"inter_area,omitempty"`         // OSPF summary
	Type2      bool     `json:"metric_type_2,omitempty"`      // OSPF E2
	Forward    string   `json:"forwarding_address,omitempty"` // OSPF external
}
