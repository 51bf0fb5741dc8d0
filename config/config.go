// Package config loads and validates fared's YAML configuration file.
// The schema is documented in docs/config.md.
//
// Parsing walks the yaml.Node tree rather than decoding into structs, so
// that every problem (unknown key, wrong type, bad value) is reported at
// its own line, and all problems are reported at once.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DefaultSocket is the control API socket used when the file sets none.
const DefaultSocket = "/run/fared/fared.sock"

// Duration is how durations are represented: YAML "1s", "500ms" or an
// integer number of seconds.
type Duration = time.Duration

// Config is a validated fared configuration.
type Config struct {
	File     string // path the config was read from
	Hostname string
	RouterID netip.Addr // IPv4
	SystemID [6]byte
	LogLevel slog.Level
	Socket   string
	ISIS     *ISIS // nil when there is no isis section
	OSPF     *OSPF // nil when there is no ospf section (config/ospf.go)
	FIB      FIB
}

// FIB is the fib section: how computed routes reach the kernel.
type FIB struct {
	Enabled    bool   // default true; false computes routes without installing them
	Metric     uint32 // kernel route priority, default 20
	OnShutdown string // "keep" (default: forwarding survives a restart) or "flush"
	Resilient  *Resilient
}

// Resilient selects resilient nexthop groups (fib.resilient).
type Resilient struct {
	Buckets         uint16
	IdleTimer       time.Duration
	UnbalancedTimer time.Duration
}

// SPF holds the RFC 8405 SPF back-off timers (isis.spf).
type SPF struct {
	InitialDelay, ShortDelay, LongDelay, TimeToLearn, Holddown time.Duration
}

// ISIS is the isis section.
type ISIS struct {
	Areas               [][]byte
	Level               int   // 1, 2, or 3 meaning 1-2
	PathBandwidthSubTLV uint8 // codepoint of the FARE Path Bandwidth prefix sub-TLV

	LSPLifetime    time.Duration
	LSPRefresh     time.Duration
	LSPGenInterval time.Duration
	CSNPInterval   time.Duration
	PSNPInterval   time.Duration

	LSPMTU       int
	HelloPadding bool
	Overload     bool
	// ECMPOnly turns FARE weights off: equal-cost paths get equal weights.
	ECMPOnly bool
	SPF      SPF

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

	Interfaces []Interface
	Prefixes   []Prefix
}

// Interface is one entry of isis.interfaces.
type Interface struct {
	Name            string
	Type            string // "p2p" or "lan"
	Metric          uint32
	Bandwidth       Bandwidth // 0 = not set: use the interface speed
	Passive         bool
	HelloInterval   time.Duration
	HelloMultiplier int
	Priority        uint8
	// Level is the circuit type: the levels run on this interface (1, 2,
	// 3 = 1-2); default the instance's level. Always a subset of it.
	Level int
	Line  int // line of the list item in the config file

	levelNode *yaml.Node
}

// Prefix is one entry of isis.prefixes.
type Prefix struct {
	Prefix        netip.Prefix // canonical (host bits zero)
	Metric        uint32
	PathBandwidth Bandwidth // 0 = not set
	Line          int       // line of the list item in the config file
}

// Error is one problem in a config file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Errors is returned when a file has several problems, in line order.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Bandwidth is in bits per second.
type Bandwidth float64

// BytesPerSec is the bandwidth as IS-IS carries it on the wire.
func (b Bandwidth) BytesPerSec() float32 { return float32(b / 8) }

var bwUnits = []struct {
	suffix string
	mult   float64
}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}}

