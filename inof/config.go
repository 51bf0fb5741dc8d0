package inof

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/inof/fabric"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/zones"
)

// Roles.
const (
	RoleSwitch    = "switch"
	RoleReflector = "reflector"
	RoleHost      = "host"
)

// Config is the inof section (docs/inof.md, "Configuration").
type Config struct {
	Role string

	// Switches and reflectors.
	ASN        uint32
	RouterID   netip.Addr // default: the top-level router-id
	Port       uint16     // BGP port, default 179
	ClusterID  netip.Addr // reflectors
	Neighbors  []Neighbor
	Hold       time.Duration // BGP hold time (keepalive hold/3)
	Connect    time.Duration // connect retry
	GR         bool
	Restart    time.Duration // graceful-restart restart time
	Deferral   time.Duration
	BFDTx      time.Duration
	BFDRx      time.Duration
	BFDMult    int
	BFDAuth    *config.Auth  // RFC 5880 §6.7 key chain of the neighbours' sessions (nil: none)
	Interfaces []string      // host-facing (switches) or switch-facing (hosts) interfaces
	LLDP       bool          // switches: learn agentless hosts from LLDP
	OUI        [3]byte       // of the iNOF LLDP TLV
	MinHold    time.Duration // switches: bounds of the hold time hosts may ask for
	MaxHold    time.Duration
	Retransmit time.Duration
	Window     int
	Tombstone  time.Duration
	MaxHosts   int
	// Host identity (switches): hosts per port, how long a departed
	// host's binding lasts (0: until released), static bindings, host keys.
	MaxHostsPerPort int
	NotifyAttempts  int
	BindingHold     time.Duration
	DualHomeWindow  time.Duration // 0: no limit (the MAC alone)
	Bindings        []Binding
	HostKeys        []HostKey
	Zones           *zones.Config // reflectors
	Filters         []Filter

	// Hosts.
	ID          string
	HostRole    l2.Role
	NQN         string
	HostHold    time.Duration
	Hook        string
	HookTimeout time.Duration
	HostMAC     net.HardwareAddr // identity MAC; nil: the first interface's
	Key         *l2.Key          // signs the host's requests

	// Stamp is when the zone configuration last changed: the config
	// file's modification time (reflectors).
	Stamp uint64
}

// Neighbor is one IBGP neighbour.
type Neighbor struct {
	Address      netip.Addr
	LocalAddress netip.Addr
	Port         uint16
	Password     string `diff:"-"`
	BFD          bool
	TTLSecurity  int // GTSM: accepted hops, 0 = off
	Passive      bool
}

// Binding is a static binding: a host id pinned to ports of this switch
// (and to a MAC).
type Binding struct {
	ID    string
	Ports []string
	MAC   net.HardwareAddr
}

// HostKey is one key of a host, on a switch.
type HostKey struct {
	ID     string // the host's id
	KeyID  uint16
	Secret string `diff:"-"`
}

// MinSecret and MaxSecret bound a host key's secret: short secrets fall
// to an offline search from one captured signed frame.
const (
	MinSecret = 16
	MaxSecret = 255
)

// Filter is one routing policy entry.
type Filter struct {
	Direction string // import or export
	Neighbors []netip.Addr
	Zones     []string
	Switches  []netip.Addr
}

func init() {
	config.Register(config.Section{Key: "inof", Parse: parse})
}

// Section returns the inof section of a config, or nil.
func Section(c *config.Config) *Config {
	s, _ := c.Sections["inof"].(*Config)
	return s
}

