package spf

import (
	"cmp"
	"math"
	"net/netip"
	"slices"

	"github.com/fared/fared/lsdb"
)

// Source is one advertisement of a route's prefix that won the selection.
type Source struct {
	// Node is where the route's paths lead: the advertiser, or, for an OSPF
	// external with a forwarding address, an exit of the route to that
	// address (RFC 2328 §16.4(3)). Route.FirstHops is the union of the
	// Nodes' first hops.
	Node   int32
	Prefix int32 // index into Graph.Prefixes: the advertisement
}

// Route is the best path set to one prefix.
type Route struct {
	Prefix netip.Prefix
	// Metric is Dist(Node) + prefix metric, equal for all Sources. For an
	// OSPF type-2 external it is the distance to the ASBR or forwarding
	// address alone; the LSA's metric is Type2Metric (RFC 2328 §16.4(5)).
	Metric uint64
	// Sources are the advertisements at the best metric, ordered by Node
	// (one per Node).
	Sources []Source
	// FirstHops is the sorted union of the Sources' first hops.
	FirstHops   []int32
	Down        bool // IS-IS up/down bit of the selected advertisements
	External    bool
	Inter       bool // OSPF inter-area (Summary LSA)
	Type2       bool // OSPF type-2 external
	Type2Metric uint32
}

// Routes selects, per prefix, the best advertisements and merges their
// first hops. Rules:
//   - a prefix that Self advertises itself is skipped (it is local);
//   - advertisements of unreachable nodes are ignored;
//   - kind before metric. IS-IS: up (Down=false) before down, then
//     internal before external (RFC 5302 §3.3 in spirit: an up/down-bit
//     prefix leaked from the other level never beats a native one). OSPF
//     (RFC 2328 §11, §16): intra-area, inter-area, type-1 external, type-2
//     external, in that order;
//   - within a kind, the lowest Dist(advertiser) + prefix metric wins;
//     type-2 externals compare the type-2 metric first and the distance to
//     the ASBR or forwarding address second (§16.4(6));
//   - an OSPF external with a forwarding address (§16.4(3)) leads to the
//     address: the longest intra- or inter-area route covering it gives its
//     distance and its exits (Source.Node), and without one the
//     advertisement is not used. An address on one of Self's own networks
//     leads to the neighbour that owns it when that neighbour is in the
//     graph, is dropped when it is Self's own, and otherwise leads to the
//     advertiser (the graph has no vertex for a gateway that is not a
//     router; the ASBR sits on that network and forwards);
//   - equal best metrics from several advertisers keep all of them.
//
// Down, External, Inter and Type2 describe the winning kind. A prefix
// advertised twice by one node keeps the entry with the lowest metric.
func Routes(r *Result) []Route {
	g := r.Graph
	if r.Self < 0 {
		return nil
	}
	ps := g.Prefixes
	// Count output routes and sources first to allocate once.
	out := make([]Route, 0, countPrefixes(ps))
	srcBuf := make([]Source, 0, len(ps))
	var fhBuf []int32
	// Groups with an external that has a forwarding address and no
	// internal route: decided once every internal route is known.
	var deferred [][3]int
	// RFC 5305 §4 (and 5308 §2): an IS-IS path costlier than
	// MAX_PATH_METRIC is not used, as FRR's SPF drops such vertices.
	isis := g.Protocol == "isis"
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && ps[j].Prefix == ps[i].Prefix {
			j++
		}
		grp := ps[i:j]
		base := i
		i = j
		local, fwd := false, false
		best := rank{class: noClass}
		for k := range grp {
			p := &grp[k]
			if p.Node == r.Self {
				local = true
				break
			}
			if p.External && p.Forward.IsValid() {
				fwd = true
				continue
			}
			d := r.Dist[p.Node]
			if d == Infinity || (isis && d+uint64(p.Metric) > MaxPathMetric) {
				continue
			}
			if rk := rankOf(p, d); rk.less(best) {
				best = rk
			}
		}
		if local {
			continue
		}
		if fwd && best.class >= classExternal {
			deferred = append(deferred, [3]int{len(out), base, j})
			out = append(out, Route{Prefix: grp[0].Prefix, External: true}) // placeholder
			continue
		}
		if best.class == noClass {
			continue
		}
		s0 := len(srcBuf)
		for k := range grp {
			p := &grp[k]
			d := r.Dist[p.Node]
			if d == Infinity || rankOf(p, d) != best || (p.External && p.Forward.IsValid()) {
				continue
			}
			// Entries are sorted by advertiser: skip a duplicate advertiser.
			if len(srcBuf) > s0 && srcBuf[len(srcBuf)-1].Node == p.Node {
				continue
			}
			srcBuf = append(srcBuf, Source{Node: p.Node, Prefix: int32(base + k)})
		}
		srcs := srcBuf[s0:len(srcBuf):len(srcBuf)]
		var fh []int32
		if len(srcs) == 1 {
			fh = r.FirstHops(srcs[0].Node)
		} else {
			f0 := len(fhBuf)
			for _, s := range srcs {
				fhBuf = mergeInto(fhBuf, f0, r.FirstHops(s.Node))
			}
			fh = fhBuf[f0:len(fhBuf):len(fhBuf)]
		}
		w := &ps[srcs[0].Prefix]
		out = append(out, Route{Prefix: grp[0].Prefix, Metric: best.cost, Sources: srcs, FirstHops: fh,
			Down: w.Down, External: w.External, Inter: w.Inter, Type2: w.External && w.Type2, Type2Metric: uint32(best.t2)})
	}
	if len(deferred) > 0 {
		out = forwardRoutes(r, out, deferred)
	}
	return out
}

