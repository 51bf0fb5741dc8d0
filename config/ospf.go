package config

import "gopkg.in/yaml.v3"

// OSPF is the ospf section (OSPFv2). Filled in by the OSPF work; see
// docs/config.md.
type OSPF struct{}

func (p *parser) ospf(k, v *yaml.Node) *OSPF {
	if !p.want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return nil
	}
	return &OSPF{}
}