// defaults is the inof section before its keys are read.
func defaults() *Config {
	return &Config{ASN: 65000, Port: 179, Hold: 9 * time.Second, Connect: time.Second, GR: true,
		Restart: 10 * time.Second, Deferral: 5 * time.Second,
		BFDTx: 100 * time.Millisecond, BFDRx: 100 * time.Millisecond, BFDMult: 3,
		LLDP: true, OUI: l2.DefaultOUI, MinHold: 300 * time.Millisecond, MaxHold: 10 * time.Minute,
		Retransmit: 250 * time.Millisecond, Window: 64, Tombstone: 3 * time.Second, MaxHosts: 10000,
		MaxHostsPerPort: 4, NotifyAttempts: 6, BindingHold: 24 * time.Hour, DualHomeWindow: time.Minute,
		HostRole: l2.RoleInitiator, HostHold: 3 * time.Second, HookTimeout: 10 * time.Second}
}

// Keys of one role only: set on another, they are mistakes, reported
// where they are.
var (
	hostOnly   = []string{"id", "host-role", "nqn", "hold", "hook", "hook-timeout", "mac", "key"}
	switchOnly = []string{"asn", "router-id", "port", "cluster-id", "neighbors", "timers", "graceful-restart", "bfd",
		"lldp", "lldp-oui", "host-hold", "notify", "tombstone", "max-hosts", "max-hosts-per-port", "binding-hold", "dual-home-window",
		"bindings", "host-keys", "zones", "default-zone", "filters"}
)

func parse(w *config.Walker, k, v *yaml.Node) any {
	c := defaults()
	if !w.IsMapping(k, v) {
		return c
	}
	if st, err := os.Stat(w.File); err == nil {
		c.Stamp = uint64(st.ModTime().UnixNano())
	}
	z := &zoneKeys{user: map[string][]string{}}
	fields := c.switchFields(w, z)
	maps.Copy(fields, c.hostFields(w))
	fields["role"] = w.OneOf(&c.Role, RoleSwitch, RoleReflector, RoleHost)
	fields["interfaces"] = func(k, v *yaml.Node) {
		names, nodes := w.Strings(k, v)
		for i, n := range names {
			if !ifname(n) {
				w.Errf(nodes[i], "%s: invalid interface name %q", k.Value, n)
				continue
			}
			c.Interfaces = append(c.Interfaces, n)
		}
	}
	seen := w.Mapping(v, fields)
	if seen["role"] == nil {
		w.Errf(k, "inof: missing required key \"role\" (switch, reflector or host)")
		return c
	}
	c.check(w, k, seen, z)
	if c.Role == RoleReflector {
		c.Zones = z.build()
	}
	return c
}

// sub parses a subsection of keys into fields.
func sub(w *config.Walker, fields map[string]config.Field) config.Field {
	return func(k, v *yaml.Node) {
		if w.IsMapping(k, v) {
			w.Mapping(v, fields)
		}
	}
}

// ifname says whether n can be a Linux interface name.
func ifname(n string) bool {
	return n != "" && len(n) <= 15 && !strings.ContainsAny(n, "/ \t")
}

