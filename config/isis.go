package config

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ISIS is the isis section.
type ISIS struct {
	Areas               [][]byte
	Level               int   `render:"level"` // 1, 2, or 3 meaning 1-2
	PathBandwidthSubTLV uint8 // codepoint of the FARE Path Bandwidth prefix sub-TLV

	LSPLifetime    time.Duration
	LSPRefresh     time.Duration
	LSPGenInterval time.Duration
	CSNPInterval   time.Duration
	PSNPInterval   time.Duration

	LSPMTU       int
	HelloPadding bool
	Overload     bool
	// ECMPOnly and SPF override the rib section for IS-IS's topologies
	// (nil, zero timers: not set). Read them through Config.Routing.
	ECMPOnly *bool
	SPF      SPF `render:",omitzero"`

	// AttachedBit: an L1L2 router sets ATT in its L1 LSP while attached to
	// L2 (default true; false suppresses it).
	AttachedBit bool
	// LeakL2ToL1 selects the L2 routes an L1L2 router leaks into L1 (RFC
	// 5302, with the up/down bit): a route is leaked when a listed prefix
	// covers it. Empty: nothing is leaked.
	LeakL2ToL1 []netip.Prefix
	// ReadvertiseHold damps re-advertisement: leaked prefixes and their
	// Path Bandwidth are recomputed at most once per hold (default 1s).
	ReadvertiseHold time.Duration
	// Authentication of LSPs and SNPs per level (RFC 5304, 5310).
	Authentication ISISAuth `render:",omitzero"`
	// BFD on every interface's adjacencies (nil: none); config/bfd.go.
	BFD *BFD `render:",omitzero"`

	Interfaces []ISISInterface
	Prefixes   []ISISPrefix

	netSystemID *[6]byte   // from net:, applied to Config.SystemID
	netNode     *yaml.Node // where, for errors
}

// ISISInterface is one entry of isis.interfaces.
type ISISInterface struct {
	Name            string
	Type            string // "p2p" or "lan"
	Metric          uint32
	Bandwidth       Bandwidth `render:",omitzero"` // 0 = not set: use the interface speed
	Passive         bool
	HelloInterval   time.Duration
	HelloMultiplier int
	Priority        uint8
	// Level is the circuit type: the levels run on this interface (1, 2,
	// 3 = 1-2); default the instance's level. Always a subset of it.
	Level int `render:"level"`
	// Authentication of the interface's hellos (nil: none).
	Authentication *Auth `render:",omitzero"`
	// BFD in force on the interface: its own bfd key resolved against
	// the section's at parse time (nil or Off: none).
	BFD  *BFD `render:",omitzero"`
	Line int  // line of the list item in the config file

	levelNode *yaml.Node
}

// ISISPrefix is one entry of isis.prefixes.
type ISISPrefix struct {
	Prefix        netip.Prefix // canonical (host bits zero)
	Metric        uint32
	PathBandwidth Bandwidth `render:",omitzero"` // 0 = not set
	Line          int       // line of the list item in the config file
}

// assignedPrefixSubTLVs are the assigned codepoints of the IANA registry
// "Sub-TLVs for TLVs 27, 135, 235, 236, and 237".
var assignedPrefixSubTLVs = map[int64]string{
	1: "32-bit Administrative Tag", 2: "64-bit Administrative Tag",
	3: "Prefix Segment Identifier", 4: "Prefix Attribute Flags",
	5: "SRv6 End SID", 6: "Flexible Algorithm Prefix Metric",
	11: "IPv4 Source Router ID", 12: "IPv6 Source Router ID",
	22: "IPv6 Source Prefix", 32: "BIER Info",
}

