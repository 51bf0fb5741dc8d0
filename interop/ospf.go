package interop

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
)

// OSPF support of the lab: topology `protocol: ospf` (per lab or node),
// per-node and per-link `area`, ospfd instead of isisd on FRR nodes, and
// fared's `ospf:` section.

func validProtocol(p string) bool { return p == "isis" || p == "ospf" }

// frrDaemon is the routing daemon an FRR node runs next to zebra.
func frrDaemon(n *Node) string {
	if n.Protocol == "ospf" {
		return "ospfd"
	}
	return "isisd"
}

// renderFRRProtocol renders the routing daemon's config of an FRR node.
func renderFRRProtocol(n *Node, d Defaults) string {
	if n.Protocol == "ospf" {
		return RenderOSPFd(n, d)
	}
	return RenderISISd(n, d)
}

// teInterfaceCommand shows the TE link parameters the daemon holds.
func teInterfaceCommand(n *Node) string {
	if n.Protocol == "ospf" {
		return "show ip ospf mpls-te interface"
	}
	return "show isis mpls-te interface"
}

// teParamsShown reports whether the TE interface output lists ifname's
// link parameters. isisd: "-- MPLS-TE link parameters for IF --"; ospfd
// 8.4.4: "-- MPLS-TE link parameters for IF --" too, or, when it has not
// taken them, "  MPLS-TE: Not enabled on interface IF" / nothing.
func teParamsShown(n *Node, out, ifname string) bool {
	if n.Protocol == "ospf" {
		re := regexp.MustCompile(`(?m)link parameters for ` + regexp.QuoteMeta(ifname) + `\b`)
		if !re.MatchString(out) {
			return false
		}
		// The block must carry the maximum bandwidth.
		i := re.FindStringIndex(out)
		rest := out[i[1]:]
		if j := strings.Index(rest, "link parameters for"); j >= 0 {
			rest = rest[:j]
		}
		return strings.Contains(rest, "Maximum Bandwidth")
	}
	return strings.Contains(out, "link parameters for "+ifname+" ")
}

// ospfAreaRE: a dotted quad or a decimal number.
var ospfAreaRE = regexp.MustCompile(`^(\d+\.\d+\.\d+\.\d+|\d+)$`)

// canonArea turns "1" into "0.0.0.1"; "" on error.
func canonArea(s string) string {
	if !ospfAreaRE.MatchString(s) {
		return ""
	}
	a, err := config.ParseArea(s)
	if err != nil {
		return ""
	}
	return config.AreaString(a)
}

func (p *tparser) ospfNodeArea(v *yaml.Node, what string, n *NodeSpec, set bool) {
	if !set {
		n.Area = "0.0.0.0"
		return
	}
	a := canonArea(n.Area)
	if a == "" {
		p.errf(v, "%s: area %q: want an OSPF area like 0.0.0.0 or 1", what, n.Area)
		return
	}
	n.Area = a
}

func (p *tparser) ospfLinkArea(v *yaml.Node, what string, l *LinkSpec) {
	s, ok := p.scalar(what+": area", v)
	if !ok {
		return
	}
	a := canonArea(s)
	if a == "" {
		p.errf(v, "%s: area %q: want an OSPF area like 0.0.0.0 or 1", what, s)
		return
	}
	l.Area = a
}

// setIfaceAreas gives the interfaces of link i their OSPF area: the
// link's, else their node's.
func setIfaceAreas(byName map[string]*Node, i int, s LinkSpec) {
	for _, n := range byName {
		if n.Protocol != "ospf" {
			continue
		}
		for k := range n.Interfaces {
			f := &n.Interfaces[k]
			if f.Link != i {
				continue
			}
			f.Area = n.Area
			if s.Area != "" {
				f.Area = s.Area
			}
		}
	}
}

func ospfNetwork(typ string) string {
	if typ == "p2p" {
		return "point-to-point"
	}
	return "broadcast"
}