// switchFields are the keys of switches and reflectors.
func (c *Config) switchFields(w *config.Walker, z *zoneKeys) map[string]config.Field {
	return map[string]config.Field{
		"asn":        config.SetInt(w, &c.ASN, 1, 4294967295),
		"router-id":  addr4(w, &c.RouterID),
		"port":       config.SetInt(w, &c.Port, 1, 65535),
		"cluster-id": addr4(w, &c.ClusterID),
		"neighbors":  w.List(func(v *yaml.Node) { c.Neighbors = append(c.Neighbors, neighbor(w, v)) }),
		"timers": sub(w, map[string]config.Field{
			"hold":          w.SetDuration(&c.Hold, 3*time.Second, 65535*time.Second),
			"connect-retry": w.SetDuration(&c.Connect, time.Second, time.Hour),
		}),
		"graceful-restart": sub(w, map[string]config.Field{
			"enabled":       w.Bool(&c.GR),
			"restart-time":  w.SetDuration(&c.Restart, time.Second, 4095*time.Second),
			"deferral-time": w.SetDuration(&c.Deferral, time.Second, 4095*time.Second),
		}),
		"bfd": sub(w, map[string]config.Field{
			"min-tx":         w.SetDuration(&c.BFDTx, 10*time.Millisecond, 10*time.Second),
			"min-rx":         w.SetDuration(&c.BFDRx, 10*time.Millisecond, 10*time.Second),
			"multiplier":     config.SetInt(w, &c.BFDMult, 2, 255),
			"authentication": w.BFDAuthentication(&c.BFDAuth),
		}),
		"lldp": w.Bool(&c.LLDP),
		"lldp-oui": func(k, v *yaml.Node) {
			if s, ok := w.Text(k, v); ok {
				o, err := l2.ParseOUI(s)
				if err != nil {
					w.Errf(v, "%s: OUI %q: %v", k.Value, s, err)
				}
				c.OUI = o
			}
		},
		"host-hold": sub(w, map[string]config.Field{
			"min": w.SetDuration(&c.MinHold, 100*time.Millisecond, time.Hour),
			"max": w.SetDuration(&c.MaxHold, 100*time.Millisecond, 24*time.Hour),
		}),
		"notify": sub(w, map[string]config.Field{
			"retransmit": w.SetDuration(&c.Retransmit, 10*time.Millisecond, 10*time.Second),
			"window":     config.SetInt(w, &c.Window, 1, 4096),
			"attempts":   config.SetInt(w, &c.NotifyAttempts, 1, 20),
		}),
		"tombstone":          w.SetDuration(&c.Tombstone, 100*time.Millisecond, time.Minute),
		"max-hosts":          config.SetInt(w, &c.MaxHosts, 1, 1000000),
		"max-hosts-per-port": config.SetInt(w, &c.MaxHostsPerPort, 1, 100000),
		"binding-hold":       w.SetDuration(&c.BindingHold, 0, 8760*time.Hour),
		"dual-home-window":   w.SetDuration(&c.DualHomeWindow, 0, 24*time.Hour),
		"bindings":           w.List(func(v *yaml.Node) { c.Bindings = append(c.Bindings, binding(w, v)) }),
		"host-keys":          w.List(func(v *yaml.Node) { c.HostKeys = append(c.HostKeys, hostKey(w, v)) }),
		"zones":              z.zones(w),
		"default-zone":       z.defaultZone(w),
		"filters":            w.List(func(v *yaml.Node) { c.Filters = append(c.Filters, filter(w, v)) }),
	}
}

// hostFields are the keys of hosts.
func (c *Config) hostFields(w *config.Walker) map[string]config.Field {
	return map[string]config.Field{
		"mac": func(k, v *yaml.Node) {
			if s, ok := w.Text(k, v); ok {
				c.HostMAC = mac(w, v, k.Value, s)
			}
		},
		"key": func(k, v *yaml.Node) { c.Key = ownKey(w, k, v) },
		"id":  w.Str(&c.ID, hostIDProblem),
		"host-role": func(k, v *yaml.Node) {
			if s, ok := w.Text(k, v); ok {
				r, err := l2.ParseRole(s)
				if err != nil {
					w.Errf(v, "%s: %v", k.Value, err)
				}
				c.HostRole = r
			}
		},
		"nqn": w.Str(&c.NQN, func(s string) string {
			if len(s) > l2.MaxNQN || !strings.HasPrefix(s, "nqn.") {
				return fmt.Sprintf("want an NVMe qualified name (nqn. ..., at most %d bytes)", l2.MaxNQN)
			}
			return ""
		}),
		"hold":         w.SetDuration(&c.HostHold, 300*time.Millisecond, time.Hour),
		"hook":         w.Str(&c.Hook, nil),
		"hook-timeout": w.SetDuration(&c.HookTimeout, 100*time.Millisecond, time.Hour),
	}
}

