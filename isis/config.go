package isis

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp"
)

// Key is the section's config key, the module's name and API prefix.
const Key = "isis"

func init() {
	config.Register(config.Section{Key: Key, Parse: parseSection, Check: checkSection, Distance: 115})
}

// Section returns the isis section of a config, or nil.
func Section(c *config.Config) *Config { return config.SectionOf[Config](c, Key) }

// Config is the isis section. Its default administrative distance is 115
// (FRR's).
type Config struct {
	Areas               [][]byte
	Level               int   `render:"level"` // 1, 2, or 3 meaning 1-2
	PathBandwidthSubTLV uint8 // codepoint of the FARE Path Bandwidth prefix sub-TLV

	LSPLifetime    time.Duration
	LSPRefresh     time.Duration
	LSPGenInterval time.Duration
	CSNPInterval   time.Duration
	PSNPInterval   time.Duration

	// LSPPacing is the minimum gap between LSPs sent on one interface
	// (ISO 10589's minimumBroadcastLSPTransmissionInterval, 33 ms, on
	// every circuit; flood.go's pacer); 0: unpaced. An interface may set
	// its own.
	LSPPacing time.Duration

	LSPMTU       int
	HelloPadding bool
	Overload     bool
	// FloodingReduction runs draft-ietf-lsr-distoptflood's distributed
	// flooding reduction (floodreduce.go); FloodingReflooders is how many
	// reflooders each two-hop neighbour needs (the draft's 1, or more for
	// redundancy).
	FloodingReduction  bool
	FloodingReflooders int
	// MultiTopology takes part in RFC 5120 multi-topology routing: the
	// hellos announce MT 0 (IPv4) and MT 2 (IPv6 unicast) in TLV 229, as
	// FRR's "topology ipv6-unicast" does (mt.go).
	MultiTopology bool
	// ECMPOnly and SPF override the rib section for IS-IS's topologies
	// (nil, zero timers: not set). Read them through config.Config.Routing.
	ECMPOnly *bool
	SPF      config.SPF `render:",omitzero"`

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
	Authentication Auth `render:",omitzero"`
	// BFD on every interface's adjacencies (nil: none); config/bfd.go.
	BFD *config.BFD `render:",omitzero"`

	Interfaces []Interface
	Prefixes   []Prefix

	netSystemID *[6]byte   // from net:, applied to Config.SystemID
	netNode     *yaml.Node // where, for errors
}

// Interface is one entry of isis.interfaces.
type Interface struct {
	Name            string
	Type            string // "p2p" or "lan"
	Metric          uint32
	Bandwidth       config.Bandwidth `render:",omitzero"` // 0 = not set: use the interface speed
	Passive         bool
	HelloInterval   time.Duration
	HelloMultiplier int
	Priority        uint8
	// LSPPacing overrides the section's lsp-pacing on this interface
	// (nil: the section's).
	LSPPacing *time.Duration `render:",omitzero"`
	// Level is the circuit type: the levels run on this interface (1, 2,
	// 3 = 1-2); default the instance's level. Always a subset of it.
	Level int `render:"level"`
	// Authentication of the interface's hellos (nil: none).
	Authentication *config.Auth `render:",omitzero"`
	// BFD in force on the interface: its own bfd key resolved against
	// the section's at parse time (nil or Off: none).
	BFD  *config.BFD `render:",omitzero"`
	Line int         // line of the list item in the config file

	levelNode *yaml.Node
}

// Prefix is one entry of isis.prefixes.
type Prefix struct {
	Prefix        netip.Prefix // canonical (host bits zero)
	Metric        uint32
	PathBandwidth config.Bandwidth `render:",omitzero"` // 0 = not set
	Line          int              // line of the list item in the config file
}

// Auth is isis.authentication: the keys of LSPs and SNPs per level
// (ISO 10589's area and domain passwords).
type Auth struct {
	Level1 *config.Auth `render:"level-1,omitzero"`
	Level2 *config.Auth `render:"level-2,omitzero"`
}

