package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// RIB is the rib section: how routes are computed and chosen, for every
// protocol. A routing protocol's section may override ecmp-only and the
// SPF timers for its own topologies (RoutingSection); Routing resolves
// the two.
type RIB struct {
	ECMPOnly bool
	SPF      SPF
	// Distance is the administrative distance per routing protocol (by
	// section key): the lower wins when several protocols know a prefix.
	// The defaults are the protocols' (Section.Distance: FRR's values).
	Distance map[string]uint8
	// CapacityDamping is the per-link damping of capacity changes, which
	// the rib weighs at once, outside the SPF back-off (zero fields: not
	// set, DefaultDamping).
	CapacityDamping Damping `render:",omitzero"`
}

// Damping is the rib's rule for a link whose bandwidth flaps: more than
// Changes changes within Window hold its bandwidth, Hold first, doubling
// while it keeps flapping, up to MaxHold. The daemon hands it to the rib
// as rib.DampConfig.
type Damping struct {
	Changes               int           `render:",omitzero"`
	Window, Hold, MaxHold time.Duration `render:",omitzero"`
}

// DefaultDamping is rib.DefaultDampConfig (the daemon's tests check that
// the two agree).
var DefaultDamping = Damping{Changes: 4, Window: 2 * time.Second, Hold: time.Second, MaxHold: 30 * time.Second}

// over returns d with every field it does not set taken from base.
func (d Damping) over(base Damping) Damping {
	if d.Changes == 0 {
		d.Changes = base.Changes
	}
	return Damping{d.Changes, pick(d.Window, base.Window), pick(d.Hold, base.Hold), pick(d.MaxHold, base.MaxHold)}
}