// MaxPathMetric is IS-IS's MAX_PATH_METRIC (RFC 5305 §4).
const MaxPathMetric = 0xFE000000

// Kinds of advertisement (class), best first. IS-IS uses 0-3 (down bit,
// external bit), OSPF 0 (intra-area), 1 (inter-area), 2 (type-1
// external), 6 (type-2 external); no graph mixes the two protocols.
const (
	classExternal = 2
	noClass       = 8
)

func class(p *lsdb.Prefix) int {
	c := 0
	if p.Down || p.Inter {
		c |= 1
	}
	if p.External {
		c |= 2
		if p.Type2 {
			c |= 4
		}
	}
	return c
}

// rank orders the advertisements of one prefix: kind, then the type-2
// metric (type-2 externals only), then the cost.
type rank struct {
	class int
	t2    uint64
	cost  uint64
}

// rankOf ranks p reached at distance d (of its advertiser or, for an
// external with a forwarding address, of the address).
func rankOf(p *lsdb.Prefix, d uint64) rank {
	c := class(p)
	if p.External && p.Type2 {
		return rank{class: c, t2: uint64(p.Metric), cost: d}
	}
	return rank{class: c, cost: d + uint64(p.Metric)}
}

func (a rank) less(b rank) bool {
	if a.class != b.class {
		return a.class < b.class
	}
	if a.t2 != b.t2 {
		return a.t2 < b.t2
	}
	return a.cost < b.cost
}