// Level is the chain of level l (1 or 2), nil when off.
func (a Auth) Level(l int) *config.Auth {
	if l == 1 {
		return a.Level1
	}
	return a.Level2
}

// authRules: RFC 5304 (HMAC-MD5) and RFC 5310 (HMAC-SHA, 16-bit key
// ids); a cleartext password fills one TLV.
var authRules = config.AuthRules{Proto: "IS-IS", MaxID: 65535, MaxClear: 254,
	Algs: map[string]bool{"clear": true, "md5": true, "hmac-sha-1": true, "hmac-sha-224": true, "hmac-sha-256": true, "hmac-sha-384": true, "hmac-sha-512": true}}

// RIBOverrides are the section's overrides of the rib section
// (config.RoutingSection).
func (c *Config) RIBOverrides() (*bool, *config.SPF) { return c.ECMPOnly, &c.SPF }

// InterfaceRefs lists the section's interfaces (config.InterfaceLister).
func (c *Config) InterfaceRefs() []config.IfaceRef {
	return config.RefsOf(c.Interfaces, func(i Interface) (string, int) { return i.Name, i.Line })
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

// Defaults is the section of a file that sets no key but the required
// areas: what parsing starts from (farelab fills it in to write a file).
func Defaults() *Config {
	return &Config{
		Level:               2,
		PathBandwidthSubTLV: 200,
		LSPLifetime:         1200 * time.Second,
		LSPRefresh:          900 * time.Second,
		LSPGenInterval:      500 * time.Millisecond,
		CSNPInterval:        10 * time.Second,
		PSNPInterval:        2 * time.Second,
		LSPPacing:           DefaultLSPPacing,
		LSPMTU:              1492,
		HelloPadding:        true,
		AttachedBit:         true,
		ReadvertiseHold:     time.Second,
		FloodingReflooders:  1,
	}
}

// DefaultLSPPacing is ISO 10589's minimumBroadcastLSPTransmissionInterval
// (33 ms, what the slowest IS on a LAN can take), used on every circuit:
// about 30 LSPs a second per interface after a burst (flood.go).
const DefaultLSPPacing = 33 * time.Millisecond

// maxLSPPacing bounds lsp-pacing: one LSP a second per interface is
// already slower than any database of interest can be flooded with.
const maxLSPPacing = time.Second

// maxDur is the longest of the 16-bit second timers (lifetimes, intervals).
const maxDur = 65535 * time.Second

func parseSection(w *config.Walker, k, v *yaml.Node) any {
	if !w.Want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return nil
	}
	is := Defaults()
	lifetimeOK, refreshOK := true, true
	ifLines, pfxLines := igp.FirstLines[string]{}, igp.FirstLines[netip.Prefix]{}
	seen := w.Mapping(v, map[string]config.Field{
		"areas":                 func(k, v *yaml.Node) { is.Areas = parseAreas(w, k, v) },
		"net":                   func(k, v *yaml.Node) { is.parseNET(w, k, v) },
		"level":                 levelField(w, &is.Level, nil),
		"path-bandwidth-subtlv": pathBandwidthSubTLV(w, &is.PathBandwidthSubTLV),
		"lsp-lifetime": func(k, v *yaml.Node) {
			is.LSPLifetime, lifetimeOK = w.Duration(k, v, 350*time.Second, maxDur)
		},
		"lsp-refresh": func(k, v *yaml.Node) {
			is.LSPRefresh, refreshOK = w.Duration(k, v, time.Second, maxDur)
		},
		"lsp-gen-interval":    w.SetDuration(&is.LSPGenInterval, 0, maxDur),
		"csnp-interval":       w.SetDuration(&is.CSNPInterval, time.Second, maxDur),
		"psnp-interval":       w.SetDuration(&is.PSNPInterval, 100*time.Millisecond, maxDur),
		"lsp-pacing":          w.SetDuration(&is.LSPPacing, 0, maxLSPPacing),
		"lsp-mtu":             config.SetInt(w, &is.LSPMTU, 512, 9000),
		"hello-padding":       w.Bool(&is.HelloPadding),
		"overload":            w.Bool(&is.Overload),
		"flooding-reduction":  w.Bool(&is.FloodingReduction),
		"flooding-reflooders": config.SetInt(w, &is.FloodingReflooders, 1, 8),
		"multi-topology":      w.Bool(&is.MultiTopology),
		"ecmp-only":           w.BoolPtr(&is.ECMPOnly),
		"attached-bit":        w.Bool(&is.AttachedBit),
		"readvertise-hold":    w.SetDuration(&is.ReadvertiseHold, 0, time.Hour),
		"leak-l2-to-l1":       func(k, v *yaml.Node) { is.LeakL2ToL1 = parseLeak(w, k, v) },
		"spf":                 w.SPF(&is.SPF),
		"authentication":      levelAuth(w, &is.Authentication),
		"bfd":                 w.BFD(&is.BFD),
		"interfaces": w.List(func(v *yaml.Node) {
			it := parseIface(w, v)
			if it.Name != "" {
				ifLines.Add(w, v, it.Name, it.Line, fmt.Sprintf("interface %q", it.Name))
			}
			is.Interfaces = append(is.Interfaces, it)
		}),
		"prefixes": w.List(func(v *yaml.Node) {
			pf := parsePrefix(w, v)
			if pf.Prefix.IsValid() {
				pfxLines.Add(w, v, pf.Prefix, pf.Line, "prefix "+pf.Prefix.String())
			}
			is.Prefixes = append(is.Prefixes, pf)
		}),
	})
	switch {
	case seen["areas"] == nil && seen["net"] == nil:
		w.Errf(k, "%s: missing required key \"areas\" (or an FRR-style \"net\")", k.Value)
	case seen["areas"] != nil && seen["net"] != nil:
		w.Errf(seen["net"], "net: give either areas (with the top-level system-id) or net, not both")
	}
	is.checkLevels(w)
	if lifetimeOK && refreshOK && is.LSPRefresh >= is.LSPLifetime-60*time.Second {
		at := seen["lsp-refresh"]
		if at == nil {
			at = seen["lsp-lifetime"]
		}
		w.Errf(at, "lsp-refresh %s must be less than lsp-lifetime - 60s = %s",
			config.FormatDuration(is.LSPRefresh), config.FormatDuration(is.LSPLifetime-60*time.Second))
	}
	return is
}

