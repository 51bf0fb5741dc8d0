package manager

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Tree computation from the live LSDB.
//
// A plan is a root switch, the leaves that aggregate under it, and where
// each member attaches. A member attaches to the router that advertises
// the longest prefix covering its address (its leaf). A leaf aggregates
// when it is a registered INC switch with room and has at least two
// members (with one, it would only add a hop); otherwise its members send
// straight to the root, through it.
//
// Every tree edge (child → parent for partials, parent → child for
// results) is a flow routed as fared routes it: over the shortest-path DAG,
// split at each router in proportion to FARE's capacity of each next hop,
// min(bw(X,M), cap(M→D)). Summing the flows of all edges per link gives
// each link's share; the tree's bottleneck bandwidth is the largest rate r
// every edge can carry at once: min over links of bw(link) / share(link).
// So two leaves whose partials would meet on one link, or members sharing
// a leaf's uplink without aggregation, count as they will on the wire.
//
// Among the roots that reach every member, the plan with the largest
// bottleneck wins; ties go to the root with fewer trees (spreading groups
// over spines), then the smaller total distance, then the smaller id.
// Unregistered routers (FRR nodes, fared without inc:) never aggregate;
// they may still carry traffic as transit.

// SwitchInfo is a registered INC switch as the planner sees it.
type SwitchInfo struct {
	ID        string
	Addr      netip.Addr // its data-plane (loopback) address
	MaxRanks  int
	FreeTrees int // trees it can still take
	Trees     int // trees it already has (load)
}

// MemberInfo is one rank of a group.
type MemberInfo struct {
	Rank int
	Addr netip.Addr
}

// Plan is a computed tree.
type Plan struct {
	Root       string
	Nodes      map[string]*PlanNode // by switch id, root included
	Attach     []Attach             // per member (same order as the input)
	Bottleneck float64              // bytes/s; +Inf when no link has a known bandwidth
	Levels     int                  // switch levels: 1 (root only) or 2
	Distance   uint64               // sum of the edges' metric distances
	Links      int                  // links carrying tree traffic
}

// PlanNode is one switch of a plan.
type PlanNode struct {
	Switch      string
	Parent      string // "" for the root
	ParentIndex int    // its child index at the parent
	Children    []PlanChild
}

// PlanChild is one child of a switch: a member or a switch.
type PlanChild struct {
	Member int    // index into the members, or -1
	Switch string // child switch id, or ""
}

// Attach says where a member sends.
type Attach struct {
	Switch string
	Index  int    // its child index there
	Leaf   string // the router it hangs off (node id in the graph)
}

// planner memoises shortest paths per source node.
type planner struct {
	g    *lsdb.Graph
	spfs map[int32]*spf.Result
}

func (p *planner) spfFrom(src int32) *spf.Result {
	if r, ok := p.spfs[src]; ok {
		return r
	}
	h := *p.g
	h.Self = src
	r := spf.Run(&h)
	p.spfs[src] = r
	return r
}

// attachNode returns the router advertising the longest prefix (not a
// default route) that covers a, or -1.
func attachNode(g *lsdb.Graph, a netip.Addr) int32 {
	best, bits := int32(-1), 0
	for i := range g.Prefixes {
		pr := &g.Prefixes[i]
		if pr.Prefix.Bits() > bits && pr.Prefix.Contains(a) && !g.Nodes[pr.Node].Pseudo {
			best, bits = pr.Node, pr.Prefix.Bits()
		}
	}
	return best
}