// forwardRoutes fills the placeholders of out for the deferred groups
// (out index, prefix index range) whose externals include forwarding
// addresses, and drops those left without a usable advertisement. out is
// sorted by prefix; every internal route in it is final.
func forwardRoutes(r *Result, out []Route, deferred [][3]int) []Route {
	ps := r.Graph.Prefixes
	type cand struct {
		rk    rank
		pi    int32
		exits []int32
		fh    []int32
	}
	var cands []cand
	dropped := 0
	for _, df := range deferred {
		cands = cands[:0]
		best := rank{class: noClass}
		for k := df[1]; k < df[2]; k++ {
			p := &ps[k]
			var c cand
			if p.External && p.Forward.IsValid() {
				d, exits, fh, ok := towardForward(r, out, p)
				if !ok {
					continue
				}
				c = cand{rk: rankOf(p, d), pi: int32(k), exits: exits, fh: fh}
			} else {
				d := r.Dist[p.Node]
				if d == Infinity {
					continue
				}
				c = cand{rk: rankOf(p, d), pi: int32(k), exits: []int32{p.Node}, fh: r.FirstHops(p.Node)}
			}
			if c.rk.less(best) {
				best = c.rk
			}
			cands = append(cands, c)
		}
		if best.class == noClass {
			dropped++ // the placeholder stays without Sources
			continue
		}
		var srcs []Source
		var fh []int32
		for _, c := range cands {
			if c.rk != best {
				continue
			}
			for _, n := range c.exits {
				srcs = append(srcs, Source{Node: n, Prefix: c.pi})
			}
			fh = mergeInto(fh, 0, c.fh)
		}
		// One source per exit, by node; the lowest-index advertisement
		// of a shared exit stands for it.
		slices.SortFunc(srcs, func(a, b Source) int {
			if a.Node != b.Node {
				return cmp.Compare(a.Node, b.Node)
			}
			return cmp.Compare(a.Prefix, b.Prefix)
		})
		srcs = slices.CompactFunc(srcs, func(a, b Source) bool { return a.Node == b.Node })
		w := &ps[srcs[0].Prefix]
		out[df[0]] = Route{Prefix: out[df[0]].Prefix, Metric: best.cost, Sources: slices.Clip(srcs), FirstHops: slices.Clip(fh),
			External: true, Type2: w.Type2, Type2Metric: uint32(best.t2)}
	}
	if dropped > 0 {
		out = slices.DeleteFunc(out, func(rt Route) bool { return len(rt.Sources) == 0 })
	}
	return out
}

// towardForward resolves the forwarding address of external p (RFC 2328
// §16.4(3)): the distance to it, the exits and the first hops. ok is false
// when the advertisement must not be used.
func towardForward(r *Result, out []Route, p *lsdb.Prefix) (d uint64, exits, fh []int32, ok bool) {
	fa := p.Forward
	for bits := fa.BitLen(); bits >= 0; bits-- {
		q := netip.PrefixFrom(fa, bits).Masked()
		if localPrefix(r, q) {
			return towardOwnNetwork(r, p, bits == fa.BitLen())
		}
		i, found := slices.BinarySearchFunc(out, q, func(rt Route, q netip.Prefix) int { return comparePrefixes(rt.Prefix, q) })
		if !found || out[i].External || len(out[i].Sources) == 0 {
			continue
		}
		rt := &out[i]
		exits = make([]int32, len(rt.Sources))
		for k, s := range rt.Sources {
			exits[k] = s.Node
		}
		return rt.Metric, exits, rt.FirstHops, true
	}
	return 0, nil, nil, false
}

// towardOwnNetwork: p's forwarding address is on a network Self
// advertises. host is true when Self advertises the address itself.
func towardOwnNetwork(r *Result, p *lsdb.Prefix, host bool) (uint64, []int32, []int32, bool) {
	g := r.Graph
	fa := p.Forward
	if host {
		return 0, nil, nil, false
	}
	for i := range g.Adjacencies {
		a := &g.Adjacencies[i]
		for _, l := range a.Local {
			if l.Addr() == fa {
				return 0, nil, nil, false // our own address: forwarding to it would loop
			}
		}
	}
	for i := range g.Adjacencies {
		a := &g.Adjacencies[i]
		if !slices.Contains(a.NbrAddrs, fa) {
			continue
		}
		if n := g.Lookup(a.Node); r.Reachable(n) {
			return r.Dist[n], []int32{n}, r.FirstHops(n), true
		}
	}
	if !r.Reachable(p.Node) {
		return 0, nil, nil, false
	}
	return r.Dist[p.Node], []int32{p.Node}, r.FirstHops(p.Node), true
}

// localPrefix reports whether Self advertises q.
func localPrefix(r *Result, q netip.Prefix) bool {
	ps := r.Graph.Prefixes
	i, _ := slices.BinarySearchFunc(ps, q, func(p lsdb.Prefix, q netip.Prefix) int { return comparePrefixes(p.Prefix, q) })
	for ; i < len(ps) && ps[i].Prefix == q; i++ {
		if ps[i].Node == r.Self {
			return true
		}
	}
	return false
}

// comparePrefixes is the order of Graph.Prefixes and of Routes' result:
// address, then length.
func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

