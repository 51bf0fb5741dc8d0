package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/api/wire"
)

// Changing a running lab: links added and removed, each end's routing
// daemon reconfigured live (fared: the rendered config and a reload; FRR:
// the same interface block through vtysh), and the prefixes of FRR nodes.

// NodeChange is what a live change did on one node: the reload answer of
// a fared node, or the vtysh commands an FRR node ran.
type NodeChange struct {
	Node     string
	Kind     string
	Reload   *wire.Reload `json:",omitempty"`
	Commands []string     `json:",omitempty"`
}

// AddLink adds a p2p link between nodes a and b of a running lab: the next
// link index (its /31 from the addressing plan), interfaces named
// "<peer>-<k>" with the lowest free k, both ends configured live. bw is
// bits/s (0: DefaultBandwidth); metric 10.
func (l *Lab) AddLink(ctx context.Context, a, b string, bw float64) (*Link, []NodeChange, error) {
	na, err := l.node(a)
	if err != nil {
		return nil, nil, err
	}
	nb, err := l.node(b)
	if err != nil {
		return nil, nil, err
	}
	if a == b {
		return nil, nil, fmt.Errorf("link from %s to itself", a)
	}
	if bw == 0 {
		bw = DefaultBandwidth
	}
	lvl, err := commonLevel(na, nb)
	if err != nil {
		return nil, nil, fmt.Errorf("link %s–%s: %w", a, b, err)
	}
	idx := 0
	for _, lk := range l.Links {
		idx = max(idx, lk.Index+1)
	}
	if idx >= MaxLinks {
		return nil, nil, fmt.Errorf("lab %s: no link index left (max %d)", l.Name, MaxLinks)
	}
	k := 1
	for na.Iface(b+"-"+strconv.Itoa(k)) != nil || nb.Iface(a+"-"+strconv.Itoa(k)) != nil {
		k++
	}
	lk := &Link{Index: idx, A: a, B: b, IfA: b + "-" + strconv.Itoa(k), IfB: a + "-" + strconv.Itoa(k),
		AddrA: netip.PrefixFrom(addOffset(p2pBase, 2*idx), 31), AddrB: netip.PrefixFrom(addOffset(p2pBase, 2*idx+1), 31),
		Bandwidth: bw, Metric: 10}
	if len(lk.IfA) > 15 || len(lk.IfB) > 15 {
		return nil, nil, fmt.Errorf("link %s–%s: interface name %q or %q is longer than 15 bytes", a, b, lk.IfA, lk.IfB)
	}
	fa := Iface{Name: lk.IfA, Type: "p2p", Addr: lk.AddrA, Peer: b, PeerIface: lk.IfB, Link: idx, Bandwidth: bw, Metric: 10, Level: lvl}
	fb := Iface{Name: lk.IfB, Type: "p2p", Addr: lk.AddrB, Peer: a, PeerIface: lk.IfA, Link: idx, Bandwidth: bw, Metric: 10, Level: lvl}
	if na.Protocol == "ospf" {
		fa.Area = na.Area
	}
	if nb.Protocol == "ospf" {
		fb.Area = nb.Area
	}
	if err := l.ip(ctx, "link", "add", lk.IfA, "netns", na.Netns, "mtu", "1500", "type", "veth",
		"peer", "name", lk.IfB, "netns", nb.Netns, "mtu", "1500"); err != nil {
		return nil, nil, err
	}
	for _, e := range []struct {
		ns, ifn string
		addr    netip.Prefix
	}{{na.Netns, lk.IfA, lk.AddrA}, {nb.Netns, lk.IfB, lk.AddrB}} {
		if err := l.ip(ctx, "-n", e.ns, "addr", "add", e.addr.String(), "dev", e.ifn); err != nil {
			return nil, nil, err
		}
		if err := l.ip(ctx, "-n", e.ns, "link", "set", e.ifn, "up"); err != nil {
			return nil, nil, err
		}
	}
	na.Interfaces = append(na.Interfaces, fa)
	nb.Interfaces = append(nb.Interfaces, fb)
	l.linksMu.Lock()
	l.Links = append(l.Links, lk)
	l.linksMu.Unlock()
	if l.Topo != nil {
		l.Topo.Links = append(l.Topo.Links, LinkSpec{A: a, B: b, Bandwidth: bw, Metric: 10})
	}
	if err := l.save(); err != nil {
		return lk, nil, err
	}
	out, err := l.applyEnds(ctx, true, linkEnd{na, fa}, linkEnd{nb, fb})
	return lk, out, err
}

