// Package conf is the qos section of fared's config (docs/qos.md): its
// parser (every error file:line, through config.Walker), its checks
// ("ECN before PFC", port groups, ranges) and its translation into the
// desired state the backends apply. qos-sim scenario files embed the same
// section, so the parser lives here rather than in the module.
package conf

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	p.check(k)
	return c
}

type parser struct {
	w *config.Walker
	c *Config
	// where things were said, for messages of cross-checks
	ifaceAt map[string]*yaml.Node
}

func (p *parser) sonic(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	s := &p.c.Sonic
	p.w.Mapping(v, map[string]config.Field{
		"redis":       p.w.Str(&s.Redis, nonEmpty),
		"config-db":   config.SetInt(p.w, &s.ConfigDB, 0, 15),
		"counters-db": config.SetInt(p.w, &s.CountersDB, 0, 15),
	})
}

func (p *parser) sim(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	s := &p.c.Sim
	s.Line = k.Line
	seen := p.w.Mapping(v, map[string]config.Field{
		"scenario": p.w.Str(&s.Scenario, nonEmpty),
		"node":     p.w.Str(&s.Node, nonEmpty),
		"speed": func(k, v *yaml.Node) {
			f, err := strconv.ParseFloat(v.Value, 64)
			if !p.w.Want(k, v, "a number", v.Kind == yaml.ScalarNode && err == nil) {
				return
			}
			if !(f > 0 && f <= 1000) {
				p.w.Errf(v, "%s: %g out of range (0, 1000]", k.Value, f)
				return
			}
			s.Speed = f
		},
	})
	for _, key := range []string{"scenario", "node"} {
		if seen[key] == nil {
			p.w.Errf(k, "sim: missing required key %q", key)
		}
	}
}

func nonEmpty(s string) string {
	if s == "" {
		return "must not be empty"
	}
	return ""
}

// intKeyed calls f for each entry of a mapping whose keys are integers in
// lo..hi.
func (p *parser) intKeyed(k, v *yaml.Node, lo, hi int64, f func(n int, kn, vn *yaml.Node)) {
	if !p.w.IsMapping(k, v) {
		return
	}
	seen := map[int64]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		kn, vn := v.Content[i], config.Deref(v.Content[i+1])
		n, ok := p.w.Integer(&yaml.Node{Value: k.Value + " key"}, kn, lo, hi)
		if !ok {
			continue
		}
		if prev := seen[n]; prev != nil {
			p.w.Errf(kn, "%s: duplicate key %d (first at line %d)", k.Value, n, prev.Line)
			continue
		}
		seen[n] = kn
		f(int(n), kn, vn)
	}
}

func (p *parser) dscpMap(k, v *yaml.Node) {
	p.intKeyed(k, v, 0, 63, func(d int, kn, vn *yaml.Node) {
		if pr, ok := p.w.Integer(&yaml.Node{Value: fmt.Sprintf("dscp %d", d)}, vn, 0, model.NumPrio-1); ok {
			p.c.DSCP[uint8(d)] = uint8(pr)
		}
	})
}

// prios parses a list of priorities.
func (p *parser) prios(k, v *yaml.Node) (model.Prios, bool) {
	if !p.w.Want(k, v, "a list of priorities 0..7", v.Kind == yaml.SequenceNode) {
		return 0, false
	}
	var s model.Prios
	ok := true
	for _, it := range v.Content {
		n, good := p.w.Integer(k, config.Deref(it), 0, model.NumPrio-1)
		if !good {
			ok = false
			continue
		}
		if s.Has(int(n)) {
			p.w.Errf(it, "%s: priority %d listed twice", k.Value, n)
			ok = false
		}
		s |= 1 << n
	}
	return s, ok
}

