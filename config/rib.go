package config

import (
	"sort"
	"time"

	"github.com/fared/fared/spf"

	"gopkg.in/yaml.v3"
)

// RIB is the rib section: how routes are computed and chosen, for every
// protocol. The isis and ospf sections may override ecmp-only and the SPF
// timers for their own topologies; Routing resolves the two.
type RIB struct {
	ECMPOnly bool
	SPF      SPF
	// Distance is the administrative distance per protocol: the lower
	// wins when several protocols know a prefix (FRR's defaults: ospf 110,
	// isis 115).
	Distance map[string]uint8
}

// DefaultDistance is the administrative distance of each protocol when the
// rib section sets none.
var DefaultDistance = map[string]uint8{"ospf": 110, "isis": 115}

func defaultRIB() RIB {
	d := make(map[string]uint8, len(DefaultDistance))
	for k, v := range DefaultDistance {
		d[k] = v
	}
	return RIB{Distance: d}
}

// SPF holds the RFC 8405 SPF back-off timers. A zero timer is not set:
// it takes the rib section's value, and failing that fared's default
// (spf.DefaultDelayConfig). So a protocol section cannot undo a rib
// initial-delay with 0; it writes 1ms.
type SPF struct {
	InitialDelay, ShortDelay, LongDelay, TimeToLearn, Holddown time.Duration
}

// Over returns s with every timer it does not set taken from base.
func (s SPF) Over(base SPF) SPF {
	pick := func(a, b time.Duration) time.Duration {
		if a != 0 {
			return a
		}
		return b
	}
	return SPF{pick(s.InitialDelay, base.InitialDelay), pick(s.ShortDelay, base.ShortDelay), pick(s.LongDelay, base.LongDelay),
		pick(s.TimeToLearn, base.TimeToLearn), pick(s.Holddown, base.Holddown)}
}

// Routing is what the rib applies to one protocol's topologies.
type Routing struct {
	ECMPOnly bool
	SPF      SPF
	Distance uint8
}

// Routing resolves the settings of protocol ("isis", "ospf"): the
// protocol section's override, else the rib section, else the default.
func (c *Config) Routing(protocol string) Routing {
	r := Routing{ECMPOnly: c.RIB.ECMPOnly, SPF: c.RIB.SPF, Distance: c.RIB.Distance[protocol]}
	var ecmp *bool
	var spf SPF
	switch {
	case protocol == "isis" && c.ISIS != nil:
		ecmp, spf = c.ISIS.ECMPOnly, c.ISIS.SPF
	case protocol == "ospf" && c.OSPF != nil:
		ecmp, spf = c.OSPF.ECMPOnly, c.OSPF.SPF
	}
	if ecmp != nil {
		r.ECMPOnly = *ecmp
	}
	r.SPF = spf.Over(r.SPF)
	return r
}

// Protocols returns the routing protocols the config runs, sorted.
func (c *Config) Protocols() []string {
	var out []string
	if c.ISIS != nil {
		out = append(out, "isis")
	}
	if c.OSPF != nil {
		out = append(out, "ospf")
	}
	sort.Strings(out)
	return out
}

func (p *Walker) rib(k, v *yaml.Node, r *RIB) {
	if !p.IsMapping(k, v) {
		return
	}
	p.Mapping(v, map[string]Field{
		"ecmp-only": p.Bool(&r.ECMPOnly),
		"spf":       p.spf(&r.SPF),
		"distance": func(k, v *yaml.Node) {
			if !p.IsMapping(k, v) {
				return
			}
			fields := map[string]Field{}
			for proto := range DefaultDistance {
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

// spf parses an spf: section (RFC 8405 timers), shared by rib, isis and
// ospf.
func (p *Walker) spf(t *SPF) Field {
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
		t := c.Routing(proto).SPF
		d := spf.DelayConfig{InitialDelay: t.InitialDelay, ShortDelay: t.ShortDelay, LongDelay: t.LongDelay, TimeToLearn: t.TimeToLearn, Holddown: t.Holddown}
		if err := d.Validate(); err != nil {
			p.Errf(at, "%s spf: %v", proto, err)
		}
	}
	if at := p.spfAt[&c.RIB.SPF]; at != nil {
		check("rib", at)
	}
	if c.ISIS != nil && p.spfAt[&c.ISIS.SPF] != nil {
		check("isis", p.spfAt[&c.ISIS.SPF])
	}
	if c.OSPF != nil && p.spfAt[&c.OSPF.SPF] != nil {
		check("ospf", p.spfAt[&c.OSPF.SPF])
	}
}