// DelLink removes the last p2p link between a and b from a running lab:
// both ends are reconfigured without the interface first (fared reloads,
// FRR drops the interface from the protocol), then the veth pair goes.
func (l *Lab) DelLink(ctx context.Context, a, b string) (*Link, []NodeChange, error) {
	pos := -1
	for i, lk := range l.Links {
		if lk.LAN == "" && ((lk.A == a && lk.B == b) || (lk.A == b && lk.B == a)) {
			pos = i
		}
	}
	if pos < 0 {
		return nil, nil, fmt.Errorf("lab %s: no p2p link between %s and %s", l.Name, a, b)
	}
	lk := l.Links[pos]
	na, nb := l.Node(lk.A), l.Node(lk.B)
	fa, fb := *na.Iface(lk.IfA), *nb.Iface(lk.IfB)
	na.Interfaces = slices.DeleteFunc(na.Interfaces, func(f Iface) bool { return f.Name == lk.IfA })
	nb.Interfaces = slices.DeleteFunc(nb.Interfaces, func(f Iface) bool { return f.Name == lk.IfB })
	l.linksMu.Lock()
	l.Links = slices.Delete(l.Links, pos, pos+1)
	l.linksMu.Unlock()
	if l.Topo != nil && pos < len(l.Topo.Links) {
		l.Topo.Links = slices.Delete(l.Topo.Links, pos, pos+1)
	}
	out, err := l.applyEnds(ctx, false, linkEnd{na, fa}, linkEnd{nb, fb})
	// Deleting one end of a veth deletes both.
	errDel := l.ip(ctx, "-n", na.Netns, "link", "del", lk.IfA)
	return lk, out, errJoin([]error{err, errDel, l.save()})
}

// linkEnd is one end of a link being added or removed.
type linkEnd struct {
	n *Node
	f Iface
}

// applyEnds reconfigures the ends of a link for its interface added (add)
// or being removed. An addition stops at the first end that fails; a
// removal goes on, so that no end keeps an interface about to vanish.
func (l *Lab) applyEnds(ctx context.Context, add bool, ends ...linkEnd) ([]NodeChange, error) {
	var out []NodeChange
	var errs []error
	for _, e := range ends {
		c, err := l.applyIface(ctx, e.n, e.f, add)
		out = append(out, c)
		if err != nil && add {
			return out, err
		}
		errs = append(errs, err)
	}
	return out, errJoin(errs)
}

// applyIface configures a node for an interface that was added (add) or
// is being removed.
func (l *Lab) applyIface(ctx context.Context, n *Node, f Iface, add bool) (NodeChange, error) {
	c := NodeChange{Node: n.Name, Kind: n.Kind}
	switch n.Kind {
	case "fared":
		r, err := l.ReloadFared(ctx, n.Name)
		if err != nil {
			return c, err
		}
		c.Reload = &r
		return c, nil
	case "frr":
		cmds := frrIfaceCommands(n, l.Topo.Defaults, f, add)
		c.Commands = cmds
		if _, err := l.Vtysh(ctx, n.Name, cmds...); err != nil {
			return c, fmt.Errorf("node %s: %w", n.Name, err)
		}
		if add {
			// TE parameters reach the protocol daemon only through a
			// link-params update after the circuit exists (see
			// nudgeLinkParams).
			if err := l.nudgeLinkParams(ctx, n); err != nil {
				return c, err
			}
		}
		return c, nil
	}
	return c, fmt.Errorf("node %s: kind %s cannot change links at run time", n.Name, n.Kind)
}