// check checks the section as a whole: keys of another role, what a
// role needs, and neighbours, bindings and keys given twice.
func (c *Config) check(w *config.Walker, k *yaml.Node, seen map[string]*yaml.Node, z *zoneKeys) {
	wrong := hostOnly
	if c.Role == RoleHost {
		wrong = switchOnly
	}
	for _, key := range wrong {
		if n := seen[key]; n != nil {
			w.Errf(n, "inof: %s is not a setting of role %s", key, c.Role)
		}
	}
	if c.Role == RoleSwitch {
		for _, n := range []*yaml.Node{seen["cluster-id"], z.zonesAt, z.defaultAt} {
			if n != nil {
				w.Errf(n, "inof: %s is set on a reflector (switches take the zones from the reflectors)", n.Value)
			}
		}
	}
	if c.Role == RoleReflector && !c.ClusterID.IsValid() {
		w.Errf(k, "inof: a reflector needs cluster-id (the same on redundant reflectors)")
	}
	if c.Role == RoleHost && len(c.Interfaces) == 0 {
		w.Errf(k, "inof: a host needs interfaces (the ones facing its switches)")
	}
	if c.MinHold > c.MaxHold {
		w.Errf(seen["host-hold"], "inof: host-hold min %s is above max %s", c.MinHold, c.MaxHold)
	}
	checkIdentity(w, c, seen)
	seenNbr := map[netip.Addr]bool{}
	for _, n := range c.Neighbors {
		if seenNbr[n.Address] && n.Address.IsValid() {
			w.Errf(seen["neighbors"], "inof: neighbor %s twice", n.Address)
		}
		seenNbr[n.Address] = true
	}
}

// zoneKeys collects a reflector's zones and default-zone keys; build
// makes the zone table once the whole section is read.
type zoneKeys struct {
	zonesAt, defaultAt *yaml.Node // where the keys were, nil if absent
	autoAdd            bool
	defaultMembers     []string
	user               map[string][]string
	order              []string
}

func (z *zoneKeys) zones(w *config.Walker) config.Field {
	return func(k, v *yaml.Node) {
		z.zonesAt = k
		if !w.Want(k, v, "a mapping of zone name to hosts", v.Kind == yaml.MappingNode) {
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			zk, zv := v.Content[i], config.Deref(v.Content[i+1])
			if err := zones.CheckName(zk.Value); err != nil {
				w.Errf(zk, "zones: %v", err)
				continue
			}
			if zk.Value == zones.Default {
				w.Errf(zk, "zones: the default zone is configured under default-zone")
				continue
			}
			if _, dup := z.user[zk.Value]; dup {
				w.Errf(zk, "zones: zone %q twice", zk.Value)
				continue
			}
			members := []string{}
			if zv.Kind != yaml.ScalarNode || zv.ShortTag() != "!!null" {
				members = hosts(w, zk, zv, "zone "+zk.Value)
			}
			z.user[zk.Value] = members
			z.order = append(z.order, zk.Value)
		}
	}
}

func (z *zoneKeys) defaultZone(w *config.Walker) config.Field {
	return func(k, v *yaml.Node) {
		z.defaultAt = k
		sub(w, map[string]config.Field{
			"auto-add": w.Bool(&z.autoAdd),
			"members":  func(k, v *yaml.Node) { z.defaultMembers = hosts(w, k, v, "default-zone") },
		})(k, v)
	}
}

// hosts parses a list of host ids.
func hosts(w *config.Walker, k, v *yaml.Node, what string) []string {
	ms, nodes := w.Strings(k, v)
	for j, m := range ms {
		if err := zones.CheckHost(m); err != nil {
			w.Errf(nodes[j], "%s: %v", what, err)
		}
	}
	return ms
}

func (z *zoneKeys) build() *zones.Config {
	zc := zones.New(z.autoAdd)
	for _, name := range z.order {
		zc.Add(name, z.user[name]...)
	}
	if len(z.defaultMembers) > 0 {
		zc.Add(zones.Default, z.defaultMembers...)
	}
	return zc
}

func addr4(w *config.Walker, dst *netip.Addr) config.Field {
	return func(k, v *yaml.Node) {
		if s, ok := w.Text(k, v); ok {
			a, err := netip.ParseAddr(s)
			if err != nil || !a.Is4() || a.IsUnspecified() {
				w.Errf(v, "%s: want an IPv4 address other than 0.0.0.0, got %q", k.Value, s)
				return
			}
			*dst = a
		}
	}
}