// pick is a, or b when a is not set.
func pick(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// defaultRIB has the registered routing protocols' default distances.
func defaultRIB() RIB {
	d := map[string]uint8{}
	for _, s := range registered() {
		if s.Distance != 0 {
			d[s.Key] = s.Distance
		}
	}
	return RIB{Distance: d}
}

// SPF holds the RFC 8405 SPF back-off timers. A zero timer is not set:
// it takes the rib section's value, and failing that fared's default
// (DefaultSPF). So a protocol section cannot undo a rib initial-delay
// with 0; it writes 1ms. The daemon hands them to the rib as
// spf.DelayConfig.
type SPF struct {
	InitialDelay, ShortDelay, LongDelay, TimeToLearn, Holddown time.Duration
}

// DefaultSPF are the RFC 8405 timers that apply when neither the rib nor a
// protocol section sets one: spf.DefaultDelayConfig, which says why the
// initial delay is 0 (the daemon's tests check that the two agree).
var DefaultSPF = SPF{ShortDelay: 200 * time.Millisecond, LongDelay: 5 * time.Second,
	TimeToLearn: 500 * time.Millisecond, Holddown: 10 * time.Second}

// Over returns s with every timer it does not set taken from base.
func (s SPF) Over(base SPF) SPF {
	return SPF{pick(s.InitialDelay, base.InitialDelay), pick(s.ShortDelay, base.ShortDelay), pick(s.LongDelay, base.LongDelay),
		pick(s.TimeToLearn, base.TimeToLearn), pick(s.Holddown, base.Holddown)}
}

// Validate refuses timers RFC 8405 §6 forbids, as they will run (the
// timers s does not set are the defaults).
func (s SPF) Validate() error {
	t := s.Over(DefaultSPF)
	if t.Holddown <= t.TimeToLearn {
		return fmt.Errorf("holddown %v must be longer than time-to-learn %v (RFC 8405 §6)", t.Holddown, t.TimeToLearn)
	}
	return nil
}

// Routing is what the rib applies to one protocol's topologies.
type Routing struct {
	ECMPOnly bool
	SPF      SPF
	Distance uint8
	Damping  Damping // the rib section's, for every protocol
}

// RoutingSection is implemented by a routing protocol's section that may
// override the rib section for its own topologies: ecmp-only (nil: not
// set) and the SPF timers (zero timers: not set). spf points into the
// section (its parse called Walker.SPF on it), so that a bad combination
// is reported at its line.
type RoutingSection interface {
	RIBOverrides() (ecmpOnly *bool, spf *SPF)
}

// Routing resolves the settings of the routing protocol whose section key
// is protocol: its section's override, else the rib section, else the
// default. Any other key ("": the rib's default) gets the rib section's.
func (c *Config) Routing(protocol string) Routing {
	r := Routing{ECMPOnly: c.RIB.ECMPOnly, SPF: c.RIB.SPF, Distance: c.RIB.Distance[protocol], Damping: c.RIB.CapacityDamping}
	if o, ok := c.Sections[protocol].(RoutingSection); ok {
		ecmp, spf := o.RIBOverrides()
		if ecmp != nil {
			r.ECMPOnly = *ecmp
		}
		r.SPF = spf.Over(r.SPF)
	}
	return r
}

func (p *Walker) rib(k, v *yaml.Node, r *RIB) {
	if !p.IsMapping(k, v) {
		return
	}
	p.Mapping(v, map[string]Field{
		"ecmp-only": p.Bool(&r.ECMPOnly),
		"spf":       p.SPF(&r.SPF),
		"capacity-damping": func(k, v *yaml.Node) {
			if !p.IsMapping(k, v) {
				return
			}
			d := &r.CapacityDamping
			p.Mapping(v, map[string]Field{
				"changes":  SetInt(p, &d.Changes, 1, 1000),
				"window":   p.SetDuration(&d.Window, time.Millisecond, 10*time.Minute),
				"hold":     p.SetDuration(&d.Hold, time.Millisecond, 10*time.Minute),
				"max-hold": p.SetDuration(&d.MaxHold, time.Millisecond, time.Hour),
			})
			if t := d.over(DefaultDamping); t.MaxHold < t.Hold {
				p.Errf(k, "capacity-damping: max-hold %v is shorter than hold %v", t.MaxHold, t.Hold)
			}
		},
		"distance": func(k, v *yaml.Node) {
			if !p.IsMapping(k, v) {
				return
			}
			fields := map[string]Field{}
			for proto := range r.Distance {
				fields[proto] = func(k, v *yaml.Node) {
					if n, ok := p.Integer(k, v, 1, 255); ok {
						r.Distance[proto] = uint8(n)
					}
				}
			}
			p.Mapping(v, fields)
		},
	})
}

// SPF parses an spf: section (RFC 8405 timers): the rib's, or a routing
// protocol's override.
func (p *Walker) SPF(t *SPF) Field {
	return func(k, v *yaml.Node) {
		if !p.IsMapping(k, v) {
			return
		}
		if p.spfAt == nil {
			p.spfAt = map[*SPF]*yaml.Node{}
		}
		p.spfAt[t] = k
		p.Mapping(v, map[string]Field{
			"initial-delay": p.SetDuration(&t.InitialDelay, 0, time.Minute),
			"short-delay":   p.SetDuration(&t.ShortDelay, 0, time.Minute),
			"long-delay":    p.SetDuration(&t.LongDelay, 0, 10*time.Minute),
			"time-to-learn": p.SetDuration(&t.TimeToLearn, 0, 10*time.Minute),
			"holddown":      p.SetDuration(&t.Holddown, 0, 10*time.Minute),
		})
	}
}

// checkSPF refuses timers RFC 8405 §6 forbids, as each protocol will run
// them (its own values over the rib's over the defaults), at the line of
// the spf section that set them.
func (p *Walker) checkSPF(c *Config) {
	check := func(proto string, at *yaml.Node) {
		if err := c.Routing(proto).SPF.Validate(); err != nil {
			p.Errf(at, "%s spf: %v", proto, err)
		}
	}
	if at := p.spfAt[&c.RIB.SPF]; at != nil {
		check("rib", at)
	}
	for _, s := range registered() {
		if o, ok := c.Sections[s.Key].(RoutingSection); ok {
			if _, t := o.RIBOverrides(); p.spfAt[t] != nil {
				check(s.Key, p.spfAt[t])
			}
		}
	}
}
