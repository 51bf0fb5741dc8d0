package interop

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/inof/l2"
)

// iNOF and host support of the lab (docs/inof.md, "farelab"):
//
//   - nodes of kind host: a namespace attached to switches by ordinary
//     links, with a default route through them. agent: fared (default)
//     runs fared there (inof: host makes it the iNOF host agent; config:
//     adds any other module section, e.g. inc:), agent: lldpd runs only
//     Debian's lldpd sending the iNOF LLDP TLV, agent: none runs nothing.
//   - inof: switch | reflector on fared nodes: the inof section, with
//     every switch a client of every reflector; sessions use the link
//     addresses where the two are directly linked (single-hop BFD, GTSM
//     at one hop), loopbacks otherwise.
//   - zones: {NAME: [host id, ...]} at the top level, rendered into the
//     reflectors; inof: {...} at the top level for shared settings.

// Host agents.
const (
	AgentFared = "fared"
	AgentLLDPD = "lldpd"
	AgentNone  = "none"
)

// INOFSettings are the topology-wide iNOF settings (top-level inof:).
type INOFSettings struct {
	ASN       uint32
	ClusterID netip.Addr
	Password  string
	BFD       bool
	// BFD timers: a lab shares a few cores, so detection is 1 s (200 ms x
	// 5) rather than a switch's 300 ms, which scheduling hiccups of a
	// loaded machine would trip.
	BFDInterval   time.Duration
	BFDMultiplier int
	TTLSecurity   int // GTSM hops on every session, 0 = off
	AutoAdd       bool
	Hold          time.Duration // BGP hold time
	RestartTime   time.Duration
	HostHold      time.Duration // the agents' hold time
	Tombstone     time.Duration
	OUI           string // lldp-oui, for the switches and the lldpd hosts
	// HostsPerPort is the switches' max-hosts-per-port (0: fared's
	// default): a test that plays hundreds of hosts behind one port
	// raises it.
	HostsPerPort int
}

func defaultINOF() INOFSettings {
	return INOFSettings{ASN: 65000, ClusterID: netip.MustParseAddr("10.255.255.1"), BFD: true, BFDInterval: 200 * time.Millisecond, BFDMultiplier: 5, AutoAdd: true,
		Hold: 3 * time.Second, RestartTime: 8 * time.Second, HostHold: 3 * time.Second, Tombstone: 3 * time.Second, OUI: "02:46:44"}
}

// hostKeys are the node keys of kind host; fared nodes take inof and
// config too.
var hostKeys = map[string]bool{"kind": true, "agent": true, "inof": true, "role": true, "id": true, "nqn": true, "hook": true, "config": true}

// inofNodeFields adds the iNOF and host keys to a node's key handlers.
func (p *tparser) inofNodeFields(what string, n *NodeSpec, seen map[string]*yaml.Node, f map[string]func(k, v *yaml.Node)) {
	mark := func(name string, h func(k, v *yaml.Node)) {
		f[name] = func(k, v *yaml.Node) { seen[name] = k; h(k, v) }
	}
	for name, h := range f {
		mark(name, h)
	}
	mark("inof", p.str(what, &n.INOF))
	mark("agent", p.str(what, &n.Agent))
	mark("role", p.str(what, &n.HostRole))
	mark("id", p.str(what, &n.HostID))
	mark("nqn", p.str(what, &n.NQN))
	mark("hook", p.str(what, &n.Hook))
	mark("config", func(k, v *yaml.Node) {
		if v.Kind != yaml.MappingNode {
			p.errf(v, "%s: config: expected a mapping of fared config sections", what)
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			n.ExtraKeys = append(n.ExtraKeys, v.Content[i].Value)
		}
		// Block style, so that the sections append to the rendered file.
		blockStyle(v)
		b, err := yaml.Marshal(v)
		if err != nil {
			p.errf(v, "%s: config: %v", what, err)
			return
		}
		n.Extra = string(b)
	})
}

