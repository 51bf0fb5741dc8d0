// Package lsdb holds the protocol-neutral topology that SPF and FARE work on:
// an immutable snapshot of nodes, two-way-checked links and prefixes, rebuilt
// by a protocol instance on every change of its link-state database.
//
// Nodes and links are stored in dense slices addressed by int32 indices so
// that SPF over tens of thousands of links stays allocation-light; a Graph is
// never modified after Build, so any goroutine may read it without locks.
package lsdb

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"sync/atomic"

	"github.com/fared/fared/internal/recycle"
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
// It holds what shortest paths and bandwidth weights read, 20 bytes, so
// that their loops over a quarter of a million links touch few cache
// lines; the link's addresses, which only next-hop resolution at Self and
// the views read, are beside it in Graph.Addrs.
type Link struct {
	From, To int32
	Metric   uint32
	MaxBW    float32 // bytes/s, from the Maximum Link Bandwidth sub-TLV
	HasBW    bool
}

// LinkAddrs are a link's IPv4 interface addresses as its advertiser
// gives them (IS-IS sub-TLVs 6 and 8; OSPF link data and TE sub-TLVs).
type LinkAddrs struct {
	Local, Remote Addr4
}

// Addr4 is a link's IPv4 interface address, the zero value for none. Both
// protocols advertise IPv4 link addresses only (IS-IS sub-TLVs 6 and 8,
// OSPF link data and TE sub-TLVs 3 and 4), and a large fabric has a
// quarter of a million links: four bytes without a pointer there, against
// a netip.Addr's 24 with one, keep Link small and the graph unscanned by
// the garbage collector. An advertised 0.0.0.0 reads as none.
type Addr4 [4]byte

// AddrOf returns a's IPv4 form, or none when a is not IPv4.
func AddrOf(a netip.Addr) Addr4 {
	if !a.Is4() {
		return Addr4{}
	}
	return a.As4()
}

// IsValid reports whether a is an address (not none).
func (a Addr4) IsValid() bool { return a != Addr4{} }

// Addr returns a as a netip.Addr: the invalid Addr for none.
func (a Addr4) Addr() netip.Addr {
	if !a.IsValid() {
		return netip.Addr{}
	}
	return netip.AddrFrom4(a)
}

func (a Addr4) String() string { return a.Addr().String() }

// Prefix is one reachability entry of one advertiser. Node may be a
// pseudonode: an OSPF transit network's own subnet belongs to its network
// vertex (RFC 2328 §16.1), so that every router's path to it includes the
// router's cost onto the network.
type Prefix struct {
	Prefix    netip.Prefix
	Node      int32 // advertiser
	Metric    uint32
	PathBW    float32 // bytes/s, from the FARE Path Bandwidth sub-TLV
	HasPathBW bool
	Down      bool // IS-IS up/down bit (leaked downwards)
	External  bool
	// OSPF path types (RFC 2328 §11): Inter marks a Summary LSA's prefix
	// (inter-area); Type2 an external with metric type 2 (E bit), whose
	// Metric is not added to the distance but compared first (§16.4).
	Inter bool
	Type2 bool
	// Forward is an OSPF external's forwarding address; invalid (the zero
	// Addr) when the LSA carries 0.0.0.0: traffic goes to the advertiser.
	Forward netip.Addr
}

