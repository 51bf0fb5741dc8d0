package qosconfig

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// The checks across subsections, run once the whole section is parsed
// (a queue may name a profile defined after it, a port group interfaces
// listed after it). They run in this order, so messages keep their order.

// check runs the checks across subsections.
func (p *parser) check() {
	p.checkWatchdog()
	known := map[string]bool{}
	for _, f := range p.c.Ifaces {
		known[f.Name] = true
	}
	owner := p.checkGroups(known)
	p.checkProfiles()
	p.checkIPCC(known)
	p.checkTuning()
	p.checkRemaps(owner)
	p.checkOverlay()
}

// errAt reports a problem at a line recorded while parsing.
func (p *parser) errAt(line int, format string, args ...any) {
	p.w.Errf(&yaml.Node{Line: line}, format, args...)
}

// pfcOn returns the PFC priorities of interface f.
func (c *Config) pfcOn(f *Iface) model.Prios {
	if f.PFC != nil {
		return *f.PFC
	}
	return c.PFC.Prios
}

// checkWatchdog checks the watchdog's timers against the poll interval
// and, on SONiC, against what pfcwdorch takes.
func (p *parser) checkWatchdog() {
	c := p.c
	// Watchdog timers: the detection period is a whole number of polls,
	// so a deadlock is reported within [detection, detection + poll].
	wd := c.Watchdog
	if wd.Enabled {
		if wd.Detection < c.Poll || wd.Detection%c.Poll != 0 {
			p.errAt(max(wd.Line, wd.DetLine), "watchdog: detection-time %v must be a multiple of poll-interval %v (the watchdog's precision)", wd.Detection, c.Poll)
		}
		if wd.Limit > 0 && wd.Window < wd.Detection {
			p.errAt(wd.Line, "watchdog: limit-window %v is shorter than detection-time %v", wd.Window, wd.Detection)
		}
	}
	if c.Backend == "sonic" {
		// SONiC's pfcwdorch refuses timers outside these ranges.
		ms := func(d time.Duration) bool { return d%time.Millisecond == 0 }
		if wd.Enabled && (wd.Detection < 100*time.Millisecond || wd.Detection > 5*time.Second || !ms(wd.Detection)) {
			p.errAt(wd.Line, "watchdog: detection-time %v: SONiC's PFC_WD takes 100..5000 ms", wd.Detection)
		}
		if wd.Enabled && (wd.Restoration < 100*time.Millisecond || wd.Restoration > time.Minute || !ms(wd.Restoration)) {
			p.errAt(wd.Line, "watchdog: restoration-time %v: SONiC's PFC_WD takes 100..60000 ms", wd.Restoration)
		}
	}
}

// checkGroups checks the port groups: interfaces named by port groups
// must be configured, and a group may not share an interface with
// another. It returns each grouped interface's group.
func (p *parser) checkGroups(known map[string]bool) (owner map[string]string) {
	owner = map[string]string{}
	names := map[string]int{}
	for _, g := range p.c.Groups {
		if prev, ok := names[g.Name]; ok && g.Name != "" {
			p.errAt(g.Line, "port group %s: defined twice (first at line %d)", g.Name, prev)
		}
		names[g.Name] = g.Line
		for _, i := range g.Ifaces {
			if !known[i] {
				p.errAt(max(g.Line, g.IfaceLine), "port group %s: interface %s is not in qos.interfaces", g.Name, i)
			}
			if o, ok := owner[i]; ok {
				p.errAt(max(g.Line, g.IfaceLine), "port group %s: interface %s is already in port group %s (groups must not overlap)", g.Name, i, o)
				continue
			}
			owner[i] = g.Name
		}
		froms := map[uint8]bool{}
		for _, r := range g.Remaps {
			if froms[r.From] {
				p.errAt(g.Line, "port group %s: dscp %d remapped twice", g.Name, r.From)
			}
			froms[r.From] = true
		}
	}
	return owner
}

