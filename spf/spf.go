package spf

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/fared/fared/internal/recycle"
	"github.com/fared/fared/lsdb"
)

// Infinity is the distance of an unreachable node.
const Infinity = math.MaxUint64

// Result is the shortest-path DAG rooted at Graph.Self. It is immutable after
// Run or Reuse returns: the exported slices are shared (Reuse shares them with
// the previous Result) and must not be modified by callers.
type Result struct {
	Graph *lsdb.Graph
	Self  int32

	// Dist is the distance of every node from Self (Infinity if unreachable).
	Dist []uint64
	// Order lists the reachable nodes in settle order (Self first). It is a
	// topological order of the DAG: every parent precedes its children.
	Order []int32

	// The DAG, indexed by child. The parent edges of node v are
	// e in [ParentStart[v], ParentStart[v+1]); EdgeParent[e] is the parent and
	// EdgeLinks[EdgeLinkStart[e]:EdgeLinkStart[e+1]] are the parallel links
	// parent→v (indices into Graph.Links) that lie on a shortest path, i.e.
	// those with the smallest metric. Parents appear in settle order.
	ParentStart   []int32
	EdgeParent    []int32
	EdgeLinkStart []int32
	EdgeLinks     []int32

	// Neighbors is the sorted set of first-hop neighbours: real routers that
	// Self reaches over one of its own links, directly or through a pseudonode.
	// Self's links that reach Neighbors[i] (several when parallel links exist,
	// or Self's LAN link when the neighbour sits behind a pseudonode) are
	// NeighborLinks[NeighborLinkStart[i]:NeighborLinkStart[i+1]], ascending.
	Neighbors         []int32
	NeighborLinkStart []int32
	NeighborLinks     []int32

	// First hops (FirstHops), each distinct set stored once: in a fabric
	// most nodes share one of a few sets (every remote leaf is reached over
	// all local spines), so a per-node list would repeat one set thousands
	// of times. The set of node v is fhList[fhStart[s]:fhStart[s+1]] with
	// s = fhSet[v]; set 0 is the empty set (Self, unreachable nodes).
	fhSet, fhStart, fhList []int32
}

// Reachable reports whether n has a shortest path from Self.
func (r *Result) Reachable(n int32) bool {
	return n >= 0 && int(n) < len(r.Dist) && r.Dist[n] != Infinity
}

// Parents returns the DAG parents of n (a new slice, settle order).
func (r *Result) Parents(n int32) []int32 {
	if r.ParentStart == nil {
		return nil
	}
	lo, hi := r.ParentStart[n], r.ParentStart[n+1]
	out := make([]int32, hi-lo)
	copy(out, r.EdgeParent[lo:hi])
	return out
}

// FirstHops returns the sorted first-hop neighbours of n (a subset of
// Neighbors). The slice aliases the Result and must not be modified; nodes
// with the same first hops get the same slice.
func (r *Result) FirstHops(n int32) []int32 {
	if n < 0 || int(n) >= len(r.fhSet) {
		return nil
	}
	s := r.fhSet[n]
	return r.fhList[r.fhStart[s]:r.fhStart[s+1]:r.fhStart[s+1]]
}