// Bytes parses a byte count: an integer, or a number with K, M or G
// (powers of 10) or Ki, Mi, Gi (powers of 2), optionally followed by B.
func Bytes(s string) (uint64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "B")
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*mult > 1<<50 {
		return 0, fmt.Errorf("invalid byte count %q (want e.g. 400000, 400K, 1.5M, 64KiB)", s)
	}
	return uint64(f*mult + 0.5), nil
}

func (p *parser) bytes(dst *uint64, lo, hi uint64) config.Field {
	return func(k, v *yaml.Node) {
		s, ok := p.w.Text(k, v)
		if !ok {
			return
		}
		n, err := Bytes(s)
		if err != nil {
			p.w.Errf(v, "%s: %v", k.Value, err)
			return
		}
		if n < lo || n > hi {
			p.w.Errf(v, "%s: %d bytes out of range %d..%d", k.Value, n, lo, hi)
			return
		}
		*dst = n
	}
}

const maxBuf = 1 << 40

func (p *parser) thresholds(t *model.PFCThresholds) map[string]config.Field {
	return map[string]config.Field{
		"xoff":     p.bytes(&t.XOFF, 1, maxBuf),
		"xon":      p.bytes(&t.XON, 0, maxBuf),
		"headroom": p.bytes(&t.Headroom, 0, maxBuf),
	}
}

func (p *parser) pfc(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	c := &p.c.PFC
	c.Line = k.Line
	var common model.PFCThresholds = c.Thresholds[0]
	fields := p.thresholds(&common)
	fields["priorities"] = func(k, v *yaml.Node) {
		if s, ok := p.prios(k, v); ok {
			c.Prios = s
		}
	}
	var per map[int]model.PFCThresholds
	var perAt = map[int]*yaml.Node{}
	fields["per-priority"] = func(k, v *yaml.Node) {
		per = map[int]model.PFCThresholds{}
		p.intKeyed(k, v, 0, model.NumPrio-1, func(pr int, kn, vn *yaml.Node) {
			if !p.w.IsMapping(kn, vn) {
				return
			}
			t := model.PFCThresholds{}
			p.w.Mapping(vn, p.thresholds(&t))
			per[pr] = t // zero fields take the common values below
			perAt[pr] = kn
		})
	}
	p.w.Mapping(v, fields)
	for pr := range c.Thresholds {
		t := common
		if o, ok := per[pr]; ok {
			if o.XOFF != 0 {
				t.XOFF = o.XOFF
			}
			if o.XON != 0 {
				t.XON = o.XON
			}
			if o.Headroom != 0 {
				t.Headroom = o.Headroom
			}
		}
		c.Thresholds[pr] = t
		if t.XON > t.XOFF {
			at := v
			if n := perAt[pr]; n != nil {
				at = n
			}
			if c.Prios.Has(pr) {
				p.w.Errf(at, "pfc: priority %d: xon %d must not exceed xoff %d", pr, t.XON, t.XOFF)
			}
		}
	}
}

func (p *parser) watchdog(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	wd := &p.c.Watchdog
	wd.Line = k.Line
	var action string
	p.w.Mapping(v, map[string]config.Field{
		"enabled": p.w.Bool(&wd.Enabled),
		"detection-time": func(k, v *yaml.Node) {
			wd.DetLine = k.Line
			p.w.SetDuration(&wd.Detection, 100*time.Microsecond, time.Minute)(k, v)
		},
		"restoration-time": p.w.SetDuration(&wd.Restoration, 100*time.Microsecond, time.Hour),
		"action":           p.w.OneOf(&action, "drop", "forward"),
		"limit":            config.SetInt(p.w, &wd.Limit, 0, 1000),
		"limit-window":     p.w.SetDuration(&wd.Window, time.Millisecond, 24*time.Hour),
	})
	if action != "" {
		wd.Action = model.Action(action)
	}
}