// RenderOSPFd renders ospfd.conf for an FRR node: opaque LSAs and MPLS-TE
// on (TE LSAs carry the link-params zebra holds), each interface in its
// area with the lab's hello/dead intervals, the loopback passive in the
// node's area.
func RenderOSPFd(n *Node, d Defaults) string {
	var b strings.Builder
	fmt.Fprintf(&b, "! rendered by farelab for node %s\nhostname %s\nlog timestamp precision 3\n!\n", n.Name, n.Hostname)
	fmt.Fprintf(&b, "interface lo\n ip ospf area %s\n ip ospf passive\nexit\n!\n", n.Area)
	b.WriteString(renderFRRPrefixes(n))
	hello := frrSeconds(d.HelloInterval)
	for _, f := range n.Interfaces {
		fmt.Fprintf(&b, "interface %s\n ip ospf area %s\n ip ospf network %s\n", f.Name, f.Area, ospfNetwork(f.Type))
		fmt.Fprintf(&b, " ip ospf hello-interval %d\n ip ospf dead-interval %d\n", hello, hello*d.HelloMultiplier)
		// Labs retransmit after 1s (default 5s): an instance a neighbour
		// drops under MinLSArrival (1s) right after the exchange then costs
		// 1s, not 5s, of convergence.
		b.WriteString(" ip ospf retransmit-interval 1\n")
		fmt.Fprintf(&b, " ip ospf cost %d\n", min(f.Metric, 65535))
		b.WriteString(frrOSPFAuthIface(n))
		b.WriteString(frrBFDIface(n, "ospf"))
		if f.Type == "lan" && n.Priority >= 0 {
			fmt.Fprintf(&b, " ip ospf priority %d\n", n.Priority)
		}
		if f.Edge {
			b.WriteString(" ip ospf passive\n") // toward a host
		}
		b.WriteString("exit\n!\n")
	}
	fmt.Fprintf(&b, "router ospf\n ospf router-id %s\n log-adjacency-changes\n", n.Loopback)
	b.WriteString(" timers throttle spf 0 50 1000\n")
	// ospfd waits its minimum LSA interval (5 s) after the first Full
	// adjacency before originating area-scope opaque LSAs (its TE LSA);
	// a lab does not need that wait.
	b.WriteString(" timers throttle lsa all 0\n")
	b.WriteString(" capability opaque\n")
	if !n.NoTE {
		fmt.Fprintf(&b, " mpls-te on\n mpls-te router-address %s\n", n.Loopback)
	}
	b.WriteString("exit\n!\n")
	return b.String()
}

// OSPFNbr is one row of FRR's `show ip ospf neighbor`.
type OSPFNbr struct {
	RouterID  string
	Priority  string
	State     string // "Full/DR", "2-Way/DROther", ...
	Address   string
	Interface string // "f1-1:10.254.0.1" as FRR shows it
}

// OSPFNeighbors returns an FRR node's OSPF neighbours from the text
// output.
func (l *Lab) OSPFNeighbors(ctx context.Context, node string) ([]OSPFNbr, error) {
	out, err := l.Vtysh(ctx, node, "show ip ospf neighbor")
	if err != nil {
		return nil, err
	}
	var nbrs []OSPFNbr
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// "10.255.0.1  1 Full/DR  1m02s  2.935s 10.254.0.0  r1-1:10.254.0.1  0 0 0"
		if len(f) < 7 || f[0] == "Neighbor" {
			continue
		}
		if _, err := netip.ParseAddr(f[0]); err != nil {
			continue
		}
		nb := OSPFNbr{RouterID: f[0], Priority: f[1], State: f[2]}
		// Up time and dead time are one or two fields depending on the
		// version; the address is the first field after the state that
		// parses as an address.
		for i := 3; i < len(f)-1; i++ {
			if _, err := netip.ParseAddr(f[i]); err == nil {
				nb.Address, nb.Interface = f[i], f[i+1]
				break
			}
		}
		nbrs = append(nbrs, nb)
	}
	return nbrs, nil
}
