package interop

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Addressing plan (documented in docs via farelab status):
//
//	loopback of node N (1-based, file order)  10.255.0.N/32
//	system id of node N                       0000.0000.00NN (NN = N in hex)
//	p2p link i (0-based, file order)           10.254.0.0/16 + 2i as a /31: A = .2i, B = .2i+1
//	LAN s (0-based among LANs)                 10.253.s.0/24, member node N is .N
var (
	loopbackBase = netip.MustParseAddr("10.255.0.0")
	p2pBase      = netip.MustParseAddr("10.254.0.0")
	lanBase      = netip.MustParseAddr("10.253.0.0")
)

// Lab is a planned or running lab.
type Lab struct {
	Name       string
	Dir        string // run directory: <RunDir>/<Name>
	Topo       *Topology
	Nodes      []*Node
	Links      []*Link
	Netns      []string // every namespace of the lab: nodes, then LANs
	FaredBin   string   `json:",omitempty"`
	FarectlBin string   `json:",omitempty"`
	Created    time.Time
	Ready      bool // Up completed

	opts Options `json:"-"`
	// linksMu lets other goroutines (a test's route watcher) read Links
	// through LinkList while AddLink and DelLink change it. Code on the
	// goroutine that changes the lab reads Links directly.
	linksMu sync.RWMutex
}

// LinkList returns a copy of the lab's links, safe to call while another
// goroutine adds or removes links.
func (l *Lab) LinkList() []*Link {
	l.linksMu.RLock()
	defer l.linksMu.RUnlock()
	return slices.Clone(l.Links)
}

// Node is a node of a lab.
type Node struct {
	Name       string
	Kind       string // "frr" or "fared"
	Index      int    // N: 1-based position in the topology
	Netns      string
	Loopback   netip.Addr
	SystemID   string // 0000.0000.00NN
	Hostname   string
	Area       string
	Level      string
	Protocol   string    `json:",omitempty"` // "isis" (default) or "ospf"
	Priority   int       // LAN priority, -1 = default
	NoTE       bool      `json:",omitempty"` // FRR without mpls-te (see NodeSpec.NoTE)
	Auth       []AuthKey `json:",omitempty"` // see NodeSpec.Auth
	BFD        *BFDSpec  `json:",omitempty"` // see NodeSpec.BFD
	Interfaces []Iface
	Prefixes   []PrefixSpec // besides the loopback
	Dir        string       // config, logs, pid files
	Socket     string       `json:",omitempty"` // fared control socket
	FRRName    string       `json:",omitempty"` // FRR path space (-N)
	Pids       map[string]int
	// iNOF and hosts (inof.go; see NodeSpec).
	INOF     string `json:",omitempty"`
	Agent    string `json:",omitempty"`
	HostRole string `json:",omitempty"`
	HostID   string `json:",omitempty"`
	NQN      string `json:",omitempty"`
	Hook     string `json:",omitempty"`
	Extra    string `json:",omitempty"`
}

// Iface is an interface of a node.
type Iface struct {
	Name      string
	Type      string // "p2p" or "lan"
	Addr      netip.Prefix
	Peer      string // peer node (p2p) or LAN name
	PeerIface string `json:",omitempty"` // p2p only
	Link      int    // index into Lab.Links
	Bandwidth float64
	Metric    int
	// Level is the IS-IS circuit type: the levels both ends run ("1",
	// "2", "1-2"); on a LAN, the node's level.
	Level string `json:",omitempty"`
	// Area is the OSPF area of the interface (link area, else the node's).
	Area string `json:",omitempty"`
	// Edge: the peer is a host. The routing protocol runs passive here
	// (the subnet is advertised, no adjacency is sought).
	Edge bool `json:",omitempty"`
}

