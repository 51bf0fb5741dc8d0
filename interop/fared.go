package interop

import (
	"fmt"
	"net/netip"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
)

// fared's config file is written as fared reads it: farelab fills in a
// config.Config (the core's keys, and the section of the node's routing
// protocol from its package, starting from the package's defaults) and
// config.Render writes it, every setting stated. There is no second
// schema here to keep in step with docs/config.md.

// RenderFared renders the YAML config of a fared node (docs/config.md):
// the core's keys and its routing protocol's section.
func RenderFared(n *Node, d Defaults) ([]byte, error) {
	c, err := faredCore(n, d)
	if err != nil {
		return nil, err
	}
	if n.Protocol == "ospf" {
		o, err := faredOSPF(n, d)
		if err != nil {
			return nil, err
		}
		c.Sections = map[string]any{ospf.Key: o}
		return renderConfig(c, "node "+n.Name)
	}
	is, err := faredISIS(n, d)
	if err != nil {
		return nil, err
	}
	if c.SystemID, err = config.ParseSystemID(n.SystemID); err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	c.Sections = map[string]any{isis.Key: is}
	return renderConfig(c, "node "+n.Name)
}

// faredCore is the core's part of a node's config: names, log level and
// socket; the system id is the router id's (RFC 1195-style) unless the
// caller sets one.
func faredCore(n *Node, d Defaults) (*config.Config, error) {
	c := config.Defaults()
	c.Hostname, c.RouterID = n.Hostname, n.Loopback
	c.SystemID = config.SystemIDFromRouterID(n.Loopback)
	if d.LogLevel != "" {
		l, ok := config.ParseLogLevel(d.LogLevel)
		if !ok {
			return nil, fmt.Errorf("log-level %q: must be debug, info, warn or error", d.LogLevel)
		}
		c.LogLevel = l
	}
	if n.Socket != "" {
		c.Socket = n.Socket
	}
	return c, nil
}

// renderConfig writes c with a first line that says who wrote it.
func renderConfig(c *config.Config, what string) ([]byte, error) {
	out, err := config.Render(c)
	if err != nil {
		return nil, err
	}
	return append([]byte("# rendered by farelab for "+what+"\n"), out...), nil
}

// faredISIS is the isis section of a fared IS-IS node.
func faredISIS(n *Node, d Defaults) (*isis.Config, error) {
	is := isis.Defaults()
	area, err := isis.ParseAreaAddress(n.Area)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	is.Areas = [][]byte{area}
	if is.Level, err = faredLevel(n.Name, n.Level); err != nil {
		return nil, err
	}
	is.LSPGenInterval = d.LSPGenInterval
	is.FloodingReduction = d.Flooding == "reduced"
	auth, err := faredAuth(n.Auth)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	if auth != nil {
		// Every level the node runs.
		if n.Level != "2" {
			is.Authentication.Level1 = auth
		}
		if n.Level != "1" {
			is.Authentication.Level2 = auth
		}
	}
	if is.BFD, err = faredBFD(n); err != nil {
		return nil, err
	}
	if n.Level == "1-2" {
		// A lab L1L2 router leaks everything down (RFC 5302), so leaves
		// weight paths to other pods by re-advertised Path Bandwidth.
		is.LeakL2ToL1 = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	}
	for _, f := range n.Interfaces {
		fi := isis.DefaultInterface()
		fi.Name, fi.Type, fi.Metric, fi.Bandwidth = f.Name, f.Type, uint32(f.Metric), config.Bandwidth(f.Bandwidth)
		fi.HelloInterval, fi.HelloMultiplier, fi.Passive, fi.Authentication = d.HelloInterval, d.HelloMultiplier, f.Edge, auth
		fi.Level = is.Level
		if f.Level != "" {
			if fi.Level, err = faredLevel(n.Name+" "+f.Name, f.Level); err != nil {
				return nil, err
			}
		}
		if f.Type == "lan" && n.Priority >= 0 {
			fi.Priority = uint8(n.Priority)
		}
		fi.BFD = inheritedBFD(is.BFD)
		is.Interfaces = append(is.Interfaces, fi)
	}
	lo := netip.PrefixFrom(n.Loopback, 32)
	is.Prefixes = append(is.Prefixes, isis.Prefix{Prefix: lo})
	for _, p := range n.Prefixes {
		if p.Prefix == lo {
			continue // already there; fared rejects duplicates
		}
		is.Prefixes = append(is.Prefixes, isis.Prefix{Prefix: p.Prefix, PathBandwidth: config.Bandwidth(p.PathBandwidth)})
	}
	return is, nil
}

