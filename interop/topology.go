package interop

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fared/fared/config"
	"gopkg.in/yaml.v3"
)

// Name limits. Interface names must fit IFNAMSIZ-1 = 15 bytes; a p2p
// interface is named "<peer>-<k>" (k = 1..99), so node names get 11 bytes.
// Lab names only appear in namespace names and paths; 16 keeps
// "<lab>-<node>" short enough to read in `ip netns list` and in FRR socket
// paths (sun_path is 108 bytes).
const (
	MaxNodeName = 11
	MaxLabName  = 16
	// MaxNodes bounds the node count: node N gets loopback 10.255.0.N and
	// system id 0000.0000.00NN, and is host .N on every LAN.
	MaxNodes = 255
	// MaxLANs bounds LAN segments: LAN s (0-based) uses 10.253.s.0/24.
	MaxLANs = 256
	// MaxLinks bounds links: link i uses 10.254.0.0/16 + 2i as a /31.
	MaxLinks = 32768
)

// DefaultBandwidth is used for links without a bandwidth: the speed a veth
// reports (10000 Mb/s), so FRR's and fared's view of an unset link agree.
const DefaultBandwidth = 10e9

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Topology is a parsed and validated topology file.
type Topology struct {
	Name     string
	Protocol string // default protocol of nodes: "isis"
	Defaults Defaults
	Nodes    []NodeSpec // file order; node i is number i+1
	Links    []LinkSpec // file order; link i is Link(i)
	// iNOF (inof.go): zones rendered into the reflectors, shared settings.
	Zones     map[string][]string `json:",omitempty"`
	ZoneOrder []string            `json:",omitempty"`
	INOF      INOFSettings
}

// Defaults are protocol timers applied to every node and interface.
type Defaults struct {
	HelloInterval   time.Duration // default 1s (labs want fast adjacencies)
	HelloMultiplier int           // default 3
	LSPGenInterval  time.Duration // default 500ms for fared, FRR rounds up to whole seconds (min 1)
	SPFInterval     time.Duration // FRR spf-interval, default 1s
	LogLevel        string        // fared log-level, default "debug"
	// Flooding is the topology-level flooding key: "full" (default) or
	// "reduced", which turns isis flooding-reduction on for every fared
	// IS-IS node (FRR nodes keep flooding in full).
	Flooding string
}

// NodeSpec is one entry of nodes.
type NodeSpec struct {
	Name     string
	Kind     string // "frr" or "fared"
	Protocol string // "isis"
	Level    string // "1", "2" or "1-2"; default "2"
	Area     string // default "49.0001"
	Priority int    // LAN DIS priority; -1 = not set
	Prefixes []PrefixSpec
	// NoTE turns FRR's traffic engineering off (no mpls-te, no link
	// params): FRR 8.4.4's isisd crashes in its TE database when a LAN's
	// DIS changes, so tests of DIS changes run FRR without TE.
	NoTE bool
	// Auth authenticates every interface (and IS-IS level) of the node.
	Auth []AuthKey
	// BFD runs BFD on every adjacency of the node (bfd.go); nil: none.
	BFD *BFDSpec `json:",omitempty"`
	// iNOF and hosts (inof.go).
	INOF      string   `json:",omitempty"` // fared: switch or reflector; host: host
	Agent     string   `json:",omitempty"` // host: fared, lldpd or none
	HostRole  string   `json:",omitempty"` // host: initiator, target or both
	HostID    string   `json:",omitempty"` // host: iNOF id, default the node name
	NQN       string   `json:",omitempty"`
	Hook      string   `json:",omitempty"` // host: hook executable (agent fared)
	Extra     string   `json:",omitempty"` // config: further fared sections, as YAML
	ExtraKeys []string `json:",omitempty"`
}

// PrefixSpec is a prefix a node originates besides its loopback.
type PrefixSpec struct {
	Prefix        netip.Prefix
	PathBandwidth float64 // bits/s; 0 = not set
}

// LinkSpec is one entry of links: a p2p link (A, B) or a LAN (LAN, Nodes).
type LinkSpec struct {
	A, B      string
	LAN       string
	Nodes     []string
	Bandwidth float64 // bits/s
	Metric    int
	Area      string // OSPF area of the link's interfaces; default: each node's area
}

// IsLAN reports whether the link is a LAN segment.
func (l LinkSpec) IsLAN() bool { return l.LAN != "" }