func (p *parser) prevention(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	p.w.Mapping(v, map[string]config.Field{
		"port-groups": p.w.List(func(v *yaml.Node) {
			g := Group{Line: v.Line}
			seen := p.w.Mapping(v, map[string]config.Field{
				"name": p.w.Str(&g.Name, nonEmpty),
				"interfaces": func(k, v *yaml.Node) {
					g.IfaceLine = k.Line
					g.Ifaces, _ = p.w.Strings(k, v)
				},
				"remap": p.w.List(func(v *yaml.Node) {
					var from, to, prio int = -1, -1, -1
					s := p.w.Mapping(v, map[string]config.Field{
						"dscp":        config.SetInt(p.w, &from, 0, 63),
						"to-dscp":     config.SetInt(p.w, &to, 0, 63),
						"to-priority": config.SetInt(p.w, &prio, 0, model.NumPrio-1),
					})
					for _, key := range []string{"dscp", "to-dscp", "to-priority"} {
						if s[key] == nil {
							p.w.Errf(v, "remap: missing required key %q", key)
						}
					}
					if from >= 0 && to >= 0 && prio >= 0 {
						g.Remaps = append(g.Remaps, model.Remap{From: uint8(from), To: uint8(to), Prio: uint8(prio)})
					}
				}),
			})
			if seen["name"] == nil {
				p.w.Errf(v, "port group: missing required key \"name\"")
			}
			if len(g.Ifaces) < 2 {
				p.w.Errf(v, "port group %s: needs at least two interfaces", g.Name)
			}
			for i := range g.Remaps {
				g.Remaps[i].Group = g.Name
			}
			p.c.Groups = append(p.c.Groups, g)
		}),
	})
}

var ecnModes = []string{"none", "green", "yellow", "red", "green-yellow", "green-red", "yellow-red", "all"}

func (p *parser) profiles(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		kn, vn := v.Content[i], config.Deref(v.Content[i+1])
		name := kn.Value
		if prev := p.c.Profiles[name]; prev != nil {
			p.w.Errf(kn, "ecn-profiles: duplicate profile %q (first at line %d)", name, prev.Line)
			continue
		}
		if !p.w.IsMapping(kn, vn) {
			continue
		}
		pr := &Profile{Profile: model.Profile{Name: name, ECN: model.ECNAll}, Line: kn.Line}
		var mode, mark string
		colour := func(c model.Color) config.Field {
			return func(k, v *yaml.Node) {
				if !p.w.IsMapping(k, v) {
					return
				}
				wr := &pr.Colors[c]
				wr.Enable = true
				wr.Prob = 100
				seen := p.w.Mapping(v, map[string]config.Field{
					"min":         p.bytes(&wr.Min, 0, maxBuf),
					"max":         p.bytes(&wr.Max, 1, maxBuf),
					"probability": config.SetInt(p.w, &wr.Prob, 0, 100),
				})
				for _, key := range []string{"min", "max"} {
					if seen[key] == nil {
						p.w.Errf(v, "%s: missing required key %q", k.Value, key)
					}
				}
				if wr.Min > wr.Max {
					p.w.Errf(v, "profile %s %s: min %d above max %d", name, k.Value, wr.Min, wr.Max)
				}
			}
		}
		p.w.Mapping(vn, map[string]config.Field{
			"green":  colour(model.Green),
			"yellow": colour(model.Yellow),
			"red":    colour(model.Red),
			"ecn":    p.w.OneOf(&mode, ecnModes...),
			"mark":   p.w.OneOf(&mark, "enqueue", "dequeue"),
		})
		if mode != "" {
			pr.ECN = model.ECNMode("ecn_" + strings.ReplaceAll(mode, "-", "_"))
		}
		pr.Dequeue = mark == "dequeue"
		if !pr.Colors[0].Enable && !pr.Colors[1].Enable && !pr.Colors[2].Enable {
			p.w.Errf(kn, "profile %s: needs at least one of green, yellow, red", name)
		}
		p.c.Profiles[name] = pr
	}
}