// checkSection runs once the whole file is read: a NET's system id against the
// top-level system-id (it sets it when the file gives none), and the BFD
// settings in force from the top-level bfd defaults.
func checkSection(w *config.Walker, c *config.Config, section any) {
	is := section.(*Config)
	if is.netSystemID != nil {
		if w.TopLevel("system-id") != nil && c.SystemID != *is.netSystemID {
			w.Errf(is.netNode, "net: system id %s differs from the top-level system-id %s", config.SystemIDString(*is.netSystemID), config.SystemIDString(c.SystemID))
		} else {
			c.SystemID = *is.netSystemID
		}
		is.netSystemID, is.netNode = nil, nil
	}
	igp.ResolveBFD(w, &is.BFD, is.Interfaces, func(i *Interface) **config.BFD { return &i.BFD })
}

// parseAreas reads areas: 1..3 area addresses of dotted hex.
func parseAreas(w *config.Walker, k, v *yaml.Node) [][]byte {
	if !w.Want(k, v, "a list", v.Kind == yaml.SequenceNode) {
		return nil
	}
	if n := len(v.Content); n < 1 || n > 3 {
		w.Errf(v, "%s: need 1..3 area addresses, got %d", k.Value, n)
	}
	var areas [][]byte
	for _, it := range v.Content {
		s, ok := w.Text(k, config.Deref(it))
		if !ok {
			continue
		}
		a, err := ParseAreaAddress(s)
		if err != nil {
			w.Errf(it, "%s: %v", k.Value, err)
			continue
		}
		for _, b := range areas {
			if string(b) == string(a) {
				w.Errf(it, "%s: duplicate area address %q", k.Value, s)
			}
		}
		areas = append(areas, a)
	}
	return areas
}