// frrIfaceCommands are the vtysh commands that add an interface to an FRR
// node (zebra's link parameters and the protocol block, exactly as the
// rendered files have them) or take it out of the protocol.
func frrIfaceCommands(n *Node, d Defaults, f Iface, add bool) []string {
	cmds := []string{"configure terminal"}
	if !add {
		cmds = append(cmds, "interface "+f.Name)
		if n.Protocol == "ospf" {
			return append(cmds, "no ip ospf area", "exit")
		}
		return append(cmds, "no ip router isis "+isisTag, "exit")
	}
	cmds = append(cmds, frrBlock(RenderZebra(n), f.Name)...)
	return append(cmds, frrBlock(renderFRRProtocol(n, d), f.Name)...)
}

// frrBlock returns the lines of the "interface NAME" block of an FRR
// config, "interface NAME" to "exit" included, without indentation.
func frrBlock(conf, name string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(conf, "\n") {
		t := strings.TrimSpace(line)
		if t == "interface "+name {
			in = true
		}
		if in {
			out = append(out, t)
			if t == "exit" {
				in = false
			}
		}
	}
	return out
}

// WriteFaredConfig renders a fared node's config from the lab's state
// into its fared.yaml (hand edits of that file are overwritten).
func (l *Lab) WriteFaredConfig(node string) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	if n.Kind != "fared" {
		return fmt.Errorf("node %s is %s, not fared", node, n.Kind)
	}
	cfg, err := RenderFared(n, l.Topo.Defaults)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.Dir, "fared.yaml"), cfg, 0o644)
}

// ReloadFared renders a fared node's config and has it reloaded
// (`farectl reload`): the answer says, per module and interface, what
// changed. A reload that fared refuses returns its reason.
func (l *Lab) ReloadFared(ctx context.Context, node string) (wire.Reload, error) {
	if err := l.WriteFaredConfig(node); err != nil {
		return wire.Reload{}, err
	}
	return l.Reload(ctx, node)
}

// Reload asks a fared node to reload its fared.yaml as it is on disk.
func (l *Lab) Reload(ctx context.Context, node string) (wire.Reload, error) {
	var r wire.Reload
	out, err := l.Farectl(ctx, node, "reload")
	if err != nil {
		return r, fmt.Errorf("node %s: reload: %w", node, err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("node %s: reload answer: %v: %.300s", node, err, out)
	}
	return r, nil
}

// FaredConfig reads a fared node's fared.yaml as a YAML tree, for tests
// that change one key and write it back with SetFaredConfig.
func (l *Lab) FaredConfig(node string) (*yaml.Node, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(n.Dir, "fared.yaml"))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// SetFaredConfig writes a fared node's fared.yaml (no reload).
func (l *Lab) SetFaredConfig(node string, doc *yaml.Node) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.Dir, "fared.yaml"), b, 0o644)
}

// Prefixes of FRR nodes. FRR has no "originate this prefix" knob that
// both isisd and ospfd honour the same way: ospfd advertises addresses on
// lo as /32 host routes whatever their mask, and a redistributed static
// route is an external in OSPF. So each FRR node with prefixes gets a
// veth pair of its own (this kernel has no dummy module), pfx.a and
// pfx.b, both ends in its namespace, with the first address of each
// prefix on pfx.a, which the protocol runs passive on: a connected
// subnet, advertised as IS-IS IP reachability or an OSPF stub in the
// node's area. The names carry a dot, which node and LAN names cannot, so
// they never clash with a link's interface.
const (
	frrPrefixIface = "pfx.a"
	frrPrefixPeer  = "pfx.b"
)

// frrPrefixAddr is the address a prefix puts on pfx.a: its first host
// (the address itself for a /32).
func frrPrefixAddr(p netip.Prefix) netip.Prefix {
	if p.Bits() == p.Addr().BitLen() {
		return p
	}
	return netip.PrefixFrom(p.Addr().Next(), p.Bits())
}

