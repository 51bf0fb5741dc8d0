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
	// Pinned: the id is pinned where it is attached (a static binding or
	// the host's key).
	Pinned bool `json:"pinned,omitempty"`
	// Unresponsive: a host of this switch that stopped acknowledging
	// notifications; the switch gave up on it until it registers again.
	Unresponsive bool `json:"unresponsive,omitempty"`
}

// INOFBinding is one binding of a host id on this switch (GET
// /v1/inof/bindings): where the id may register, from which MAC.
type INOFBinding struct {
	ID     string `json:"id"`
	Port   string `json:"port"`
	MAC    string `json:"mac,omitempty"` // the host's identity MAC ("" for a static binding without one)
	State  string `json:"state"`         // registered, absent
	Pinned bool   `json:"pinned"`        // static or signed
	Static bool   `json:"static"`
	Since  string `json:"since"`          // RFC 3339: bound here since
	Left   string `json:"left,omitempty"` // RFC 3339: when the host went
	// ExpiresIn is the seconds until an absent binding expires (0: it
	// does not: static, or binding-hold 0).
	ExpiresIn float64 `json:"expires_in,omitempty"`
}

// INOFConflict is one kind of refused claim of a host id (GET
// /v1/inof/conflicts): who tried, what it contradicts, how often.
type INOFConflict struct {
	ID      string `json:"id"`
	Port    string `json:"port"`
	MAC     string `json:"mac,omitempty"` // the claimant's identity MAC
	Reason  string `json:"reason"`
	Against string `json:"against,omitempty"` // the binding it contradicts: switch:port MAC
	First   string `json:"first"`             // RFC 3339
	Last    string `json:"last"`
	Count   uint64 `json:"count"`
}

// INOFRelease is the body of POST /v1/inof/release, and its answer (with
// the ports released).
type INOFRelease struct {
	ID    string   `json:"id"`
	Ports []string `json:"ports,omitempty"`
}

// INOFPort is what one host-facing port's hosts were refused.
type INOFPort struct {
	Port         string `json:"port"`
	Refused      uint64 `json:"refused"` // over max-hosts-per-port
	Conflicts    uint64 `json:"conflicts"`
	ForeignMAC   uint64 `json:"foreign_mac"` // requests about a registration from another MAC
	AuthFailures uint64 `json:"auth_failures"`
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
	// Unresponsive hosts stopped acknowledging notifications.
	Unresponsive int        `json:"unresponsive_hosts"`
	Bindings     int        `json:"bindings"`
	Ports        []INOFPort `json:"ports,omitempty"`
	// Hosts.
	Peers    int               `json:"peers"`
	Counters map[string]uint64 `json:"counters"`
}