// NeighborIndex returns the position of node nb in Neighbors, or -1.
func (r *Result) NeighborIndex(nb int32) int {
	lo, hi := 0, len(r.Neighbors)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.Neighbors[m] < nb {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(r.Neighbors) && r.Neighbors[lo] == nb {
		return lo
	}
	return -1
}

// SelfLinks returns Self's links (indices into Graph.Links) that reach the
// first-hop neighbour nb, or nil if nb is not a first hop.
func (r *Result) SelfLinks(nb int32) []int32 {
	i := r.NeighborIndex(nb)
	if i < 0 {
		return nil
	}
	return r.NeighborLinks[r.NeighborLinkStart[i]:r.NeighborLinkStart[i+1]:r.NeighborLinkStart[i+1]]
}

// Run computes the shortest-path DAG from g.Self. g.Self == -1 gives an empty
// Result (every node unreachable).
func Run(g *lsdb.Graph) *Result {
	n := len(g.Nodes)
	r := &Result{Graph: g, Self: g.Self}
	dist := make([]uint64, n)
	for i := range dist {
		dist[i] = Infinity
	}
	r.Dist = dist
	if g.Self < 0 || int(g.Self) >= n {
		r.ParentStart = make([]int32, n+1)
		r.EdgeLinkStart = []int32{0}
		r.NeighborLinkStart = []int32{0}
		r.fhSet, r.fhStart = make([]int32, n), []int32{0, 0}
		return r
	}
	ws := pool.Get()
	defer pool.Put(ws)
	order, ok := ws.dijkstra(g, false)
	if !ok {
		order, _ = ws.dijkstra(g, true)
	}
	r.Order = order
	for v := range dist {
		dist[v] = ws.st[v].dist
	}
	r.dag(ws)
	r.firstHops(ws)
	return r
}

// dijkstra settles every node reachable from g.Self, setting st[v].dist,
// and returns the settle order. It uses an indexed binary heap whose key is
// 2*dist plus one for a real router, so that at equal distance pseudonodes
// settle before routers: the zero-metric pseudonode→member links then
// always point from an earlier-settled node to a later one.
//
// The DAG entries of v are found while relaxing: link u→v when dist[u] +
// metric equals v's tentative distance at that moment (u is settled and v
// is not, so u settles before v). Tentative distances only decrease, so
// every entry is among them; a decrease of dist[v] discards the earlier
// ones. Each node writes its entries into its own range of ws.slots,
// overwriting from the start after a decrease, so that when Dijkstra ends
// the range holds exactly the node's entries in production order (per
// parent in settle order, its links in memory order). The range is the
// node's own links' (two-way checked links give a node at least as many
// links as DAG parents) unless exact is set: then the node's count of
// incoming links, which no node can exceed. ok is false when a range was
// too short (parallel links more numerous one way than the other); the
// caller then runs again with exact ranges.
func (ws *workspace) dijkstra(g *lsdb.Graph, exact bool) (order []int32, ok bool) {
	n, self, links := len(g.Nodes), g.Self, g.Links
	st := recycle.Grow(ws.st, n)
	flags := recycle.Grow(ws.flags, n)
	slots := recycle.Grow(ws.slots, len(links))
	ws.st, ws.flags, ws.slots = st, flags, slots
	if exact {
		for i := range st {
			st[i] = nodeState{}
		}
		for i := range links {
			st[links[i].To].cap++
		}
		base := int32(0)
		for i := range st {
			c := st[i].cap
			st[i] = nodeState{dist: Infinity, rank: -1, last: -1, base: base, cap: c}
			base += c
		}
	} else {
		for i := range st {
			nd := &g.Nodes[i]
			st[i] = nodeState{dist: Infinity, rank: -1, last: -1, base: nd.First, cap: nd.Count}
		}
	}
	clear(flags)
	ws.anyPseudo = false
	q := queue{heap: heap{pos: recycle.Grow(ws.pos, n), items: ws.items[:0]}, nodes: g.Nodes}
	for i := range q.pos {
		q.pos[i] = -1
	}
	order = make([]int32, 0, n)
	ok = true
	st[self].dist = 0
	q.push(self, 0)
	for q.len() > 0 {
		u := q.pop()
		st[u].rank = int32(len(order))
		order = append(order, u)
		nd := &g.Nodes[u]
		if nd.Pseudo {
			flags[u] |= flagPseudo
			ws.anyPseudo = true
		}
		if u != self && nd.Overload { // reachable, never transit
			continue
		}
		relax(u, nd.First, links[nd.First:nd.First+nd.Count], st, slots, &q)
	}
	for i := range st {
		if st[i].ent > st[i].cap {
			ok = false
			break
		}
	}
	ws.pos, ws.items = q.pos, q.items
	return order, ok
}

// relax relaxes the links of u (settled; its links start at index first),
// writing the entries it finds into their child's range of slots; a node
// whose range is too short counts more entries than the range holds. A
// function of its own so that its loop keeps its state in registers.
func relax(u, first int32, links []lsdb.Link, st []nodeState, slots []entry, q *queue) {
	du := st[u].dist
	for i := range links {
		l := &links[i]
		v := l.To
		sv := &st[v]
		if sv.rank >= 0 {
			continue
		}
		d := du + uint64(l.Metric)
		if d < du { // overflow: treat as unreachable over this link
			continue
		}
		if d > sv.dist {
			continue
		}
		lower := d < sv.dist
		if lower {
			// A shorter path: the entries found so far are stale.
			sv.dist = d
			sv.ent, sv.edges, sv.last = 0, 0, -1
		}
		if sv.ent < sv.cap {
			slots[sv.base+sv.ent] = entry{first + int32(i), u}
		}
		sv.ent++
		// Entries of one (u, v) pair are consecutive among v's: u relaxes
		// all its links before another node settles.
		if sv.last != u {
			sv.last = u
			sv.edges++
		}
		if lower {
			q.lower(v, d) // last: nothing is kept across the call
		}
	}
}

// entry is one DAG entry in a node's range: the link and its parent end.
type entry struct{ link, u int32 }

// queue is the heap of dijkstra with its keys: 2*dist, plus one for a
// real router.
type queue struct {
	heap
	nodes []lsdb.Node
}

// lower inserts v at distance d or lowers it to d.
//
//go:noinline
func (q *queue) lower(v int32, d uint64) {
	k := d << 1
	if !q.nodes[v].Pseudo {
		k |= 1
	}
	q.update(v, k)
}

// dag lays the DAG out, indexed by child, from the nodes' ranges of slots:
// entries (one per shortest-path link) and edges (runs of entries with the
// same parent) at prefix sums of the per-child counts, in one forward pass.
// It also marks Self's children and the first-hop neighbours in ws.flags.
func (r *Result) dag(ws *workspace) {
	n, self := len(r.Dist), r.Self
	st, flags, slots := ws.st[:n], ws.flags[:n], ws.slots
	parentStart := make([]int32, n+1)
	var entries, edges int32
	for v := range st {
		entries += st[v].ent
		edges += st[v].edges
		parentStart[v+1] = edges
	}
	edgeParent := make([]int32, edges)
	entLink := make([]int32, entries)
	// Without parallel links every edge has one entry and EdgeLinkStart is
	// 0, 1, 2, …: a shared read-only sequence.
	shared := edges == entries
	var edgeLinkStart []int32
	if shared {
		edgeLinkStart = iota32(int(entries) + 1)
	} else {
		edgeLinkStart = make([]int32, edges+1)
		edgeLinkStart[edges] = entries
	}
	anyPseudo := ws.anyPseudo
	pnKids := ws.pnKids[:0] // (pseudonode parent, child) edges
	if shared && !anyPseudo {
		layShared(st, slots, flags, self, entLink, edgeParent)
	} else {
		p, e := int32(0), int32(0)
		for v := range st {
			s := &st[v]
			last := int32(-1)
			for _, x := range slots[s.base : s.base+s.ent] {
				entLink[p] = x.link
				if x.u != last {
					last = x.u
					edgeParent[e] = x.u
					edgeLinkStart[e] = p // identity when shared
					e++
					if x.u == self {
						flags[v] |= flagSelfKid
					} else if anyPseudo && flags[x.u]&flagPseudo != 0 {
						pnKids = append(pnKids, [2]int32{x.u, int32(v)})
					}
				}
				p++
			}
		}
	}
	ws.pnKids = pnKids
	r.ParentStart, r.EdgeParent, r.EdgeLinkStart, r.EdgeLinks = parentStart, edgeParent, edgeLinkStart, entLink

	// First-hop neighbours: real routers with Self as a DAG parent, or with
	// a pseudonode parent that has Self as a DAG parent.
	for _, e := range pnKids {
		if flags[e[0]]&flagSelfKid != 0 && flags[e[1]]&flagPseudo == 0 {
			flags[e[1]] |= flagNeighbor
		}
	}
	for v, f := range flags {
		if f&(flagSelfKid|flagPseudo) == flagSelfKid {
			flags[v] = f | flagNeighbor
		}
	}
}

// layShared is dag's pass when every edge has one entry (edge p is entry
// p) and no pseudonode is a parent.
func layShared(st []nodeState, slots []entry, flags []uint8, self int32, entLink, edgeParent []int32) {
	edgeParent = edgeParent[:len(entLink)]
	p := 0
	for v := range st {
		s := &st[v]
		for _, x := range slots[s.base : s.base+s.ent] {
			entLink[p], edgeParent[p] = x.link, x.u
			p++
			if x.u == self {
				flags[v] |= flagSelfKid
			}
		}
	}
}

// nodeState is Run's per-node scratch, kept together for locality (32
// bytes).
type nodeState struct {
	dist uint64 // tentative, then final distance
	rank int32  // settle position, -1 while unsettled
	// The entries at the node's current tentative distance, their distinct
	// parents, and the parent of the latest one.
	ent, edges, last int32
	// The node's range of slots.
	base, cap int32
}

const (
	flagPseudo   = 1 << iota // a pseudonode (set when settled); Run's per-node flags
	flagSelfKid              // Self is a DAG parent
	flagNeighbor             // a first-hop neighbour
)

// identity is the longest 0, 1, 2, … sequence handed out so far; results
// share prefixes of it (it is never written after creation). It stays for
// the process's life: 4 bytes per DAG edge of the largest graph seen.
var identity atomic.Pointer[[]int32]

// iota32 returns the read-only sequence 0, 1, …, n-1.
func iota32(n int) []int32 {
	if p := identity.Load(); p != nil && len(*p) >= n {
		return (*p)[:n:n]
	}
	s := make([]int32, n+n/4)
	for i := range s {
		s[i] = int32(i)
	}
	identity.Store(&s)
	return s[:n:n]
}

// firstHops derives Neighbors, their links from Self and the first-hop
// sets. A first-hop neighbour is a first hop of itself; every other node
// inherits the union of its parents' first hops (Self contributes none).
// Sets are bitsets over the neighbour slots while computing, then each
// distinct set is stored once.
func (r *Result) firstHops(ws *workspace) {
	g, self, flags := r.Graph, r.Self, ws.flags
	n := len(g.Nodes)
	// Neighbours, in node order so that bit order is node order.
	slot := recycle.Grow(ws.slot, n)
	ws.slot = slot
	nn := 0
	for v, f := range flags {
		slot[v] = -1
		if f&flagNeighbor != 0 {
			slot[v] = int32(nn)
			nn++
		}
	}
	nbs := make([]int32, 0, nn)
	for v := range slot {
		if slot[v] >= 0 {
			nbs = append(nbs, int32(v))
		}
	}
	// Self's links per neighbour: the links of its edge from Self, and of
	// Self's edge to a pseudonode parent attached to Self.
	nls := make([]int32, len(nbs)+1)
	var links []int32
	for i, v := range nbs {
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			p := r.EdgeParent[e]
			var pe int32 = -1
			if p == self {
				pe = e
			} else if flags[p]&(flagPseudo|flagSelfKid) == flagPseudo|flagSelfKid {
				for f := r.ParentStart[p]; f < r.ParentStart[p+1]; f++ {
					if r.EdgeParent[f] == self {
						pe = f
						break
					}
				}
			}
			if pe >= 0 {
				links = append(links, r.EdgeLinks[r.EdgeLinkStart[pe]:r.EdgeLinkStart[pe+1]]...)
			}
		}
		sortInt32(links[nls[i]:])
		nls[i+1] = int32(len(links))
	}
	r.Neighbors, r.NeighborLinkStart, r.NeighborLinks = nbs, nls, links

	// Bitsets in settle order (parents before children). Self's row is
	// empty; rows of unreachable nodes are never read.
	w := max((nn+63)/64, 1)
	set := recycle.Grow(ws.set, n*w)
	ws.set = set
	clear(set[int(self)*w : int(self)*w+w])
	ps, ep := r.ParentStart, r.EdgeParent
	if w == 1 {
		for _, v := range r.Order[1:] {
			var x uint64
			if s := slot[v]; s >= 0 {
				x = 1 << uint(s)
			}
			for _, p := range ep[ps[v]:ps[v+1]] {
				x |= set[p]
			}
			set[v] = x
		}
	} else {
		for _, v := range r.Order[1:] {
			dst := set[int(v)*w : int(v)*w+w]
			clear(dst)
			if s := slot[v]; s >= 0 {
				dst[s>>6] |= 1 << (uint(s) & 63)
			}
			for _, p := range ep[ps[v]:ps[v+1]] {
				src := set[int(p)*w : int(p)*w+w]
				for k := range dst {
					dst[k] |= src[k]
				}
			}
		}
	}

	// Distinct sets through an open-addressing table of set ids (0: free
	// slot), keyed by a hash of the bitset; rep[s] is a node holding set s.
	fhSet := make([]int32, n)
	size := 1
	for size < 2*n {
		size <<= 1
	}
	tab := recycle.Grow(ws.tab, size)
	clear(tab)
	ws.tab = tab
	rep := append(ws.rep[:0], self) // set 0: empty
	start := append(ws.start[:0], 0, 0)
	list := ws.list[:0]
	for v := int32(0); v < int32(n); v++ {
		if v == self || r.Dist[v] == Infinity {
			continue
		}
		row := set[int(v)*w : int(v)*w+w]
		hv := uint64(0)
		empty := true
		for _, x := range row {
			hv = (hv ^ x) * 0x9e3779b97f4a7c15
			empty = empty && x == 0
		}
		if empty {
			continue // set 0
		}
		i := int(hv>>32) & (size - 1)
		for {
			s := tab[i]
			if s == 0 {
				s = int32(len(rep))
				tab[i] = s
				rep = append(rep, v)
				for k, x := range row {
					for x != 0 {
						list = append(list, nbs[k*64+bits.TrailingZeros64(x)])
						x &= x - 1
					}
				}
				start = append(start, int32(len(list)))
				fhSet[v] = s
				break
			}
			if o := rep[s]; slicesEqual(set[int(o)*w:int(o)*w+w], row) {
				fhSet[v] = s
				break
			}
			i = (i + 1) & (size - 1)
		}
	}
	ws.rep, ws.start, ws.list = rep, start, list
	r.fhSet = fhSet
	r.fhStart = append([]int32(nil), start...)
	r.fhList = append([]int32(nil), list...)
}

