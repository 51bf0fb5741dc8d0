package inc

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"net/netip"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/manager"
	"github.com/fared/fared/rocev2"
)

// Config is the inc section.
//
//	inc:
//	  role: switch              # manager, switch, or both
//	  manager: 10.255.0.5:7791  # switch: the manager (both: defaults to this node)
//	  listen: 0.0.0.0:7791      # manager: gRPC address (default: 0.0.0.0:7791 with tls, else 127.0.0.1:7791)
//	  tls: {ca: ca.pem, cert: node.pem, key: node.key}  # manager: server TLS, switches' client certificates; switch: its certificate
//	  client-auth: {key-file: token.key}                # manager: clients need join tokens signed with this key
//	  max-groups: 1024          # manager: groups in total
//	  max-groups-per-token: 32  # manager: groups one join token has clients in
//	  max-group-size: 1024      # manager: ranks of one group
//	  address: 10.255.0.3       # switch: data-plane address (default: router-id)
//	  slots: 256                # switch: slots per tree it offers
//	  ranks: 64                 # switch: children per tree it offers
//	  trees: 64                 # switch: trees it takes
//	  max-payload: 4096         # switch: bytes per packet it takes
//	  ingress-check: strict     # switch: strict (a peer's packets only in by its route's interfaces) or off
//	  p-key: 0xffff             # switch: the BTH P_Key (partition) of its QPs; packets that do not match are dropped
//	  ordered: false            # manager: trees sum in rank order (bit-identical)
//	  heartbeat: 300ms          # manager: client heartbeat interval
//	  dead-after: 1500ms        # manager: a silent client is dead after this
//	  timeout-reports: 3        # manager: reports on a tree before it is rebuilt without its root
type Config struct {
	Role           string
	Manager        string
	Listen         string
	Address        netip.Addr
	Slots          int
	Ranks          int
	Trees          int
	MaxPayload     int
	Ordered        bool
	Heartbeat      time.Duration
	DeadAfter      time.Duration
	TimeoutReports int
	// IngressCheck is the switch's strict RPF check of tree peers'
	// packets: "strict" (default) or "off" (hosts whose packets may come
	// in on another link than their route leaves by: docs/inc.md).
	IngressCheck string
	// PKey is the BTH P_Key of the switch's QPs: what its packets carry
	// and what received ones must match (IBTA's P_Key matching;
	// default 0xFFFF, the default partition as a full member).
	PKey uint16
	// Control-plane trust (docs/inc.md).
	TLS               *TLSFiles   // nil: no TLS (a manager then listens on loopback only)
	ClientAuth        *ClientAuth // nil: clients need no token (only without tls)
	MaxGroups         int
	MaxGroupsPerToken int
	MaxGroupSize      int
}

// TLSFiles is the tls: subsection. The files are read when the config is
// parsed (at start and at every reload), so a reload after replacing
// them rotates the certificates: new connections use the new ones.
type TLSFiles struct {
	CA, Cert, Key string
	// Sum changes when a file's content does (reload reports show it).
	Sum      string
	material *auth.Material
}

// ClientAuth is the client-auth: subsection: the key(s) join tokens are
// signed with, read like the TLS files.
type ClientAuth struct {
	KeyFile string
	Keys    int    // how many keys the file holds (the first mints)
	Sum     string // changes when the file does
	keys    [][]byte
}

// Roles.
const (
	RoleManager = "manager"
	RoleSwitch  = "switch"
	RoleBoth    = "both"
)

// Ingress check modes.
const (
	IngressStrict = "strict"
	IngressOff    = "off"
)

// DefaultPort is the manager's gRPC port.
const DefaultPort = 7791

func (c *Config) isManager() bool { return c.Role == RoleManager || c.Role == RoleBoth }
func (c *Config) isSwitch() bool  { return c.Role == RoleSwitch || c.Role == RoleBoth }

func init() {
	config.Register(config.Section{Key: "inc", Parse: parse})
}