// checkProfiles checks the profiles queues name: they must exist, and
// "ECN before PFC": a profile on a lossless queue must mark everything
// before the queue pauses its upstream.
func (p *parser) checkProfiles() {
	c := p.c
	for i := range c.Ifaces {
		f := &c.Ifaces[i]
		pfc := c.pfcOn(f)
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
				p.errAt(line, "interface %s queue %d: no ecn-profile %q", f.Name, q, qc.Profile)
				continue
			}
			if !pfc.Has(q) {
				continue
			}
			if xoff := c.PFC.Thresholds[q].XOFF; prof.MaxThreshold() >= xoff {
				p.errAt(line, "interface %s queue %d: ecn-profile %s max threshold %d is not below the queue's PFC xoff %d (ECN must act before PFC)",
					f.Name, q, prof.Name, prof.MaxThreshold(), xoff)
			}
		}
	}
}

// checkIPCC defaults IPCC's priorities to the PFC ones and checks its
// interfaces.
func (p *parser) checkIPCC(known map[string]bool) {
	pc := p.c.IPCC
	if pc == nil {
		return
	}
	if !pc.PriosSet {
		pc.Prios = p.c.PFC.Prios
	}
	if pc.Prios == 0 {
		p.errAt(pc.Line, "ipcc: no queue to watch (give priorities, or PFC priorities)")
	}
	for _, i := range append(append([]string(nil), pc.Ifaces...), pc.Capture...) {
		if !known[i] {
			p.errAt(pc.Line, "ipcc: interface %s is not in qos.interfaces", i)
		}
	}
}

// checkTuning defaults ECN tuning's priorities and checks its interval
// and thresholds: ECN before PFC holds for tuned thresholds too.
func (p *parser) checkTuning() {
	c, t := p.c, p.c.Tuning
	if t == nil {
		return
	}
	if !t.PriosSet {
		// Default: the PFC priorities whose queues have a profile.
		for q := 0; q < model.NumPrio; q++ {
			if c.PFC.Prios.Has(q) && c.Queues[q].Profile != "" {
				t.Prios |= 1 << q
			}
		}
	}
	if t.Interval < c.Poll || t.Interval%c.Poll != 0 {
		p.errAt(t.Line, "ecn-tuning: interval %v must be a multiple of poll-interval %v (the tuner samples every poll)", t.Interval, c.Poll)
	}
	if t.Prios == 0 {
		p.errAt(t.Line, "ecn-tuning: no queue to tune (give priorities, or an ecn profile on a PFC priority)")
	}
	// The limit is below every tuned lossless queue's XOFF.
	for _, q := range t.Prios.List() {
		if !c.PFC.Prios.Has(q) {
			continue
		}
		xoff := c.PFC.Thresholds[q].XOFF
		if t.MaxThreshold == 0 {
			p.errAt(t.Line, "ecn-tuning: max-threshold is required on PFC priority %d (below its xoff %d)", q, xoff)
		} else if t.MaxThreshold >= xoff {
			p.errAt(t.Line, "ecn-tuning: max-threshold %d is not below priority %d's PFC xoff %d (ECN must act before PFC)", t.MaxThreshold, q, xoff)
		}
	}
	for _, name := range policy.AIModelNames() {
		if w, ok := t.Models[name]; ok && t.MaxThreshold > 0 && w.Max > t.MaxThreshold {
			p.errAt(t.Line, "ecn-tuning: model %s max %d above max-threshold %d", name, w.Max, t.MaxThreshold)
		}
	}
}

// checkRemaps refuses a remap onto a priority with PFC on a port of its
// group: the PAUSE loop would move, not break.
func (p *parser) checkRemaps(owner map[string]string) {
	c := p.c
	for _, g := range c.Groups {
		for _, r := range g.Remaps {
			for i := range c.Ifaces {
				f := &c.Ifaces[i]
				if owner[f.Name] != g.Name {
					continue
				}
				if c.pfcOn(f).Has(int(r.Prio)) {
					p.errAt(g.Line, "port group %s: remap to priority %d, which has PFC on %s: the PAUSE loop would move, not break", g.Name, r.Prio, f.Name)
				}
			}
		}
	}
}
