// Package zones is iNOF's zone model: the default zone every switch has
// and nobody can delete, optional auto-add of free hosts to it, and user
// zones with explicit members; how a reflector cuts its configuration
// into records, and how a switch puts the newest complete one together.
package zones

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"

	"github.com/fared/fared/inof/record"
)

// Default is the name of the default zone.
const Default = "default"

// MaxZones bounds the zones of a configuration.
const MaxZones = 4096

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckName says what is wrong with a zone name, or nil.
func CheckName(s string) error {
	if !nameRE.MatchString(s) {
		return fmt.Errorf("zone name %q: want 1..64 characters of [A-Za-z0-9._-], starting with a letter or digit", s)
	}
	return nil
}

// CheckHost says what is wrong with a host id, or nil.
func CheckHost(s string) error {
	if len(s) == 0 || len(s) > 255 {
		return fmt.Errorf("host id %q: want 1..255 bytes", s)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7F {
			return fmt.Errorf("host id %q: control character", s)
		}
	}
	return nil
}

// Config is a zone configuration. Members of the default zone are its
// explicit members; with AutoAdd every host in no user zone is in it too.
type Config struct {
	AutoAdd bool
	// Zones maps a zone name to its sorted, distinct members. The default
	// zone is always present.
	Zones map[string][]string
}

// New returns a configuration with an empty default zone.
func New(autoAdd bool) *Config {
	return &Config{AutoAdd: autoAdd, Zones: map[string][]string{Default: nil}}
}

// Clone returns a deep copy.
func (c *Config) Clone() *Config {
	n := &Config{AutoAdd: c.AutoAdd, Zones: make(map[string][]string, len(c.Zones))}
	for z, m := range c.Zones {
		n.Zones[z] = slices.Clone(m)
	}
	return n
}

// Equal reports whether two configurations are the same.
func (c *Config) Equal(o *Config) bool {
	if c.AutoAdd != o.AutoAdd || len(c.Zones) != len(o.Zones) {
		return false
	}
	for z, m := range c.Zones {
		om, ok := o.Zones[z]
		if !ok || !slices.Equal(m, om) {
			return false
		}
	}
	return true
}

// Names returns the zone names, sorted, the default zone first.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Zones))
	for z := range c.Zones {
		if z != Default {
			names = append(names, z)
		}
	}
	sort.Strings(names)
	return append([]string{Default}, names...)
}

// Add adds hosts to a zone, creating it if needed. It reports whether
// anything changed.
func (c *Config) Add(zone string, hosts ...string) (bool, error) {
	if err := CheckName(zone); err != nil {
		return false, err
	}
	for _, h := range hosts {
		if err := CheckHost(h); err != nil {
			return false, err
		}
	}
	m, exists := c.Zones[zone]
	if !exists && len(c.Zones) >= MaxZones {
		return false, fmt.Errorf("zone %s: at most %d zones", zone, MaxZones)
	}
	n := len(m)
	m = append(m, hosts...)
	sort.Strings(m)
	m = slices.Compact(m)
	c.Zones[zone] = m
	return !exists || len(m) != n, nil
}

// Remove removes hosts from a zone, or the zone itself when hosts is
// empty. The default zone cannot be removed, only emptied of explicit
// members. Removing what is not there is an error (the caller asked for
// something that does not exist).
func (c *Config) Remove(zone string, hosts ...string) error {
	m, ok := c.Zones[zone]
	if !ok {
		return fmt.Errorf("no zone %q", zone)
	}
	if len(hosts) == 0 {
		if zone == Default {
			return fmt.Errorf("the default zone cannot be deleted")
		}
		delete(c.Zones, zone)
		return nil
	}
	for _, h := range hosts {
		i, found := slices.BinarySearch(m, h)
		if !found {
			return fmt.Errorf("zone %s has no member %q", zone, h)
		}
		m = slices.Delete(m, i, i+1)
	}
	c.Zones[zone] = m
	return nil
}

// Index answers "which zones is host X in" for one configuration.
type Index struct {
	cfg    *Config
	byHost map[string][]string
}

// Index builds the membership index of c; c must not change afterwards.
func (c *Config) Index() *Index {
	ix := &Index{cfg: c, byHost: map[string][]string{}}
	for _, z := range c.Names() {
		for _, h := range c.Zones[z] {
			ix.byHost[h] = append(ix.byHost[h], z)
		}
	}
	return ix
}