func parse(w *config.Walker, k, v *yaml.Node) any {
	d := manager.DefaultConfig
	c := &Config{Slots: 256, Ranks: 64, Trees: 64, MaxPayload: 4096, Heartbeat: 300 * time.Millisecond,
		DeadAfter: 1500 * time.Millisecond, TimeoutReports: 3, IngressCheck: IngressStrict, PKey: rocev2.DefaultPKey,
		MaxGroups: d.MaxGroups, MaxGroupsPerToken: d.MaxGroupsPerToken, MaxGroupSize: d.MaxGroupSize}
	if !w.IsMapping(k, v) {
		return c
	}
	var addr string
	seen := w.Mapping(v, map[string]config.Field{
		"role":                 w.OneOf(&c.Role, RoleManager, RoleSwitch, RoleBoth),
		"manager":              w.Str(&c.Manager, checkAddrPort),
		"listen":               w.Str(&c.Listen, checkAddrPort),
		"address":              w.Str(&addr, checkIPv4),
		"slots":                config.SetInt(w, &c.Slots, 1, 65535),
		"ranks":                config.SetInt(w, &c.Ranks, 1, 65535),
		"trees":                config.SetInt(w, &c.Trees, 1, 65535),
		"max-payload":          config.SetInt(w, &c.MaxPayload, 64, 9000),
		"ordered":              w.Bool(&c.Ordered),
		"heartbeat":            w.SetDuration(&c.Heartbeat, 50*time.Millisecond, time.Minute),
		"dead-after":           w.SetDuration(&c.DeadAfter, 100*time.Millisecond, 10*time.Minute),
		"timeout-reports":      config.SetInt(w, &c.TimeoutReports, 1, 1000),
		"tls":                  func(k, v *yaml.Node) { c.TLS = parseTLS(w, k, v) },
		"client-auth":          func(k, v *yaml.Node) { c.ClientAuth = parseClientAuth(w, k, v) },
		"max-groups":           config.SetInt(w, &c.MaxGroups, 1, 65535),
		"max-groups-per-token": config.SetInt(w, &c.MaxGroupsPerToken, 1, 65535),
		"max-group-size":       config.SetInt(w, &c.MaxGroupSize, 1, manager.MaxGroupSize),
		"ingress-check":        w.OneOf(&c.IngressCheck, IngressStrict, IngressOff),
		"p-key":                func(k, v *yaml.Node) { parsePKey(w, k, v, &c.PKey) },
	})
	if addr != "" {
		c.Address, _ = netip.ParseAddr(addr)
	}
	switch {
	case seen["role"] == nil:
		w.Errf(v, "inc: role is required (manager, switch or both)")
	case c.Role == RoleSwitch && c.Manager == "":
		w.Errf(seen["role"], "inc: a switch needs manager: address:port")
	case c.Role == RoleManager && seen["manager"] != nil:
		w.Errf(seen["manager"], "inc: manager is for switches; a manager has listen")
	case c.DeadAfter <= c.Heartbeat:
		w.Errf(v, "inc: dead-after (%v) must be longer than heartbeat (%v)", c.DeadAfter, c.Heartbeat)
	}
	checkTrust(w, v, c, seen)
	return c
}

// checkTrust applies the rule that no INC service is reachable
// unauthenticated (docs/inc.md, "Control-plane trust"): a manager
// without tls listens on loopback only (its own node's switch and
// clients), one with tls authenticates clients with tokens; a switch
// reaches a remote manager only over tls.
func checkTrust(w *config.Walker, v *yaml.Node, c *Config, seen map[string]*yaml.Node) {
	if c.Listen == "" {
		c.Listen = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), DefaultPort).String()
		if c.TLS != nil {
			c.Listen = netip.AddrPortFrom(netip.IPv4Unspecified(), DefaultPort).String()
		}
	}
	if c.isManager() && c.TLS == nil && seen["listen"] != nil {
		if ap, err := netip.ParseAddrPort(c.Listen); err == nil && !ap.Addr().IsLoopback() {
			w.Errf(seen["listen"], "inc: listen %s without tls would let any host reach the manager unauthenticated: "+
				"configure tls: {ca, cert, key} and client-auth: {key-file}, or listen on 127.0.0.1 (docs/inc.md)", c.Listen)
		}
	}
	if c.isManager() && c.TLS != nil && c.ClientAuth == nil {
		w.Errf(seen["tls"], "inc: a manager with tls needs client-auth: {key-file: FILE}: without join tokens any host could join, read or dismantle any group")
	}
	if c.Role == RoleSwitch && c.TLS == nil {
		if ap, err := netip.ParseAddrPort(c.Manager); err == nil && !ap.Addr().IsLoopback() {
			w.Errf(seen["manager"], "inc: a switch reaches a remote manager over tls only: configure tls: {ca, cert, key} with this node's certificate")
		}
	}
}

