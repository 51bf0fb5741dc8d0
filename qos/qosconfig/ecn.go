package qosconfig

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// The ECN and scheduling subsections: WRED/ECN profiles, queues, the
// large/small flow separation and ECN tuning.

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
				p.wred(v, wr, 0, k.Value)
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

// wred parses a WRED curve {min, max, probability} into wr: enabled,
// probability 100 unless given (at least minProb). what names it in
// messages.
func (p *parser) wred(v *yaml.Node, wr *model.WRED, minProb int64, what string) {
	wr.Enable, wr.Prob = true, 100
	seen := p.w.Mapping(v, map[string]config.Field{
		"min":         p.bytes(&wr.Min, 0, maxBuf),
		"max":         p.bytes(&wr.Max, 1, maxBuf),
		"probability": config.SetInt(p.w, &wr.Prob, minProb, 100),
	})
	for _, key := range []string{"min", "max"} {
		if seen[key] == nil {
			p.w.Errf(v, "%s: missing required key %q", what, key)
		}
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
				var wr model.WRED
				p.wred(vn, &wr, 1, "model "+kn.Value)
				if wr.Min >= wr.Max {
					p.w.Errf(vn, "model %s: min %d must be below max %d", kn.Value, wr.Min, wr.Max)
				}
				t.Models[kn.Value] = wr
			}
		},
		"min-probability":    config.SetInt(p.w, &t.MinProb, 1, 100),
		"max-probability":    config.SetInt(p.w, &t.MaxProb, 1, 100),
		"utilisation-target": p.positive(&t.UtilTarget, 1),
	})
	if t.MinProb > t.MaxProb {
		p.w.Errf(v, "ecn-tuning: min-probability %d above max-probability %d", t.MinProb, t.MaxProb)
	}
	if t.MaxThreshold > 0 && t.MinThreshold >= t.MaxThreshold {
		p.w.Errf(v, "ecn-tuning: min-threshold %d must be below max-threshold %d", t.MinThreshold, t.MaxThreshold)
	}
	p.c.Tuning = t
}
