package config

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// OSPF is the ospf section (OSPFv2, RFC 2328 with RFC 3630 TE and RFC 7684
// Extended Prefix LSAs). See docs/config.md and docs/ospf.md.
type OSPF struct {
	// RouterID defaults to the top-level router-id.
	RouterID netip.Addr `render:",omitzero"`
	// PathBandwidthSubTLV is the codepoint of the FARE Path Bandwidth
	// sub-TLV of the Extended Prefix TLV (default 32770, experimental range).
	PathBandwidthSubTLV uint16

	// LSARefresh is LSRefreshTime (RFC 2328: 30 minutes), lowered in tests.
	LSARefresh time.Duration
	// LSAGenInterval is the minimum time between two originations of our
	// LSAs (MinLSInterval; default 1s, FRR's MinLSArrival).
	LSAGenInterval time.Duration
	// MinLSArrival: a newer instance of an LSA arriving sooner after the
	// last one is discarded (RFC 2328 §13 step 5a). Default 1s.
	MinLSArrival time.Duration
	// RetransmitInterval is RxmtInterval for DBDs, LSRs and LSUs (default 5s).
	RetransmitInterval time.Duration

	// ECMPOnly and SPF override the rib section for OSPF's topologies
	// (nil, zero timers: not set). Read them through Config.Routing.
	ECMPOnly *bool
	SPF      SPF `render:",omitzero"`
	// BFD on every interface's neighbours (nil: none); config/bfd.go.
	BFD *BFD `render:",omitzero"`

	Interfaces []OSPFInterface
	Prefixes   []OSPFPrefix
}

// OSPFInterface is one entry of ospf.interfaces.
type OSPFInterface struct {
	Name          string
	Area          uint32 `render:"area"` // area id (dotted on the wire and in output)
	Type          string // "p2p" or "broadcast"
	Cost          uint16
	Bandwidth     Bandwidth `render:",omitzero"` // 0: the interface speed
	HelloInterval time.Duration
	DeadInterval  time.Duration
	Priority      uint8
	Passive       bool
	// Authentication of every packet on the interface (nil: AuType 0).
	Authentication *Auth `render:",omitzero"`
	// BFD in force on the interface: its own bfd key resolved against
	// the section's at parse time (nil or Off: none).
	BFD  *BFD `render:",omitzero"`
	Line int
}

// OSPFPrefix is one entry of ospf.prefixes.
type OSPFPrefix struct {
	Prefix        netip.Prefix
	Area          uint32 `render:"area"` // area of the stub link; unused when External
	Metric        uint32
	PathBandwidth Bandwidth `render:",omitzero"` // 0 = not set: no constraint
	External      bool      // AS-External LSA (type 5) instead of a stub link
	Line          int
}

// AreaString formats an area id as a dotted quad.
func AreaString(a uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], a)
	return netip.AddrFrom4(b).String()
}

// ParseArea parses an OSPF area id: dotted quad ("0.0.0.1") or a decimal
// number ("1").
func ParseArea(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
		return binary.BigEndian.Uint32(a.AsSlice()), nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid area %q (want a dotted quad like 0.0.0.0 or a number)", s)
	}
	return uint32(n), nil
}

// assignedExtPrefixSubTLVs are the assigned codepoints of the IANA registry
// "OSPFv2 Extended Prefix TLV Sub-TLVs" (RFC 8665, 9350, 9084).
var assignedExtPrefixSubTLVs = map[int64]string{
	1: "SID/Label", 2: "Prefix SID", 3: "Flexible Algorithm Prefix Metric",
	4: "Prefix Source OSPF Router-ID", 5: "Prefix Source Router Address",
}

// Areas returns the distinct areas of the interfaces, in config order.
func (o *OSPF) Areas() []uint32 {
	var out []uint32
	seen := map[uint32]bool{}
	for _, i := range o.Interfaces {
		if !seen[i.Area] {
			seen[i.Area] = true
			out = append(out, i.Area)
		}
	}
	return out
}

