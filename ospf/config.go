package ospf

import (
	"fmt"
	"net/netip"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp"
)

// Key is the section's config key, the module's name and API prefix.
const Key = "ospf"

func init() {
	config.Register(config.Section{Key: Key, Parse: parseSection, Check: checkSection, Distance: 110})
}

// Section returns the ospf section of a config, or nil.
func Section(c *config.Config) *Config { return config.SectionOf[Config](c, Key) }

// Config is the ospf section (OSPFv2, RFC 2328 with RFC 3630 TE and RFC
// 7684 Extended Prefix LSAs). See docs/config.md and docs/ospf.md. Its
// default administrative distance is 110 (FRR's).
type Config struct {
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
	// (nil, zero timers: not set). Read them through config.Config.Routing.
	ECMPOnly *bool
	SPF      config.SPF `render:",omitzero"`
	// BFD on every interface's neighbours (nil: none); config/bfd.go.
	BFD *config.BFD `render:",omitzero"`

	Interfaces []Interface
	Prefixes   []Prefix
}

// Interface is one entry of ospf.interfaces.
type Interface struct {
	Name          string
	Area          uint32 `render:"area"` // area id (dotted on the wire and in output)
	Type          string // "p2p" or "broadcast"
	Cost          uint16
	Bandwidth     config.Bandwidth `render:",omitzero"` // 0: the interface speed
	HelloInterval time.Duration
	DeadInterval  time.Duration
	Priority      uint8
	Passive       bool
	// Authentication of every packet on the interface (nil: AuType 0).
	Authentication *config.Auth `render:",omitzero"`
	// BFD in force on the interface: its own bfd key resolved against
	// the section's at parse time (nil or Off: none).
	BFD  *config.BFD `render:",omitzero"`
	Line int
}

// Prefix is one entry of ospf.prefixes.
type Prefix struct {
	Prefix        netip.Prefix
	Area          uint32 `render:"area"` // area of the stub link; unused when External
	Metric        uint32
	PathBandwidth config.Bandwidth `render:",omitzero"` // 0 = not set: no constraint
	External      bool             // AS-External LSA (type 5) instead of a stub link
	Line          int
}

// authRules: keyed MD5 uses a 16-byte key (RFC 2328 D.4.3); the simple
// password fills the 8-byte header field; one interface has one AuType;
// RFC 5709 HMAC-SHA keys have one-byte ids.
var authRules = config.AuthRules{Proto: "OSPF", MaxID: 255, MaxClear: 8, MaxMD5: 16, OneType: true,
	Algs: map[string]bool{"clear": true, "md5": true, "hmac-sha-1": true, "hmac-sha-256": true, "hmac-sha-384": true, "hmac-sha-512": true}}

// RIBOverrides are the section's overrides of the rib section
// (config.RoutingSection).
func (o *Config) RIBOverrides() (*bool, *config.SPF) { return o.ECMPOnly, &o.SPF }

// InterfaceRefs lists the section's interfaces (config.InterfaceLister).
func (o *Config) InterfaceRefs() []config.IfaceRef {
	return config.RefsOf(o.Interfaces, func(i Interface) (string, int) { return i.Name, i.Line })
}

// assignedExtPrefixSubTLVs are the assigned codepoints of the IANA registry
// "OSPFv2 Extended Prefix TLV Sub-TLVs" (RFC 8665, 9350, 9084).
var assignedExtPrefixSubTLVs = map[int64]string{
	1: "SID/Label", 2: "Prefix SID", 3: "Flexible Algorithm Prefix Metric",
	4: "Prefix Source OSPF Router-ID", 5: "Prefix Source Router Address",
}

