package qosconfig

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
)

// The lossless subsections: PFC thresholds, the deadlock watchdog and
// deadlock prevention (port groups that remap DSCPs).

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
						g.RemapLine = append(g.RemapLine, v.Line)
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