func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// checkINOFNode validates a node's iNOF and host keys against its kind.
func (p *tparser) checkINOFNode(v *yaml.Node, what string, n *NodeSpec, seen map[string]*yaml.Node) {
	switch n.Kind {
	case "host":
		for key, k := range seen {
			if !hostKeys[key] {
				p.errf(k, "%s: %s is not a setting of a host", what, key)
			}
		}
		if n.Agent == "" {
			n.Agent = AgentFared
		}
		switch n.Agent {
		case AgentFared, AgentNone:
		case AgentLLDPD:
			if n.INOF == "" {
				n.INOF = "host"
			}
			if n.Extra != "" {
				p.errf(seen["config"], "%s: config is for agent fared", what)
			}
		default:
			p.errf(seen["agent"], "%s: agent %q: want fared, lldpd or none", what, n.Agent)
		}
		if n.INOF != "" && n.INOF != "host" {
			p.errf(seen["inof"], "%s: inof %q: a host's is host (or absent)", what, n.INOF)
		}
		if n.Agent == AgentNone && (n.INOF != "" || n.Extra != "") {
			p.errf(v, "%s: agent none runs nothing: no inof, no config", what)
		}
		if n.HostRole == "" {
			n.HostRole = "initiator"
			if n.Agent == AgentLLDPD {
				n.HostRole = "target"
			}
		}
		if n.HostRole != "initiator" && n.HostRole != "target" && n.HostRole != "both" {
			p.errf(seen["role"], "%s: role %q: want initiator, target or both", what, n.HostRole)
		}
		if n.HostID == "" {
			n.HostID = n.Name
		}
		if len(n.HostID) > 255 {
			p.errf(seen["id"], "%s: id: at most 255 bytes", what)
		}
		if len(n.NQN) > 223 {
			p.errf(seen["nqn"], "%s: nqn: at most 223 bytes", what)
		}
		if n.NQN != "" && !strings.HasPrefix(n.NQN, "nqn.") {
			p.errf(seen["nqn"], "%s: nqn %q: want an NVMe qualified name (nqn. ...)", what, n.NQN)
		}
		if n.Hook != "" && n.Agent != AgentFared {
			p.errf(seen["hook"], "%s: hook needs agent fared", what)
		}
	default:
		for _, key := range []string{"agent", "role", "id", "nqn", "hook"} {
			if k := seen[key]; k != nil {
				p.errf(k, "%s: %s is a setting of kind host", what, key)
			}
		}
		if k := seen["inof"]; k != nil {
			if n.Kind != "fared" {
				p.errf(k, "%s: inof runs on fared nodes", what)
			} else if n.INOF != "switch" && n.INOF != "reflector" {
				p.errf(k, "%s: inof %q: want switch or reflector", what, n.INOF)
			}
		}
		if k := seen["config"]; k != nil && n.Kind != "fared" {
			p.errf(k, "%s: config is for fared nodes", what)
		}
	}
	// Sections farelab renders itself cannot be given in config.
	rendered := map[string]bool{"hostname": true, "router-id": true, "system-id": true, "log-level": true, "socket": true}
	if n.Kind == "fared" {
		rendered[n.Protocol] = true
	}
	if n.INOF != "" {
		rendered["inof"] = true
	}
	if n.Kind == "host" {
		rendered["fib"] = true
	}
	for _, key := range n.ExtraKeys {
		if rendered[key] {
			p.errf(seen["config"], "%s: config: %s is rendered by farelab for this node", what, key)
		}
	}
}

