package qosconfig

import (
	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
)

// Overlay is the ecn-overlay section (seed 001 "ECN overlay", RFC 6040;
// docs/qos.md):
//
//	ecn-overlay:
//	  tunnels: [vxlan100]   # default: every tunnel of the node
//	  decap: standard       # standard (RFC 6040 §4.2) | copy-from-outer (SONiC TUNNEL only)
//	  dscp: inherit         # inherit | keep (linux: the vxlan device's tos)
type Overlay struct {
	Tunnels []string
	Decap   string // "standard" | "copy-from-outer"
	DSCP    string // "inherit" | "keep"; "" on sonic
	Line    int
	// where decap and dscp were given (0: not given)
	DecapLine, DSCPLine int
}

// Overlay defaults.
const (
	DecapStandard      = "standard"
	DecapCopyFromOuter = "copy-from-outer"
)

func (p *parser) overlay(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	o := &Overlay{Decap: DecapStandard, DSCP: model.DSCPInherit, Line: k.Line}
	var tunnelAt []*yaml.Node
	seen := p.w.Mapping(v, map[string]config.Field{
		"tunnels": func(k, v *yaml.Node) { o.Tunnels, tunnelAt = p.w.Strings(k, v) },
		"decap":   p.w.OneOf(&o.Decap, DecapStandard, DecapCopyFromOuter),
		"dscp":    p.w.OneOf(&o.DSCP, model.DSCPInherit, model.DSCPKeep),
	})
	if n := seen["decap"]; n != nil {
		o.DecapLine = n.Line
	}
	if n := seen["dscp"]; n != nil {
		o.DSCPLine = n.Line
	}
	first := map[string]int{}
	for i, name := range o.Tunnels {
		if prev, ok := first[name]; ok {
			p.w.Errf(tunnelAt[i], "ecn-overlay: tunnel %s listed twice (first at line %d)", name, prev)
		}
		first[name] = tunnelAt[i].Line
	}
	p.c.Overlay = o
}

// checkOverlay checks the section against the backend (known only once
// the whole qos section is parsed).
func (p *parser) checkOverlay() {
	o := p.c.Overlay
	if o == nil {
		return
	}
	switch p.c.Backend {
	case "sim":
		p.errAt(o.Line, "ecn-overlay: the sim backend has no tunnels")
	case "linux":
		if o.Decap != DecapStandard {
			p.errAt(max(o.Line, o.DecapLine), "ecn-overlay: decap %s: the Linux kernel's vxlan decapsulates by RFC 6040 only (standard)", o.Decap)
		}
	case "sonic":
		if o.DSCPLine > 0 {
			p.errAt(o.DSCPLine, "ecn-overlay: dscp is for Linux vxlan devices (SONiC's VXLAN_TUNNEL has no DSCP field)")
		}
		o.DSCP = ""
	}
}

// Model is what the backends take (nil: no overlay).
func (o *Overlay) Model() *model.Overlay {
	if o == nil {
		return nil
	}
	m := &model.Overlay{Tunnels: o.Tunnels, Decap: model.DecapStandard, DSCP: o.DSCP}
	if o.Decap == DecapCopyFromOuter {
		m.Decap = model.DecapCopyFromOuter
	}
	return m
}