// Graph is an immutable snapshot. Self is the computing router's index, or -1.
type Graph struct {
	Protocol string // "isis" | "ospf"
	Level    int    // IS-IS level (1 or 2); 0 for OSPF
	Area     string // OSPF area; empty for IS-IS
	Self     int32
	Nodes    []Node
	Links    []Link
	// Addrs[i] are Links[i]'s addresses; nil when no link has any.
	Addrs    []LinkAddrs
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

// LinkAddrs returns link i's addresses (none if the graph has none).
func (g *Graph) LinkAddrs(i int32) LinkAddrs {
	if int(i) < len(g.Addrs) {
		return g.Addrs[i]
	}
	return LinkAddrs{}
}

// Builder collects one database's content; Build turns it into a Graph.
type Builder struct {
	protocol string
	level    int
	area     string
	nodes    []Node
	index    map[string]int32
	links    []Link
	addrs    []LinkAddrs // parallel to links once any link has addresses
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
	b.AddLinkIndex(b.Node(from), b.Node(to), l, LinkAddrs{})
}

// AddLinkAddrs is AddLink for a link with addresses.
func (b *Builder) AddLinkAddrs(from, to string, l Link, a LinkAddrs) {
	b.AddLinkIndex(b.Node(from), b.Node(to), l, a)
}

// AddPrefix records a prefix advertised by node.
func (b *Builder) AddPrefix(node string, p Prefix) {
	p.Node = b.Node(node)
	b.prefixes = append(b.prefixes, p)
}

// AddLinkIndex is AddLinkAddrs for nodes already known by their Node
// index: a protocol that keys its nodes by binary id need not format
// every link's ends as text.
func (b *Builder) AddLinkIndex(from, to int32, l Link, a LinkAddrs) {
	l.From, l.To = from, to
	if b.addrs == nil && a != (LinkAddrs{}) {
		b.addrs = make([]LinkAddrs, len(b.links), cap(b.links))
	}
	b.links = append(b.links, l)
	if b.addrs != nil {
		b.addrs = append(b.addrs, a)
	}
}

// AddPrefixIndex is AddPrefix for a node known by its Node index.
func (b *Builder) AddPrefixIndex(node int32, p Prefix) {
	p.Node = node
	b.prefixes = append(b.prefixes, p)
}

// Grow makes room for that many more links and prefixes, so that a
// builder filled from a large database allocates its lists once.
func (b *Builder) Grow(links, prefixes int) {
	b.links = slices.Grow(b.links, links)
	if b.addrs != nil {
		b.addrs = slices.Grow(b.addrs, links)
	}
	b.prefixes = slices.Grow(b.prefixes, prefixes)
}

// AddAdjacency records one of Self's adjacencies.
func (b *Builder) AddAdjacency(a Adjacency) { b.adjs = append(b.adjs, a) }

// Build applies the two-way check (a link A→B is kept only if B, which must
// have its own database entry, advertises a link back to A) and freezes the
// snapshot. self may be empty. Nodes without their own entry are dropped with
// their links and prefixes; links are grouped by From, in the order they were
// added (parallel links stay in order); prefixes are sorted by prefix, then
// advertiser (stable). Build does not modify the Builder: it may be called
// again, and the Graph shares nothing with it but the Adjacencies.
func (b *Builder) Build(self string) *Graph { return b.build(self, false) }

// Finish is Build for a builder that is done: the graph may take over the
// builder's list of links instead of copying it (when the kept links are
// in it in order, as they are when links were added grouped by their
// From node in node order), so a large database's links are allocated
// once per graph, not twice. The builder must not be used afterwards.
func (b *Builder) Finish(self string) *Graph { return b.build(self, true) }

// build runs the stages of Build and Finish, each a method of the
// scratch (remap, bucket, twoWay) or of the builder (keptLinks, index,
// keptPrefixes). Each runs once per build, so the split costs nothing
// measurable (go test -bench Build ./fare/).
func (b *Builder) build(self string, take bool) *Graph {
	ws := spareScratch.Swap(nil)
	if ws == nil {
		ws = new(buildScratch)
	}
	defer spareScratch.Store(ws)

	nodes := ws.remapNodes(b.nodes)
	ws.bucket(b.links, len(nodes))
	ws.twoWay(nodes)
	links, addrs := b.keptLinks(ws, take)
	g := &Graph{Protocol: b.protocol, Level: b.level, Area: b.area, Self: -1}
	g.index = b.graphIndex(nodes)
	g.Nodes, g.Links, g.Addrs, g.Prefixes, g.Adjacencies = nodes, links, addrs, b.keptPrefixes(ws.remap), b.adjs
	if self != "" {
		g.Self = g.Lookup(self)
	}
	return g
}

// remapNodes gives every node with its own entry its new index (remap;
// -1 for the others) and returns those nodes, First and Count cleared.
func (ws *buildScratch) remapNodes(all []Node) []Node {
	remap := recycle.Grow(ws.remap, len(all))
	ws.remap = remap
	m := 0
	for i := range all {
		if all[i].First != 0 {
			remap[i] = -1
			continue
		}
		remap[i] = int32(m)
		m++
	}
	nodes := make([]Node, m)
	for i := range all {
		if r := remap[i]; r >= 0 {
			nodes[r] = all[i]
			nodes[r].First, nodes[r].Count = 0, 0
		}
	}
	return nodes
}

// bucket lists the candidate links (both ends present, not a loop) in
// new indices (ends; From -1 for the others), then buckets them by From
// (outs: link indices, ascending within a bucket) and by To (ins: the
// From of each), for m nodes.
func (ws *buildScratch) bucket(links []Link, m int) {
	remap := ws.remap
	ends := recycle.Grow(ws.ends, len(links))
	outStart := recycle.Grow(ws.outStart, m+1)
	inStart := recycle.Grow(ws.inStart, m+1)
	clear(outStart)
	clear(inStart)
	cands := 0
	for i := range links {
		l := &links[i]
		f, t := remap[l.From], remap[l.To]
		if f < 0 || t < 0 || f == t {
			f = -1
		} else {
			outStart[f+1]++
			inStart[t+1]++
			cands++
		}
		ends[i] = [2]int32{f, t}
	}
	for v := 1; v <= m; v++ {
		outStart[v] += outStart[v-1]
		inStart[v] += inStart[v-1]
	}
	outs := recycle.Grow(ws.outs, cands)
	ins := recycle.Grow(ws.ins, cands)
	outFill := recycle.Grow(ws.outFill, m)
	inFill := recycle.Grow(ws.inFill, m)
	copy(outFill, outStart[:m])
	copy(inFill, inStart[:m])
	for i, e := range ends {
		f, t := e[0], e[1]
		if f < 0 {
			continue
		}
		outs[outFill[f]] = int32(i)
		outFill[f]++
		ins[inFill[t]] = f
		inFill[t]++
	}
	ws.ends, ws.outStart, ws.inStart, ws.outs, ws.ins, ws.outFill, ws.inFill = ends, outStart, inStart, outs, ins, outFill, inFill
}

// twoWay is the two-way check, node by node: mark[x] == a+1 when x links
// to a; a's links a→x are kept when x is marked. kept lists them grouped
// by From, and each node's First and Count say where its own are.
func (ws *buildScratch) twoWay(nodes []Node) {
	m := len(nodes)
	ends, outStart, inStart, outs, ins := ws.ends, ws.outStart, ws.inStart, ws.outs, ws.ins
	mark := recycle.Grow(ws.mark, m)
	clear(mark)
	kept := ws.kept[:0]
	for a := int32(0); a < int32(m); a++ {
		for _, x := range ins[inStart[a]:inStart[a+1]] {
			mark[x] = a + 1
		}
		first := int32(len(kept))
		for _, li := range outs[outStart[a]:outStart[a+1]] {
			if mark[ends[li][1]] == a+1 {
				kept = append(kept, li)
			}
		}
		if c := int32(len(kept)) - first; c > 0 {
			nodes[a].First, nodes[a].Count = first, c
		}
	}
	ws.mark, ws.kept = mark, kept
}

// keptLinks copies the kept links (and their addresses) in new indices.
// With take it moves them down inside the builder's own list when they
// are in it in order, and the builder gives the list up.
func (b *Builder) keptLinks(ws *buildScratch, take bool) ([]Link, []LinkAddrs) {
	kept, ends := ws.kept, ws.ends
	src, srcAddrs := b.links, b.addrs
	links, took := []Link(nil), take && len(kept) > 0 && ascending(kept)
	var addrs []LinkAddrs
	if took {
		// kept[i] >= i: moving link kept[i] down to i never overwrites
		// one still to be moved.
		links = src[:len(kept):len(kept)]
		b.links = nil
		if srcAddrs != nil {
			addrs = srcAddrs[:len(kept):len(kept)]
			b.addrs = nil
		}
	} else {
		links = make([]Link, len(kept))
		if srcAddrs != nil && len(kept) > 0 {
			addrs = make([]LinkAddrs, len(kept))
		}
	}
	for i, li := range kept {
		l := &links[i]
		if !took || li != int32(i) {
			*l = src[li]
			if addrs != nil {
				addrs[i] = srcAddrs[li]
			}
		}
		l.From, l.To = ends[li][0], ends[li][1]
	}
	return links, addrs
}

// graphIndex is the id → index map of the kept nodes.
func (b *Builder) graphIndex(nodes []Node) map[string]int32 {
	if len(nodes) == len(b.nodes) {
		return maps.Clone(b.index) // the same indices
	}
	index := make(map[string]int32, len(nodes))
	for i := range nodes {
		index[nodes[i].ID] = int32(i)
	}
	return index
}

// keptPrefixes returns the prefixes of the kept nodes, in new indices,
// sorted (comparePrefix, stable).
func (b *Builder) keptPrefixes(remap []int32) []Prefix {
	np := 0
	for i := range b.prefixes {
		if remap[b.prefixes[i].Node] >= 0 {
			np++
		}
	}
	prefixes := make([]Prefix, 0, np)
	for _, p := range b.prefixes {
		if r := remap[p.Node]; r >= 0 {
			p.Node = r
			prefixes = append(prefixes, p)
		}
	}
	if !slices.IsSortedFunc(prefixes, comparePrefix) {
		slices.SortStableFunc(prefixes, comparePrefix)
	}
	return prefixes
}

func ascending(xs []int32) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] {
			return false
		}
	}
	return true
}

// comparePrefix is the order of Graph.Prefixes: address, length, advertiser.
func comparePrefix(a, b Prefix) int {
	if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits()); c != 0 {
		return c
	}
	return cmp.Compare(a.Node, b.Node)
}

// buildScratch is Build's working memory (5 MB for a 6,000-node fabric),
// kept for the next build. One spare, not a sync.Pool: the pool keeps one
// per CPU, and builds of one database follow each other on whichever CPU
// is free, so it held a copy per CPU for no gain. Concurrent builds (two
// levels at once) allocate a second set that the garbage collector takes
// back.
type buildScratch struct {
	remap, outStart, inStart, outs, ins, outFill, inFill, mark, kept []int32
	ends                                                             [][2]int32
}

var spareScratch atomic.Pointer[buildScratch]