// Link is a p2p link or a LAN segment.
type Link struct {
	Index     int
	A, B      string       `json:",omitempty"`
	IfA, IfB  string       `json:",omitempty"`
	AddrA     netip.Prefix `json:",omitzero"`
	AddrB     netip.Prefix `json:",omitzero"`
	Bandwidth float64
	Metric    int

	LAN   string `json:",omitempty"`
	Netns string `json:",omitempty"` // the LAN's bridge namespace
	// Shared: the LAN has hosts (a shared switch port): its bridge
	// forwards the IEEE nearest-bridge group (01-80-C2-00-00-0E), as a
	// hub or an unmanaged switch in front of the port would, so the
	// hosts' iNOF and LLDP frames reach the switch.
	Shared  bool         `json:",omitempty"`
	Bridge  string       `json:",omitempty"`
	Subnet  netip.Prefix `json:",omitzero"`
	Members []Member     `json:",omitempty"`
}

// Member is a node's attachment to a LAN.
type Member struct {
	Node  string
	Iface string       // in the node's namespace
	Port  string       // bridge port in the LAN namespace
	Addr  netip.Prefix // 10.253.s.N/24
}

// Node returns the named node, or nil.
func (l *Lab) Node(name string) *Node {
	for _, n := range l.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Link returns the link with index i (file order; links added at run
// time take the next index, removed ones leave a gap), or nil.
func (l *Lab) Link(i int) *Link {
	for _, lk := range l.Links {
		if lk.Index == i {
			return lk
		}
	}
	return nil
}

// Iface returns the named interface of n, or nil.
func (n *Node) Iface(name string) *Iface {
	for i := range n.Interfaces {
		if n.Interfaces[i].Name == name {
			return &n.Interfaces[i]
		}
	}
	return nil
}

func addOffset(a netip.Addr, off int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// plan assigns names, addresses and system ids; it touches nothing. The
// result depends only on the topology and the lab name, so a test can
// compute what a lab will look like without root.
func plan(t *Topology, name string) (*Lab, error) {
	if err := checkName("lab", name, MaxLabName); err != nil {
		return nil, err
	}
	l := &Lab{Name: name, Topo: t}
	byName := map[string]*Node{}
	for i, s := range t.Nodes {
		n := &Node{
			Name: s.Name, Kind: s.Kind, Index: i + 1,
			Netns:    name + "-" + s.Name,
			Loopback: addOffset(loopbackBase, i+1),
			SystemID: fmt.Sprintf("0000.0000.%04x", i+1),
			Hostname: s.Name, Area: s.Area, Level: s.Level, Priority: s.Priority, NoTE: s.NoTE,
			Prefixes: s.Prefixes,
			Auth:     s.Auth,
			BFD:      s.BFD,
			Pids:     map[string]int{},
			Protocol: s.Protocol,
			INOF:     s.INOF, Agent: s.Agent, HostRole: s.HostRole, HostID: s.HostID, NQN: s.NQN, Hook: s.Hook, Extra: s.Extra,
		}
		if n.Kind == "frr" {
			n.FRRName = n.Netns
		}
		l.Nodes = append(l.Nodes, n)
		l.Netns = append(l.Netns, n.Netns)
		byName[n.Name] = n
	}
	pairCount := map[[2]string]int{}
	lans := 0
	for i, s := range t.Links {
		lk := &Link{Index: i, Bandwidth: s.Bandwidth, Metric: s.Metric}
		if s.IsLAN() {
			lk.LAN, lk.Netns, lk.Bridge = s.LAN, name+"-"+s.LAN, "br0"
			lk.Subnet = netip.PrefixFrom(addOffset(lanBase, lans*256), 24)
			// A LAN with hosts is a shared switch port: the switch's side
			// faces hosts (Edge), like a p2p link to a host.
			hosts := false
			for _, m := range s.Nodes {
				hosts = hosts || byName[m] != nil && byName[m].isHost()
			}
			lk.Shared = hosts
			for _, m := range s.Nodes {
				n := byName[m]
				if n == nil {
					return nil, fmt.Errorf("link %d: unknown node %q", i, m)
				}
				addr := netip.PrefixFrom(addOffset(lk.Subnet.Addr(), n.Index), 24)
				lk.Members = append(lk.Members, Member{Node: m, Iface: s.LAN, Port: m, Addr: addr})
				n.Interfaces = append(n.Interfaces, Iface{Name: s.LAN, Type: "lan", Addr: addr, Peer: s.LAN,
					Link: i, Bandwidth: s.Bandwidth, Metric: s.Metric, Level: n.Level, Edge: hosts && !n.isHost()})
			}
			l.Netns = append(l.Netns, lk.Netns)
			lans++
		} else {
			a, b := byName[s.A], byName[s.B]
			if a == nil || b == nil {
				return nil, fmt.Errorf("link %d: unknown node %q or %q", i, s.A, s.B)
			}
			// k counts parallel links between the same pair, so the
			// second A–B link is "<peer>-2" on both ends.
			pair := [2]string{min(s.A, s.B), max(s.A, s.B)}
			pairCount[pair]++
			k := strconv.Itoa(pairCount[pair])
			lk.A, lk.B = s.A, s.B
			lk.IfA, lk.IfB = s.B+"-"+k, s.A+"-"+k
			lk.AddrA = netip.PrefixFrom(addOffset(p2pBase, 2*i), 31)
			lk.AddrB = netip.PrefixFrom(addOffset(p2pBase, 2*i+1), 31)
			lvlA, lvlB := "", ""
			switch {
			case a.isHost() && b.isHost():
			case a.isHost():
				lvlB = b.Level // a switch's interface to a host: passive at its level
			case b.isHost():
				lvlA = a.Level
			default:
				lvl, err := commonLevel(a, b)
				if err != nil {
					return nil, fmt.Errorf("link %d (%s–%s): %w", i, s.A, s.B, err)
				}
				lvlA, lvlB = lvl, lvl
			}
			a.Interfaces = append(a.Interfaces, Iface{Name: lk.IfA, Type: "p2p", Addr: lk.AddrA, Peer: s.B, PeerIface: lk.IfB,
				Link: i, Bandwidth: s.Bandwidth, Metric: s.Metric, Level: lvlA, Edge: b.isHost()})
			b.Interfaces = append(b.Interfaces, Iface{Name: lk.IfB, Type: "p2p", Addr: lk.AddrB, Peer: s.A, PeerIface: lk.IfA,
				Link: i, Bandwidth: s.Bandwidth, Metric: s.Metric, Level: lvlB, Edge: a.isHost()})
		}
		setIfaceAreas(byName, i, s)
		l.Links = append(l.Links, lk)
	}
	for _, n := range l.Nodes {
		seen := map[string]bool{}
		for _, f := range n.Interfaces {
			if len(f.Name) > 15 {
				return nil, fmt.Errorf("node %s: interface name %q is longer than 15 bytes (too many parallel links?)", n.Name, f.Name)
			}
			if seen[f.Name] || f.Name == "lo" {
				return nil, fmt.Errorf("node %s: two interfaces would be named %q (rename the lan)", n.Name, f.Name)
			}
			seen[f.Name] = true
		}
	}
	return l, nil
}

// setDir fixes the run directory and the paths derived from it.
func (l *Lab) setDir(runDir string) {
	l.Dir = filepath.Join(runDir, l.Name)
	for _, n := range l.Nodes {
		n.Dir = filepath.Join(l.Dir, n.Name)
		if n.runsFared() {
			n.Socket = filepath.Join(n.Dir, "fared.sock")
		}
	}
}

var levelBits = map[string]int{"1": 1, "2": 2, "1-2": 3}

// commonLevel is the circuit type of a p2p link: the levels both ends run;
// level 1 also needs a common area (ISO 10589 §8.2.5.2).
func commonLevel(a, b *Node) (string, error) {
	l := levelBits[a.Level] & levelBits[b.Level]
	if a.Area != b.Area {
		l &^= 1
	}
	switch l {
	case 1:
		return "1", nil
	case 2:
		return "2", nil
	case 3:
		return "1-2", nil
	}
	return "", fmt.Errorf("no common level (levels %s and %s, areas %s and %s)", a.Level, b.Level, a.Area, b.Area)
}