// queues parses {prio: {ecn: PROFILE, scheduler: strict|dwrr|wrr, weight: N}}.
func (p *parser) queues(k, v *yaml.Node, slot func(q int, n *yaml.Node) *Queue) {
	p.intKeyed(k, v, 0, model.NumPrio-1, func(q int, kn, vn *yaml.Node) {
		if !p.w.IsMapping(kn, vn) {
			return
		}
		dst := slot(q, kn)
		dst.Line = kn.Line
		var sched string
		p.w.Mapping(vn, map[string]config.Field{
			"ecn":       p.w.Str(&dst.Profile, nonEmpty),
			"scheduler": p.w.OneOf(&sched, "strict", "dwrr", "wrr"),
			"weight":    config.SetInt(p.w, &dst.Weight, 1, 100),
		})
		if sched != "" {
			dst.Sched = model.SchedType(sched)
		}
	})
}

func (p *parser) flows(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	f := &Flows{Elephant: model.Elephant{Color: model.Yellow, Idle: 10 * time.Second}, MicePrio: -1, Line: k.Line}
	var rate config.Bandwidth
	prio, color, mode := -1, "", "separate"
	seen := p.w.Mapping(v, map[string]config.Field{
		"mode":              p.w.OneOf(&mode, "separate", "classify"),
		"elephant-rate":     p.w.Bandwidth(&rate),
		"elephant-size":     p.bytes(&f.Size, 0, maxBuf),
		"elephant-priority": config.SetInt(p.w, &prio, 0, model.NumPrio-1),
		"elephant-color":    p.w.OneOf(&color, "green", "yellow", "red"),
		"mice-priority":     config.SetInt(p.w, &f.MicePrio, 0, model.NumPrio-1),
		"idle-timeout":      p.w.SetDuration(&f.Idle, 100*time.Millisecond, time.Hour),
	})
	f.ClassifyOnly = mode == "classify"
	required := []string{"elephant-rate", "elephant-priority"}
	if f.ClassifyOnly {
		// Classified elephants stay in their queue: no priority to name.
		required = required[:1]
	}
	for _, key := range required {
		if seen[key] == nil {
			p.w.Errf(k, "flows: missing required key %q", key)
		}
	}
	f.Rate = uint64(rate / 8)
	if prio >= 0 {
		f.Prio = uint8(prio)
	}
	switch color {
	case "green":
		f.Color = model.Green
	case "red":
		f.Color = model.Red
	}
	if f.MicePrio >= 0 && prio == f.MicePrio {
		p.w.Errf(seen["mice-priority"], "flows: elephants and mice must use different priorities (both %d)", prio)
	}
	p.c.Flows = f
}

