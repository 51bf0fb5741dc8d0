package qosconfig

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/policy"
)

func (p *parser) ipcc(k, v *yaml.Node) {
	if !p.w.IsMapping(k, v) {
		return
	}
	c := &IPCC{IPCCConfig: policy.DefaultIPCC(), RouteCache: DefaultRouteCache, RouteTTL: DefaultRouteTTL, Line: k.Line}
	var dscp int = int(c.CNPDSCP)
	var perPort, perSource *yaml.Node // where the caps were given
	p.w.Mapping(v, map[string]config.Field{
		"interfaces": func(k, v *yaml.Node) { c.Ifaces, _ = p.w.Strings(k, v) },
		"capture":    func(k, v *yaml.Node) { c.Capture, _ = p.w.Strings(k, v) },
		"priorities": func(k, v *yaml.Node) {
			if s, ok := p.prios(k, v); ok {
				c.Prios, c.PriosSet = s, true
			}
		},
		"poll":         p.w.SetDuration(&c.Poll, time.Microsecond, 10*time.Second),
		"cnp-interval": p.w.SetDuration(&c.CNPInterval, time.Microsecond, time.Second),
		"low":          p.bytes(&c.Low, 0, maxBuf),
		"high":         p.bytes(&c.High, 1, maxBuf),
		"few":          config.SetInt(p.w, &c.Few, 0, 64),
		"more":         config.SetInt(p.w, &c.More, 0, 64),
		"flow-timeout": p.w.SetDuration(&c.FlowTimeout, time.Millisecond, time.Hour),
		"cnp-dscp":     config.SetInt(p.w, &dscp, 0, 63),
		"max-flows":    config.SetInt(p.w, &c.MaxFlows, 1, 1<<20),
		"max-flows-per-port": func(k, v *yaml.Node) {
			perPort = v
			config.SetInt(p.w, &c.MaxFlowsPerPort, 1, 1<<20)(k, v)
		},
		"max-flows-per-source": func(k, v *yaml.Node) {
			perSource = v
			config.SetInt(p.w, &c.MaxFlowsPerSource, 1, 1<<20)(k, v)
		},
		"psn-window":      config.SetInt(p.w, &c.PSNWindow, 16, 1<<22),
		"route-cache":     config.SetInt(p.w, &c.RouteCache, 1, 1<<20),
		"route-cache-ttl": p.w.SetDuration(&c.RouteTTL, time.Millisecond, time.Minute),
		"learn-cm":        p.w.Bool(&c.LearnCM),
	})
	c.CNPDSCP = uint8(dscp)
	// The caps nest: a source's within its port's, a port's within the
	// table (unset ones are derived from max-flows, so they always fit).
	if perPort != nil && c.MaxFlowsPerPort > c.MaxFlows {
		p.w.Errf(perPort, "ipcc: max-flows-per-port %d above max-flows %d", c.MaxFlowsPerPort, c.MaxFlows)
	}
	if perSource != nil {
		port := c.MaxFlowsPerPort
		if perPort == nil {
			port = max(c.MaxFlows/4, 1)
		}
		if c.MaxFlowsPerSource > port {
			p.w.Errf(perSource, "ipcc: max-flows-per-source %d above max-flows-per-port %d", c.MaxFlowsPerSource, port)
		}
	}
	if c.Low >= c.High {
		p.w.Errf(v, "ipcc: low %d must be below high %d", c.Low, c.High)
	}
	if c.Few > c.More {
		p.w.Errf(v, "ipcc: few %d above more %d (growing and high sends the most)", c.Few, c.More)
	}
	p.c.IPCC = c
}