// ParseAreaAddress parses an area address: 1..13 bytes of dotted hex.
func ParseAreaAddress(s string) ([]byte, error) {
	a, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
	if err != nil || len(a) < 1 || len(a) > 13 {
		return nil, fmt.Errorf("invalid area address %q (want 1..13 bytes of dotted hex, e.g. 49.0001)", s)
	}
	return a, nil
}

// ParseLevel parses a level: 1, 2 or 1-2 (3).
func ParseLevel(s string) (int, bool) {
	l, ok := map[string]int{"1": 1, "2": 2, "1-2": 3}[s]
	return l, ok
}

// parseNET reads FRR's habit: one or more Network Entity Titles, area +
// system id + NSEL 00, instead of areas and system-id. The system id is
// applied to the top level by check.
func (is *Config) parseNET(w *config.Walker, k, v *yaml.Node) {
	var nets []string
	var nodes []*yaml.Node
	if v.Kind == yaml.SequenceNode {
		nets, nodes = w.Strings(k, v)
	} else if s, ok := w.Text(k, v); ok {
		nets, nodes = []string{s}, []*yaml.Node{v}
	}
	if n := len(nets); n < 1 || n > 3 {
		w.Errf(v, "%s: need 1..3 NETs, got %d", k.Value, n)
	}
	for i, s := range nets {
		b, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
		if err != nil || len(b) < 8 || len(b) > 20 || b[len(b)-1] != 0 {
			w.Errf(nodes[i], "%s: invalid NET %q (want area.system-id.00, e.g. 49.0001.0000.0000.0001.00)", k.Value, s)
			continue
		}
		area, sys := b[:len(b)-7], [6]byte(b[len(b)-7:len(b)-1])
		if is.netSystemID != nil && *is.netSystemID != sys {
			w.Errf(nodes[i], "%s: NET %q has another system id than the first NET", k.Value, s)
			continue
		}
		is.netSystemID, is.netNode = &sys, nodes[i]
		is.Areas = append(is.Areas, area)
	}
}

// levelField reads a level: 1, 2 or 1-2 (stored as 3); at, when set,
// keeps the value's node for later checks.
func levelField(w *config.Walker, dst *int, at **yaml.Node) config.Field {
	return func(k, v *yaml.Node) {
		if s, ok := w.Text(k, v); ok {
			l, ok := ParseLevel(s)
			if !ok {
				w.Errf(v, "%s: must be 1, 2 or 1-2, got %q", k.Value, s)
			}
			*dst = l
			if at != nil {
				*at = v
			}
		}
	}
}

// pathBandwidthSubTLV reads the FARE sub-TLV codepoint, refusing assigned
// ones.
func pathBandwidthSubTLV(w *config.Walker, dst *uint8) config.Field {
	return func(k, v *yaml.Node) {
		n, ok := w.Integer(k, v, 1, 255)
		if !ok {
			return
		}
		if name, taken := assignedPrefixSubTLVs[n]; taken {
			w.Errf(v, "%s: codepoint %d is assigned (%s)", k.Value, n, name)
			return
		}
		*dst = uint8(n)
	}
}

// parseLeak reads leak-l2-to-l1: a list of prefixes.
func parseLeak(w *config.Walker, k, v *yaml.Node) []netip.Prefix {
	if !w.Want(k, v, "a list of prefixes", v.Kind == yaml.SequenceNode) {
		return nil
	}
	var out []netip.Prefix
	for _, it := range v.Content {
		s, ok := w.Text(k, config.Deref(it))
		if !ok {
			continue
		}
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			w.Errf(it, "%s: invalid prefix %q", k.Value, s)
			continue
		}
		out = append(out, pf.Masked())
	}
	return out
}

