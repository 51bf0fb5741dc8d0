// Package qosconfig is the qos section of fared's config (docs/qos.md): its
// parser (every error file:line, through config.Walker), its checks
// ("ECN before PFC", port groups, ranges) and its translation into the
// desired state the backends apply. qos-sim scenario files embed the same
// section, so the parser lives here rather than in the module.
package qosconfig

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// Key is the section's top-level key.
const Key = "qos"

// Config is the parsed qos section.
type Config struct {
	Backend string // linux | sonic | sim
	Poll    time.Duration
	Line    int // of the qos key

	Sonic Sonic
	Sim   Sim

	DSCP     map[uint8]uint8 // DSCP -> priority (unlisted: 0)
	PFC      PFC
	Watchdog Watchdog
	Groups   []Group
	Profiles map[string]*Profile
	Queues   [model.NumPrio]Queue // defaults for every interface
	Flows    *Flows
	Tuning   *Tuning // ecn-tuning: AI ECN or Adaptive RED; nil = static thresholds
	IPCC     *IPCC   // nil = off
	Ifaces   []Iface

	Overlay *Overlay // ecn-overlay: RFC 6040 on the node's tunnels; nil = off
}

// IPCC is the ipcc section.
type IPCC struct {
	policy.IPCCConfig
	// Capture lists the interfaces whose RoCEv2 packets the linux runtime
	// copies (empty: every qos interface).
	Capture []string
	// LearnCM: in qos-sim, also learn QPs from the (modelled) CM
	// exchange at each flow's start, not only from ACKs.
	LearnCM bool
	// RouteCache bounds the linux runtime's cache of egress lookups
	// (destination -> interface), each kept RouteTTL.
	RouteCache int
	RouteTTL   time.Duration
	PriosSet   bool
	Line       int
}

// IPCC route cache defaults.
const (
	DefaultRouteCache = 16384
	DefaultRouteTTL   = time.Second
)

// Tuning is the ecn-tuning section.
type Tuning struct {
	policy.TunerConfig
	PriosSet bool // priorities given (else: PFC priorities with a profile)
	Line     int
}

// Sonic is the sonic backend's connection.
type Sonic struct {
	Redis      string // unix socket path or host:port
	ConfigDB   int
	CountersDB int
}

// Sim is the sim backend's scenario and the node fared plays in it.
type Sim struct {
	Scenario string
	Node     string
	// Speed is simulated seconds per wall second (default 0.01): the
	// data plane runs slower than real time, the policies at wall time.
	Speed float64
	Line  int
}

// PFC is the pfc subsection.
type PFC struct {
	Prios      model.Prios
	Thresholds [model.NumPrio]model.PFCThresholds
	Line       int
}

// Watchdog is the deadlock watchdog's configuration.
type Watchdog struct {
	Enabled     bool
	Detection   time.Duration
	Restoration time.Duration
	Action      model.Action
	Limit       int           // deadlocks within Window that keep PFC off; 0 = no limit
	Window      time.Duration // of the limit
	Line        int
	DetLine     int // of detection-time
}

// Group is a prevention port group.
type Group struct {
	Name      string
	Ifaces    []string
	Remaps    []model.Remap
	RemapLine []int // of each remap, by index
	Line      int
	IfaceLine int // of its interfaces key
}

// Profile is a WRED/ECN profile and where it was defined.
type Profile struct {
	model.Profile
	Line int
}

// Queue is a queue's settings and where they were set.
type Queue struct {
	model.Queue
	Line int
}

// Flows is the large/small flow separation.
type Flows struct {
	model.Elephant
	MicePrio int // the low-latency priority mice keep (-1: not set)
	Line     int
}

// Iface is one entry of interfaces.
type Iface struct {
	Name   string
	Rate   uint64       // bits/s; 0 = link speed
	PFC    *model.Prios // nil: the pfc section's priorities
	Queues [model.NumPrio]*Queue
	Line   int
}

// Defaults.
const (
	DefaultPoll        = 100 * time.Millisecond
	DefaultDetection   = 200 * time.Millisecond // SONiC's pfcwd default
	DefaultRestoration = 200 * time.Millisecond
	DefaultWindow      = time.Minute
	DefaultXOFF        = 300_000
	DefaultXON         = 250_000
	DefaultHeadroom    = 100_000
)

// From returns the parsed section of cfg, or nil.
func From(c *config.Config) *Config {
	q, _ := c.Sections[Key].(*Config)
	return q
}

// Parse parses the qos section; problems go to w as file:line.
func Parse(w *config.Walker, k, v *yaml.Node) any { return ParseFor(w, k, v, nil) }

// ParseFor parses a qos section whose interfaces default to ports when
// it lists none (qos-sim scenarios apply one section to every switch).
func ParseFor(w *config.Walker, k, v *yaml.Node, ports []string) *Config {
	c := &Config{Backend: "linux", Poll: DefaultPoll, Line: k.Line, Sim: Sim{Speed: 0.01},
		Sonic:    Sonic{Redis: "/var/run/redis/redis.sock", ConfigDB: 4, CountersDB: 2},
		DSCP:     map[uint8]uint8{},
		Profiles: map[string]*Profile{},
		Watchdog: Watchdog{Enabled: true, Detection: DefaultDetection, Restoration: DefaultRestoration,
			Action: model.ActionDrop, Window: DefaultWindow, Line: k.Line},
		PFC: PFC{Line: k.Line},
	}
	for p := range c.PFC.Thresholds {
		c.PFC.Thresholds[p] = model.PFCThresholds{XOFF: DefaultXOFF, XON: DefaultXON, Headroom: DefaultHeadroom}
	}
	for p := range c.Queues {
		c.Queues[p] = Queue{Queue: model.Queue{Sched: model.Strict, Weight: 1}}
	}
	if !w.IsMapping(k, v) {
		return c
	}
	p := &parser{w: w, c: c}
	seen := w.Mapping(v, map[string]config.Field{
		"backend":       w.OneOf(&c.Backend, "linux", "sonic", "sim"),
		"poll-interval": w.SetDuration(&c.Poll, 100*time.Microsecond, 10*time.Second),
		"sonic":         p.sonic,
		"sim":           p.sim,
		"dscp-map":      p.dscpMap,
		"pfc":           p.pfc,
		"watchdog":      p.watchdog,
		"prevention":    p.prevention,
		"ecn-profiles":  p.profiles,
		"queues":        func(k, v *yaml.Node) { p.queues(k, v, func(q int, n *yaml.Node) *Queue { return &c.Queues[q] }) },
		"flows":         p.flows,
		"ecn-tuning":    p.tuning,
		"ipcc":          p.ipcc,
		"ecn-overlay":   p.overlay,
		"interfaces":    w.List(p.iface),
	})
	if seen["interfaces"] == nil {
		for _, name := range ports {
			c.Ifaces = append(c.Ifaces, Iface{Name: name, Line: k.Line})
		}
	}
	if c.Backend == "sim" && seen["sim"] == nil {
		w.Errf(k, "backend sim needs a sim section (scenario, node)")
	}
	p.check()
	return c
}