// topINOF parses the top-level inof: settings.
func (p *tparser) topINOF(v *yaml.Node, s *INOFSettings) {
	p.keys(v, "inof", map[string]func(k, v *yaml.Node){
		"asn": func(k, v *yaml.Node) {
			var n int
			p.integer("inof", 1, 1<<31-1, &n)(k, v)
			s.ASN = uint32(n)
		},
		"cluster-id": func(k, v *yaml.Node) {
			var t string
			p.str("inof", &t)(k, v)
			if a, err := netip.ParseAddr(t); err != nil || !a.Is4() {
				p.errf(v, "inof: cluster-id %q: want an IPv4 address", t)
			} else {
				s.ClusterID = a
			}
		},
		"password": p.str("inof", &s.Password),
		"bfd": func(k, v *yaml.Node) {
			s.BFD = p.boolean("inof", k, v)
		},
		"ttl-security":   p.integer("inof", 0, 254, &s.TTLSecurity),
		"bfd-interval":   p.dur("inof", &s.BFDInterval),
		"bfd-multiplier": p.integer("inof", 2, 255, &s.BFDMultiplier),
		"auto-add": func(k, v *yaml.Node) {
			s.AutoAdd = p.boolean("inof", k, v)
		},
		"hold":               p.dur("inof", &s.Hold),
		"restart-time":       p.dur("inof", &s.RestartTime),
		"host-hold":          p.dur("inof", &s.HostHold),
		"tombstone":          p.dur("inof", &s.Tombstone),
		"lldp-oui":           p.str("inof", &s.OUI),
		"max-hosts-per-port": p.integer("inof", 1, 100000, &s.HostsPerPort),
	})
	if _, err := ouiBytes(s.OUI); err != nil {
		p.errf(v, "inof: %v", err)
	}
}

func (p *tparser) boolean(what string, k, v *yaml.Node) bool {
	switch v.Value {
	case "true":
		return true
	case "false":
		return false
	}
	p.errf(v, "%s: %s: want true or false, got %q", what, k.Value, v.Value)
	return false
}

// zoneNameRE is fared's rule for zone names (inof/zones).
var zoneNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// topZones parses zones: {NAME: [host id, ...]}. Members are host ids:
// lab hosts (their id, by default the node name) or hosts that exist only
// in a test's traffic.
func (p *tparser) topZones(v *yaml.Node, t *Topology) {
	if v.Kind != yaml.MappingNode {
		p.errf(v, "zones: expected a mapping of zone name to a list of host ids")
		return
	}
	t.Zones = map[string][]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, m := v.Content[i], v.Content[i+1]
		if k.Value == "default" || !zoneNameRE.MatchString(k.Value) {
			p.errf(k, "zones: zone name %q: want 1..64 characters of [A-Za-z0-9._-], not default (the default zone is automatic)", k.Value)
			continue
		}
		if _, dup := t.Zones[k.Value]; dup {
			p.errf(k, "zones: zone %q twice", k.Value)
			continue
		}
		var members []string
		if !(m.Kind == yaml.ScalarNode && m.ShortTag() == "!!null") {
			members = p.names("zones: "+k.Value, m)
		}
		t.Zones[k.Value] = members
		t.ZoneOrder = append(t.ZoneOrder, k.Value)
	}
}

// checkINOFLinks: hosts attach to switches.
func (p *tparser) checkINOFLinks(t *Topology, at, zonesAt *yaml.Node) {
	kind := map[string]string{}
	for _, n := range t.Nodes {
		kind[n.Name] = n.Kind
	}
	for i, l := range t.Links {
		if l.IsLAN() {
			// Hosts on a LAN share one switch port (a hub or an
			// unmanaged switch in front of it): the LAN has exactly one
			// fared node, the switch.
			hosts, others := 0, 0
			for _, m := range l.Nodes {
				if kind[m] == "host" {
					hosts++
				} else if kind[m] == "fared" {
					others++
				} else {
					others += 2
				}
			}
			if hosts > 0 && others != 1 {
				p.errf(at, "link %d: lan %q with hosts is a shared switch port: it needs exactly one fared node (the switch) besides the hosts", i, l.LAN)
			}
			continue
		}
		if kind[l.A] == "host" && kind[l.B] == "host" {
			p.errf(at, "link %d: two hosts (%s, %s): hosts attach to switches", i, l.A, l.B)
		}
	}
	hasRR := false
	for _, n := range t.Nodes {
		hasRR = hasRR || n.INOF == "reflector"
	}
	if len(t.Zones) > 0 && !hasRR {
		p.errf(zonesAt, "zones: no node has inof: reflector to hold them")
	}
}