func (p *Walker) area(dst *uint32) Field {
	return func(k, v *yaml.Node) {
		if s, ok := p.Text(k, v); ok {
			a, err := ParseArea(s)
			if err != nil {
				p.Errf(v, "%s: %v", k.Value, err)
				return
			}
			*dst = a
		}
	}
}

func (p *Walker) ospf(k, v *yaml.Node) *OSPF {
	if !p.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return nil
	}
	o := &OSPF{
		PathBandwidthSubTLV: 32770,
		LSARefresh:          30 * time.Minute,
		LSAGenInterval:      time.Second,
		MinLSArrival:        time.Second,
		RetransmitInterval:  5 * time.Second,
	}
	ifLines, pfxLines := map[string]int{}, map[netip.Prefix]int{}
	areaSet := map[*yaml.Node]bool{} // prefixes with an explicit area
	var pfxNodes []*yaml.Node
	p.Mapping(v, map[string]Field{
		"router-id": p.routerID(&o.RouterID),
		"path-bandwidth-subtlv": func(k, v *yaml.Node) {
			n, ok := p.Integer(k, v, 1, 33023)
			if !ok {
				return
			}
			if name, taken := assignedExtPrefixSubTLVs[n]; taken {
				p.Errf(v, "%s: codepoint %d is assigned (%s)", k.Value, n, name)
				return
			}
			o.PathBandwidthSubTLV = uint16(n)
		},
		"lsa-refresh":         p.SetDuration(&o.LSARefresh, time.Second, 50*time.Minute),
		"lsa-gen-interval":    p.SetDuration(&o.LSAGenInterval, 0, time.Minute),
		"min-ls-arrival":      p.SetDuration(&o.MinLSArrival, 0, time.Minute),
		"retransmit-interval": p.SetDuration(&o.RetransmitInterval, time.Second, 65535*time.Second),
		"ecmp-only":           p.BoolPtr(&o.ECMPOnly),
		"spf":                 p.spf(&o.SPF),
		"bfd":                 p.bfd(&o.BFD),
		"interfaces": p.List(func(v *yaml.Node) {
			it := p.ospfIface(v)
			if first, dup := ifLines[it.Name]; dup && it.Name != "" {
				p.Errf(v, "duplicate interface %q (first at line %d)", it.Name, first)
			} else {
				ifLines[it.Name] = it.Line
			}
			o.Interfaces = append(o.Interfaces, it)
		}),
		"prefixes": p.List(func(v *yaml.Node) {
			pf, hasArea := p.ospfPrefix(v)
			if first, dup := pfxLines[pf.Prefix]; dup && pf.Prefix.IsValid() {
				p.Errf(v, "duplicate prefix %s (first at line %d)", pf.Prefix, first)
			} else {
				pfxLines[pf.Prefix] = pf.Line
			}
			areaSet[v] = hasArea
			pfxNodes = append(pfxNodes, v)
			o.Prefixes = append(o.Prefixes, pf)
		}),
	})
	// A prefix without an area goes to the only area; with several areas
	// it must say which.
	areas := o.Areas()
	for i := range o.Prefixes {
		pf := &o.Prefixes[i]
		if areaSet[pfxNodes[i]] || pf.External {
			continue
		}
		switch len(areas) {
		case 0:
			pf.Area = 0
		case 1:
			pf.Area = areas[0]
		default:
			p.Errf(pfxNodes[i], "prefix %s: area required (interfaces are in %d areas)", pf.Prefix, len(areas))
		}
	}
	for i, pf := range o.Prefixes {
		if pf.External || !areaSet[pfxNodes[i]] || len(areas) == 0 {
			continue
		}
		known := false
		for _, a := range areas {
			known = known || a == pf.Area
		}
		if !known {
			p.Errf(pfxNodes[i], "prefix %s: area %s has no interface", pf.Prefix, AreaString(pf.Area))
		}
	}
	return o
}