func addr(w *config.Walker, dst *netip.Addr) config.Field {
	return func(k, v *yaml.Node) {
		if s, ok := w.Text(k, v); ok {
			a, err := netip.ParseAddr(s)
			if err != nil || a.IsUnspecified() || a.Zone() != "" {
				w.Errf(v, "%s: invalid address %q", k.Value, s)
				return
			}
			*dst = a
		}
	}
}

func neighbor(w *config.Walker, v *yaml.Node) Neighbor {
	n := Neighbor{BFD: true}
	seen := w.MappingIn("neighbor", v, map[string]config.Field{
		"address":       addr(w, &n.Address),
		"local-address": addr(w, &n.LocalAddress),
		"port":          config.SetInt(w, &n.Port, 1, 65535),
		"password": w.Str(&n.Password, func(s string) string {
			if len(s) > 80 {
				return "at most 80 bytes (TCP_MD5SIG_MAXKEYLEN)"
			}
			return ""
		}),
		"bfd":          w.Bool(&n.BFD),
		"ttl-security": config.SetInt(w, &n.TTLSecurity, 0, 254),
		"passive":      w.Bool(&n.Passive),
	})
	if seen["address"] == nil {
		w.Errf(v, "neighbor: missing required key \"address\"")
	}
	if n.LocalAddress.IsValid() && n.Address.IsValid() && n.LocalAddress.Is4() != n.Address.Is4() {
		w.Errf(seen["local-address"], "neighbor %s: local-address %s of another family", n.Address, n.LocalAddress)
	}
	return n
}

func filter(w *config.Walker, v *yaml.Node) Filter {
	f := Filter{}
	seen := w.MappingIn("filter", v, map[string]config.Field{
		"direction": w.OneOf(&f.Direction, "import", "export"),
		"neighbors": addrList(w, &f.Neighbors),
		"zones": func(k, v *yaml.Node) {
			zs, nodes := w.Strings(k, v)
			for i, z := range zs {
				if err := zones.CheckName(z); err != nil {
					w.Errf(nodes[i], "filter: %v", err)
				}
			}
			f.Zones = zs
		},
		"switches": addrList(w, &f.Switches),
	})
	if seen["direction"] == nil {
		w.Errf(v, "filter: missing required key \"direction\" (import or export)")
	}
	if (len(f.Zones) == 0) == (len(f.Switches) == 0) {
		w.Errf(v, "filter: set zones or switches (one of them): a filter rejects the records of those zones, or of those switches")
	}
	for _, s := range f.Switches {
		if !s.Is4() {
			w.Errf(seen["switches"], "filter: switch %s is not an IPv4 router id", s)
		}
	}
	return f
}

func addrList(w *config.Walker, dst *[]netip.Addr) config.Field {
	return func(k, v *yaml.Node) {
		ss, nodes := w.Strings(k, v)
		for i, s := range ss {
			a, err := netip.ParseAddr(s)
			if err != nil {
				w.Errf(nodes[i], "%s: invalid address %q", k.Value, s)
				continue
			}
			*dst = append(*dst, a)
		}
	}
}

func mac(w *config.Walker, v *yaml.Node, what, s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil || len(m) != 6 {
		w.Errf(v, "%s: want a MAC address like 02:00:00:00:00:01, got %q", what, s)
		return nil
	}
	return m
}