// flow adds to load the share of each link that a unit flow from a to b
// puts on it, splitting over the DAG as FARE weights next hops. It returns
// false if b is unreachable from a.
func (p *planner) flow(a, b int32, load map[int32]float64) (dist uint64, ok bool) {
	if a == b {
		return 0, true
	}
	r := p.spfFrom(a)
	if !r.Reachable(b) {
		return 0, false
	}
	n := len(r.Dist)
	// Ancestors of b on the DAG (nodes on a shortest path a → b).
	on := make([]bool, n)
	on[b] = true
	stack := []int32{b}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			if u := r.EdgeParent[e]; !on[u] {
				on[u] = true
				stack = append(stack, u)
			}
		}
	}
	// cap(x→b) over the DAG, in reverse settle order.
	capv := make([]float64, n)
	capv[b] = math.Inf(1)
	for i := len(r.Order) - 1; i >= 0; i-- {
		v := r.Order[i]
		if !on[v] || v == a {
			continue
		}
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			capv[r.EdgeParent[e]] += math.Min(edgeBW(r, e), capv[v])
		}
	}
	// Push the unit flow from a down the DAG. Edges are indexed by child,
	// so collect each node's outgoing DAG edges first.
	out := make(map[int32][]int32)
	for i := range r.Order {
		v := r.Order[i]
		if !on[v] {
			continue
		}
		for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
			if u := r.EdgeParent[e]; on[u] {
				out[u] = append(out[u], e)
			}
		}
	}
	f := make([]float64, n)
	f[a] = 1
	for _, v := range r.Order {
		if !on[v] || v == b || f[v] == 0 {
			continue
		}
		es := out[v]
		w := make([]float64, len(es))
		var tot float64
		inf := 0
		for i, e := range es {
			child := childOf(r, e)
			w[i] = math.Min(edgeBW(r, e), capv[child])
			if math.IsInf(w[i], 1) {
				inf++
			}
			tot += w[i]
		}
		for i, e := range es {
			var share float64
			switch {
			case inf > 0:
				if math.IsInf(w[i], 1) {
					share = 1 / float64(inf)
				}
			case tot > 0:
				share = w[i] / tot
			default:
				share = 1 / float64(len(es))
			}
			x := f[v] * share
			f[childOf(r, e)] += x
			// Split over the parallel links by their own bandwidth.
			links := r.EdgeLinks[r.EdgeLinkStart[e]:r.EdgeLinkStart[e+1]]
			var lt float64
			for _, li := range links {
				lt += linkBW(r.Graph, li)
			}
			for _, li := range links {
				ls := 1 / float64(len(links))
				if lt > 0 && !math.IsInf(lt, 1) {
					ls = linkBW(r.Graph, li) / lt
				}
				load[li] += x * ls
			}
		}
	}
	return r.Dist[b], true
}

// childOf returns the child node of DAG edge e (edges are stored by child).
func childOf(r *spf.Result, e int32) int32 {
	// ParentStart is ascending: the child is the v with
	// ParentStart[v] <= e < ParentStart[v+1].
	v, _ := slices.BinarySearch(r.ParentStart, e+1)
	return int32(v - 1)
}

func edgeBW(r *spf.Result, e int32) float64 {
	var s float64
	for _, li := range r.EdgeLinks[r.EdgeLinkStart[e]:r.EdgeLinkStart[e+1]] {
		s += linkBW(r.Graph, li)
	}
	return s
}

// linkBW is a link's bandwidth in bytes/s; +Inf when not advertised
// (pseudonode links, routers without TE).
func linkBW(g *lsdb.Graph, li int32) float64 {
	l := &g.Links[li]
	if !l.HasBW || l.MaxBW != l.MaxBW || math.IsInf(float64(l.MaxBW), 1) {
		return math.Inf(1)
	}
	if l.MaxBW < 0 {
		return 0
	}
	return float64(l.MaxBW)
}

// Options narrow the choice.
type Options struct {
	// Exclude lists switches not to use at all (blamed by timeout reports,
	// or refusing their configuration).
	Exclude map[string]bool
	// Roots, when not nil, lists the only switches allowed as root.
	Roots map[string]bool
}

// Compute plans a tree for the members over g among the switches (those
// the graph cannot place are ignored).
func Compute(g *lsdb.Graph, switches []SwitchInfo, members []MemberInfo, o Options) (*Plan, error) {
	if g == nil {
		return nil, fmt.Errorf("no topology yet")
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("no members")
	}
	p := &planner{g: g, spfs: map[int32]*spf.Result{}}
	node := map[string]int32{}
	byNode := map[int32]*SwitchInfo{}
	for i := range switches {
		s := &switches[i]
		if o.Exclude[s.ID] {
			continue
		}
		if n := attachNode(g, s.Addr); n >= 0 {
			node[s.ID] = n
			if _, dup := byNode[n]; !dup {
				byNode[n] = s
			}
		}
	}
	// Members by leaf.
	leafOf := make([]int32, len(members))
	byLeaf := map[int32][]int{}
	var leaves []int32
	for i, m := range members {
		n := attachNode(g, m.Addr)
		if n < 0 {
			return nil, fmt.Errorf("rank %d: no router advertises a prefix covering %s", m.Rank, m.Addr)
		}
		leafOf[i] = n
		if byLeaf[n] == nil {
			leaves = append(leaves, n)
		}
		byLeaf[n] = append(byLeaf[n], i)
	}
	// Node indices follow the order LSPs arrived in: sort by node id so
	// the same topology always gives the same child order.
	slices.SortFunc(leaves, func(a, b int32) int { return cmp.Compare(g.Nodes[a].ID, g.Nodes[b].ID) })

	var best *Plan
	var bestSw *SwitchInfo
	var why []string
	for i := range switches {
		root := &switches[i]
		rn, ok := node[root.ID]
		if !ok || o.Roots != nil && !o.Roots[root.ID] || root.FreeTrees < 1 || byNode[rn] != root {
			continue
		}
		plan, err := p.plan(root, rn, members, leaves, byLeaf, byNode, node)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if best == nil || better(plan, root, best, bestSw) {
			best, bestSw = plan, root
		}
	}
	if best == nil {
		if len(why) == 0 {
			why = append(why, "no registered INC switch with room is in this topology")
		}
		return nil, fmt.Errorf("no tree: %s", why[0])
	}
	for i := range best.Attach {
		best.Attach[i].Leaf = g.Nodes[leafOf[i]].ID
	}
	return best, nil
}