// Node returns the spec of the named node, or nil.
func (t *Topology) Node(name string) *NodeSpec {
	for i := range t.Nodes {
		if t.Nodes[i].Name == name {
			return &t.Nodes[i]
		}
	}
	return nil
}

// TopologyError is one problem in a topology file: file:line (or "line
// N" for ParseTopology) and what is wrong. Topology files and fared's
// config share one YAML walker (config.Walker).
type TopologyError = config.Error

// TopologyErrors is returned when a file has several problems, in line
// order.
type TopologyErrors = config.Errors

// LoadTopology reads and validates a topology file.
func LoadTopology(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseTopology(path, data)
}

// ParseTopology parses and validates topology YAML.
func ParseTopology(data []byte) (*Topology, error) { return parseTopology("", data) }

func parseTopology(file string, data []byte) (*Topology, error) {
	p := &tparser{Walker: &config.Walker{File: file}}
	t := p.topology(data)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

type tparser struct {
	*config.Walker
}

func (p *tparser) errf(n *yaml.Node, format string, args ...any) { p.Errf(n, format, args...) }

// keys walks a mapping, reporting unknown and duplicate keys. It returns
// false if n is not a mapping.
func (p *tparser) keys(n *yaml.Node, what string, f map[string]func(k, v *yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s: expected a mapping", what)
		return false
	}
	fields := make(map[string]config.Field, len(f))
	for k, fn := range f {
		fields[k] = fn
	}
	p.MappingIn(what, n, fields)
	return true
}

func (p *tparser) scalar(what string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.errf(v, "%s: expected a value", what)
		return "", false
	}
	return v.Value, true
}

func (p *tparser) str(what string, dst *string) func(k, v *yaml.Node) {
	return func(k, v *yaml.Node) {
		if s, ok := p.scalar(what+": "+k.Value, v); ok {
			*dst = s
		}
	}
}

func (p *tparser) dur(what string, dst *time.Duration) func(k, v *yaml.Node) {
	return scalarAs(p, what, dst, func(key, s string) (time.Duration, error) {
		d, err := parseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", key, err)
		}
		return d, nil
	})
}

// scalarAs is a key handler that converts the key's value with conv into
// *dst; conv's error is reported at the value, after what.
func scalarAs[T any](p *tparser, what string, dst *T, conv func(key, s string) (T, error)) func(k, v *yaml.Node) {
	return func(k, v *yaml.Node) {
		s, ok := p.scalar(what+": "+k.Value, v)
		if !ok {
			return
		}
		x, err := conv(k.Value, s)
		if err != nil {
			p.errf(v, "%s: %v", what, err)
			return
		}
		*dst = x
	}
}

func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		s = strconv.Itoa(n) + "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("bad duration %q (want e.g. 1s or 500ms)", s)
	}
	return d, nil
}

func (p *tparser) integer(what string, lo, hi int, dst *int) func(k, v *yaml.Node) {
	return scalarAs(p, what, dst, func(key, s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%s must be an integer %d..%d, got %q", key, lo, hi, s)
		}
		return n, nil
	})
}

func (p *tparser) names(what string, v *yaml.Node) []string {
	return list(p, v, what+": expected a list of node names", func(e *yaml.Node) (string, bool) { return p.scalar(what, e) })
}

// list returns what item gives for each element of the sequence v,
// without those it refuses; v not a sequence is the error expected.
func list[T any](p *tparser, v *yaml.Node, expected string, item func(e *yaml.Node) (T, bool)) []T {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s", expected)
		return nil
	}
	var out []T
	for _, e := range v.Content {
		if x, ok := item(e); ok {
			out = append(out, x)
		}
	}
	return out
}