// levelAuth reads authentication: a key chain per level.
func levelAuth(w *config.Walker, dst *Auth) config.Field {
	return func(k, v *yaml.Node) {
		if !w.Want(k, v, "a mapping of level-1 and level-2", v.Kind == yaml.MappingNode) {
			return
		}
		w.Mapping(v, map[string]config.Field{
			"level-1": w.Auth(authRules, &dst.Level1),
			"level-2": w.Auth(authRules, &dst.Level2),
		})
	}
}

// checkLevels gives each interface the instance's level unless it names
// its own, which must be one the instance runs.
func (is *Config) checkLevels(w *config.Walker) {
	for i := range is.Interfaces {
		it := &is.Interfaces[i]
		switch {
		case it.Level == 0:
			it.Level = is.Level
		case it.Level&^is.Level != 0:
			w.Errf(it.levelNode, "interface %s: level %s is not run by this instance (level %s)", it.Name, config.LevelName(it.Level), config.LevelName(is.Level))
		}
		it.levelNode = nil
	}
}

// DefaultInterface is an interface entry that sets nothing but its name.
func DefaultInterface() Interface {
	return Interface{Type: "lan", Metric: 10, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64}
}

// durationPtr sets *dst to a duration within lo..hi: an override whose
// absence (nil) means "inherit".
func durationPtr(w *config.Walker, dst **time.Duration, lo, hi time.Duration) config.Field {
	return func(k, v *yaml.Node) {
		if d, ok := w.Duration(k, v, lo, hi); ok {
			*dst = &d
		}
	}
}

func parseIface(w *config.Walker, v *yaml.Node) Interface {
	it := DefaultInterface()
	it.Line = v.Line
	helloOK := true
	seen := w.Mapping(v, map[string]config.Field{
		"name":      w.Str(&it.Name, igp.IfaceName),
		"type":      w.Str(&it.Type, igp.OneOf("p2p", "lan")),
		"metric":    config.SetInt(w, &it.Metric, 1, 0xFFFFFE),
		"bandwidth": w.Bandwidth(&it.Bandwidth),
		"passive":   w.Bool(&it.Passive),
		"hello-interval": func(k, v *yaml.Node) {
			var ok bool
			it.HelloInterval, ok = w.Duration(k, v, 100*time.Millisecond, maxDur)
			helloOK = helloOK && ok
		},
		"hello-multiplier": func(k, v *yaml.Node) {
			n, ok := w.Integer(k, v, 2, 100)
			it.HelloMultiplier, helloOK = int(n), helloOK && ok
		},
		"priority":       config.SetInt(w, &it.Priority, 0, 127),
		"lsp-pacing":     durationPtr(w, &it.LSPPacing, 0, maxLSPPacing),
		"authentication": w.Auth(authRules, &it.Authentication),
		"bfd":            w.BFD(&it.BFD),
		"level":          levelField(w, &it.Level, &it.levelNode),
	})
	if seen["name"] == nil {
		w.Errf(v, "missing required key \"name\"")
	}
	// The hold time goes on the wire as whole seconds, 1..65535.
	if hold := it.HelloInterval * time.Duration(it.HelloMultiplier); helloOK && (hold < time.Second || hold > maxDur) {
		w.Errf(v, "interface %s: hold time hello-interval * hello-multiplier = %s, must be 1s..65535s", it.Name, config.FormatDuration(hold))
	}
	return it
}

func parsePrefix(w *config.Walker, v *yaml.Node) Prefix {
	pf := Prefix{Line: v.Line}
	seen := w.Mapping(v, map[string]config.Field{
		"prefix":         igp.PrefixField(w, &pf.Prefix, nil),
		"metric":         config.SetInt(w, &pf.Metric, 0, 0xFE000000),
		"path-bandwidth": w.Bandwidth(&pf.PathBandwidth),
	})
	if seen["prefix"] == nil {
		w.Errf(v, "missing required key \"prefix\"")
	}
	return pf
}