// Of returns the sorted zones of host h (the default zone first when it
// is one of them). The slice is shared: do not modify it.
func (ix *Index) Of(h string) []string {
	zs := ix.byHost[h]
	if !ix.cfg.AutoAdd {
		return zs
	}
	for _, z := range zs {
		if z != Default {
			return zs // in a user zone: not free
		}
	}
	if len(zs) == 0 {
		return defaultOnly
	}
	return zs // explicitly in the default zone only
}

var defaultOnly = []string{Default}

// Share returns the zones two hosts have in common, sorted.
func (ix *Index) Share(a, b string) []string {
	za, zb := ix.Of(a), ix.Of(b)
	var out []string
	for _, z := range za {
		if slices.Contains(zb, z) {
			out = append(out, z)
		}
	}
	return out
}

// Config returns the indexed configuration.
func (ix *Index) Config() *Config { return ix.cfg }

// Records cuts c into the records a reflector originates: one zone
// record per chunk of members that fits record.MaxLen, and the manifest
// that counts them.
func (c *Config) Records(origin netip.Addr, stamp uint64) []record.Record {
	var out []record.Record
	for _, name := range c.Names() {
		z := &record.Zone{Origin: origin, Stamp: stamp, Name: name}
		size := record.Len(z)
		for _, m := range c.Zones[name] {
			add := 3 + len(m)
			if size+add > record.MaxLen && len(z.Members) > 0 {
				out = append(out, z)
				z = &record.Zone{Origin: origin, Stamp: stamp, Name: name, Chunk: z.Chunk + 1}
				size = record.Len(z)
			}
			z.Members = append(z.Members, m)
			size += add
		}
		out = append(out, z)
	}
	m := &record.Manifest{Origin: origin, Stamp: stamp, Chunks: uint32(len(out)), AutoAdd: c.AutoAdd}
	return append([]record.Record{m}, out...)
}

// Collector gathers the zone records switches receive, per originating
// reflector, and picks the configuration to use: among the complete ones
// (a manifest and exactly the chunks it counts, all of its stamp), the
// newest, ties broken by the higher origin.
type Collector struct {
	origins map[netip.Addr]*originSet
}

type originSet struct {
	manifest *record.Manifest
	chunks   map[record.Key]*record.Zone
}

// NewCollector returns an empty collector.
func NewCollector() *Collector { return &Collector{origins: map[netip.Addr]*originSet{}} }

func (c *Collector) set(o netip.Addr) *originSet {
	s := c.origins[o]
	if s == nil {
		s = &originSet{chunks: map[record.Key]*record.Zone{}}
		c.origins[o] = s
	}
	return s
}

// Put adds or replaces a manifest or zone record.
func (c *Collector) Put(r record.Record) {
	switch r := r.(type) {
	case *record.Manifest:
		c.set(r.Origin).manifest = r
	case *record.Zone:
		c.set(r.Origin).chunks[r.Key()] = r
	}
}

// Remove drops a record.
func (c *Collector) Remove(k record.Key) {
	s := c.origins[k.Origin]
	if s == nil {
		return
	}
	switch k.Kind {
	case record.KindManifest:
		s.manifest = nil
	case record.KindZone:
		delete(s.chunks, k)
	}
	if s.manifest == nil && len(s.chunks) == 0 {
		delete(c.origins, k.Origin)
	}
}

// Best returns the configuration to use and where it comes from, or
// ok false when no reflector's configuration is complete.
func (c *Collector) Best() (cfg *Config, origin netip.Addr, stamp uint64, ok bool) {
	for o, s := range c.origins {
		m := s.manifest
		if m == nil || !s.complete() {
			continue
		}
		if ok && (m.Stamp < stamp || m.Stamp == stamp && o.Less(origin)) {
			continue
		}
		origin, stamp, ok = o, m.Stamp, true
	}
	if !ok {
		return nil, origin, 0, false
	}
	s := c.origins[origin]
	cfg = &Config{AutoAdd: s.manifest.AutoAdd, Zones: map[string][]string{Default: nil}}
	chunks := slices.SortedFunc(maps.Values(s.chunks), func(a, b *record.Zone) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Chunk, b.Chunk))
	})
	for _, z := range chunks {
		cfg.Zones[z.Name] = append(cfg.Zones[z.Name], z.Members...)
	}
	for z, m := range cfg.Zones {
		sort.Strings(m)
		cfg.Zones[z] = slices.Compact(m)
	}
	return cfg, origin, stamp, true
}

func (s *originSet) complete() bool {
	if uint32(len(s.chunks)) != s.manifest.Chunks {
		return false
	}
	for _, z := range s.chunks {
		if z.Stamp != s.manifest.Stamp {
			return false
		}
	}
	return true
}