// file resolves a path relative to the config file's directory.
// parsePKey takes a P_Key whose partition (low 15 bits) is not 0: 0x0000
// and 0x8000 are IBTA's invalid P_Key, which matches nothing.
func parsePKey(w *config.Walker, k, v *yaml.Node, dst *uint16) {
	n, ok := w.Integer(k, v, 1, 0xFFFF)
	switch {
	case !ok:
	case !rocev2.ValidPKey(uint16(n)):
		w.Errf(v, "%s: %#04x has partition 0, the invalid P_Key", k.Value, n)
	default:
		*dst = uint16(n)
	}
}

func file(w *config.Walker, p string) string {
	if p == "" || filepath.IsAbs(p) || w.File == "" {
		return p
	}
	return filepath.Join(filepath.Dir(w.File), p)
}

// parseTLS parses tls: {ca, cert, key} and loads the files, reporting a
// file that cannot be used at its own line.
func parseTLS(w *config.Walker, k, v *yaml.Node) *TLSFiles {
	if !w.IsMapping(k, v) {
		return nil
	}
	t := &TLSFiles{}
	seen := w.Mapping(v, map[string]config.Field{
		"ca":   w.Str(&t.CA, nil),
		"cert": w.Str(&t.Cert, nil),
		"key":  w.Str(&t.Key, nil),
	})
	for _, key := range []string{"ca", "cert", "key"} {
		if seen[key] == nil {
			w.Errf(v, "inc: tls: %s is required (a PEM file)", key)
			return nil
		}
	}
	t.CA, t.Cert, t.Key = file(w, t.CA), file(w, t.Cert), file(w, t.Key)
	if _, err := auth.LoadCA(t.CA); err != nil {
		w.Errf(seen["ca"], "ca: %v", err)
		return nil
	}
	if _, err := tls.LoadX509KeyPair(t.Cert, t.Key); err != nil {
		w.Errf(seen["cert"], "cert, key: %v", err)
		return nil
	}
	m, err := auth.Load(auth.Files{CA: t.CA, Cert: t.Cert, Key: t.Key})
	if err != nil {
		w.Errf(seen["cert"], "cert: %v", err)
		return nil
	}
	t.Sum, t.material = m.Sum, m
	return t
}

// parseClientAuth parses client-auth: {key-file} and loads the keys.
func parseClientAuth(w *config.Walker, k, v *yaml.Node) *ClientAuth {
	if !w.IsMapping(k, v) {
		return nil
	}
	a := &ClientAuth{}
	seen := w.Mapping(v, map[string]config.Field{"key-file": w.Str(&a.KeyFile, nil)})
	if seen["key-file"] == nil {
		w.Errf(v, "inc: client-auth: key-file is required (one key per line; e.g. openssl rand -hex 32)")
		return nil
	}
	a.KeyFile = file(w, a.KeyFile)
	keys, err := auth.LoadKeys(a.KeyFile)
	if err != nil {
		w.Errf(seen["key-file"], "key-file: %v", err)
		return nil
	}
	h := sha256.New()
	for _, k := range keys {
		h.Write(k)
		h.Write([]byte{0})
	}
	a.keys, a.Keys, a.Sum = keys, len(keys), hex.EncodeToString(h.Sum(nil))[:16]
	return a
}

func checkAddrPort(s string) string {
	if _, err := netip.ParseAddrPort(s); err != nil {
		return "want address:port, e.g. 10.255.0.5:7791"
	}
	return ""
}

func checkIPv4(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return "want an IPv4 address (the INC data plane is IPv4)"
	}
	return ""
}

func sectionOf(c *config.Config) *Config {
	s, _ := c.Sections["inc"].(*Config)
	return s
}