func better(a *Plan, as *SwitchInfo, b *Plan, bs *SwitchInfo) bool {
	if a.Bottleneck != b.Bottleneck {
		return a.Bottleneck > b.Bottleneck
	}
	if as.Trees != bs.Trees {
		return as.Trees < bs.Trees
	}
	if a.Distance != b.Distance {
		return a.Distance < b.Distance
	}
	return as.ID < bs.ID
}

func (p *planner) plan(root *SwitchInfo, rn int32, members []MemberInfo, leaves []int32, byLeaf map[int32][]int, byNode map[int32]*SwitchInfo, node map[string]int32) (*Plan, error) {
	plan := &Plan{Root: root.ID, Nodes: map[string]*PlanNode{}, Attach: make([]Attach, len(members)), Levels: 1}
	rootNode := &PlanNode{Switch: root.ID}
	plan.Nodes[root.ID] = rootNode
	load := map[int32]float64{}
	edge := func(a, b int32, times int) error {
		for range times {
			d1, ok1 := p.flow(a, b, load)
			d2, ok2 := p.flow(b, a, load)
			if !ok1 || !ok2 {
				return fmt.Errorf("root %s: %s and %s do not reach each other", root.ID, p.g.Nodes[a].ID, p.g.Nodes[b].ID)
			}
			plan.Distance += d1 + d2
		}
		return nil
	}
	for _, l := range leaves {
		ms := byLeaf[l]
		sw := byNode[l]
		switch {
		case l == rn:
			for _, mi := range ms {
				plan.Attach[mi] = Attach{Switch: root.ID, Index: len(rootNode.Children)}
				rootNode.Children = append(rootNode.Children, PlanChild{Member: mi})
			}
		case sw != nil && sw.FreeTrees > 0 && len(ms) >= 2 && len(ms) <= sw.MaxRanks:
			if err := edge(l, rn, 1); err != nil {
				return nil, err
			}
			ln := &PlanNode{Switch: sw.ID, Parent: root.ID, ParentIndex: len(rootNode.Children)}
			rootNode.Children = append(rootNode.Children, PlanChild{Member: -1, Switch: sw.ID})
			for _, mi := range ms {
				plan.Attach[mi] = Attach{Switch: sw.ID, Index: len(ln.Children)}
				ln.Children = append(ln.Children, PlanChild{Member: mi})
			}
			plan.Nodes[sw.ID] = ln
			plan.Levels = 2
		default:
			if err := edge(l, rn, len(ms)); err != nil {
				return nil, err
			}
			for _, mi := range ms {
				plan.Attach[mi] = Attach{Switch: root.ID, Index: len(rootNode.Children)}
				rootNode.Children = append(rootNode.Children, PlanChild{Member: mi})
			}
		}
	}
	if len(rootNode.Children) > root.MaxRanks {
		return nil, fmt.Errorf("root %s: %d children, it takes %d", root.ID, len(rootNode.Children), root.MaxRanks)
	}
	plan.Bottleneck = math.Inf(1)
	for li, share := range load {
		if share <= 0 {
			continue
		}
		plan.Links++
		if r := linkBW(p.g, li) / share; r < plan.Bottleneck {
			plan.Bottleneck = r
		}
	}
	return plan, nil
}

// sortedIDs returns the keys of m in order.
func sortedIDs[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