// checkZoneHosts refuses a zone member that is a lab host running no iNOF
// agent (kind host without inof: host): it would never register, and
// nothing would say why. Members that are no lab host's id or name are
// hosts of a test's traffic and stay allowed.
func (p *tparser) checkZoneHosts(t *Topology, zones *yaml.Node) {
	if zones == nil || zones.Kind != yaml.MappingNode {
		return
	}
	hosts := map[string]*NodeSpec{}
	for i := range t.Nodes {
		if n := &t.Nodes[i]; n.Kind == "host" {
			hosts[n.Name] = n
			if n.HostID != "" {
				hosts[n.HostID] = n
			}
		}
	}
	for i := 0; i+1 < len(zones.Content); i += 2 {
		zone, m := zones.Content[i].Value, zones.Content[i+1]
		if m.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range m.Content {
			n := hosts[e.Value]
			if n == nil || n.INOF == "host" {
				continue
			}
			fix := "add inof: host to it"
			if n.Agent == AgentNone {
				fix = "give it agent fared or lldpd and inof: host (agent none runs nothing)"
			}
			p.errf(e, "zones: %s: host %s runs no iNOF agent (kind host without inof: host), so it would never register: %s", zone, n.Name, fix)
		}
	}
}

// ouiBytes reads the topology's lldp-oui as fared's inof section does.
func ouiBytes(s string) ([3]byte, error) {
	o, err := l2.ParseOUI(s)
	if err != nil {
		return o, fmt.Errorf("lldp-oui %q: %v", s, err)
	}
	return o, nil
}

// isHost reports whether the node is a host.
func (n *Node) isHost() bool { return n.Kind == "host" }

// runsFared reports whether fared runs on the node.
func (n *Node) runsFared() bool {
	return n.Kind == "fared" || n.Kind == "host" && n.Agent == AgentFared
}

// inofNeighbors lists the IBGP sessions of switch n: to every reflector
// (a switch), or to every switch (a reflector). Directly linked peers
// use the first link's addresses; others the loopbacks.
func (l *Lab) inofNeighbors(n *Node) []map[string]any {
	s := l.Topo.INOF
	var out []map[string]any
	for _, o := range l.Nodes {
		if o == n || o.INOF == "" || o.INOF == "host" {
			continue
		}
		if n.INOF == "switch" && o.INOF != "reflector" || n.INOF == "reflector" && o.INOF != "switch" {
			continue
		}
		nb := map[string]any{"address": o.Loopback.String(), "local-address": n.Loopback.String(), "bfd": false}
		for _, f := range n.Interfaces {
			if f.Type == "p2p" && f.Peer == o.Name {
				peer := o.Iface(f.PeerIface)
				nb = map[string]any{"address": peer.Addr.Addr().String(), "local-address": f.Addr.Addr().String(), "bfd": s.BFD}
				break
			}
		}
		if s.Password != "" {
			nb["password"] = s.Password
		}
		if s.TTLSecurity > 0 {
			nb["ttl-security"] = s.TTLSecurity
		}
		out = append(out, nb)
	}
	return out
}

// edgeIfaces are n's interfaces toward hosts.
func (n *Node) edgeIfaces() []string {
	var out []string
	for _, f := range n.Interfaces {
		if f.Edge {
			out = append(out, f.Name)
		}
	}
	return out
}