func (p *parser) tuning(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	t := &Tuning{TunerConfig: policy.TunerConfig{Algorithm: policy.AlgoAIECN, Interval: time.Millisecond,
		MinProb: 1, MaxProb: 100, UtilTarget: 0.9}, Line: k.Line}
	p.w.Mapping(v, map[string]config.Field{
		"algorithm": p.w.OneOf(&t.Algorithm, policy.AlgoAIECN, policy.AlgoARED),
		"priorities": func(k, v *yaml.Node) {
			if s, ok := p.prios(k, v); ok {
				t.Prios, t.PriosSet = s, true
			}
		},
		"interval":      p.w.SetDuration(&t.Interval, 100*time.Microsecond, time.Minute),
		"min-threshold": p.bytes(&t.MinThreshold, 0, maxBuf),
		"max-threshold": p.bytes(&t.MaxThreshold, 1, maxBuf),
		"models": func(k, v *yaml.Node) {
			if !p.w.IsMapping(k, v) {
				return
			}
			t.Models = map[string]model.WRED{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				kn, vn := v.Content[i], config.Deref(v.Content[i+1])
				if !slices.Contains(policy.AIModelNames(), kn.Value) {
					p.w.Errf(kn, "ecn-tuning models: unknown model %q (known: %s)", kn.Value, strings.Join(policy.AIModelNames(), ", "))
					continue
				}
				if !p.w.IsMapping(kn, vn) {
					continue
				}
				wr := model.WRED{Enable: true, Prob: 100}
				seen := p.w.Mapping(vn, map[string]config.Field{
					"min":         p.bytes(&wr.Min, 0, maxBuf),
					"max":         p.bytes(&wr.Max, 1, maxBuf),
					"probability": config.SetInt(p.w, &wr.Prob, 1, 100),
				})
				for _, key := range []string{"min", "max"} {
					if seen[key] == nil {
						p.w.Errf(vn, "model %s: missing required key %q", kn.Value, key)
					}
				}
				if wr.Min >= wr.Max {
					p.w.Errf(vn, "model %s: min %d must be below max %d", kn.Value, wr.Min, wr.Max)
				}
				t.Models[kn.Value] = wr
			}
		},
		"min-probability": config.SetInt(p.w, &t.MinProb, 1, 100),
		"max-probability": config.SetInt(p.w, &t.MaxProb, 1, 100),
		"utilisation-target": func(k, v *yaml.Node) {
			f, err := strconv.ParseFloat(v.Value, 64)
			if !p.w.Want(k, v, "a number", v.Kind == yaml.ScalarNode && err == nil) {
				return
			}
			if !(f > 0 && f <= 1) {
				p.w.Errf(v, "%s: %g out of range (0, 1]", k.Value, f)
				return
			}
			t.UtilTarget = f
		},
	})
	if t.MinProb > t.MaxProb {
		p.w.Errf(v, "ecn-tuning: min-probability %d above max-probability %d", t.MinProb, t.MaxProb)
	}
	if t.MaxThreshold > 0 && t.MinThreshold >= t.MaxThreshold {
		p.w.Errf(v, "ecn-tuning: min-threshold %d must be below max-threshold %d", t.MinThreshold, t.MaxThreshold)
	}
	p.c.Tuning = t
}

func (p *parser) ipcc(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	c := &IPCC{IPCCConfig: policy.DefaultIPCC(), RouteCache: DefaultRouteCache, RouteTTL: DefaultRouteTTL, Line: k.Line}
	var dscp int = int(c.CNPDSCP)
	var perPort, perSource *yaml.Node // where the caps were given
	p.w.Mapping(v, map[string]config.Field{
		"interfaces": func(k, v *yaml.Node) { c.Ifaces, _ = p.w.Strings(k, v) },
		"capture":    func(k, v *yaml.Node) { c.Capture, _ = p.w.Strings(k, v) },
		"priorities": func(k, v *yaml.Node) {
			if s, ok := p.prios(k, v); ok {
				c.Prios, c.PriosSet = s, true
			}
		},
		"poll":         p.w.SetDuration(&c.Poll, time.Microsecond, 10*time.Second),
		"cnp-interval": p.w.SetDuration(&c.CNPInterval, time.Microsecond, time.Second),
		"low":          p.bytes(&c.Low, 0, maxBuf),
		"high":         p.bytes(&c.High, 1, maxBuf),
		"few":          config.SetInt(p.w, &c.Few, 0, 64),
		"more":         config.SetInt(p.w, &c.More, 0, 64),
		"flow-timeout": p.w.SetDuration(&c.FlowTimeout, time.Millisecond, time.Hour),
		"cnp-dscp":     config.SetInt(p.w, &dscp, 0, 63),
		"max-flows":    config.SetInt(p.w, &c.MaxFlows, 1, 1<<20),
		"max-flows-per-port": func(k, v *yaml.Node) {
			perPort = v
			config.SetInt(p.w, &c.MaxFlowsPerPort, 1, 1<<20)(k, v)
		},
		"max-flows-per-source": func(k, v *yaml.Node) {
			perSource = v
			config.SetInt(p.w, &c.MaxFlowsPerSource, 1, 1<<20)(k, v)
		},
		"psn-window":      config.SetInt(p.w, &c.PSNWindow, 16, 1<<22),
		"route-cache":     config.SetInt(p.w, &c.RouteCache, 1, 1<<20),
		"route-cache-ttl": p.w.SetDuration(&c.RouteTTL, time.Millisecond, time.Minute),
		"learn-cm":        p.w.Bool(&c.LearnCM),
	})
	c.CNPDSCP = uint8(dscp)
	// The caps nest: a source's within its port's, a port's within the
	// table (unset ones are derived from max-flows, so they always fit).
	if perPort != nil && c.MaxFlowsPerPort > c.MaxFlows {
		p.w.Errf(perPort, "ipcc: max-flows-per-port %d above max-flows %d", c.MaxFlowsPerPort, c.MaxFlows)
	}
	if perSource != nil {
		port := c.MaxFlowsPerPort
		if perPort == nil {
			port = max(c.MaxFlows/4, 1)
		}
		if c.MaxFlowsPerSource > port {
			p.w.Errf(perSource, "ipcc: max-flows-per-source %d above max-flows-per-port %d", c.MaxFlowsPerSource, port)
		}
	}
	if c.Low >= c.High {
		p.w.Errf(v, "ipcc: low %d must be below high %d", c.Low, c.High)
	}
	if c.Few > c.More {
		p.w.Errf(v, "ipcc: few %d above more %d (growing and high sends the most)", c.Few, c.More)
	}
	p.c.IPCC = c
}