// ParseBandwidth parses bits per second: a number with an optional K, M, G
// or T suffix (powers of 10, either case), e.g. "100G", "2.5G", "800K".
func ParseBandwidth(s string) (float64, error) {
	num, mult := strings.TrimSpace(s), 1.0
	if num != "" {
		if m, ok := map[byte]float64{'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}[strings.ToUpper(num[len(num)-1:])[0]]; ok {
			num, mult = num[:len(num)-1], m
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) || math.IsInf(f*mult, 0) || f*mult/8 > math.MaxFloat32 {
		return 0, fmt.Errorf("bad bandwidth %q (want bits/s > 0 with optional K, M, G or T suffix, e.g. 100G)", s)
	}
	return f * mult, nil
}

// FormatBandwidth formats bits/s with the largest suffix that keeps the
// number whole where possible: 1e11 -> "100G", 2.5e9 -> "2500M".
func FormatBandwidth(bw float64) string {
	for _, u := range []struct {
		s string
		m float64
	}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if v := bw / u.m; v >= 1 && v == math.Trunc(v) {
			return strconv.FormatFloat(v, 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatFloat(bw, 'f', -1, 64)
}

func (p *tparser) bandwidth(what string, dst *float64) func(k, v *yaml.Node) {
	return scalarAs(p, what, dst, func(_, s string) (float64, error) { return ParseBandwidth(s) })
}

// checkName validates a lab, node or LAN name.
func checkName(what, s string, max int) error {
	if len(s) == 0 || len(s) > max || !nameRE.MatchString(s) {
		return fmt.Errorf("%s name %q: must be 1..%d characters of [a-z0-9-], starting with a letter", what, s, max)
	}
	return nil
}

var validLevels = map[string]bool{"1": true, "2": true, "1-2": true}

var areaRE = regexp.MustCompile(`^[0-9a-fA-F]{2}(\.[0-9a-fA-F]{4}){0,6}$`)

func (p *tparser) topology(data []byte) *Topology {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.Document(data) // records the syntax error at its line
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		p.errf(&doc, "empty topology")
		return nil
	}
	root := doc.Content[0]
	t := &Topology{Protocol: "isis", Defaults: Defaults{
		HelloInterval: time.Second, HelloMultiplier: 3,
		LSPGenInterval: 500 * time.Millisecond, SPFInterval: time.Second, LogLevel: "debug",
	}, INOF: defaultINOF()}
	var nodesNode, linksNode, zonesNode, zonesVal *yaml.Node
	nameLine := root
	if !p.keys(root, "topology", map[string]func(k, v *yaml.Node){
		"name":     func(k, v *yaml.Node) { nameLine = v; p.str("topology", &t.Name)(k, v) },
		"protocol": p.str("topology", &t.Protocol),
		"defaults": func(k, v *yaml.Node) {
			p.keys(v, "defaults", map[string]func(k, v *yaml.Node){
				"hello-interval":   p.dur("defaults", &t.Defaults.HelloInterval),
				"hello-multiplier": p.integer("defaults", 2, 100, &t.Defaults.HelloMultiplier),
				"lsp-gen-interval": p.dur("defaults", &t.Defaults.LSPGenInterval),
				"spf-interval":     p.dur("defaults", &t.Defaults.SPFInterval),
				"log-level":        p.str("defaults", &t.Defaults.LogLevel),
			})
		},
		"flooding": func(k, v *yaml.Node) {
			s, ok := p.scalar("topology: flooding", v)
			switch {
			case ok && (s == "full" || s == "reduced"):
				t.Defaults.Flooding = s
			case ok:
				p.errf(v, "flooding %q: must be full or reduced", s)
			}
		},
		"nodes": func(k, v *yaml.Node) { nodesNode = v },
		"links": func(k, v *yaml.Node) { linksNode = v },
		"zones": func(k, v *yaml.Node) { zonesNode, zonesVal = k, v; p.topZones(v, t) },
		"inof":  func(k, v *yaml.Node) { p.topINOF(v, &t.INOF) },
	}) {
		return nil
	}
	if t.Name == "" {
		p.errf(root, "missing required key \"name\"")
	} else if err := checkName("lab", t.Name, MaxLabName); err != nil {
		p.errf(nameLine, "%v", err)
	}
	if !validProtocol(t.Protocol) {
		p.errf(root, "protocol %q not supported (want isis or ospf)", t.Protocol)
	}

	// Node and LAN names share one space: both become namespaces.
	names := map[string]string{}
	if nodesNode == nil {
		p.errf(root, "missing required key \"nodes\"")
	} else {
		p.nodes(nodesNode, t, names)
	}
	if linksNode != nil && !p.links(linksNode, t, names) {
		return t
	}
	at, zat := linksNode, zonesNode
	if at == nil {
		at = root
	}
	if zat == nil {
		zat = root
	}
	p.checkINOFLinks(t, at, zat)
	p.checkZoneHosts(t, zonesVal)
	if len(p.Errs) == 0 {
		// Interface names are derived from peers; check them here so a bad
		// topology fails at load time, not halfway through Up.
		if _, err := plan(t, t.Name); err != nil {
			p.errf(linksNode, "%v", err)
		}
	}
	return t
}

// nodes parses the nodes mapping into t.Nodes, claiming each name in
// names.
func (p *tparser) nodes(v *yaml.Node, t *Topology, names map[string]string) {
	if v.Kind != yaml.MappingNode {
		p.errf(v, "nodes: expected a mapping of node name to {kind: frr|fared, ...}")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		if err := checkName("node", k.Value, MaxNodeName); err != nil {
			p.errf(k, "%v", err)
		}
		if _, dup := names[k.Value]; dup {
			p.errf(k, "duplicate node %q", k.Value)
			continue
		}
		names[k.Value] = "node"
		t.Nodes = append(t.Nodes, p.node(k, v.Content[i+1], t.Protocol))
	}
	if len(t.Nodes) == 0 {
		p.errf(v, "nodes: at least one node is required")
	}
	if len(t.Nodes) > MaxNodes {
		p.errf(v, "nodes: %d nodes, at most %d are supported", len(t.Nodes), MaxNodes)
	}
}

// node parses one node (k: its name) of a topology whose default
// protocol is protocol.
func (p *tparser) node(k, v *yaml.Node, protocol string) NodeSpec {
	n := NodeSpec{Name: k.Value, Protocol: protocol, Level: "2", Area: "49.0001", Priority: -1}
	areaSet := false
	what := "node " + k.Value
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		v = &yaml.Node{Kind: yaml.MappingNode, Line: v.Line}
	}
	seen := map[string]*yaml.Node{}
	fields := map[string]func(k, v *yaml.Node){
		"kind":     p.str(what, &n.Kind),
		"protocol": p.str(what, &n.Protocol),
		"level":    p.str(what, &n.Level),
		"area":     func(k, v *yaml.Node) { areaSet = true; p.str(what, &n.Area)(k, v) },
		"priority": p.integer(what, 0, 127, &n.Priority),
		"prefixes": func(k, v *yaml.Node) { n.Prefixes = p.prefixes(what, v) },
		"auth":     func(k, v *yaml.Node) { n.Auth = p.authKeys(what, v) },
		"bfd":      func(k, v *yaml.Node) { n.BFD = p.bfdSpec(what, v) },
		"te": func(k, v *yaml.Node) {
			switch v.Value {
			case "true":
			case "false":
				n.NoTE = true
			default:
				p.errf(v, "%s: te: want true or false, got %q", what, v.Value)
			}
		},
	}
	p.inofNodeFields(what, &n, seen, fields)
	p.keys(v, what, fields)
	switch {
	case n.Kind == "":
		p.errf(v, "%s: missing kind (frr, fared, bird or host)", what)
	case n.Kind != "frr" && n.Kind != "fared" && n.Kind != "host" && n.Kind != "bird":
		p.errf(v, "%s: kind %q: want frr, fared, bird or host", what, n.Kind)
	case n.Kind == "bird":
		p.checkBIRDNode(v, what, &n, seen)
	}
	p.checkINOFNode(v, what, &n, seen)
	p.checkNodeBFD(v, what, &n)
	if n.Kind == "host" {
		n.Protocol, n.Level, n.Area = "", "", ""
		return n
	}
	if !validProtocol(n.Protocol) {
		p.errf(v, "%s: protocol %q not supported (want isis or ospf)", what, n.Protocol)
	}
	p.checkNodeKind(v, what, &n)
	if n.Protocol == "ospf" {
		p.ospfNodeArea(v, what, &n, areaSet)
	}
	if !validLevels[n.Level] {
		p.errf(v, "%s: level %q: want 1, 2 or 1-2", what, n.Level)
	}
	if n.Protocol != "ospf" && !areaRE.MatchString(n.Area) {
		p.errf(v, "%s: area %q: want dotted hex like 49.0001", what, n.Area)
	}
	return n
}

// checkNodeBFD refuses BFD settings a node's kind cannot honour.
func (p *tparser) checkNodeBFD(v *yaml.Node, what string, n *NodeSpec) {
	if n.Kind == "host" && n.BFD != nil {
		p.errf(v, "%s: bfd: a host runs no IGP adjacency to protect", what)
	}
	if n.BFD == nil || len(n.BFD.Auth) == 0 {
		return
	}
	switch n.Kind {
	case "frr":
		p.errf(v, "%s: bfd: auth: FRR 8.4's bfdd has no authentication", what)
	case "bird":
		for _, k := range n.BFD.Auth {
			if k.Algorithm != n.BFD.Auth[0].Algorithm {
				p.errf(v, "%s: bfd: auth: BIRD has one authentication type per interface (%s and %s)", what, n.BFD.Auth[0].Algorithm, k.Algorithm)
				break
			}
		}
	}
}

// links parses the links list into t.Links; LAN names join names. It
// returns false if links is not a list (nothing more can be checked).
func (p *tparser) links(v *yaml.Node, t *Topology, names map[string]string) bool {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "links: expected a list")
		return false
	}
	lans := 0
	for i, e := range v.Content {
		l, ok := p.link(i, e, names)
		if !ok {
			continue
		}
		if l.LAN != "" {
			lans++
		}
		t.Links = append(t.Links, l)
	}
	if len(t.Links) > MaxLinks {
		p.errf(v, "links: %d links, at most %d are supported", len(t.Links), MaxLinks)
	}
	if lans > MaxLANs {
		p.errf(v, "links: %d LANs, at most %d are supported", lans, MaxLANs)
	}
	return true
}

