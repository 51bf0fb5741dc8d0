package inc

import (
	"net/netip"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
)

// Config is the inc section.
//
//	inc:
//	  role: switch              # manager, switch, or both
//	  manager: 10.255.0.5:7791  # switch: the manager (both: defaults to this node)
//	  listen: 0.0.0.0:7791      # manager: gRPC address
//	  address: 10.255.0.3       # switch: data-plane address (default: router-id)
//	  slots: 256                # switch: slots per tree it offers
//	  ranks: 64                 # switch: children per tree it offers
//	  trees: 64                 # switch: trees it takes
//	  max-payload: 4096         # switch: bytes per packet it takes
//	  ordered: false            # manager: trees sum in rank order (bit-identical)
//	  heartbeat: 300ms          # manager: client heartbeat interval
//	  dead-after: 1500ms        # manager: a silent client is dead after this
//	  timeout-reports: 3        # manager: reports on a tree before it is rebuilt without its root
type Config struct {
	Role           string
	Manager        string
	Listen         string
	Address        netip.Addr
	Slots          int
	Ranks          int
	Trees          int
	MaxPayload     int
	Ordered        bool
	Heartbeat      time.Duration
	DeadAfter      time.Duration
	TimeoutReports int
}

// Roles.
const (
	RoleManager = "manager"
	RoleSwitch  = "switch"
	RoleBoth    = "both"
)

// DefaultPort is the manager's gRPC port.
const DefaultPort = 7791

func (c *Config) isManager() bool { return c.Role == RoleManager || c.Role == RoleBoth }
func (c *Config) isSwitch() bool  { return c.Role == RoleSwitch || c.Role == RoleBoth }

func init() {
	config.Register(config.Section{Key: "inc", Parse: parse})
}

func parse(w *config.Walker, k, v *yaml.Node) any {
	c := &Config{Slots: 256, Ranks: 64, Trees: 64, MaxPayload: 4096, Heartbeat: 300 * time.Millisecond,
		DeadAfter: 1500 * time.Millisecond, TimeoutReports: 3}
	if !w.IsMapping(k, v) {
		return c
	}
	var addr string
	seen := w.Mapping(v, map[string]config.Field{
		"role":            w.OneOf(&c.Role, RoleManager, RoleSwitch, RoleBoth),
		"manager":         w.Str(&c.Manager, checkAddrPort),
		"listen":          w.Str(&c.Listen, checkAddrPort),
		"address":         w.Str(&addr, checkIPv4),
		"slots":           config.SetInt(w, &c.Slots, 1, 65535),
		"ranks":           config.SetInt(w, &c.Ranks, 1, 65535),
		"trees":           config.SetInt(w, &c.Trees, 1, 65535),
		"max-payload":     config.SetInt(w, &c.MaxPayload, 64, 9000),
		"ordered":         w.Bool(&c.Ordered),
		"heartbeat":       w.SetDuration(&c.Heartbeat, 50*time.Millisecond, time.Minute),
		"dead-after":      w.SetDuration(&c.DeadAfter, 100*time.Millisecond, 10*time.Minute),
		"timeout-reports": config.SetInt(w, &c.TimeoutReports, 1, 1000),
	})
	if addr != "" {
		c.Address, _ = netip.ParseAddr(addr)
	}
	switch {
	case seen["role"] == nil:
		w.Errf(v, "inc: role is required (manager, switch or both)")
	case c.Role == RoleSwitch && c.Manager == "":
		w.Errf(seen["role"], "inc: a switch needs manager: address:port")
	case c.Role == RoleManager && seen["manager"] != nil:
		w.Errf(seen["manager"], "inc: manager is for switches; a manager has listen")
	case c.DeadAfter <= c.Heartbeat:
		w.Errf(v, "inc: dead-after (%v) must be longer than heartbeat (%v)", c.DeadAfter, c.Heartbeat)
	}
	if c.Listen == "" {
		c.Listen = netip.AddrPortFrom(netip.IPv4Unspecified(), DefaultPort).String()
	}
	return c
}

func checkAddrPort(s string) string {
	if _, err := netip.ParseAddrPort(s); err != nil {
		return "want address:port, e.g. 10.255.0.5:7791"
	}
	return ""
}

func checkIPv4(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return "want an IPv4 address (the INC data plane is IPv4)"
	}
	return ""
}

func sectionOf(c *config.Config) *Config {
	s, _ := c.Sections["inc"].(*Config)
	return s
}