func (p *Walker) isis(k, v *yaml.Node) *ISIS {
	if !p.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return nil
	}
	is := &ISIS{
		Level:               2,
		PathBandwidthSubTLV: 200,
		LSPLifetime:         1200 * time.Second,
		LSPRefresh:          900 * time.Second,
		LSPGenInterval:      500 * time.Millisecond,
		CSNPInterval:        10 * time.Second,
		PSNPInterval:        2 * time.Second,
		LSPMTU:              1492,
		HelloPadding:        true,
		AttachedBit:         true,
		ReadvertiseHold:     time.Second,
	}
	const maxDur = 65535 * time.Second
	lifetimeOK, refreshOK := true, true
	ifLines, pfxLines := map[string]int{}, map[netip.Prefix]int{}
	seen := p.Mapping(v, map[string]Field{
		"areas": func(k, v *yaml.Node) {
			if !p.Want(k, v, "a list", v.Kind == yaml.SequenceNode) {
				return
			}
			if n := len(v.Content); n < 1 || n > 3 {
				p.Errf(v, "%s: need 1..3 area addresses, got %d", k.Value, n)
			}
			for _, it := range v.Content {
				s, ok := p.Text(k, Deref(it))
				if !ok {
					continue
				}
				a, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
				if err != nil || len(a) < 1 || len(a) > 13 {
					p.Errf(it, "%s: invalid area address %q (want 1..13 bytes of dotted hex, e.g. 49.0001)", k.Value, s)
					continue
				}
				for _, b := range is.Areas {
					if string(b) == string(a) {
						p.Errf(it, "%s: duplicate area address %q", k.Value, s)
					}
				}
				is.Areas = append(is.Areas, a)
			}
		},
		"net": func(k, v *yaml.Node) {
			// FRR's habit: one or more Network Entity Titles, area +
			// system id + NSEL 00, instead of areas and system-id.
			var nets []string
			var nodes []*yaml.Node
			if v.Kind == yaml.SequenceNode {
				nets, nodes = p.Strings(k, v)
			} else if s, ok := p.Text(k, v); ok {
				nets, nodes = []string{s}, []*yaml.Node{v}
			}
			if n := len(nets); n < 1 || n > 3 {
				p.Errf(v, "%s: need 1..3 NETs, got %d", k.Value, n)
			}
			for i, s := range nets {
				b, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
				if err != nil || len(b) < 8 || len(b) > 20 || b[len(b)-1] != 0 {
					p.Errf(nodes[i], "%s: invalid NET %q (want area.system-id.00, e.g. 49.0001.0000.0000.0001.00)", k.Value, s)
					continue
				}
				area, sys := b[:len(b)-7], [6]byte(b[len(b)-7:len(b)-1])
				if is.netSystemID != nil && *is.netSystemID != sys {
					p.Errf(nodes[i], "%s: NET %q has another system id than the first NET", k.Value, s)
					continue
				}
				is.netSystemID, is.netNode = &sys, nodes[i]
				is.Areas = append(is.Areas, area)
			}
		},
		"level": func(k, v *yaml.Node) {
			if s, ok := p.Text(k, v); ok {
				l, ok := map[string]int{"1": 1, "2": 2, "1-2": 3}[s]
				if !ok {
					p.Errf(v, "%s: must be 1, 2 or 1-2, got %q", k.Value, s)
				}
				is.Level = l
			}
		},
		"path-bandwidth-subtlv": func(k, v *yaml.Node) {
			n, ok := p.Integer(k, v, 1, 255)
			if !ok {
				return
			}
			if name, taken := assignedPrefixSubTLVs[n]; taken {
				p.Errf(v, "%s: codepoint %d is assigned (%s)", k.Value, n, name)
				return
			}
			is.PathBandwidthSubTLV = uint8(n)
		},
		"lsp-lifetime": func(k, v *yaml.Node) {
			is.LSPLifetime, lifetimeOK = p.Duration(k, v, 350*time.Second, maxDur)
		},
		"lsp-refresh": func(k, v *yaml.Node) {
			is.LSPRefresh, refreshOK = p.Duration(k, v, time.Second, maxDur)
		},
		"lsp-gen-interval": p.SetDuration(&is.LSPGenInterval, 0, maxDur),
		"csnp-interval":    p.SetDuration(&is.CSNPInterval, time.Second, maxDur),
		"psnp-interval":    p.SetDuration(&is.PSNPInterval, 100*time.Millisecond, maxDur),
		"lsp-mtu":          SetInt(p, &is.LSPMTU, 512, 9000),
		"hello-padding":    p.Bool(&is.HelloPadding),
		"overload":         p.Bool(&is.Overload),
		"ecmp-only":        p.BoolPtr(&is.ECMPOnly),
		"attached-bit":     p.Bool(&is.AttachedBit),
		"readvertise-hold": p.SetDuration(&is.ReadvertiseHold, 0, time.Hour),
		"leak-l2-to-l1": func(k, v *yaml.Node) {
			if !p.Want(k, v, "a list of prefixes", v.Kind == yaml.SequenceNode) {
				return
			}
			for _, it := range v.Content {
				s, ok := p.Text(k, Deref(it))
				if !ok {
					continue
				}
				pf, err := netip.ParsePrefix(s)
				if err != nil {
					p.Errf(it, "%s: invalid prefix %q", k.Value, s)
					continue
				}
				is.LeakL2ToL1 = append(is.LeakL2ToL1, pf.Masked())
			}
		},
		"spf":            p.spf(&is.SPF),
		"authentication": p.isisAuth(&is.Authentication),
		"bfd":            p.bfd(&is.BFD),
		"interfaces": p.List(func(v *yaml.Node) {
			it := p.iface(v)
			if first, dup := ifLines[it.Name]; dup && it.Name != "" {
				p.Errf(v, "duplicate interface %q (first at line %d)", it.Name, first)
			} else {
				ifLines[it.Name] = it.Line
			}
			is.Interfaces = append(is.Interfaces, it)
		}),
		"prefixes": p.List(func(v *yaml.Node) {
			pf := p.prefix(v)
			if first, dup := pfxLines[pf.Prefix]; dup && pf.Prefix.IsValid() {
				p.Errf(v, "duplicate prefix %s (first at line %d)", pf.Prefix, first)
			} else {
				pfxLines[pf.Prefix] = pf.Line
			}
			is.Prefixes = append(is.Prefixes, pf)
		}),
	})
	switch {
	case seen["areas"] == nil && seen["net"] == nil:
		p.Errf(k, "%s: missing required key \"areas\" (or an FRR-style \"net\")", k.Value)
	case seen["areas"] != nil && seen["net"] != nil:
		p.Errf(seen["net"], "net: give either areas (with the top-level system-id) or net, not both")
	}
	for i := range is.Interfaces {
		it := &is.Interfaces[i]
		switch {
		case it.Level == 0:
			it.Level = is.Level
		case it.Level&^is.Level != 0:
			p.Errf(it.levelNode, "interface %s: level %s is not run by this instance (level %s)", it.Name, levelName(it.Level), levelName(is.Level))
		}
		it.levelNode = nil
	}
	if lifetimeOK && refreshOK && is.LSPRefresh >= is.LSPLifetime-60*time.Second {
		at := seen["lsp-refresh"]
		if at == nil {
			at = seen["lsp-lifetime"]
		}
		p.Errf(at, "lsp-refresh %s must be less than lsp-lifetime - 60s = %s",
			fmtDur(is.LSPRefresh), fmtDur(is.LSPLifetime-60*time.Second))
	}
	return is
}

