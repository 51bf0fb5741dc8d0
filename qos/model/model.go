// Package model holds what the QoS policies and the backends exchange:
// the desired state of a node's lossless QoS (Desired), what its data
// plane counted (Counters), and which features each interface supports
// (Report). It is plain data, so policies stay pure functions of
// (config, counters, clock) and a backend never needs to know a policy.
package model

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// NumPrio is the number of 802.1p priorities, traffic classes and queues
// per port. fared maps priority p to traffic class p and queue p.
const NumPrio = 8

// Prios is a bitmap of priorities: bit p set means priority p.
type Prios uint8

// Has reports whether p is in the set.
func (s Prios) Has(p int) bool { return p >= 0 && p < NumPrio && s&(1<<p) != 0 }

// List returns the priorities in ascending order.
func (s Prios) List() []int {
	var out []int
	for p := 0; p < NumPrio; p++ {
		if s.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

// String formats the set the way SONiC's pfc_enable does: "3,4".
func (s Prios) String() string {
	l := s.List()
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ",")
}

// PriosOf builds a set.
func PriosOf(ps ...int) Prios {
	var s Prios
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

// Action is what the deadlock recovery does with a stuck queue's packets.
type Action string

const (
	ActionDrop    Action = "drop"
	ActionForward Action = "forward"
)

// Color is a packet's drop precedence.
type Color uint8

const (
	Green Color = iota
	Yellow
	Red
)

func (c Color) String() string { return [...]string{"green", "yellow", "red"}[c] }

// WRED is one colour's thresholds of a profile, in bytes of queue depth.
// Between Min and Max a packet is marked (ECN-capable) or dropped with a
// probability rising linearly to Prob percent; at Max and above always.
type WRED struct {
	Enable bool
	Min    uint64
	Max    uint64
	Prob   int // percent, 0..100
	// ProbExact, when above 0, is the probability as a fraction (0..1]
	// with finer steps than Prob's whole percents: ECN tuners (Adaptive
	// RED moves max_p by 1% and x0.9) set it. Backends that take whole
	// percents (SONiC) use Prob, which tuners keep rounded alongside.
	ProbExact float64
}

// Probability is the maximum marking probability as a fraction.
func (w WRED) Probability() float64 {
	if w.ProbExact > 0 {
		return w.ProbExact
	}
	return float64(w.Prob) / 100
}

// ECNMode says which colours are ECN-marked instead of dropped, by the
// names SONiC's WRED_PROFILE.ecn uses (ecn_none ... ecn_all).
type ECNMode string

const (
	ECNNone        ECNMode = "ecn_none"
	ECNGreen       ECNMode = "ecn_green"
	ECNYellow      ECNMode = "ecn_yellow"
	ECNRed         ECNMode = "ecn_red"
	ECNGreenYellow ECNMode = "ecn_green_yellow"
	ECNGreenRed    ECNMode = "ecn_green_red"
	ECNYellowRed   ECNMode = "ecn_yellow_red"
	ECNAll         ECNMode = "ecn_all"
)

// Marks reports whether packets of colour c are marked rather than
// dropped.
func (m ECNMode) Marks(c Color) bool {
	switch m {
	case ECNAll:
		return true
	case ECNGreen:
		return c == Green
	case ECNYellow:
		return c == Yellow
	case ECNRed:
		return c == Red
	case ECNGreenYellow:
		return c == Green || c == Yellow
	case ECNGreenRed:
		return c == Green || c == Red
	case ECNYellowRed:
		return c == Yellow || c == Red
	}
	return false
}

// Profile is a WRED/ECN profile.
type Profile struct {
	Name   string
	Colors [3]WRED // by Color
	ECN    ECNMode
	// Dequeue marks when a packet leaves the queue (fast ECN) rather
	// than when it arrives: the receiver learns of congestion one queue
	// delay earlier.
	Dequeue bool
}

// MaxThreshold is the highest enabled max threshold: the depth by which
// every colour is marked or dropped. "ECN before PFC" compares it with
// the queue's XOFF.
func (p Profile) MaxThreshold() uint64 {
	var m uint64
	for _, c := range p.Colors {
		if c.Enable && c.Max > m {
			m = c.Max
		}
	}
	return m
}

// SchedType is a queue's scheduling discipline.
type SchedType string

const (
	Strict SchedType = "strict"
	DWRR   SchedType = "dwrr"
	WRR    SchedType = "wrr"
)

// Queue is one egress queue's settings.
type Queue struct {
	Profile string // WRED/ECN profile name, "" = none (tail drop)
	Sched   SchedType
	Weight  int // 1..100 for DWRR/WRR
}

// PFCThresholds are one priority group's ingress buffer limits, in bytes:
// PAUSE is sent when the group holds XOFF bytes, resumed below XON, and
// Headroom absorbs what is in flight after the PAUSE.
type PFCThresholds struct {
	XOFF, XON, Headroom uint64
}

// Iface is the desired state of one interface.
type Iface struct {
	Name string
	Rate uint64 // bits/s; 0 = the link's own speed
	// PFCConfigured is what the config asks for; PFC is what is applied
	// (the watchdog turns an interface's PFC off during recovery and
	// after the deadlock limit). A priority without PFC neither sends
	// nor honours PAUSE.
	PFCConfigured Prios
	PFC           Prios
	// Drop lists priorities whose queued and arriving packets are
	// dropped: the watchdog's "drop" action during recovery.
	Drop       Prios
	Thresholds [NumPrio]PFCThresholds
	Queues     [NumPrio]Queue
	// Group is the prevention port group of the interface, "" = none.
	Group string
	// Watchdog is the detection configuration a backend with its own
	// watchdog (SONiC's pfcwd) is given; fared's policy runs regardless.
	Watchdog WatchdogParams
}

// WatchdogParams are the timers of a data-plane watchdog.
type WatchdogParams struct {
	Enabled     bool
	Detection   time.Duration
	Restoration time.Duration
	Action      Action
}

// Remap is a prevention rule: a packet of DSCP From that enters and
// leaves through interfaces of Group is sent with DSCP To in priority
// Prio.
type Remap struct {
	Group string
	From  uint8
	To    uint8
	Prio  uint8
}

// Elephant is the large-flow rule: a flow that has sent Size bytes and
// runs faster than Rate is an elephant and is put in priority Prio with
// drop precedence Color; other flows keep the priority of their DSCP.
type Elephant struct {
	Rate  uint64 // bytes/s
	Size  uint64 // bytes
	Prio  uint8
	Color Color
	// Idle is how long a flow may stay silent before it is forgotten.
	Idle time.Duration
	// ClassifyOnly meters and counts elephants without moving them: they
	// keep their DSCP's priority and green colour. AI ECN reads the
	// elephant/mice split of a queue that carries both.
	ClassifyOnly bool
}

// Desired is the whole QoS state fared wants on a node.
type Desired struct {
	Ifaces   []Iface           // sorted by name
	DSCP     [64]uint8         // DSCP -> priority
	Profiles []Profile         // sorted by name
	Remaps   []Remap           // prevention rules
	Elephant *Elephant         // nil: no large-flow separation
	Poll     time.Duration     // the policies' poll interval
	Extra    map[string]string // backend-specific knobs (unused by policies)
}

// Iface returns the named interface, or nil.
func (d *Desired) Iface(name string) *Iface {
	for i := range d.Ifaces {
		if d.Ifaces[i].Name == name {
			return &d.Ifaces[i]
		}
	}
	return nil
}

// Profile returns the named profile, or nil.
func (d *Desired) Profile(name string) *Profile {
	for i := range d.Profiles {
		if d.Profiles[i].Name == name {
			return &d.Profiles[i]
		}
	}
	return nil
}

// Clone returns a deep copy (policies derive the applied state from the
// configured one without touching it).
func (d *Desired) Clone() *Desired {
	c := *d
	c.Ifaces = append([]Iface(nil), d.Ifaces...)
	c.Profiles = append([]Profile(nil), d.Profiles...)
	c.Remaps = append([]Remap(nil), d.Remaps...)
	if d.Elephant != nil {
		e := *d.Elephant
		c.Elephant = &e
	}
	return &c
}

// Sort puts interfaces and profiles in name order.
func (d *Desired) Sort() {
	sort.Slice(d.Ifaces, func(i, j int) bool { return d.Ifaces[i].Name < d.Ifaces[j].Name })
	sort.Slice(d.Profiles, func(i, j int) bool { return d.Profiles[i].Name < d.Profiles[j].Name })
}

// PrioCounters are one priority's (queue's) counters on an interface.
// All counts are cumulative since the backend started.
type PrioCounters struct {
	// PauseRx and PauseTx count PFC frames for this priority received
	// from and sent to the peer; XOFFOnsets counts receptions that
	// paused a running queue (SAI's ON2OFF_RX_PKTS).
	PauseRx, PauseTx, XOFFOnsets uint64
	// Paused: the peer has this priority paused now (SAI's
	// SAI_QUEUE_ATTR_PAUSE_STATUS). PausedKnown is false when the
	// backend cannot tell; the watchdog then cannot watch the queue.
	Paused, PausedKnown bool
	TxPackets, TxBytes  uint64
	Drops               uint64
	Marks               uint64 // ECN CE marks
	Depth               uint64 // bytes queued now
	Remapped            uint64 // packets moved out of this priority by prevention
	// ElephantBytes and MiceBytes split TxBytes by the large/small flow
	// classifier (both 0 when the backend cannot tell per queue).
	ElephantBytes, MiceBytes uint64
}

// Class is a named traffic class's counters (Linux HTB classes,
// elephant/mice totals).
type Class struct {
	Name    string
	Prio    int // -1 when the class is not one priority
	Bytes   uint64
	Packets uint64
	Backlog uint64
	Drops   uint64
}

// Flow is one flow the data plane tracks for large/small separation.
type Flow struct {
	Key      string
	Elephant bool
	Bytes    uint64
}

// IfaceCounters are one interface's counters.
type IfaceCounters struct {
	Name string
	// Speed is the port's rate in bits/s (0: unknown).
	Speed   uint64
	Prio    [NumPrio]PrioCounters
	Classes []Class
	// ElephantBytes and MiceBytes split what left the interface by the
	// large/small classification.
	ElephantBytes, MiceBytes uint64
	Flows                    []Flow
}

// Counters is one snapshot of a node's counters.
type Counters struct {
	At     time.Time
	Ifaces map[string]*IfaceCounters
}

// Feature is one QoS capability a backend may have on an interface.
type Feature string

const (
	FeatPFC        Feature = "pfc"        // per-priority PFC enable and thresholds
	FeatETS        Feature = "ets"        // queue scheduling (strict/DWRR)
	FeatDSCPMap    Feature = "dscp-map"   // DSCP -> priority classification
	FeatECN        Feature = "ecn"        // WRED/ECN profiles
	FeatFastECN    Feature = "fast-ecn"   // marking at dequeue
	FeatWatchdog   Feature = "watchdog"   // counters the deadlock watchdog needs
	FeatPrevention Feature = "prevention" // port-group remapping
	FeatFlows      Feature = "flows"      // large/small flow separation
	FeatCounters   Feature = "counters"   // per-queue counters
)

// Features lists every feature in display order.
var Features = []Feature{FeatPFC, FeatETS, FeatDSCPMap, FeatECN, FeatFastECN, FeatWatchdog, FeatPrevention, FeatFlows, FeatCounters}

// Support says whether an interface has a feature, and if not, why.
type Support struct {
	Feature Feature
	OK      bool
	Reason  string // why not, or how it is done
}

// Report is what Apply found, per interface ("" for node-wide facts).
type Report map[string][]Support

// Set records a feature's support on an interface, replacing an earlier
// entry for it.
func (r Report) Set(iface string, f Feature, ok bool, reason string) {
	for i, s := range r[iface] {
		if s.Feature == f {
			r[iface][i] = Support{f, ok, reason}
			return
		}
	}
	r[iface] = append(r[iface], Support{f, ok, reason})
}

// Get returns a feature's support on an interface.
func (r Report) Get(iface string, f Feature) (Support, bool) {
	for _, s := range r[iface] {
		if s.Feature == f {
			return s, true
		}
	}
	return Support{}, false
}

// Backend drives one node's data plane. Policies reach the data plane
// only through it, so the same policy runs on a Linux host, a SONiC
// switch or the software data plane.
type Backend interface {
	// Name is "linux", "sonic" or "sim".
	Name() string
	// Apply makes the data plane match d as far as it can. What it
	// cannot do on an interface is in the report with the reason; an
	// error means something it can do failed.
	Apply(ctx context.Context, d *Desired) (Report, error)
	// Counters reads the data plane's counters.
	Counters(ctx context.Context) (*Counters, error)
	// Close releases what the backend holds (sockets); it leaves the
	// applied state in place.
	Close() error
}
