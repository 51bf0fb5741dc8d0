package qosconfig

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
)

// The parser of the section: helpers every subsection uses, the backend
// subsections and the interfaces list.

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
		"speed":    p.positive(&s.Speed, 1000),
	})
	for _, key := range []string{"scenario", "node"} {
		if seen[key] == nil {
			p.w.Errf(k, "sim: missing required key %q", key)
		}
	}
}

// positive sets *dst to a number in (0, hi].
func (p *parser) positive(dst *float64, hi float64) config.Field {
	return func(k, v *yaml.Node) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if !p.w.Want(k, v, "a number", v.Kind == yaml.ScalarNode && err == nil) {
			return
		}
		if !(f > 0 && f <= hi) {
			p.w.Errf(v, "%s: %g out of range (0, %g]", k.Value, f, hi)
			return
		}
		*dst = f
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