func countPrefixes(ps []lsdb.Prefix) int {
	n := 0
	for i := range ps {
		if i == 0 || ps[i].Prefix != ps[i-1].Prefix {
			n++
		}
	}
	return n
}

// mergeInto merges the sorted set add into the sorted set buf[from:],
// returning buf with the union in place of buf[from:].
func mergeInto(buf []int32, from int, add []int32) []int32 {
	cur := buf[from:]
	if len(cur) == 0 {
		return append(buf, add...)
	}
	merged := make([]int32, 0, len(cur)+len(add))
	i, j := 0, 0
	for i < len(cur) || j < len(add) {
		switch {
		case j == len(add) || (i < len(cur) && cur[i] < add[j]):
			merged = append(merged, cur[i])
			i++
		case i == len(cur) || add[j] < cur[i]:
			merged = append(merged, add[j])
			j++
		default:
			merged = append(merged, cur[i])
			i++
			j++
		}
	}
	return append(buf[:from], merged...)
}

// SameTopology reports whether a and b have the same SPF input: the same
// Self, node ids, pseudonode and overload flags, and the same links (order,
// endpoints, metrics; read from Graph.Links). Bandwidths, addresses and
// prefixes may differ. When it holds, a previous Result can be rebound with
// Reuse.
func SameTopology(a, b *lsdb.Graph) bool {
	same, _ := TopologyDiff(a, b, false)
	return same
}

// TopologyDiff is SameTopology that also returns, when same and withBW are
// true, the links whose bandwidth (MaxBW or HasBW) differs, in one pass
// over both graphs. Bandwidths are compared bit for bit (a NaN that stays
// NaN is no change).
func TopologyDiff(a, b *lsdb.Graph, withBW bool) (same bool, changedBW []int32) {
	if a == nil || b == nil {
		return false, nil
	}
	if a.Self != b.Self || len(a.Nodes) != len(b.Nodes) || len(a.Links) != len(b.Links) {
		return false, nil
	}
	for i := range a.Nodes {
		x, y := &a.Nodes[i], &b.Nodes[i]
		if x.ID != y.ID || x.Pseudo != y.Pseudo || x.Overload != y.Overload || x.First != y.First || x.Count != y.Count {
			return false, nil
		}
	}
	ta, tb := a.Links, b.Links
	for i := range ta {
		x, y := &ta[i], &tb[i]
		if x.From != y.From || x.To != y.To || x.Metric != y.Metric {
			return false, nil
		}
		if withBW && (x.HasBW != y.HasBW || math.Float32bits(x.MaxBW) != math.Float32bits(y.MaxBW)) {
			changedBW = append(changedBW, int32(i))
		}
	}
	return true, changedBW
}

// Reuse rebinds prev's DAG to g without running Dijkstra. The caller must
// have checked SameTopology(prev.Graph, g); Reuse checks counts and Self
// only and falls back to a full Run on a mismatch. The DAG slices are
// shared with prev.
func Reuse(prev *Result, g *lsdb.Graph) *Result {
	if !reusable(prev, g) {
		return Run(g)
	}
	r := *prev
	r.Graph = g
	return &r
}

// ReuseChanged is Reuse; the links whose bandwidth changed (from
// TopologyDiff) need no work here, since the Result holds no bandwidth.
func ReuseChanged(prev *Result, g *lsdb.Graph, changedBW []int32) *Result {
	return Reuse(prev, g)
}

// EntryOf returns the position in EdgeLinks of link li, or -1 if li is not
// on the DAG.
func (r *Result) EntryOf(li int32) int32 {
	if r.ParentStart == nil || li < 0 || int(li) >= len(r.Graph.Links) {
		return -1
	}
	v := r.Graph.Links[li].To
	for p := r.EdgeLinkStart[r.ParentStart[v]]; p < r.EdgeLinkStart[r.ParentStart[v+1]]; p++ {
		if r.EdgeLinks[p] == li {
			return p
		}
	}
	return -1
}

func reusable(prev *Result, g *lsdb.Graph) bool {
	return prev != nil && prev.Graph != nil && g != nil && prev.Self == g.Self &&
		len(prev.Graph.Nodes) == len(g.Nodes) && len(prev.Graph.Links) == len(g.Links)
}
