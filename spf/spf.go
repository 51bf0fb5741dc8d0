package spf

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

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
	// LinkBW and LinkHasBW snapshot Graph.Topo[EdgeLinks[i]].MaxBW/HasBW
	// (taken when Run builds the DAG, refreshed by Reuse/ReuseChanged), so
	// that bandwidth consumers (fare) read compact arrays along the DAG.
	LinkBW    []float32
	LinkHasBW []bool

	// Neighbors is the sorted set of first-hop neighbours: real routers that
	// Self reaches over one of its own links, directly or through a pseudonode.
	// Self's links that reach Neighbors[i] (several when parallel links exist,
	// or Self's LAN link when the neighbour sits behind a pseudonode) are
	// NeighborLinks[NeighborLinkStart[i]:NeighborLinkStart[i+1]], ascending.
	Neighbors         []int32
	NeighborLinkStart []int32
	NeighborLinks     []int32

	// The first hops of node v are FirstHopList[FirstHopStart[v]:FirstHopStart[v+1]],
	// sorted node indices (a subset of Neighbors).
	FirstHopStart []int32
	FirstHopList  []int32
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

// FirstHops returns the sorted first-hop neighbours of n. The slice aliases
// the Result and must not be modified.
func (r *Result) FirstHops(n int32) []int32 {
	if r.FirstHopStart == nil || n < 0 || int(n) >= len(r.Dist) {
		return nil
	}
	return r.FirstHopList[r.FirstHopStart[n]:r.FirstHopStart[n+1]:r.FirstHopStart[n+1]]
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

// transit reports whether SPF may relax the links of n.
func transit(g *lsdb.Graph, self, n int32) bool {
	return n == self || !g.Nodes[n].Overload
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
		r.FirstHopStart = make([]int32, n+1)
		r.EdgeLinkStart = []int32{0}
		r.NeighborLinkStart = []int32{0}
		return r
	}
	self := g.Self
	topo := g.TopoLinks()

	// Dijkstra with an indexed binary heap. The key is 2*dist plus one for a
	// real router, so that at equal distance pseudonodes settle before
	// routers: the zero-metric pseudonode→member links then always point
	// from an earlier-settled node to a later one.
	ws := getWorkspace()
	defer putWorkspace(ws)
	h := heap{pos: grow(ws.pos, n), key: ws.key[:0], node: ws.node[:0]}
	for i := range h.pos {
		h.pos[i] = -1
	}
	rank := grow(ws.rank, n) // settle position, -1 while unsettled
	for i := range rank {
		rank[i] = -1
	}
	defer func() { ws.pos, ws.key, ws.node, ws.rank = h.pos, h.key, h.node, rank }()
	order := make([]int32, 0, n)
	dist[self] = 0
	h.push(self, 0)
	// Candidate DAG entries, recorded while relaxing: (u, link, v) with
	// dist[u]+metric equal to v's tentative distance at that moment. Since
	// tentative distances only decrease, every DAG entry is among them; the
	// ones recorded before a later decrease of dist[v] (older generation)
	// are dropped below. u is settled and v is not, so u settles before v.
	cand := ws.cand[:0]
	gen := grow(ws.gen, n) // bumped when dist[v] decreases: older candidates lost
	clear(gen)
	for h.len() > 0 {
		u := h.pop()
		rank[u] = int32(len(order))
		order = append(order, u)
		if !transit(g, self, u) {
			continue
		}
		du := dist[u]
		nd := &g.Nodes[u]
		for li := nd.First; li < nd.First+nd.Count; li++ {
			l := &topo[li]
			v := l.To
			if rank[v] >= 0 {
				continue
			}
			d := du + uint64(l.Metric)
			if d < du { // overflow: treat as unreachable over this link
				continue
			}
			if d < dist[v] {
				dist[v] = d
				gen[v]++
				k := d << 1
				if !g.Nodes[v].Pseudo {
					k |= 1
				}
				h.update(v, k)
			}
			if d == dist[v] {
				cand = append(cand, candidate{u: u, v: v, link: li, gen: gen[v]})
			}
		}
	}
	r.Order = order
	ws.cand, ws.gen = cand, gen

	// DAG: keep the candidates still at v's final distance; counting sort
	// by child, keeping production order (per parent in settle order, its
	// links in memory order), so the entries of one (u, v) pair are
	// contiguous per child.
	cnt := grow(ws.cnt, n+1)
	clear(cnt)
	ws.cnt = cnt
	var entries int32
	for i := range cand {
		c := &cand[i]
		if c.gen == gen[c.v] {
			cnt[c.v+1]++
			entries++
		}
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	entParent := grow(ws.entParent, int(entries))
	ws.entParent = entParent
	entLink := make([]int32, entries)
	entBW := make([]float32, entries)
	entHas := make([]bool, entries)
	fill := grow(ws.fill, n)
	ws.fill = fill
	copy(fill, cnt[:n])
	// Neighbour detection on the way: Self's candidates come first (Self
	// settles first), then those of pseudonodes attached to Self.
	isPN := grow(ws.isPN, n) // pseudonodes with Self as a DAG parent
	isNb := grow(ws.isNb, n) // first-hop neighbours
	clear(isPN)
	clear(isNb)
	ws.isPN, ws.isNb = isPN, isNb
	for i := range cand {
		c := &cand[i]
		if c.gen != gen[c.v] {
			continue
		}
		p := fill[c.v]
		fill[c.v]++
		entParent[p] = c.u
		entLink[p] = c.link
		l := &topo[c.link]
		entBW[p], entHas[p] = l.MaxBW, l.HasBW
		if c.u == self {
			if g.Nodes[c.v].Pseudo {
				isPN[c.v] = true
			} else {
				isNb[c.v] = true
			}
		} else if isPN[c.u] && !g.Nodes[c.v].Pseudo {
			isNb[c.v] = true
		}
	}
	// Collapse runs of equal parent into edges.
	parentStart := make([]int32, n+1)
	var edges int32
	for v := 0; v < n; v++ {
		lo, hi := cnt[v], cnt[v+1]
		for p := lo; p < hi; p++ {
			if p == lo || entParent[p] != entParent[p-1] {
				edges++
			}
		}
		parentStart[v+1] = edges
	}
	edgeParent := make([]int32, edges)
	edgeLinkStart := make([]int32, edges+1)
	e := int32(-1)
	for v := 0; v < n; v++ {
		lo, hi := cnt[v], cnt[v+1]
		for p := lo; p < hi; p++ {
			if p == lo || entParent[p] != entParent[p-1] {
				e++
				edgeParent[e] = entParent[p]
				edgeLinkStart[e] = p
			}
		}
	}
	edgeLinkStart[edges] = entries
	r.ParentStart, r.EdgeParent, r.EdgeLinkStart, r.EdgeLinks = parentStart, edgeParent, edgeLinkStart, entLink
	r.LinkBW, r.LinkHasBW = entBW, entHas

	r.firstHops(ws)
	return r
}

// firstHops derives the first-hop neighbours and their sets. A real router
// whose DAG parent is Self, or a pseudonode whose DAG parent is Self, is a
// first hop of itself; every other node inherits the union of its parents'
// first hops. Sets are bitsets over the neighbour slots while computing.
func (r *Result) firstHops(ws *workspace) {
	g, self := r.Graph, r.Self
	n := len(g.Nodes)
	isPN, isNb := ws.isPN, ws.isNb
	slot := grow(ws.slot, n)
	ws.slot = slot
	// Neighbours, in node order so that bit order is node order.
	var nbs []int32
	for v := int32(0); v < int32(n); v++ {
		slot[v] = -1
		if isNb[v] {
			slot[v] = int32(len(nbs))
			nbs = append(nbs, v)
		}
	}
	// Self's links per neighbour.
	nls := make([]int32, len(nbs)+1)
	var links []int32
	for i, v := range nbs {
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			p := r.EdgeParent[e]
			var pe int32 = -1
			if p == self {
				pe = e
			} else if isPN[p] {
				// Self's edge to the pseudonode.
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
	if nbs == nil {
		r.Neighbors = []int32{}
	}

	w := (len(nbs) + 63) / 64
	if w == 0 {
		w = 1
	}
	set := grow(ws.set, n*w)
	clear(set)
	ws.set = set
	for _, v := range r.Order {
		if v == self {
			continue
		}
		dst := set[int(v)*w : int(v)*w+w]
		if s := slot[v]; s >= 0 {
			dst[s>>6] |= 1 << (uint(s) & 63)
		}
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			p := r.EdgeParent[e]
			if p == self {
				continue
			}
			src := set[int(p)*w : int(p)*w+w]
			for k := range dst {
				dst[k] |= src[k]
			}
		}
	}
	start := make([]int32, n+1)
	var total int32
	for v := 0; v < n; v++ {
		for _, x := range set[v*w : v*w+w] {
			total += int32(bits.OnesCount64(x))
		}
		start[v+1] = total
	}
	list := make([]int32, total)
	var p int32
	for v := 0; v < n; v++ {
		for k, x := range set[v*w : v*w+w] {
			for x != 0 {
				b := bits.TrailingZeros64(x)
				x &= x - 1
				list[p] = nbs[k*64+b]
				p++
			}
		}
	}
	r.FirstHopStart, r.FirstHopList = start, list
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

type candidate struct {
	u, v, link, gen int32
}

// workspace is the scratch of one Run, recycled through pool.
type workspace struct {
	pos, rank, gen, cnt, entParent, fill, node, slot []int32
	key                                              []uint64
	cand                                             []candidate
	isPN, isNb                                       []bool
	set                                              []uint64
}

var pool = sync.Pool{New: func() any { return new(workspace) }}

// spare keeps the last workspace returned, in front of pool: a sync.Pool
// misses whenever the goroutine moved to another P since the Put (or two
// collections passed), and a missed workspace is regrown from nothing on
// every large computation. Only concurrent computations reach pool.
var spare atomic.Pointer[workspace]

func getWorkspace() *workspace {
	if ws := spare.Swap(nil); ws != nil {
		return ws
	}
	return pool.Get().(*workspace)
}

func putWorkspace(ws *workspace) {
	if !spare.CompareAndSwap(nil, ws) {
		pool.Put(ws)
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// heap is an indexed binary min-heap of nodes keyed by uint64.
type heap struct {
	node []int32
	key  []uint64
	pos  []int32 // position of a node in the heap, -1 if absent
}

func (h *heap) len() int { return len(h.node) }

func (h *heap) push(v int32, k uint64) {
	h.node = append(h.node, v)
	h.key = append(h.key, k)
	h.pos[v] = int32(len(h.node) - 1)
	h.up(len(h.node) - 1)
}

// update inserts v or lowers its key.
func (h *heap) update(v int32, k uint64) {
	i := h.pos[v]
	if i < 0 {
		h.push(v, k)
		return
	}
	h.key[i] = k
	h.up(int(i))
}

func (h *heap) pop() int32 {
	v := h.node[0]
	last := len(h.node) - 1
	h.swap(0, last)
	h.node, h.key = h.node[:last], h.key[:last]
	h.pos[v] = -1
	if last > 0 {
		h.down(0)
	}
	return v
}

func (h *heap) swap(i, j int) {
	h.node[i], h.node[j] = h.node[j], h.node[i]
	h.key[i], h.key[j] = h.key[j], h.key[i]
	h.pos[h.node[i]] = int32(i)
	h.pos[h.node[j]] = int32(j)
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.key[p] <= h.key[i] {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *heap) down(i int) {
	n := len(h.node)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.key[r] < h.key[l] {
			m = r
		}
		if h.key[i] <= h.key[m] {
			return
		}
		h.swap(i, m)
		i = m
	}
}