func (p *Walker) ospfIface(v *yaml.Node) OSPFInterface {
	it := OSPFInterface{Type: "broadcast", Cost: 10, HelloInterval: 10 * time.Second, Priority: 1, Line: v.Line}
	seen := p.Mapping(v, map[string]Field{
		"name": p.Str(&it.Name, func(s string) string {
			if s == "" || len(s) > 15 || strings.ContainsAny(s, "/ \t") {
				return fmt.Sprintf("invalid interface name %q", s)
			}
			return ""
		}),
		"area": p.area(&it.Area),
		"type": p.Str(&it.Type, func(s string) string {
			if s != "p2p" && s != "broadcast" {
				return fmt.Sprintf("must be p2p or broadcast, got %q", s)
			}
			return ""
		}),
		"cost":           SetInt(p, &it.Cost, 1, 65535),
		"bandwidth":      p.Bandwidth(&it.Bandwidth),
		"hello-interval": p.SetDuration(&it.HelloInterval, time.Second, 65535*time.Second),
		"dead-interval":  p.SetDuration(&it.DeadInterval, time.Second, 65535*time.Second),
		"priority":       SetInt(p, &it.Priority, 0, 255),
		"passive":        p.Bool(&it.Passive),
		"authentication": p.auth(ospfAuthRules, &it.Authentication),
		"bfd":            p.bfd(&it.BFD),
	})
	if seen["name"] == nil {
		p.Errf(v, "missing required key \"name\"")
	}
	// Both intervals are whole seconds on the wire.
	if it.HelloInterval%time.Second != 0 {
		p.Errf(seen["hello-interval"], "interface %s: hello-interval %s: must be whole seconds", it.Name, it.HelloInterval)
	}
	if seen["dead-interval"] == nil {
		it.DeadInterval = 4 * it.HelloInterval
	} else if it.DeadInterval%time.Second != 0 {
		p.Errf(seen["dead-interval"], "interface %s: dead-interval %s: must be whole seconds", it.Name, it.DeadInterval)
	} else if it.DeadInterval <= it.HelloInterval {
		p.Errf(seen["dead-interval"], "interface %s: dead-interval %s must be longer than hello-interval %s", it.Name, fmtDur(it.DeadInterval), fmtDur(it.HelloInterval))
	}
	return it
}

func (p *Walker) ospfPrefix(v *yaml.Node) (OSPFPrefix, bool) {
	pf := OSPFPrefix{Line: v.Line}
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
			case !pp.Addr().Is4():
				p.Errf(v, "%s: %s is not IPv4 (OSPFv2 carries IPv4 only)", k.Value, s)
			case pp != pp.Masked():
				p.Errf(v, "%s: host bits set, did you mean %s", k.Value, pp.Masked())
			default:
				pf.Prefix = pp
			}
		},
		"area":           p.area(&pf.Area),
		"metric":         SetInt(p, &pf.Metric, 0, 0xFFFFFF),
		"path-bandwidth": p.Bandwidth(&pf.PathBandwidth),
		"external":       p.Bool(&pf.External),
	})
	if seen["prefix"] == nil {
		p.Errf(v, "missing required key \"prefix\"")
	}
	if pf.External && seen["area"] != nil {
		p.Errf(seen["area"], "prefix %s: an external prefix has no area (AS scope)", pf.Prefix)
	}
	if !pf.External && pf.Metric > 0xFFFF {
		p.Errf(v, "prefix %s: metric %d: a stub link metric is 16 bits (0..65535)", pf.Prefix, pf.Metric)
	}
	return pf, seen["area"] != nil
}

// OSPFRouterID is the OSPF router id: ospf.router-id, else the top-level
// router-id.
func (c *Config) OSPFRouterID() netip.Addr {
	if c.OSPF != nil && c.OSPF.RouterID.IsValid() {
		return c.OSPF.RouterID
	}
	return c.RouterID
}

// omitKeys: an external prefix has no area (AS scope); writing area 0
// would make it invalid.
func (p OSPFPrefix) omitKeys() []string {
	if p.External {
		return []string{"area"}
	}
	return nil
}
