// Package lsdb holds the protocol-neutral topology that SPF and FARE work on:
// an immutable snapshot of nodes, two-way-checked links and prefixes, rebuilt
// by a protocol instance on every change of its link-state database.
//
// Nodes and links are stored in dense slices addressed by int32 indices so
// that SPF over tens of thousands of links stays allocation-light; a Graph is
// never modified after Build, so any goroutine may read it without locks.
package lsdb

import (
	"net/netip"
	"sort"
)

// Node is a router or an IS-IS pseudonode (LAN).
type Node struct {
	ID       string // protocol id: IS-IS "0000.0000.0001.00", OSPF "10.0.0.1"
	Name     string // hostname when known
	Pseudo   bool   // IS-IS pseudonode / OSPF network: a transit-only vertex
	Overload bool   // IS-IS overload bit: not used for transit
	Attached bool   // IS-IS ATT bit (L1L2 router attached to L2)
	RouterID netip.Addr
	// Links of this node are Graph.Links[First : First+Count].
	First, Count int32
}

// Link is one directed adjacency as advertised by From. Parallel links between
// the same two nodes are separate entries (FARE sums them per neighbour).
type Link struct {
	From, To   int32
	Metric     uint32
	MaxBW      float32 // bytes/s, from the Maximum Link Bandwidth sub-TLV
	HasBW      bool
	LocalAddr  netip.Addr
	RemoteAddr netip.Addr
}

// Prefix is one reachability entry of one advertiser.
type Prefix struct {
	Prefix    netip.Prefix
	Node      int32 // advertiser
	Metric    uint32
	PathBW    float32 // bytes/s, from the FARE Path Bandwidth sub-TLV
	HasPathBW bool
	Down      bool // IS-IS up/down bit (leaked downwards)
	External  bool
}

// Graph is an immutable snapshot. Self is the computing router's index, or -1.
type Graph struct {
	Protocol string // "isis" | "ospf"
	Level    int    // IS-IS level (1 or 2); 0 for OSPF
	Area     string // OSPF area; empty for IS-IS
	Self     int32
	Nodes    []Node
	Links    []Link
	Prefixes []Prefix // sorted by prefix, then advertiser
	// Adjacencies are Self's live adjacencies when the snapshot was taken:
	// what turns a first-hop link into a kernel next hop.
	Adjacencies []Adjacency
	index       map[string]int32
}

// Adjacency is one of Self's neighbours on one interface.
type Adjacency struct {
	Node     string         // the neighbour's node id (as in Node.ID)
	IfIndex  int            // our interface
	IfName   string         // our interface
	Local    []netip.Prefix // our addresses on that interface
	NbrAddrs []netip.Addr   // the neighbour's addresses on that link
}

// Lookup returns the index of the node with the given id, or -1.
func (g *Graph) Lookup(id string) int32 {
	if i, ok := g.index[id]; ok {
		return i
	}
	return -1
}

// LinksOf returns the outgoing links of node n.
func (g *Graph) LinksOf(n int32) []Link {
	nd := &g.Nodes[n]
	return g.Links[nd.First : nd.First+nd.Count]
}

// Builder collects one database's content; Build turns it into a Graph.
type Builder struct {
	protocol string
	level    int
	area     string
	nodes    []Node
	index    map[string]int32
	links    []Link
	prefixes []Prefix
	adjs     []Adjacency
}

// NewBuilder starts a snapshot for one protocol level or area.
func NewBuilder(protocol string, level int, area string) *Builder {
	return &Builder{protocol: protocol, level: level, area: area, index: map[string]int32{}}
}

// Node returns the index for id, creating a bare node if it is new. Links to
// nodes that never get an AddNode call are dropped by the two-way check.
func (b *Builder) Node(id string) int32 {
	if i, ok := b.index[id]; ok {
		return i
	}
	i := int32(len(b.nodes))
	b.nodes = append(b.nodes, Node{ID: id, First: -1})
	b.index[id] = i
	return i
}

// AddNode records a node that has its own database entry (LSP/LSA).
func (b *Builder) AddNode(n Node) int32 {
	i := b.Node(n.ID)
	n.First = 0
	b.nodes[i] = n
	return i
}

// AddLink records a link advertised by from.
func (b *Builder) AddLink(from, to string, l Link) {
	l.From, l.To = b.Node(from), b.Node(to)
	b.links = append(b.links, l)
}

// AddPrefix records a prefix advertised by node.
func (b *Builder) AddPrefix(node string, p Prefix) {
	p.Node = b.Node(node)
	b.prefixes = append(b.prefixes, p)
}

// AddAdjacency records one of Self's adjacencies.
func (b *Builder) AddAdjacency(a Adjacency) { b.adjs = append(b.adjs, a) }

// Build applies the two-way check (a link A→B is kept only if B, which must
// have its own database entry, advertises a link back to A) and freezes the
// snapshot. self may be empty.
func (b *Builder) Build(self string) *Graph {
	n := len(b.nodes)
	present := make([]bool, n)
	for i := range b.nodes {
		present[i] = b.nodes[i].First == 0
	}
	// back[a] holds every b such that b advertises a link to a.
	type pair struct{ a, b int32 }
	back := make(map[pair]struct{}, len(b.links))
	for _, l := range b.links {
		back[pair{l.From, l.To}] = struct{}{}
	}
	links := make([]Link, 0, len(b.links))
	for _, l := range b.links {
		if !present[l.From] || !present[l.To] || l.From == l.To {
			continue
		}
		if _, ok := back[pair{l.To, l.From}]; !ok {
			continue
		}
		links = append(links, l)
	}
	sort.SliceStable(links, func(i, j int) bool { return links[i].From < links[j].From })
	nodes := make([]Node, 0, n)
	remap := make([]int32, n)
	for i := range b.nodes {
		if !present[i] {
			remap[i] = -1
			continue
		}
		remap[i] = int32(len(nodes))
		nodes = append(nodes, b.nodes[i])
	}
	g := &Graph{Protocol: b.protocol, Level: b.level, Area: b.area, Self: -1, index: make(map[string]int32, len(nodes))}
	for i := range links {
		links[i].From, links[i].To = remap[links[i].From], remap[links[i].To]
	}
	for i := range nodes {
		nodes[i].First, nodes[i].Count = 0, 0
	}
	for i := len(links) - 1; i >= 0; i-- {
		nd := &nodes[links[i].From]
		nd.First = int32(i)
		nd.Count++
	}
	for i := range nodes {
		g.index[nodes[i].ID] = int32(i)
	}
	prefixes := make([]Prefix, 0, len(b.prefixes))
	for _, p := range b.prefixes {
		if r := remap[p.Node]; r >= 0 {
			p.Node = r
			prefixes = append(prefixes, p)
		}
	}
	sort.SliceStable(prefixes, func(i, j int) bool {
		if c := prefixes[i].Prefix.Addr().Compare(prefixes[j].Prefix.Addr()); c != 0 {
			return c < 0
		}
		if prefixes[i].Prefix.Bits() != prefixes[j].Prefix.Bits() {
			return prefixes[i].Prefix.Bits() < prefixes[j].Prefix.Bits()
		}
		return prefixes[i].Node < prefixes[j].Node
	})
	g.Nodes, g.Links, g.Prefixes, g.Adjacencies = nodes, links, prefixes, b.adjs
	if self != "" {
		g.Self = g.Lookup(self)
	}
	return g
}
