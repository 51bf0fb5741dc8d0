package wire

// INOFHost is one host as a switch knows it (GET /v1/inof/hosts), or one
// zone peer as a host knows it.
type INOFHost struct {
	ID         string   `json:"id"`
	Switch     string   `json:"switch"` // router id of the switch it is attached to
	SwitchName string   `json:"switch_name,omitempty"`
	Port       string   `json:"port"` // that switch's port
	Role       string   `json:"role"` // initiator, target, both
	NQN        string   `json:"nqn,omitempty"`
	MAC        string   `json:"mac,omitempty"`
	Addresses  []string `json:"addresses"`
	Zones      []string `json:"zones"`
	// Source is how the answering daemon knows it: agent or lldp (on this
	// switch), bgp (from another switch). On a host: what its switch said.
	Source string `json:"source"`
	Since  string `json:"since,omitempty"` // RFC 3339
	// ExpiresIn is the seconds left of the hold time (hosts on this switch).
	ExpiresIn float64 `json:"expires_in,omitempty"`
	// Via lists the host's interfaces whose switch reports this peer (on a host).
	Via []string `json:"via,omitempty"`
}

// INOFZone is one zone (GET /v1/inof/zones).
type INOFZone struct {
	Name    string   `json:"name"`
	Members []string `json:"members"` // explicit members
	Default bool     `json:"default,omitempty"`
	// AutoAdd (default zone): hosts in no user zone are members too.
	AutoAdd bool `json:"auto_add,omitempty"`
	// From is the reflector whose configuration this is; Stamp its
	// version (nanoseconds since 1970 of its last change).
	From  string `json:"from,omitempty"`
	Stamp uint64 `json:"stamp,omitempty"`
}

// INOFZoneRequest is the body of POST /v1/inof/zones/add and /del (on a
// reflector). Del without hosts deletes the zone.
type INOFZoneRequest struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
}

// INOFPeer is one IBGP session (GET /v1/inof/peers), or on a host one
// registration with a switch.
type INOFPeer struct {
	Address string `json:"address"` // neighbour address; on a host the switch's router id
	State   string `json:"state"`   // idle ... established; on a host registering, registered, down
	// BFD is the BFD session's state, "" when BFD is off.
	BFD           string  `json:"bfd"`
	UptimeSeconds float64 `json:"uptime_seconds,omitempty"`
	Received      int     `json:"received,omitempty"` // records accepted from it
	Reason        string  `json:"reason,omitempty"`   // of the last session loss
	Flaps         int     `json:"flaps,omitempty"`    // times the BGP session left established
	Interface     string  `json:"interface,omitempty"`
	Port          string  `json:"port,omitempty"`
	SwitchName    string  `json:"switch_name,omitempty"`
}

// INOFEvent is one notification: sent by a switch to a host, or received
// (and acted on) by a host (GET /v1/inof/events). It is also what a host's
// hook reads on stdin.
type INOFEvent struct {
	Time string `json:"time"` // RFC 3339, nanoseconds
	Type string `json:"type"` // join, leave, unreachable
	Host string `json:"host"` // the peer the event is about
	// Zone is the first of the zones the two hosts share (Zones).
	Zone       string   `json:"zone"`
	Zones      []string `json:"zones"`
	Role       string   `json:"role"`
	NQN        string   `json:"nqn,omitempty"`
	Addresses  []string `json:"addresses"`
	MAC        string   `json:"mac,omitempty"`
	Switch     string   `json:"switch"` // the peer's switch
	SwitchName string   `json:"switch_name,omitempty"`
	Port       string   `json:"port"` // the peer's port
	Source     string   `json:"source,omitempty"`
	// To and ToPort: the host told (events of a switch).
	To     string `json:"to,omitempty"`
	ToPort string `json:"to_port,omitempty"`
	// Via and Reason (events of a host): the interface whose switch said
	// so, or why the host concluded it on its own (link down, switch lost).
	Via    string `json:"via,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// INOFStatus is the module's summary (GET /v1/inof/status and the
// module_status of GET /v1/status).
type INOFStatus struct {
	Role     string `json:"role"`
	RouterID string `json:"router_id,omitempty"`
	ID       string `json:"id,omitempty"` // a host's id
	// Switches and reflectors.
	LocalHosts int    `json:"local_hosts"`
	Records    int    `json:"records"`
	Zones      int    `json:"zones"`
	ZonesFrom  string `json:"zones_from,omitempty"`
	ZonesReady bool   `json:"zones_ready"`
	Pending    int    `json:"pending_notifications"`
	// Hosts.
	Peers    int               `json:"peers"`
	Counters map[string]uint64 `json:"counters"`
}