// inofSection renders a node's inof section, or nil.
func (l *Lab) inofSection(n *Node) map[string]any {
	s := l.Topo.INOF
	switch {
	case n.Kind == "fared" && (n.INOF == "switch" || n.INOF == "reflector"):
		sec := map[string]any{"role": n.INOF, "asn": s.ASN, "interfaces": n.edgeIfaces(),
			"neighbors":        l.inofNeighbors(n),
			"timers":           map[string]any{"hold": s.Hold.String(), "connect-retry": "1s"},
			"graceful-restart": map[string]any{"restart-time": s.RestartTime.String()},
			"bfd":              map[string]any{"min-tx": s.BFDInterval.String(), "min-rx": s.BFDInterval.String(), "multiplier": s.BFDMultiplier},
			"tombstone":        s.Tombstone.String(), "lldp-oui": s.OUI}
		if s.HostsPerPort > 0 {
			sec["max-hosts-per-port"] = s.HostsPerPort
		}
		if sec["interfaces"] == nil {
			sec["interfaces"] = []string{}
		}
		if sec["neighbors"] == nil {
			sec["neighbors"] = []map[string]any{}
		}
		if n.INOF == "reflector" {
			sec["cluster-id"] = s.ClusterID.String()
			z := map[string]any{}
			for _, name := range l.Topo.ZoneOrder {
				z[name] = append([]string{}, l.Topo.Zones[name]...)
			}
			sec["zones"] = z
			sec["default-zone"] = map[string]any{"auto-add": s.AutoAdd}
		}
		return sec
	case n.Kind == "host" && n.Agent == AgentFared && n.INOF == "host":
		var ifs []string
		for _, f := range n.Interfaces {
			ifs = append(ifs, f.Name)
		}
		sec := map[string]any{"role": "host", "id": n.HostID, "host-role": n.HostRole, "interfaces": ifs, "hold": s.HostHold.String()}
		if n.NQN != "" {
			sec["nqn"] = n.NQN
		}
		if n.Hook != "" {
			sec["hook"] = n.Hook
		}
		return sec
	}
	return nil
}

// renderNodeConfig renders fared.yaml of a fared or host node: the
// protocol section (fared nodes), the inof section, and config: extras.
func (l *Lab) renderNodeConfig(n *Node) ([]byte, error) {
	base, err := l.renderBase(n)
	if err != nil {
		return nil, err
	}
	var secs [][]byte
	if sec := l.inofSection(n); sec != nil {
		b, err := yaml.Marshal(map[string]any{"inof": sec})
		if err != nil {
			return nil, err
		}
		secs = append(secs, b)
	}
	if n.Extra != "" {
		extra, err := l.withINCTrust(n, n.Extra)
		if err != nil {
			return nil, err
		}
		secs = append(secs, []byte(extra))
	}
	if len(secs) == 0 {
		return base, nil
	}
	return MergeSections(base, secs...)
}

// renderBase is a node's config without module sections: a fared node's
// with its protocol's section, a host's with no kernel FIB.
func (l *Lab) renderBase(n *Node) ([]byte, error) {
	if n.Kind != "host" {
		return RenderFared(n, l.Topo.Defaults)
	}
	c, err := faredCore(n, l.Topo.Defaults)
	if err != nil {
		return nil, err
	}
	c.FIB.Enabled = false
	return renderConfig(c, "host "+n.Name)
}

// LLDPInfo is the content of the iNOF LLDP TLV of host n (after OUI and
// subtype), written here independently of package inof/l2 so that the lab
// checks that package against its specification (docs/inof.md): TLVs of
// type, length, value: 1 host id, 2 role, 3 NQN, 4 IPv4 address.
func LLDPInfo(n *Node) []byte {
	var b []byte
	b = append(b, 1, byte(len(n.HostID)))
	b = append(b, n.HostID...)
	role := map[string]byte{"initiator": 1, "target": 2, "both": 3}[n.HostRole]
	b = append(b, 2, 1, role)
	if n.NQN != "" {
		b = append(b, 3, byte(len(n.NQN)))
		b = append(b, n.NQN...)
	}
	for _, f := range n.Interfaces {
		if a := f.Addr.Addr(); a.Is4() {
			v := a.As4()
			b = append(append(b, 4, 4), v[:]...)
		}
	}
	return b
}

// renderLLDPD renders lldpd.conf for an lldpd host: its name, a 1 s
// transmit interval (TTL 4 s), and the iNOF TLV.
func (l *Lab) renderLLDPD(n *Node) string {
	info := LLDPInfo(n)
	hex := make([]string, len(info))
	for i, c := range info {
		hex[i] = fmt.Sprintf("%02x", c)
	}
	oui, _ := ouiBytes(l.Topo.INOF.OUI)
	return fmt.Sprintf("configure system hostname %s\nconfigure lldp tx-interval 1\nconfigure lldp custom-tlv oui %02x,%02x,%02x subtype 1 oui-info %s\n",
		n.Name, oui[0], oui[1], oui[2], strings.Join(hex, ","))
}