func (p *parser) iface(v *yaml.Node) {
	f := Iface{Line: v.Line}
	var rate config.Bandwidth
	seen := p.w.Mapping(v, map[string]config.Field{
		"name": p.w.Str(&f.Name, nonEmpty),
		"rate": p.w.Bandwidth(&rate),
		"pfc": func(k, v *yaml.Node) {
			if s, ok := p.prios(k, v); ok {
				f.PFC = &s
			}
		},
		"queues": func(k, v *yaml.Node) {
			p.queues(k, v, func(q int, n *yaml.Node) *Queue {
				c := p.c.Queues[q] // starts from the defaults
				f.Queues[q] = &c
				return f.Queues[q]
			})
		},
	})
	if seen["name"] == nil {
		p.w.Errf(v, "interface: missing required key \"name\"")
		return
	}
	f.Rate = uint64(rate)
	if p.ifaceAt == nil {
		p.ifaceAt = map[string]*yaml.Node{}
	}
	if prev := p.ifaceAt[f.Name]; prev != nil {
		p.w.Errf(v, "interface %s: listed twice (first at line %d)", f.Name, prev.Line)
		return
	}
	p.ifaceAt[f.Name] = v
	p.c.Ifaces = append(p.c.Ifaces, f)
}

// check runs the checks across subsections.
func (p *parser) check(k *yaml.Node) {
	c, w := p.c, p.w
	errAt := func(line int, format string, args ...any) {
		w.Errf(&yaml.Node{Line: line}, format, args...)
	}
	// Watchdog timers: the detection period is a whole number of polls,
	// so a deadlock is reported within [detection, detection + poll].
	wd := c.Watchdog
	if wd.Enabled {
		if wd.Detection < c.Poll || wd.Detection%c.Poll != 0 {
			errAt(max(wd.Line, wd.DetLine), "watchdog: detection-time %v must be a multiple of poll-interval %v (the watchdog's precision)", wd.Detection, c.Poll)
		}
		if wd.Limit > 0 && wd.Window < wd.Detection {
			errAt(wd.Line, "watchdog: limit-window %v is shorter than detection-time %v", wd.Window, wd.Detection)
		}
	}
	if c.Backend == "sonic" {
		// SONiC's pfcwdorch refuses timers outside these ranges.
		ms := func(d time.Duration) bool { return d%time.Millisecond == 0 }
		if wd.Enabled && (wd.Detection < 100*time.Millisecond || wd.Detection > 5*time.Second || !ms(wd.Detection)) {
			errAt(wd.Line, "watchdog: detection-time %v: SONiC's PFC_WD takes 100..5000 ms", wd.Detection)
		}
		if wd.Enabled && (wd.Restoration < 100*time.Millisecond || wd.Restoration > time.Minute || !ms(wd.Restoration)) {
			errAt(wd.Line, "watchdog: restoration-time %v: SONiC's PFC_WD takes 100..60000 ms", wd.Restoration)
		}
	}
	// Interfaces named by port groups must be configured, and a group
	// may not share an interface with another.
	known := map[string]bool{}
	for _, f := range c.Ifaces {
		known[f.Name] = true
	}
	owner := map[string]string{}
	names := map[string]int{}
	for _, g := range c.Groups {
		if prev, ok := names[g.Name]; ok && g.Name != "" {
			errAt(g.Line, "port group %s: defined twice (first at line %d)", g.Name, prev)
		}
		names[g.Name] = g.Line
		for _, i := range g.Ifaces {
			if !known[i] {
				errAt(max(g.Line, g.IfaceLine), "port group %s: interface %s is not in qos.interfaces", g.Name, i)
			}
			if o, ok := owner[i]; ok {
				errAt(max(g.Line, g.IfaceLine), "port group %s: interface %s is already in port group %s (groups must not overlap)", g.Name, i, o)
				continue
			}
			owner[i] = g.Name
		}
		froms := map[uint8]bool{}
		for _, r := range g.Remaps {
			if froms[r.From] {
				errAt(g.Line, "port group %s: dscp %d remapped twice", g.Name, r.From)
			}
			froms[r.From] = true
		}
	}
	// Profiles named by queues must exist; "ECN before PFC": a profile
	// on a lossless queue must mark everything before the queue pauses
	// its upstream.
	for _, f := range c.Ifaces {
		pfc := c.PFC.Prios
		if f.PFC != nil {
			pfc = *f.PFC
		}
		for q := 0; q < model.NumPrio; q++ {
			qc := c.Queues[q]
			if f.Queues[q] != nil {
				qc = *f.Queues[q]
			}
			if qc.Profile == "" {
				continue
			}
			line := qc.Line
			if line == 0 {
				line = f.Line
			}
			prof := c.Profiles[qc.Profile]
			if prof == nil {
				errAt(line, "interface %s queue %d: no ecn-profile %q", f.Name, q, qc.Profile)
				continue
			}
			if !pfc.Has(q) {
				continue
			}
			if xoff := c.PFC.Thresholds[q].XOFF; prof.MaxThreshold() >= xoff {
				errAt(line, "interface %s queue %d: ecn-profile %s max threshold %d is not below the queue's PFC xoff %d (ECN must act before PFC)",
					f.Name, q, prof.Name, prof.MaxThreshold(), xoff)
			}
		}
	}
	if pc := c.IPCC; pc != nil {
		if !pc.PriosSet {
			pc.Prios = c.PFC.Prios
		}
		if pc.Prios == 0 {
			errAt(pc.Line, "ipcc: no queue to watch (give priorities, or PFC priorities)")
		}
		for _, i := range append(append([]string(nil), pc.Ifaces...), pc.Capture...) {
			if !known[i] {
				errAt(pc.Line, "ipcc: interface %s is not in qos.interfaces", i)
			}
		}
	}
	if t := c.Tuning; t != nil {
		if !t.PriosSet {
			// Default: the PFC priorities whose queues have a profile.
			for q := 0; q < model.NumPrio; q++ {
				if c.PFC.Prios.Has(q) && c.Queues[q].Profile != "" {
					t.Prios |= 1 << q
				}
			}
		}
		if t.Interval < c.Poll || t.Interval%c.Poll != 0 {
			errAt(t.Line, "ecn-tuning: interval %v must be a multiple of poll-interval %v (the tuner samples every poll)", t.Interval, c.Poll)
		}
		if t.Prios == 0 {
			errAt(t.Line, "ecn-tuning: no queue to tune (give priorities, or an ecn profile on a PFC priority)")
		}
		// ECN before PFC holds for tuned thresholds too: the limit is
		// below every tuned lossless queue's XOFF.
		for _, q := range t.Prios.List() {
			if !c.PFC.Prios.Has(q) {
				continue
			}
			xoff := c.PFC.Thresholds[q].XOFF
			if t.MaxThreshold == 0 {
				errAt(t.Line, "ecn-tuning: max-threshold is required on PFC priority %d (below its xoff %d)", q, xoff)
			} else if t.MaxThreshold >= xoff {
				errAt(t.Line, "ecn-tuning: max-threshold %d is not below priority %d's PFC xoff %d (ECN must act before PFC)", t.MaxThreshold, q, xoff)
			}
		}
		for _, name := range policy.AIModelNames() {
			if w, ok := t.Models[name]; ok && t.MaxThreshold > 0 && w.Max > t.MaxThreshold {
				errAt(t.Line, "ecn-tuning: model %s max %d above max-threshold %d", name, w.Max, t.MaxThreshold)
			}
		}
	}
	for _, g := range c.Groups {
		for _, r := range g.Remaps {
			for _, f := range c.Ifaces {
				if owner[f.Name] != g.Name {
					continue
				}
				pfc := c.PFC.Prios
				if f.PFC != nil {
					pfc = *f.PFC
				}
				if pfc.Has(int(r.Prio)) {
					errAt(g.Line, "port group %s: remap to priority %d, which has PFC on %s: the PAUSE loop would move, not break", g.Name, r.Prio, f.Name)
				}
			}
		}
	}
}

