package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// FIB is the fib section: how computed routes reach the kernel.
type FIB struct {
	Enabled    bool   // default true; false computes routes without installing them
	Metric     uint32 // kernel route priority, default 20
	OnShutdown string // "keep" (default: forwarding survives a restart) or "flush"
	Resilient  *Resilient
}

// Resilient selects resilient nexthop groups (fib.resilient).
type Resilient struct {
	Buckets         uint16
	IdleTimer       time.Duration
	UnbalancedTimer time.Duration
}

func (p *Walker) fib(k, v *yaml.Node, f *FIB) {
	if !p.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return
	}
	p.Mapping(v, map[string]Field{
		"enabled": p.Bool(&f.Enabled),
		"metric":  SetInt(p, &f.Metric, 0, 1<<32-1),
		"on-shutdown": p.Str(&f.OnShutdown, func(s string) string {
			if s != "keep" && s != "flush" {
				return "must be keep or flush"
			}
			return ""
		}),
		"resilient": func(k, v *yaml.Node) {
			if !p.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
				return
			}
			r := &Resilient{Buckets: 128, IdleTimer: 120 * time.Second}
			p.Mapping(v, map[string]Field{
				"buckets":          SetInt(p, &r.Buckets, 1, 65535),
				"idle-timer":       p.SetDuration(&r.IdleTimer, 0, 65535*time.Second),
				"unbalanced-timer": p.SetDuration(&r.UnbalancedTimer, 0, 65535*time.Second),
			})
			f.Resilient = r
		},
	})
}