func (p *Walker) iface(v *yaml.Node) ISISInterface {
	it := ISISInterface{Type: "lan", Metric: 10, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64, Line: v.Line}
	helloOK := true
	seen := p.Mapping(v, map[string]Field{
		"name": p.Str(&it.Name, func(s string) string {
			if s == "" || len(s) > 15 || strings.ContainsAny(s, "/ \t") {
				return fmt.Sprintf("invalid interface name %q", s)
			}
			return ""
		}),
		"type": p.Str(&it.Type, func(s string) string {
			if s != "p2p" && s != "lan" {
				return fmt.Sprintf("must be p2p or lan, got %q", s)
			}
			return ""
		}),
		"metric":    SetInt(p, &it.Metric, 1, 0xFFFFFE),
		"bandwidth": p.Bandwidth(&it.Bandwidth),
		"passive":   p.Bool(&it.Passive),
		"hello-interval": func(k, v *yaml.Node) {
			var ok bool
			it.HelloInterval, ok = p.Duration(k, v, 100*time.Millisecond, 65535*time.Second)
			helloOK = helloOK && ok
		},
		"hello-multiplier": func(k, v *yaml.Node) {
			n, ok := p.Integer(k, v, 2, 100)
			it.HelloMultiplier, helloOK = int(n), helloOK && ok
		},
		"priority":       SetInt(p, &it.Priority, 0, 127),
		"authentication": p.auth(isisAuthRules, &it.Authentication),
		"bfd":            p.bfd(&it.BFD),
		"level": func(k, v *yaml.Node) {
			if s, ok := p.Text(k, v); ok {
				l, ok := map[string]int{"1": 1, "2": 2, "1-2": 3}[s]
				if !ok {
					p.Errf(v, "%s: must be 1, 2 or 1-2, got %q", k.Value, s)
				}
				it.Level = l
				it.levelNode = v
			}
		},
	})
	if seen["name"] == nil {
		p.Errf(v, "missing required key \"name\"")
	}
	// The hold time goes on the wire as whole seconds, 1..65535.
	if hold := it.HelloInterval * time.Duration(it.HelloMultiplier); helloOK && (hold < time.Second || hold > 65535*time.Second) {
		p.Errf(v, "interface %s: hold time hello-interval * hello-multiplier = %s, must be 1s..65535s", it.Name, fmtDur(hold))
	}
	return it
}

func (p *Walker) prefix(v *yaml.Node) ISISPrefix {
	pf := ISISPrefix{Line: v.Line}
	seen := p.Mapping(v, map[string]Field{
		"prefix": func(k, v *yaml.Node) {
			s, ok := p.Text(k, v)
			if !ok {
				return
			}
			pp, err := netip.ParsePrefix(s)
			switch {
			case err != nil:
				p.Errf(v, "%s: invalid prefix %q", k.Value, s)
			case pp != pp.Masked():
				p.Errf(v, "%s: host bits set, did you mean %s", k.Value, pp.Masked())
			default:
				pf.Prefix = pp
			}
		},
		"metric":         SetInt(p, &pf.Metric, 0, 0xFE000000),
		"path-bandwidth": p.Bandwidth(&pf.PathBandwidth),
	})
	if seen["prefix"] == nil {
		p.Errf(v, "missing required key \"prefix\"")
	}
	return pf
}

func levelName(l int) string {
	switch l {
	case 1:
		return "1"
	case 2:
		return "2"
	}
	return "1-2"
}