func slicesEqual(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// workspace is the scratch of one Run, recycled through pool.
type workspace struct {
	st                  []nodeState
	flags               []uint8
	pos, slot, tab, rep []int32
	slots               []entry
	start, list         []int32
	items               []heapItem
	pnKids              [][2]int32
	anyPseudo           bool
	set                 []uint64
}

// pool recycles workspaces between runs (internal/recycle).
var pool recycle.Pool[workspace]

// heap is an indexed binary min-heap of nodes keyed by uint64. Sifting
// moves a hole instead of swapping, which places every item exactly where
// the textbook swap-based sift does: ties are broken the same way, so the
// settle order of equal-distance nodes is stable across versions.
type heap struct {
	items []heapItem
	pos   []int32 // position of a node in the heap, -1 if absent
}

type heapItem struct {
	key  uint64
	node int32
}

func (h *heap) len() int { return len(h.items) }

func (h *heap) push(v int32, k uint64) {
	h.items = append(h.items, heapItem{})
	h.up(len(h.items)-1, heapItem{k, v})
}

// update inserts v or lowers its key.
func (h *heap) update(v int32, k uint64) {
	i := h.pos[v]
	if i < 0 {
		h.push(v, k)
		return
	}
	h.up(int(i), heapItem{k, v})
}

func (h *heap) pop() int32 {
	v := h.items[0].node
	h.pos[v] = -1
	last := len(h.items) - 1
	x := h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.down(0, x)
	}
	return v
}

// up places x at hole i or above.
func (h *heap) up(i int, x heapItem) {
	it := h.items
	for i > 0 {
		p := (i - 1) / 2
		if it[p].key <= x.key {
			break
		}
		h.place(i, it[p])
		i = p
	}
	h.place(i, x)
}

// down places x at hole i or below.
func (h *heap) down(i int, x heapItem) {
	it := h.items
	n := len(it)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && it[r].key < it[l].key {
			m = r
		}
		if x.key <= it[m].key {
			break
		}
		h.place(i, it[m])
		i = m
	}
	h.place(i, x)
}

// place puts x at position i and records where it is.
func (h *heap) place(i int, x heapItem) {
	h.items[i] = x
	h.pos[x.node] = int32(i)
}