// Areas returns the distinct areas of the interfaces, in config order.
func (o *Config) Areas() []uint32 {
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

func areaField(w *config.Walker, dst *uint32) config.Field {
	return config.Parsed(w, dst, config.ParseArea)
}

// Defaults is the section of a file that sets no key: what parsing starts
// from (farelab fills it in to write a file).
func Defaults() *Config {
	return &Config{
		PathBandwidthSubTLV: 32770,
		LSARefresh:          30 * time.Minute,
		LSAGenInterval:      time.Second,
		MinLSArrival:        time.Second,
		RetransmitInterval:  5 * time.Second,
	}
}

// DefaultInterface is an interface entry that sets nothing but its name
// (its dead-interval is then 4 hello-intervals).
func DefaultInterface() Interface {
	return Interface{Type: "broadcast", Cost: 10, HelloInterval: 10 * time.Second, DeadInterval: 40 * time.Second, Priority: 1}
}

func parseSection(w *config.Walker, k, v *yaml.Node) any {
	if !w.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return nil
	}
	p := w
	o := Defaults()
	ifLines, pfxLines := igp.FirstLines[string]{}, igp.FirstLines[netip.Prefix]{}
	areaSet := map[*yaml.Node]bool{} // prefixes with an explicit area
	var pfxNodes []*yaml.Node
	p.Mapping(v, map[string]config.Field{
		"router-id": p.RouterID(&o.RouterID),
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
		"spf":                 p.SPF(&o.SPF),
		"bfd":                 p.BFD(&o.BFD),
		"interfaces": p.List(func(v *yaml.Node) {
			it := parseIface(p, v)
			if it.Name != "" {
				ifLines.Add(p, v, it.Name, it.Line, fmt.Sprintf("interface %q", it.Name))
			}
			o.Interfaces = append(o.Interfaces, it)
		}),
		"prefixes": p.List(func(v *yaml.Node) {
			pf, hasArea := parsePrefix(p, v)
			if pf.Prefix.IsValid() {
				pfxLines.Add(p, v, pf.Prefix, pf.Line, "prefix "+pf.Prefix.String())
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
			p.Errf(pfxNodes[i], "prefix %s: area %s has no interface", pf.Prefix, config.AreaString(pf.Area))
		}
	}
	return o
}

// checkSection takes the BFD settings in force from the top-level bfd defaults,
// once the whole file is read.
func checkSection(w *config.Walker, c *config.Config, section any) {
	o := section.(*Config)
	igp.ResolveBFD(w, &o.BFD, o.Interfaces, func(i *Interface) **config.BFD { return &i.BFD })
}

func parseIface(p *config.Walker, v *yaml.Node) Interface {
	it := DefaultInterface()
	it.Line = v.Line
	seen := p.Mapping(v, map[string]config.Field{
		"name":           p.Str(&it.Name, igp.IfaceName),
		"area":           areaField(p, &it.Area),
		"type":           p.Str(&it.Type, igp.OneOf("p2p", "broadcast")),
		"cost":           config.SetInt(p, &it.Cost, 1, 65535),
		"bandwidth":      p.Bandwidth(&it.Bandwidth),
		"hello-interval": p.SetDuration(&it.HelloInterval, time.Second, 65535*time.Second),
		"dead-interval":  p.SetDuration(&it.DeadInterval, time.Second, 65535*time.Second),
		"priority":       config.SetInt(p, &it.Priority, 0, 255),
		"passive":        p.Bool(&it.Passive),
		"authentication": p.Auth(authRules, &it.Authentication),
		"bfd":            p.BFD(&it.BFD),
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
		p.Errf(seen["dead-interval"], "interface %s: dead-interval %s must be longer than hello-interval %s", it.Name, config.FormatDuration(it.DeadInterval), config.FormatDuration(it.HelloInterval))
	}
	return it
}

func parsePrefix(p *config.Walker, v *yaml.Node) (Prefix, bool) {
	pf := Prefix{Line: v.Line}
	seen := p.Mapping(v, map[string]config.Field{
		"prefix": igp.PrefixField(p, &pf.Prefix, func(pp netip.Prefix) string {
			if !pp.Addr().Is4() {
				return "is not IPv4 (OSPFv2 carries IPv4 only)"
			}
			return ""
		}),
		"area":           areaField(p, &pf.Area),
		"metric":         config.SetInt(p, &pf.Metric, 0, 0xFFFFFF),
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

// RouterID is the OSPF router id: ospf.router-id, else the top-level
// router-id.
func RouterID(c *config.Config) netip.Addr {
	if o := Section(c); o != nil && o.RouterID.IsValid() {
		return o.RouterID
	}
	return c.RouterID
}

// OmitKeys: an external prefix has no area (AS scope); writing area 0
// would make it invalid (config.KeyOmitter).
func (p Prefix) OmitKeys() []string {
	if p.External {
		return []string{"area"}
	}
	return nil
}