// buildPrefixIfaces creates the prefix interface of every FRR node with
// prefixes.
func (l *Lab) buildPrefixIfaces(ctx context.Context) error {
	for _, n := range l.Nodes {
		if n.Kind != "frr" || len(n.Prefixes) == 0 {
			continue
		}
		if err := l.ip(ctx, "-n", n.Netns, "link", "add", frrPrefixIface, "type", "veth", "peer", "name", frrPrefixPeer); err != nil {
			return err
		}
		for _, p := range n.Prefixes {
			if err := l.ip(ctx, "-n", n.Netns, "addr", "add", frrPrefixAddr(p.Prefix).String(), "dev", frrPrefixIface); err != nil {
				return err
			}
		}
		for _, d := range []string{frrPrefixIface, frrPrefixPeer} {
			if err := l.ip(ctx, "-n", n.Netns, "link", "set", d, "up"); err != nil {
				return err
			}
		}
	}
	return nil
}

// renderFRRPrefixes is the protocol block that advertises an FRR node's
// prefixes (the passive pfx.a), "" without prefixes.
func renderFRRPrefixes(n *Node) string {
	if n.Kind != "frr" || len(n.Prefixes) == 0 {
		return ""
	}
	if n.Protocol == "ospf" {
		return fmt.Sprintf("interface %s\n ip ospf area %s\n ip ospf passive\nexit\n!\n", frrPrefixIface, n.Area)
	}
	// Metric 0: as fared's configured prefixes (default metric 0).
	return fmt.Sprintf("interface %s\n ip router isis %s\n isis passive\n isis metric 0\nexit\n!\n", frrPrefixIface, isisTag)
}

// checkNodeKind refuses, at their line, settings a node's kind or
// protocol cannot honour, rather than ignoring them: a Path Bandwidth or
// an IPv6 prefix on an FRR node (FRR has no FARE; farelab gives FRR nodes
// IPv4 prefixes only), an IPv6 prefix on an OSPF node (OSPFv2 is IPv4
// only), `te` on a fared node (fared always floods bandwidths), `level` on
// an OSPF node.
func (p *tparser) checkNodeKind(v *yaml.Node, what string, n *NodeSpec) {
	if v == nil || v.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch {
		case k.Value == "te" && n.Kind == "fared":
			p.errf(k, "%s: te: only FRR nodes have a TE switch (fared always advertises bandwidths)", what)
		case k.Value == "level" && n.Protocol == "ospf":
			p.errf(k, "%s: level: an OSPF node has no IS-IS level (use area)", what)
		case k.Value == "prefixes":
			p.checkNodePrefixes(val, what, n)
		}
	}
}

func (p *tparser) checkNodePrefixes(v *yaml.Node, what string, n *NodeSpec) {
	if v.Kind != yaml.SequenceNode {
		return
	}
	for _, e := range v.Content {
		at, text, pb := e, "", false
		if e.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(e.Content); i += 2 {
				switch e.Content[i].Value {
				case "prefix":
					at, text = e.Content[i+1], e.Content[i+1].Value
				case "path-bandwidth":
					pb = true
				}
			}
		} else {
			text = e.Value
		}
		pfx, err := netip.ParsePrefix(text)
		if err != nil {
			continue // reported by prefixes
		}
		switch {
		case n.Kind == "frr" && pb:
			p.errf(e, "%s: prefix %s: path-bandwidth: an FRR node cannot advertise a Path Bandwidth (FRR has no FARE)", what, text)
		case n.Kind == "frr" && !pfx.Addr().Is4():
			p.errf(at, "%s: prefix %s: farelab gives FRR nodes IPv4 prefixes only", what, text)
		case n.Protocol == "ospf" && !pfx.Addr().Is4():
			p.errf(at, "%s: prefix %s: OSPFv2 carries IPv4 only", what, text)
		}
	}
}