func faredLevel(what, s string) (int, error) {
	l, ok := isis.ParseLevel(s)
	if !ok {
		return 0, fmt.Errorf("%s: level %q is not 1, 2 or 1-2", what, s)
	}
	return l, nil
}

// faredOSPF is the ospf section of a fared OSPF node: FRR's whole-second
// hello and dead intervals, costs capped at 16 bits, LANs broadcast.
func faredOSPF(n *Node, d Defaults) (*ospf.Config, error) {
	o := ospf.Defaults()
	o.RetransmitInterval = time.Second
	hello := time.Duration(frrSeconds(d.HelloInterval)) * time.Second
	auth, err := faredAuth(n.Auth)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	if o.BFD, err = faredBFD(n); err != nil {
		return nil, err
	}
	for _, f := range n.Interfaces {
		fi := ospf.DefaultInterface()
		fi.Name, fi.Type, fi.Cost, fi.Bandwidth = f.Name, "p2p", uint16(min(f.Metric, 65535)), config.Bandwidth(f.Bandwidth)
		fi.HelloInterval, fi.DeadInterval, fi.Passive, fi.Authentication = hello, hello*time.Duration(d.HelloMultiplier), f.Edge, auth
		if fi.Area, err = config.ParseArea(f.Area); err != nil {
			return nil, fmt.Errorf("node %s interface %s: %w", n.Name, f.Name, err)
		}
		if f.Type == "lan" {
			fi.Type = "broadcast"
			if n.Priority >= 0 {
				fi.Priority = uint8(n.Priority)
			}
		}
		fi.BFD = inheritedBFD(o.BFD)
		o.Interfaces = append(o.Interfaces, fi)
	}
	area, err := config.ParseArea(n.Area)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	lo := netip.PrefixFrom(n.Loopback, 32)
	o.Prefixes = append(o.Prefixes, ospf.Prefix{Prefix: lo, Area: area})
	for _, p := range n.Prefixes {
		if p.Prefix == lo || !p.Prefix.Addr().Is4() {
			continue
		}
		o.Prefixes = append(o.Prefixes, ospf.Prefix{Prefix: p.Prefix, Area: area, PathBandwidth: config.Bandwidth(p.PathBandwidth)})
	}
	return o, nil
}

// faredAuth is a fared key chain (docs/config.md, "Authentication") of
// the topology's keys; nil for none.
func faredAuth(keys []AuthKey) (*config.Auth, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	a := &config.Auth{}
	for _, k := range keys {
		ak := config.AuthKey{ID: uint16(k.ID), Algorithm: k.Algorithm, Secret: config.Secret(k.Secret)}
		for _, t := range []struct {
			s   string
			dst *time.Time
		}{{k.SendFrom, &ak.SendFrom}, {k.SendUntil, &ak.SendUntil}} {
			if t.s == "" {
				continue
			}
			v, err := time.Parse(time.RFC3339, t.s)
			if err != nil {
				return nil, fmt.Errorf("auth key %d: %q is not an RFC 3339 time", k.ID, t.s)
			}
			*t.dst = v
		}
		a.Keys = append(a.Keys, ak)
	}
	return a, nil
}

// faredBFD is the bfd setting of a node's protocol section (nil: none).
func faredBFD(n *Node) (*config.BFD, error) {
	if n.BFD == nil {
		return nil, nil
	}
	auth, err := faredAuth(n.BFD.Auth)
	if err != nil {
		return nil, fmt.Errorf("node %s: bfd: %w", n.Name, err)
	}
	return &config.BFD{Interval: n.BFD.Interval, Multiplier: n.BFD.Multiplier, Authentication: auth}, nil
}

// inheritedBFD is what an interface that sets no bfd holds once fared
// read the file: its section's setting (config.InheritBFD).
func inheritedBFD(section *config.BFD) *config.BFD { return config.InheritBFD(section, nil) }

// MergeSections merges top-level sections (YAML of a mapping: the inof
// section, a node's config: extras) to a rendered config; a key the
// config has already is replaced (a topology's rib: over the defaults).
func MergeSections(base []byte, extras ...[]byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil {
		return nil, err
	}
	top := doc.Content[0]
	for _, e := range extras {
		var x yaml.Node
		if err := yaml.Unmarshal(e, &x); err != nil {
			return nil, err
		}
		if len(x.Content) == 0 {
			continue
		}
		m := x.Content[0]
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("config sections: want a mapping, got %q", e)
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			setKey(top, m.Content[i], m.Content[i+1])
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func setKey(m, k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k.Value {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, k, v)
}
