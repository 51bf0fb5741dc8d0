// Package config loads and validates fared's YAML configuration file.
// The schema is documented in docs/config.md.
//
// Parsing walks the yaml.Node tree rather than decoding into structs, so
// that every problem (unknown key, wrong type, bad value) is reported at
// its own line, and all problems are reported at once.
package config

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"os/user"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// SocketGroup may use the control socket besides root (the socket is
	// mode 0660, this group's; "" keeps fared's own group).
	SocketGroup string
	FIB         FIB      // fib.go
	RIB         RIB      // rib.go
	Metrics     *Metrics // nil when there is no metrics section (metrics.go)
	// Sections holds the sections of the modules (the routing protocols
	// and the policy modules), which parse their own (Register), by key; a
	// key is absent when the file has no section.
	Sections map[string]any
}

// Section is a top-level key that a module parses itself, so that adding
// a module needs no edit here. Parse gets the key and its value node and
// reports every problem through the Walker (as file:line); what it returns
// is stored in Config.Sections[Key] (a nil pointer is not stored).
type Section struct {
	Key   string
	Parse func(w *Walker, k, v *yaml.Node) any
	// Check, when set, runs once the whole file is read, for a section
	// that is present: checks against the top level or other sections,
	// reported through w at the lines Parse kept, and what the section
	// takes from the rest of the file (the top-level bfd defaults,
	// w.SectionBFD). It may complete c (a section that also names the
	// system id).
	Check func(w *Walker, c *Config, section any)
	// Distance is set by a routing protocol's section: its default
	// administrative distance (rib.distance.<key> overrides it; the lower
	// wins when several protocols know a prefix). The parsed section may
	// implement RoutingSection to override the rib section.
	Distance uint8
}

var (
	sectionsMu sync.RWMutex
	sections   = map[string]Section{}
)

// Register adds a module's top-level section. Modules call it from init;
// registering a key twice, or a key the core owns, is a programming error.
func Register(s Section) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	if _, dup := sections[s.Key]; dup || coreKeys[s.Key] {
		panic("config: section " + s.Key + " registered twice")
	}
	sections[s.Key] = s
}

// coreKeys are the core's top-level keys. bfd holds the defaults of the
// core BFD service's sessions, which the protocol sections inherit
// (SectionBFD).
var coreKeys = map[string]bool{"hostname": true, "router-id": true, "system-id": true, "log-level": true,
	"socket": true, "socket-group": true, "fib": true, "rib": true, "metrics": true, "bfd": true}

// registered returns the registered sections sorted by key.
func registered() []Section {
	sectionsMu.RLock()
	defer sectionsMu.RUnlock()
	out := make([]Section, 0, len(sections))
	for _, s := range sections {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
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
	p := &Walker{File: file}
	c := p.config(data)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *Walker) config(data []byte) *Config {
	root := p.Document(data)
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.Errf(root, "expected a mapping of keys (hostname, router-id, ...) at the top level")
		return nil
	}

	c := Defaults()
	c.File = p.File
	fields := p.coreFields(c)
	for _, s := range registered() {
		fields[s.Key] = func(k, v *yaml.Node) {
			sec := s.Parse(p, k, v)
			if isNil(sec) {
				return
			}
			if c.Sections == nil {
				c.Sections = map[string]any{}
			}
			c.Sections[s.Key] = sec
		}
	}
	seen := p.Mapping(root, fields)
	p.top = seen

	if seen["router-id"] == nil {
		p.Errf(root, "missing required key \"router-id\"")
	}
	if seen["system-id"] == nil && c.RouterID.IsValid() {
		c.SystemID = SystemIDFromRouterID(c.RouterID)
	}
	if seen["hostname"] == nil {
		h, err := os.Hostname()
		if err != nil {
			p.Errf(root, "hostname not set and os.Hostname failed: %v", err)
		}
		c.Hostname = h
	}
	for _, s := range registered() {
		if sec, ok := c.Sections[s.Key]; ok && s.Check != nil {
			s.Check(p, c, sec)
		}
	}
	p.checkSPF(c)
	return c
}

// coreFields are the parsers of the core's top-level keys.
func (p *Walker) coreFields(c *Config) map[string]Field {
	return map[string]Field{
		"hostname": p.Str(&c.Hostname, func(s string) string {
			if s == "" || len(s) > 255 {
				return "must be 1..255 bytes long"
			}
			return ""
		}),
		"router-id": p.RouterID(&c.RouterID),
		"system-id": Parsed(p, &c.SystemID, ParseSystemID),
		"log-level": func(k, v *yaml.Node) {
			if s, ok := p.Text(k, v); ok {
				l, ok := ParseLogLevel(s)
				if !ok {
					p.Errf(v, "%s: must be debug, info, warn or error, got %q", k.Value, s)
				}
				c.LogLevel = l
			}
		},
		"socket": p.Str(&c.Socket, func(s string) string {
			if s == "" {
				return "must not be empty"
			}
			return ""
		}),
		"socket-group": p.Str(&c.SocketGroup, func(s string) string {
			if _, err := SocketGID(s); err != nil {
				return err.Error()
			}
			return ""
		}),
		"fib":     func(k, v *yaml.Node) { p.fib(k, v, &c.FIB) },
		"rib":     func(k, v *yaml.Node) { p.rib(k, v, &c.RIB) },
		"metrics": func(k, v *yaml.Node) { c.Metrics = p.metrics(k, v) },
		"bfd":     p.BFD(&p.bfdTop), // defaults for the sections' sessions (bfd.go)
	}
}