// link parses link i: a p2p link (a, b) or a LAN (lan, nodes). ok is
// false for what cannot be a link at all.
func (p *tparser) link(i int, v *yaml.Node, names map[string]string) (l LinkSpec, ok bool) {
	l = LinkSpec{Bandwidth: DefaultBandwidth, Metric: 10}
	what := fmt.Sprintf("link %d", i)
	if !p.keys(v, what, map[string]func(k, v *yaml.Node){
		"a":         p.str(what, &l.A),
		"b":         p.str(what, &l.B),
		"lan":       p.str(what, &l.LAN),
		"nodes":     func(k, v *yaml.Node) { l.Nodes = p.names(what+": nodes", v) },
		"bandwidth": p.bandwidth(what, &l.Bandwidth),
		"metric":    p.integer(what, 1, 16777214, &l.Metric),
		"area":      func(k, v *yaml.Node) { p.ospfLinkArea(v, what, &l) },
	}) {
		return l, false
	}
	known := func(n string) bool {
		if names[n] != "node" {
			p.errf(v, "%s: unknown node %q", what, n)
			return false
		}
		return true
	}
	if l.LAN == "" {
		if len(l.Nodes) > 0 {
			p.errf(v, "%s: nodes is for LANs (set lan: NAME), a p2p link has a and b", what)
		}
		if l.A == "" || l.B == "" {
			p.errf(v, "%s: a p2p link needs a and b (or lan and nodes)", what)
			return l, false
		}
		if known(l.A) && known(l.B) && l.A == l.B {
			p.errf(v, "%s: link from %q to itself", what, l.A)
		}
		return l, true
	}
	if l.A != "" || l.B != "" {
		p.errf(v, "%s: a LAN has nodes, not a and b", what)
	}
	if err := checkName("lan", l.LAN, MaxNodeName); err != nil {
		p.errf(v, "%s: %v", what, err)
	} else if names[l.LAN] != "" {
		p.errf(v, "%s: lan name %q already used by a %s", what, l.LAN, names[l.LAN])
	} else {
		names[l.LAN] = "lan"
	}
	if len(l.Nodes) < 2 {
		p.errf(v, "%s: lan %q needs at least 2 nodes", what, l.LAN)
	}
	seen := map[string]bool{}
	for _, n := range l.Nodes {
		if known(n) && seen[n] {
			p.errf(v, "%s: node %q listed twice on lan %q", what, n, l.LAN)
		}
		seen[n] = true
	}
	return l, true
}

func (p *tparser) prefixes(what string, v *yaml.Node) []PrefixSpec {
	return list(p, v, what+": prefixes: expected a list", func(e *yaml.Node) (PrefixSpec, bool) {
		var ps PrefixSpec
		var text string
		pnode := e
		if e.Kind == yaml.MappingNode {
			p.keys(e, what+": prefix", map[string]func(k, v *yaml.Node){
				"prefix":         func(k, v *yaml.Node) { pnode = v; p.str(what, &text)(k, v) },
				"path-bandwidth": p.bandwidth(what+": prefix", &ps.PathBandwidth),
			})
		} else if s, ok := p.scalar(what+": prefixes", e); ok {
			text = s
		}
		pfx, err := netip.ParsePrefix(text)
		if err != nil {
			p.errf(pnode, "%s: bad prefix %q", what, text)
			return ps, false
		}
		if pfx != pfx.Masked() {
			p.errf(pnode, "%s: prefix %q has host bits set (want %s)", what, text, pfx.Masked())
			return ps, false
		}
		ps.Prefix = pfx
		return ps, true
	})
}
