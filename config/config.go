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
	"net/netip"
	"os"
	"os/user"
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
	ISIS        *ISIS    // nil when there is no isis section (isis.go)
	OSPF        *OSPF    // nil when there is no ospf section (ospf.go)
	FIB         FIB      // fib.go
	RIB         RIB      // rib.go
	Metrics     *Metrics // nil when there is no metrics section (metrics.go)
	// Sections holds the sections of modules that parse their own
	// (Register), by key; a key is absent when the file has no section.
	Sections map[string]any
}

// Section is a top-level key that a module parses itself, so that adding
// a module needs no edit here. Parse gets the key and its value node and
// reports every problem through the Walker (as file:line); what it returns
// is stored in Config.Sections[Key].
type Section struct {
	Key   string
	Parse func(w *Walker, k, v *yaml.Node) any
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

var coreKeys = map[string]bool{"hostname": true, "router-id": true, "system-id": true, "log-level": true,
	"socket": true, "socket-group": true, "isis": true, "ospf": true, "fib": true, "rib": true, "metrics": true, "bfd": true}

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
		p.Errf(root, "expected a mapping of keys (hostname, router-id, isis, ...) at the top level")
		return nil
	}

	c := &Config{LogLevel: slog.LevelInfo, Socket: DefaultSocket, FIB: FIB{Enabled: true, Metric: 20, OnShutdown: "keep"}}
	c.File = p.File
	c.RIB = defaultRIB()
	sysID := false
	var topBFD *BFD
	fields := map[string]Field{
		"hostname": p.Str(&c.Hostname, func(s string) string {
			if s == "" || len(s) > 255 {
				return "must be 1..255 bytes long"
			}
			return ""
		}),
		"router-id": p.routerID(&c.RouterID),
		"system-id": func(k, v *yaml.Node) {
			if s, ok := p.Text(k, v); ok {
				b, err := hex.DecodeString(strings.ReplaceAll(s, ".", ""))
				if err != nil || len(b) != 6 {
					p.Errf(v, "%s: invalid system id %q (want 6 bytes of dotted hex, e.g. 0000.0000.0001)", k.Value, s)
					return
				}
				c.SystemID, sysID = [6]byte(b), true
			}
		},
		"log-level": func(k, v *yaml.Node) {
			if s, ok := p.Text(k, v); ok {
				l, ok := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo,
					"warn": slog.LevelWarn, "error": slog.LevelError}[strings.ToLower(s)]
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
		"isis":    func(k, v *yaml.Node) { c.ISIS = p.isis(k, v) },
		"fib":     func(k, v *yaml.Node) { p.fib(k, v, &c.FIB) },
		"ospf":    func(k, v *yaml.Node) { c.OSPF = p.ospf(k, v) },
		"rib":     func(k, v *yaml.Node) { p.rib(k, v, &c.RIB) },
		"metrics": func(k, v *yaml.Node) { c.Metrics = p.metrics(k, v) },
		"bfd":     p.bfd(&topBFD), // defaults for isis and ospf (bfd.go)
	}
	sectionsMu.RLock()
	for key, s := range sections {
		fields[key] = func(k, v *yaml.Node) {
			if c.Sections == nil {
				c.Sections = map[string]any{}
			}
			c.Sections[key] = s.Parse(p, k, v)
		}
	}
	sectionsMu.RUnlock()
	seen := p.Mapping(root, fields)
	resolveBFD(c, topBFD)

	p.checkSPF(c)
	if seen["router-id"] == nil {
		p.Errf(root, "missing required key \"router-id\"")
	}
	if c.ISIS != nil && c.ISIS.netSystemID != nil {
		switch {
		case sysID && c.SystemID != *c.ISIS.netSystemID:
			p.Errf(c.ISIS.netNode, "net: system id %s differs from the top-level system-id %s", systemIDString(*c.ISIS.netSystemID), systemIDString(c.SystemID))
		default:
			c.SystemID, sysID = *c.ISIS.netSystemID, true
		}
		c.ISIS.netSystemID, c.ISIS.netNode = nil, nil
	}
	if !sysID && c.RouterID.IsValid() {
		c.SystemID = SystemIDFromRouterID(c.RouterID)
	}
	if seen["hostname"] == nil {
		h, err := os.Hostname()
		if err != nil {
			p.Errf(root, "hostname not set and os.Hostname failed: %v", err)
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

// routerID parses a router id: an IPv4 address other than 0.0.0.0.
func (p *Walker) routerID(dst *netip.Addr) Field {
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
	Section string // isis, ospf
	Line    int
}

// InterfaceRefs lists the interfaces of the isis and ospf sections with
// their lines, so that checks against the host can point at them.
func (c *Config) InterfaceRefs() []IfaceRef {
	var out []IfaceRef
	if c.ISIS != nil {
		for _, i := range c.ISIS.Interfaces {
			out = append(out, IfaceRef{Name: i.Name, Section: "isis", Line: i.Line})
		}
	}
	if c.OSPF != nil {
		for _, i := range c.OSPF.Interfaces {
			out = append(out, IfaceRef{Name: i.Name, Section: "ospf", Line: i.Line})
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

func systemIDString(s [6]byte) string {
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