// Defaults is the configuration of a file that sets no key: what Parse
// starts from (a program that writes a config file, farelab, fills it in
// and calls Render).
func Defaults() *Config {
	return &Config{LogLevel: slog.LevelInfo, Socket: DefaultSocket, FIB: FIB{Enabled: true, Metric: 20, OnShutdown: "keep"}, RIB: defaultRIB()}
}

// ParseSystemID parses a system id: 6 bytes of dotted hex.
func ParseSystemID(s string) ([6]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
	if err != nil || len(b) != 6 {
		return [6]byte{}, fmt.Errorf("invalid system id %q (want 6 bytes of dotted hex, e.g. 0000.0000.0001)", s)
	}
	return [6]byte(b), nil
}

// ParseLogLevel parses a log-level: debug, info, warn or error, any case
// (info and false when it is none of them).
func ParseLogLevel(s string) (slog.Level, bool) {
	l, ok := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warn": slog.LevelWarn, "error": slog.LevelError}[strings.ToLower(s)]
	return l, ok
}

// TopLevel returns the key node of a top-level key the file sets, nil when
// it sets none (for a Section's Check: was system-id given?).
func (p *Walker) TopLevel(key string) *yaml.Node { return p.top[key] }

// isNil: a section parser that gave up returns a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// SystemIDFromRouterID derives a system id from an IPv4 router id, RFC
// 1195-style: each octet as 3 decimal digits, the 12 digits read as BCD
// (10.255.0.1 -> 010255000001 -> 0102.5500.0001).
func SystemIDFromRouterID(a netip.Addr) [6]byte {
	o := a.As4()
	b, _ := hex.DecodeString(fmt.Sprintf("%03d%03d%03d%03d", o[0], o[1], o[2], o[3]))
	return [6]byte(b)
}

// RouterID parses a router id: an IPv4 address other than 0.0.0.0.
func (p *Walker) RouterID(dst *netip.Addr) Field {
	return func(k, v *yaml.Node) {
		if s, ok := p.Text(k, v); ok {
			a, err := netip.ParseAddr(s)
			switch {
			case err != nil || !a.Is4():
				p.Errf(v, "%s: invalid IPv4 address %q", k.Value, s)
			case a.IsUnspecified():
				p.Errf(v, "%s: must not be 0.0.0.0", k.Value)
			default:
				*dst = a
			}
		}
	}
}

// IfaceRef is an interface the config names.
type IfaceRef struct {
	Name    string
	Section string // the section's key
	Line    int
}

// InterfaceLister is implemented by a section that names interfaces (a
// routing protocol's): their names and lines (Section is filled in).
type InterfaceLister interface {
	InterfaceRefs() []IfaceRef
}

// RefsOf lists the interfaces a section's items name (for an
// InterfaceLister).
func RefsOf[T any](items []T, ref func(T) (name string, line int)) []IfaceRef {
	out := make([]IfaceRef, 0, len(items))
	for _, it := range items {
		n, l := ref(it)
		out = append(out, IfaceRef{Name: n, Line: l})
	}
	return out
}

// SectionOf returns the section key of c as its module parsed it (a *T),
// nil when c has none.
func SectionOf[T any](c *Config, key string) *T {
	s, _ := c.Sections[key].(*T)
	return s
}

// InterfaceRefs lists the interfaces the sections name, with their lines,
// so that checks against the host can point at them; by section key.
func (c *Config) InterfaceRefs() []IfaceRef {
	var out []IfaceRef
	for _, k := range slices.Sorted(maps.Keys(c.Sections)) {
		if l, ok := c.Sections[k].(InterfaceLister); ok {
			for _, r := range l.InterfaceRefs() {
				r.Section = k
				out = append(out, r)
			}
		}
	}
	return out
}

// MissingInterfaces returns a warning, as file:line, for each configured
// interface that exists says is absent. Absent interfaces are not an
// error: one may appear later (fared picks it up), but an operator who
// mistyped a name should hear of it.
func (c *Config) MissingInterfaces(exists func(name string) bool) []string {
	var out []string
	for _, r := range c.InterfaceRefs() {
		if !exists(r.Name) {
			out = append(out, fmt.Sprintf("%s:%d: warning: %s interface %q does not exist (yet) on this host", c.File, r.Line, r.Section, r.Name))
		}
	}
	return out
}

// SystemIDString formats a system id as dotted hex (0000.0000.0001).
func SystemIDString(s [6]byte) string {
	return fmt.Sprintf("%02x%02x.%02x%02x.%02x%02x", s[0], s[1], s[2], s[3], s[4], s[5])
}

// SocketGID resolves socket-group: a group name or a numeric gid; ""
// is -1 (keep fared's own group).
func SocketGID(name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, ok := err.(user.UnknownGroupError); !ok {
			return 0, fmt.Errorf("group %q: %v", name, err)
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, fmt.Errorf("no group %q on this system (groupadd it, or use a numeric gid)", name)
		}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("group %q: gid %q is not a number", name, g.Gid)
	}
	return gid, nil
}