// binding parses one static binding: {id, ports, mac}.
func binding(w *config.Walker, v *yaml.Node) Binding {
	var b Binding
	seen := w.MappingIn("binding", v, map[string]config.Field{
		"id": w.Str(&b.ID, hostIDProblem),
		"ports": func(k, v *yaml.Node) {
			ps, nodes := w.Strings(k, v)
			for i, p := range ps {
				if !ifname(p) {
					w.Errf(nodes[i], "binding: invalid port name %q", p)
				}
			}
			b.Ports = ps
		},
		"mac": func(k, v *yaml.Node) {
			if s, ok := w.Text(k, v); ok {
				b.MAC = mac(w, v, "binding: mac", s)
			}
		},
	})
	if seen["id"] == nil || len(b.Ports) == 0 {
		w.Errf(v, "binding: needs id and ports (the switch ports the host may register on)")
	}
	return b
}

// hostKey parses one host key of a switch: {id, key-id, secret}.
func hostKey(w *config.Walker, v *yaml.Node) HostKey {
	var k HostKey
	seen := w.MappingIn("host key", v, map[string]config.Field{
		"id":     w.Str(&k.ID, hostIDProblem),
		"key-id": config.SetInt(w, &k.KeyID, 0, 65535),
		"secret": w.Str(&k.Secret, secretProblem),
	})
	if seen["id"] == nil || seen["key-id"] == nil || seen["secret"] == nil {
		w.Errf(v, "host key: needs id, key-id and secret")
	}
	return k
}

// ownKey parses a host's key: {id, secret}.
func ownKey(w *config.Walker, k, v *yaml.Node) *l2.Key {
	if !w.IsMapping(k, v) {
		return nil
	}
	var id uint16
	var secret string
	seen := w.Mapping(v, map[string]config.Field{
		"id":     config.SetInt(w, &id, 0, 65535),
		"secret": w.Str(&secret, secretProblem),
	})
	if seen["id"] == nil || seen["secret"] == nil {
		w.Errf(k, "key: needs id and secret")
		return nil
	}
	return &l2.Key{ID: id, Secret: []byte(secret)}
}

func hostIDProblem(s string) string {
	if err := zones.CheckHost(s); err != nil {
		return err.Error()
	}
	return ""
}

func secretProblem(s string) string {
	if len(s) < MinSecret || len(s) > MaxSecret {
		return fmt.Sprintf("%d bytes, want %d..%d (a short secret falls to a search from one captured frame)", len(s), MinSecret, MaxSecret)
	}
	return ""
}

// checkIdentity: one static binding per id, one key per (id, key id).
func checkIdentity(w *config.Walker, c *Config, seen map[string]*yaml.Node) {
	ids := map[string]bool{}
	for _, b := range c.Bindings {
		if ids[b.ID] && b.ID != "" {
			w.Errf(seen["bindings"], "inof: bindings: %s twice (list all its ports in one)", b.ID)
		}
		ids[b.ID] = true
	}
	keys := map[string]bool{}
	for _, k := range c.HostKeys {
		id := fmt.Sprint(k.ID, "/", k.KeyID)
		if keys[id] && k.ID != "" {
			w.Errf(seen["host-keys"], "inof: host-keys: %s key-id %d twice", k.ID, k.KeyID)
		}
		keys[id] = true
	}
}

// identityConfig fills the fabric's identity settings (fabric.Config
// reads a zero binding hold as its default: 0 here means "until
// released").
func (c *Config) identityConfig(fc *fabric.Config) {
	fc.MaxHostsPerPort, fc.Attempts, fc.BindingHold = c.MaxHostsPerPort, c.NotifyAttempts, c.BindingHold
	if c.BindingHold == 0 {
		fc.BindingHold = -1
	}
	fc.DualHomeWindow = c.DualHomeWindow
	if c.DualHomeWindow == 0 {
		fc.DualHomeWindow = -1
	}
	for _, b := range c.Bindings {
		fc.Static = append(fc.Static, fabric.Static{ID: b.ID, Ports: b.Ports, MAC: b.MAC})
	}
	if len(c.HostKeys) > 0 {
		fc.Keys = map[string][]l2.Key{}
		for _, k := range c.HostKeys {
			fc.Keys[k.ID] = append(fc.Keys[k.ID], l2.Key{ID: k.KeyID, Secret: []byte(k.Secret)})
		}
	}
}
