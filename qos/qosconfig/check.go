package qosconfig

import (
	"cmp"
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

// A remap moves a high-risk (bouncing) flow to a second priority. With
// PFC on that priority on the group's ports the flow stays lossless
// (lossless remap); without, it leaves the lossless class (lossy remap).
// Either way the remap must really move the packet and the packet must
// stay where it was put: the next switch classifies it by its new DSCP.
// A lossless remap applies once: a packet on the second priority may be
// remapped again only out of the lossless class, at a second bounce
// (docs/qos.md, "Prevention", says when each mode is deadlock-free).

// remapAt is one remap, where it was written, and whether its target
// priority is lossless on its group's ports.
type remapAt struct {
	model.Remap
	line     int
	lossless bool
}

// checkRemaps checks every remap of every group, then the chains they
// form through their DSCPs.
func (p *parser) checkRemaps(owner map[string]string) {
	var all []remapAt
	for _, g := range p.c.Groups {
		for i, r := range g.Remaps {
			line := g.Line
			if i < len(g.RemapLine) {
				line = g.RemapLine[i]
			}
			lossless, ok := p.remapKind(g, r, line, owner)
			if !ok {
				continue
			}
			ra := remapAt{Remap: r, line: line, lossless: lossless}
			p.checkRemapTarget(ra)
			all = append(all, ra)
		}
	}
	p.checkRemapChains(all)
}

// remapKind reports whether r's priority has PFC on the ports of its
// group; ok is false (and an error reported) when it has on some only,
// as the PAUSEs of the second priority would then stop at a port that
// drops instead.
func (p *parser) remapKind(g Group, r model.Remap, line int, owner map[string]string) (lossless, ok bool) {
	var with, without string
	for i := range p.c.Ifaces {
		f := &p.c.Ifaces[i]
		if owner[f.Name] != g.Name {
			continue
		}
		if p.c.pfcOn(f).Has(int(r.Prio)) {
			with = cmp.Or(with, f.Name)
		} else {
			without = cmp.Or(without, f.Name)
		}
	}
	if with != "" && without != "" {
		p.errAt(line, "port group %s: remap to priority %d, which has PFC on %s but not on %s (the second priority must be lossless on all of the group's ports, or on none)",
			g.Name, r.Prio, with, without)
		return false, false
	}
	return with != "", true
}

// checkRemapTarget checks that the remap moves the packet out of its
// priority and that the next switch, classifying the new DSCP, keeps it
// there: in the second priority (lossless remap) or out of every PFC
// priority (lossy remap).
func (p *parser) checkRemapTarget(r remapAt) {
	c := p.c
	if from := c.DSCP[r.From]; from == r.Prio {
		p.errAt(r.line, "port group %s: remap of dscp %d to priority %d: dscp %d is in priority %d already (the remap must move it to another queue)",
			r.Group, r.From, r.Prio, r.From, from)
	}
	next := c.DSCP[r.To]
	switch {
	case r.lossless && next != r.Prio:
		p.errAt(r.line, "port group %s: remap to dscp %d, lossless priority %d: dscp-map puts dscp %d in priority %d, so the next switch would take it out of the second priority",
			r.Group, r.To, r.Prio, r.To, next)
	case !r.lossless && c.pfcAny().Has(int(next)):
		p.errAt(r.line, "port group %s: remap to dscp %d, lossy priority %d: dscp-map puts dscp %d in PFC priority %d, so the next switch would make it lossless again",
			r.Group, r.To, r.Prio, r.To, next)
	}
}

// checkRemapChains refuses remaps that would apply to an already
// remapped packet (its new DSCP is another remap's dscp), except the one
// chain that keeps the lossless priorities acyclic: a lossless remap
// followed, at a second bounce, by a lossy one.
func (p *parser) checkRemapChains(all []remapAt) {
	for _, a := range all {
		for _, b := range all {
			if a.To != b.From {
				continue
			}
			switch {
			case !a.lossless:
				p.errAt(a.line, "port group %s: remap to dscp %d, lossy priority %d, which the remap at line %d remaps again (a packet that left the lossless class is not remapped again)",
					a.Group, a.To, a.Prio, b.line)
			case b.lossless:
				p.errAt(b.line, "port group %s: remap of dscp %d to lossless priority %d: dscp %d is on the second lossless priority %d after the remap at line %d, and a lossless remap applies once (a second bounce may only go to a lossy priority)",
					b.Group, b.From, b.Prio, b.From, a.Prio, a.line)
			}
		}
	}
}

// pfcAny is the priorities with PFC on any interface.
func (c *Config) pfcAny() model.Prios {
	all := c.PFC.Prios
	for i := range c.Ifaces {
		all |= c.pfcOn(&c.Ifaces[i])
	}
	return all
}