// LLDPDCommand returns the command line that starts lldpd on host n
// (foreground, so that its output goes to the node's log).
func (l *Lab) LLDPDCommand(n *Node) []string {
	var ifs []string
	for _, f := range n.Interfaces {
		ifs = append(ifs, f.Name)
	}
	return []string{"ip", "netns", "exec", n.Netns, "lldpd", "-d", "-u", filepath.Join(n.Dir, "lldpd.sock"),
		"-I", strings.Join(ifs, ","), "-p", filepath.Join(n.Dir, "lldpd.pid"), "-O", filepath.Join(n.Dir, "lldpd.conf")}
}

// startHost configures a host's routes and starts its agent.
func (l *Lab) startHost(ctx context.Context, n *Node) error {
	switch n.Agent {
	case AgentFared:
		return l.startFared(ctx, n)
	case AgentLLDPD:
		if err := os.WriteFile(filepath.Join(n.Dir, "lldpd.conf"), []byte(l.renderLLDPD(n)), 0o644); err != nil {
			return err
		}
		// lldpd's privileged half reads the socket directory as root and
		// its other half runs as _lldpd: the directory must be searchable.
		_ = os.Chmod(n.Dir, 0o755)
		return l.startDaemon(n, "lldpd", l.LLDPDCommand(n))
	}
	return nil
}

// startDaemon starts a foreground daemon, output appended to
// <dir>/<name>.log, pid in <dir>/<name>.pid. Its own process group: a ^C
// to farelab or a dying test must not take the daemon with it
// mid-write; Down stops it explicitly.
func (l *Lab) startDaemon(n *Node, name string, argv []string) error {
	logPath := filepath.Join(n.Dir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(l.opts.Log, "+ %s > %s 2>&1 &\n", strings.Join(argv, " "), logPath)
	fmt.Fprintf(logf, "=== farelab: %s %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return &cmdError{Cmd: argv, Err: err}
	}
	// ip netns exec execs the program in place: this pid is the daemon's.
	pid := cmd.Process.Pid
	n.Pids[name] = pid
	_ = os.WriteFile(filepath.Join(n.Dir, name+".pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644)
	// Reap it when it exits, so a stopped daemon does not linger as a
	// zombie of this process.
	go func() { _ = cmd.Wait() }()
	return nil
}

// hostRoutes gives a host a default route through the switches it is
// attached to (several: ECMP). The switches advertise the host links into
// the fabric's IGP as passive interfaces.
func (l *Lab) hostRoutes(ctx context.Context, n *Node) error {
	var hops []string
	for _, f := range n.Interfaces {
		if f.Type == "lan" {
			// A shared port: through the LAN's switch.
			for _, m := range l.Links[f.Link].Members {
				if sw := l.Node(m.Node); sw != nil && !sw.isHost() {
					hops = append(hops, "nexthop", "via", m.Addr.Addr().String(), "dev", f.Name)
				}
			}
			continue
		}
		peer := l.Node(f.Peer)
		if peer == nil || peer.isHost() {
			continue
		}
		if pf := peer.Iface(f.PeerIface); pf != nil {
			hops = append(hops, "nexthop", "via", pf.Addr.Addr().String(), "dev", f.Name)
		}
	}
	if len(hops) == 0 {
		return nil
	}
	args := []string{"-n", n.Netns, "route", "add", "default"}
	if len(hops) == 5 {
		args = append(args, hops[1:]...)
	} else {
		args = append(args, hops...)
	}
	return l.ip(ctx, args...)
}

// HostNodes returns the lab's hosts, in file order.
func (l *Lab) HostNodes() []*Node {
	var out []*Node
	for _, n := range l.Nodes {
		if n.isHost() {
			out = append(out, n)
		}
	}
	return out
}

// Zones returns the topology's zones, sorted by name.
func (l *Lab) Zones() map[string][]string {
	out := map[string][]string{}
	names := slices.Clone(l.Topo.ZoneOrder)
	sort.Strings(names)
	for _, z := range names {
		out[z] = slices.Clone(l.Topo.Zones[z])
	}
	return out
}