// Desired translates the configuration into the state backends apply.
func (c *Config) Desired() *model.Desired {
	d := &model.Desired{Poll: c.Poll}
	for dscp, pr := range c.DSCP {
		d.DSCP[dscp] = pr
	}
	for _, p := range c.Profiles {
		d.Profiles = append(d.Profiles, p.Profile)
	}
	group := map[string]string{}
	for _, g := range c.Groups {
		for _, i := range g.Ifaces {
			group[i] = g.Name
		}
		d.Remaps = append(d.Remaps, g.Remaps...)
	}
	for _, f := range c.Ifaces {
		i := model.Iface{Name: f.Name, Rate: f.Rate, PFCConfigured: c.PFC.Prios, Thresholds: c.PFC.Thresholds,
			Group: group[f.Name],
			Watchdog: model.WatchdogParams{Enabled: c.Watchdog.Enabled, Detection: c.Watchdog.Detection,
				Restoration: c.Watchdog.Restoration, Action: c.Watchdog.Action}}
		if f.PFC != nil {
			i.PFCConfigured = *f.PFC
		}
		i.PFC = i.PFCConfigured
		for q := range i.Queues {
			i.Queues[q] = c.Queues[q].Queue
			if f.Queues[q] != nil {
				i.Queues[q] = f.Queues[q].Queue
			}
		}
		d.Ifaces = append(d.Ifaces, i)
	}
	if c.Flows != nil {
		e := c.Flows.Elephant
		d.Elephant = &e
	}
	d.Sort()
	sort.Slice(d.Remaps, func(i, j int) bool {
		a, b := d.Remaps[i], d.Remaps[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.From < b.From
	})
	return d
}

// WatchdogConfig is the watchdog policy's configuration.
func (c *Config) WatchdogConfig() policy.WatchdogConfig {
	w := c.Watchdog
	return policy.WatchdogConfig{Enabled: w.Enabled, Poll: c.Poll, Detection: w.Detection, Restoration: w.Restoration,
		Action: w.Action, Limit: w.Limit, Window: w.Window}
}

// Iface returns the named interface's entry, or nil.
func (c *Config) Iface(name string) *Iface {
	for i := range c.Ifaces {
		if c.Ifaces[i].Name == name {
			return &c.Ifaces[i]
		}
	}
	return nil
}