// String formats b like "100G", "1.5G" or "800K".
func (b Bandwidth) String() string {
	f := float64(b)
	for _, u := range bwUnits {
		if math.Abs(f) >= u.mult && !math.IsInf(f, 0) {
			return strconv.FormatFloat(f/u.mult, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// ParseBandwidth parses bits per second: a number with an optional K, M, G
// or T suffix (powers of 10, either case), e.g. "100G", "1.5G", "800K".
// The result is > 0 and fits a float32 in bytes per second.
func ParseBandwidth(s string) (Bandwidth, error) {
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range bwUnits {
		if strings.HasSuffix(strings.ToUpper(num), u.suffix) {
			num, mult = strings.TrimSpace(num[:len(num)-1]), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("invalid bandwidth %q (want bits/s with optional K, M, G or T suffix, e.g. 100G)", s)
	}
	b := Bandwidth(f * mult)
	if !(b > 0) || b.BytesPerSec() > math.MaxFloat32 {
		return 0, fmt.Errorf("invalid bandwidth %q: must be > 0 and finite", s)
	}
	return b, nil
}

// Load reads and parses the config file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses and validates config data; file is used in error messages.
// The error is an *Error for one problem, Errors for several.
func Parse(file string, data []byte) (*Config, error) {
	p := &parser{file: file}
	c := p.config(data)
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	switch len(p.errs) {
	case 0:
		return c, nil
	case 1:
		return nil, p.errs[0]
	}
	return nil, p.errs
}

type parser struct {
	file string
	errs Errors
}

// errf records a problem at the line of n (line 1 if n has none).
func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// field handles the value v of the key k.
type field func(k, v *yaml.Node)

// mapping calls the field for each key of the mapping n, reports unknown and
// duplicate keys, and returns the key nodes seen.
func (p *parser) mapping(n *yaml.Node, fields map[string]field) map[string]*yaml.Node {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		f, ok := fields[k.Value]
		switch {
		case !ok:
			p.errf(k, "unknown key %q", k.Value)
		case seen[k.Value] != nil:
			p.errf(k, "duplicate key %q (first at line %d)", k.Value, seen[k.Value].Line)
		default:
			seen[k.Value] = k
			f(k, v)
		}
	}
	return seen
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// want reports a type error unless ok.
func (p *parser) want(k, v *yaml.Node, what string, ok bool) bool {
	if !ok {
		got := fmt.Sprintf("%q", v.Value)
		switch {
		case v.Kind == yaml.MappingNode:
			got = "a mapping"
		case v.Kind == yaml.SequenceNode:
			got = "a list"
		case v.ShortTag() == "!!null":
			got = "no value"
		}
		p.errf(v, "%s: expected %s, got %s", k.Value, what, got)
	}
	return ok
}

// text returns a scalar's text. Numbers count as text: 49.0001 is an area.
func (p *parser) text(k, v *yaml.Node) (string, bool) {
	t := v.ShortTag()
	return v.Value, p.want(k, v, "a string", v.Kind == yaml.ScalarNode && (t == "!!str" || t == "!!int" || t == "!!float"))
}

func (p *parser) integer(k, v *yaml.Node, lo, hi int64) (int64, bool) {
	n, err := strconv.ParseInt(v.Value, 0, 64)
	if !p.want(k, v, "an integer", v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" && err == nil) {
		return 0, false
	}
	if n < lo || n > hi {
		p.errf(v, "%s: %d out of range %d..%d", k.Value, n, lo, hi)
		return 0, false
	}
	return n, true
}

func setInt[T ~int | ~uint8 | ~uint16 | ~uint32](p *parser, dst *T, lo, hi int64) field {
	return func(k, v *yaml.Node) {
		if n, ok := p.integer(k, v, lo, hi); ok {
			*dst = T(n)
		}
	}
}

func (p *parser) str(dst *string, check func(string) string) field {
	return func(k, v *yaml.Node) {
		if s, ok := p.text(k, v); ok {
			if msg := check(s); msg != "" {
				p.errf(v, "%s: %s", k.Value, msg)
				return
			}
			*dst = s
		}
	}
}

func (p *parser) boolean(dst *bool) field {
	return func(k, v *yaml.Node) {
		if p.want(k, v, "true or false", v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool") {
			_ = v.Decode(dst)
		}
	}
}

func (p *parser) duration(k, v *yaml.Node, lo, hi time.Duration) (time.Duration, bool) {
	var d time.Duration
	err := errors.New("not a duration")
	switch {
	case v.Kind != yaml.ScalarNode:
	case v.ShortTag() == "!!int":
		var s int64
		if s, err = strconv.ParseInt(v.Value, 0, 64); err == nil {
			d = time.Duration(s) * time.Second
			if s > math.MaxInt64/int64(time.Second) {
				d = math.MaxInt64
			}
		}
	case v.ShortTag() == "!!str":
		d, err = time.ParseDuration(v.Value)
	}
	if !p.want(k, v, "a duration (e.g. 3s, 500ms, or integer seconds)", err == nil) {
		return 0, false
	}
	if d < lo || d > hi {
		p.errf(v, "%s: %s out of range %s..%s", k.Value, v.Value, fmtDur(lo), fmtDur(hi))
		return 0, false
	}
	return d, true
}

func (p *parser) setDur(dst *time.Duration, lo, hi time.Duration) field {
	return func(k, v *yaml.Node) {
		if d, ok := p.duration(k, v, lo, hi); ok {
			*dst = d
		}
	}
}

func fmtDur(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

func (p *parser) bandwidth(dst *Bandwidth) field {
	return func(k, v *yaml.Node) {
		if s, ok := p.text(k, v); ok {
			b, err := ParseBandwidth(s)
			if err != nil {
				p.errf(v, "%s: %v", k.Value, err)
				return
			}
			*dst = b
		}
	}
}

// list calls item for each element of the sequence v that is a mapping.
func (p *parser) list(item func(v *yaml.Node)) field {
	return func(k, v *yaml.Node) {
		if !p.want(k, v, "a list", v.Kind == yaml.SequenceNode) {
			return
		}
		for _, it := range v.Content {
			if it = deref(it); p.want(k, it, "a mapping", it.Kind == yaml.MappingNode) {
				item(it)
			}
		}
	}
}

var yamlErrRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) config(data []byte) *Config {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		p.errs = append(p.errs, &Error{File: p.file, Line: line, Msg: "invalid YAML: " + msg})
		return nil
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Line: 1} // empty file
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = deref(doc.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		p.errf(root, "expected a mapping of keys (hostname, router-id, isis, ...) at the top level")
		return nil
	}

	c := &Config{LogLevel: slog.LevelInfo, Socket: DefaultSocket, FIB: FIB{Enabled: true, Metric: 20, OnShutdown: "keep"}}
	c.File = p.file
	sysID := false
	seen := p.mapping(root, map[string]field{
		"hostname": p.str(&c.Hostname, func(s string) string {
			if s == "" || len(s) > 255 {
				return "must be 1..255 bytes long"
			}
			return ""
		}),
		"router-id": p.routerID(&c.RouterID),
		"system-id": func(k, v *yaml.Node) {
			if s, ok := p.text(k, v); ok {
				b, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
				if err != nil || len(b) != 6 {
					p.errf(v, "%s: invalid system id %q (want 6 bytes of dotted hex, e.g. 0000.0000.0001)", k.Value, s)
					return
				}
				c.SystemID, sysID = [6]byte(b), true
			}
		},
		"log-level": func(k, v *yaml.Node) {
			if s, ok := p.text(k, v); ok {
				l, ok := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo,
					"warn": slog.LevelWarn, "error": slog.LevelError}[strings.ToLower(s)]
				if !ok {
					p.errf(v, "%s: must be debug, info, warn or error, got %q", k.Value, s)
				}
				c.LogLevel = l
			}
		},
		"socket": p.str(&c.Socket, func(s string) string {
			if s == "" {
				return "must not be empty"
			}
			return ""
		}),
		"isis": func(k, v *yaml.Node) { c.ISIS = p.isis(k, v) },
		"fib":  func(k, v *yaml.Node) { p.fib(k, v, &c.FIB) },
		"ospf": func(k, v *yaml.Node) { c.OSPF = p.ospf(k, v) },
	})

	if seen["router-id"] == nil {
		p.errf(root, "missing required key \"router-id\"")
	}
	if !sysID && c.RouterID.IsValid() {
		c.SystemID = SystemIDFromRouterID(c.RouterID)
	}
	if seen["hostname"] == nil {
		h, err := os.Hostname()
		if err != nil {
			p.errf(root, "hostname not set and os.Hostname failed: %v", err)
		}
		c.Hostname = h
	}
	return c
}

// SystemIDFromRouterID derives a system id from an IPv4 router id, RFC
// 1195-style: each octet as 3 decimal digits, the 12 digits read as BCD
// (10.255.0.1 -> 010255000001 -> 0102.5500.0001).
func SystemIDFromRouterID(a netip.Addr) [6]byte {
	o := a.As4()
	b, _ := hex.DecodeString(fmt.Sprintf("%03d%03d%03d%03d", o[0], o[1], o[2], o[3]))
	return [6]byte(b)
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

func (p *parser) isis(k, v *yaml.Node) *ISIS {
	if !p.want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
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
	seen := p.mapping(v, map[string]field{
		"areas": func(k, v *yaml.Node) {
			if !p.want(k, v, "a list", v.Kind == yaml.SequenceNode) {
				return
			}
			if n := len(v.Content); n < 1 || n > 3 {
				p.errf(v, "%s: need 1..3 area addresses, got %d", k.Value, n)
			}
			for _, it := range v.Content {
				s, ok := p.text(k, deref(it))
				if !ok {
					continue
				}
				a, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
				if err != nil || len(a) < 1 || len(a) > 13 {
					p.errf(it, "%s: invalid area address %q (want 1..13 bytes of dotted hex, e.g. 49.0001)", k.Value, s)
					continue
				}
				for _, b := range is.Areas {
					if string(b) == string(a) {
						p.errf(it, "%s: duplicate area address %q", k.Value, s)
					}
				}
				is.Areas = append(is.Areas, a)
			}
		},
		"level": func(k, v *yaml.Node) {
			if s, ok := p.text(k, v); ok {
				l, ok := map[string]int{"1": 1, "2": 2, "1-2": 3}[s]
				if !ok {
					p.errf(v, "%s: must be 1, 2 or 1-2, got %q", k.Value, s)
				}
				is.Level = l
			}
		},
		"path-bandwidth-subtlv": func(k, v *yaml.Node) {
			n, ok := p.integer(k, v, 1, 255)
			if !ok {
				return
			}
			if name, taken := assignedPrefixSubTLVs[n]; taken {
				p.errf(v, "%s: codepoint %d is assigned (%s)", k.Value, n, name)
				return
			}
			is.PathBandwidthSubTLV = uint8(n)
		},
		"lsp-lifetime": func(k, v *yaml.Node) {
			is.LSPLifetime, lifetimeOK = p.duration(k, v, 350*time.Second, maxDur)
		},
		"lsp-refresh": func(k, v *yaml.Node) {
			is.LSPRefresh, refreshOK = p.duration(k, v, time.Second, maxDur)
		},
		"lsp-gen-interval": p.setDur(&is.LSPGenInterval, 0, maxDur),
		"csnp-interval":    p.setDur(&is.CSNPInterval, time.Second, maxDur),
		"psnp-interval":    p.setDur(&is.PSNPInterval, 100*time.Millisecond, maxDur),
		"lsp-mtu":          setInt(p, &is.LSPMTU, 512, 9000),
		"hello-padding":    p.boolean(&is.HelloPadding),
		"overload":         p.boolean(&is.Overload),
		"ecmp-only":        p.boolean(&is.ECMPOnly),
		"attached-bit":     p.boolean(&is.AttachedBit),
		"readvertise-hold": p.setDur(&is.ReadvertiseHold, 0, time.Hour),
		"leak-l2-to-l1": func(k, v *yaml.Node) {
			if !p.want(k, v, "a list of prefixes", v.Kind == yaml.SequenceNode) {
				return
			}
			for _, it := range v.Content {
				s, ok := p.text(k, deref(it))
				if !ok {
					continue
				}
				pf, err := netip.ParsePrefix(s)
				if err != nil {
					p.errf(it, "%s: invalid prefix %q", k.Value, s)
					continue
				}
				is.LeakL2ToL1 = append(is.LeakL2ToL1, pf.Masked())
			}
		},
		"spf": p.spf(&is.SPF),
		"interfaces": p.list(func(v *yaml.Node) {
			it := p.iface(v)
			if first, dup := ifLines[it.Name]; dup && it.Name != "" {
				p.errf(v, "duplicate interface %q (first at line %d)", it.Name, first)
			} else {
				ifLines[it.Name] = it.Line
			}
			is.Interfaces = append(is.Interfaces, it)
		}),
		"prefixes": p.list(func(v *yaml.Node) {
			pf := p.prefix(v)
			if first, dup := pfxLines[pf.Prefix]; dup && pf.Prefix.IsValid() {
				p.errf(v, "duplicate prefix %s (first at line %d)", pf.Prefix, first)
			} else {
				pfxLines[pf.Prefix] = pf.Line
			}
			is.Prefixes = append(is.Prefixes, pf)
		}),
	})
	if seen["areas"] == nil {
		p.errf(k, "%s: missing required key \"areas\"", k.Value)
	}
	for i := range is.Interfaces {
		it := &is.Interfaces[i]
		switch {
		case it.Level == 0:
			it.Level = is.Level
		case it.Level&^is.Level != 0:
			p.errf(it.levelNode, "interface %s: level %s is not run by this instance (level %s)", it.Name, levelName(it.Level), levelName(is.Level))
		}
		it.levelNode = nil
	}
	if lifetimeOK && refreshOK && is.LSPRefresh >= is.LSPLifetime-60*time.Second {
		at := seen["lsp-refresh"]
		if at == nil {
			at = seen["lsp-lifetime"]
		}
		p.errf(at, "lsp-refresh %s must be less than lsp-lifetime - 60s = %s",
			fmtDur(is.LSPRefresh), fmtDur(is.LSPLifetime-60*time.Second))
	}
	return is
}

func (p *parser) iface(v *yaml.Node) Interface {
	it := Interface{Type: "lan", Metric: 10, HelloInterval: 3 * time.Second, HelloMultiplier: 3, Priority: 64, Line: v.Line}
	helloOK := true
	seen := p.mapping(v, map[string]field{
		"name": p.str(&it.Name, func(s string) string {
			if s == "" || len(s) > 15 || strings.ContainsAny(s, "/ \t") {
				return fmt.Sprintf("invalid interface name %q", s)
			}
			return ""
		}),
		"type": p.str(&it.Type, func(s string) string {
			if s != "p2p" && s != "lan" {
				return fmt.Sprintf("must be p2p or lan, got %q", s)
			}
			return ""
		}),
		"metric":    setInt(p, &it.Metric, 1, 0xFFFFFE),
		"bandwidth": p.bandwidth(&it.Bandwidth),
		"passive":   p.boolean(&it.Passive),
		"hello-interval": func(k, v *yaml.Node) {
			var ok bool
			it.HelloInterval, ok = p.duration(k, v, 100*time.Millisecond, 65535*time.Second)
			helloOK = helloOK && ok
		},
		"hello-multiplier": func(k, v *yaml.Node) {
			n, ok := p.integer(k, v, 2, 100)
			it.HelloMultiplier, helloOK = int(n), helloOK && ok
		},
		"priority": setInt(p, &it.Priority, 0, 127),
		"level": func(k, v *yaml.Node) {
			if s, ok := p.text(k, v); ok {
				l, ok := map[string]int{"1": 1, "2": 2, "1-2": 3}[s]
				if !ok {
					p.errf(v, "%s: must be 1, 2 or 1-2, got %q", k.Value, s)
				}
				it.Level = l
				it.levelNode = v
			}
		},
	})
	if seen["name"] == nil {
		p.errf(v, "missing required key \"name\"")
	}
	// The hold time goes on the wire as whole seconds, 1..65535.
	if hold := it.HelloInterval * time.Duration(it.HelloMultiplier); helloOK && (hold < time.Second || hold > 65535*time.Second) {
		p.errf(v, "interface %s: hold time hello-interval * hello-multiplier = %s, must be 1s..65535s", it.Name, fmtDur(hold))
	}
	return it
}

func (p *parser) prefix(v *yaml.Node) Prefix {
	pf := Prefix{Line: v.Line}
	seen := p.mapping(v, map[string]field{
		"prefix": func(k, v *yaml.Node) {
			s, ok := p.text(k, v)
			if !ok {
				return
			}
			pp, err := netip.ParsePrefix(s)
			switch {
			case err != nil:
				p.errf(v, "%s: invalid prefix %q", k.Value, s)
			case pp != pp.Masked():
				p.errf(v, "%s: host bits set, did you mean %s", k.Value, pp.Masked())
			default:
				pf.Prefix = pp
			}
		},
		"metric":         setInt(p, &pf.Metric, 0, 0xFE000000),
		"path-bandwidth": p.bandwidth(&pf.PathBandwidth),
	})
	if seen["prefix"] == nil {
		p.errf(v, "missing required key \"prefix\"")
	}
	return pf
}

func (p *parser) fib(k, v *yaml.Node, f *FIB) {
	if !p.want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
		return
	}
	p.mapping(v, map[string]field{
		"enabled": p.boolean(&f.Enabled),
		"metric":  setInt(p, &f.Metric, 0, 1<<32-1),
		"on-shutdown": p.str(&f.OnShutdown, func(s string) string {
			if s != "keep" && s != "flush" {
				return "must be keep or flush"
			}
			return ""
		}),
		"resilient": func(k, v *yaml.Node) {
			if !p.want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
				return
			}
			r := &Resilient{Buckets: 128, IdleTimer: 120 * time.Second}
			p.mapping(v, map[string]field{
				"buckets":          setInt(p, &r.Buckets, 1, 65535),
				"idle-timer":       p.setDur(&r.IdleTimer, 0, 65535*time.Second),
				"unbalanced-timer": p.setDur(&r.UnbalancedTimer, 0, 65535*time.Second),
			})
			f.Resilient = r
		},
	})
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

// spf parses an spf: section (RFC 8405 timers), shared by isis and ospf.
func (p *parser) spf(t *SPF) field {
	return func(k, v *yaml.Node) {
		if !p.want(k, v, "a mapping", v.Kind == yaml.MappingNode) {
			return
		}
		p.mapping(v, map[string]field{
			"initial-delay": p.setDur(&t.InitialDelay, 0, time.Minute),
			"short-delay":   p.setDur(&t.ShortDelay, 0, time.Minute),
			"long-delay":    p.setDur(&t.LongDelay, 0, 10*time.Minute),
			"time-to-learn": p.setDur(&t.TimeToLearn, 0, 10*time.Minute),
			"holddown":      p.setDur(&t.Holddown, 0, 10*time.Minute),
		})
	}
}

// routerID parses a router id: an IPv4 address other than 0.0.0.0.
func (p *parser) routerID(dst *netip.Addr) field {
	return func(k, v *yaml.Node) {
		if s, ok := p.text(k, v); ok {
			a, err := netip.ParseAddr(s)
			switch {
			case err != nil || !a.Is4():
				p.errf(v, "%s: invalid IPv4 address %q", k.Value, s)
			case a.IsUnspecified():
				p.errf(v, "%s: must not be 0.0.0.0", k.Value)
			default:
				*dst = a
			}
		}
	}
}
