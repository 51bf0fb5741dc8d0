package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// BFD is a `bfd:` setting (top level, of a routing protocol's section, or
// of an interface): BFD
// (RFC 5880/5881, single hop) on every adjacency, with Interval as both
// the desired transmit and the required receive interval, and
// Multiplier as the detection multiplier. An adjacency is taken down as
// soon as its session goes down (detection time = multiplier x interval).
//
//	bfd: {interval: 100ms, multiplier: 3}     # isis and ospf (optional)
//	bfd:                                      # with RFC 5880 authentication
//	  authentication: {keys: [{id: 1, algorithm: meticulous-keyed-sha1, secret: s3cret}]}
//	isis:
//	  bfd: {interval: 100ms, multiplier: 3}   # every interface
//	  interfaces:
//	    - {name: eth1, bfd: {interval: 50ms}} # multiplier from the section
//	    - {name: eth2, bfd: off}
type BFD struct {
	Interval   time.Duration
	Multiplier int
	// Authentication is the key chain of RFC 5880 §6.7 (nil: none):
	// algorithms simple, keyed-md5, meticulous-keyed-md5, keyed-sha1,
	// meticulous-keyed-sha1, key ids 0..255 (docs/bfd.md).
	Authentication *Auth `render:",omitzero"`
	// Off turns BFD off on one interface (`bfd: off`) when the section
	// turns it on.
	Off bool `render:"-"`
}

// Defaults when a bfd mapping leaves a key out (FRR's bfdd uses 300 ms x 3).
const (
	DefaultBFDInterval   = 300 * time.Millisecond
	DefaultBFDMultiplier = 3
)

// BFD parses a bfd value: a mapping {interval, multiplier}, or on/off
// (true/false). Interval is 10ms..60s in whole microseconds (the wire
// unit); multiplier 2..255 (1 would take a session down for one lost
// packet).
func (p *Walker) BFD(dst **BFD) Field {
	return func(k, v *yaml.Node) {
		b := &BFD{}
		switch v.Kind {
		case yaml.ScalarNode:
			switch v.Value {
			case "off", "false":
				b.Off = true
			case "on", "true":
			default:
				p.Errf(v, "%s: want a mapping {interval, multiplier}, or on/off, got %q", k.Value, v.Value)
				return
			}
		case yaml.MappingNode:
			p.MappingIn(k.Value, v, map[string]Field{
				"interval": func(k, v *yaml.Node) {
					d, ok := p.Duration(k, v, 10*time.Millisecond, 60*time.Second)
					if ok && d%time.Microsecond != 0 {
						p.Errf(v, "%s: %s is not a whole number of microseconds (the unit on the wire)", k.Value, d)
						return
					}
					b.Interval = d
				},
				"multiplier":     SetInt(p, &b.Multiplier, 2, 255),
				"authentication": p.Auth(bfdAuthRules, &b.Authentication),
			})
		default:
			p.Errf(v, "%s: want a mapping {interval, multiplier}, or on/off", k.Value)
			return
		}
		*dst = b
	}
}

// InheritBFD resolves an interface's bfd against the section's: none
// takes the section's, keys left out (authentication included) come from
// the section (or the defaults). The interface then carries the value in
// force (rendered, and applied by a reload that replaces the interface's
// settings). A section's Check calls it once per interface, after
// SectionBFD.
func InheritBFD(section, it *BFD) *BFD {
	if it == nil && section != nil && !section.Off {
		b := *section
		return &b
	}
	if it == nil || it.Off {
		return it
	}
	b := *it
	from := BFD{Interval: DefaultBFDInterval, Multiplier: DefaultBFDMultiplier}
	if section != nil && !section.Off {
		if section.Interval != 0 {
			from.Interval = section.Interval
		}
		if section.Multiplier != 0 {
			from.Multiplier = section.Multiplier
		}
	}
	if b.Interval == 0 {
		b.Interval = from.Interval
	}
	if b.Multiplier == 0 {
		b.Multiplier = from.Multiplier
	}
	if b.Authentication == nil && section != nil && !section.Off {
		b.Authentication = section.Authentication
	}
	return &b
}

// EffectiveBFD is the BFD setting of an interface: its own, else the
// section's; nil when off.
func EffectiveBFD(section, it *BFD) *BFD {
	b := it
	if b == nil {
		b = section
	}
	if b == nil || b.Off {
		return nil
	}
	return b
}

// SectionBFD resolves a section's bfd against the top-level one (the
// top level may come after the sections, so a section's Check does it
// once the whole file is read): a section's keys come from itself, then
// the top level, then the defaults; `off` at a level turns BFD off below
// it. The section then carries the values in force (nil: off) and passes
// them on to its interfaces with InheritBFD; the top level itself is not
// kept (a rendered config states them in the sections).
func (p *Walker) SectionBFD(section *BFD) *BFD {
	top := InheritBFD(nil, p.bfdTop)
	if top != nil && top.Off {
		top = nil
	}
	if section = InheritBFD(top, section); section != nil && section.Off {
		return nil
	}
	return section
}
