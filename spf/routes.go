package spf

import (
	"math"
	"net/netip"

	"github.com/fared/fared/lsdb"
)

// Source is one advertisement of a route's prefix that won the selection.
type Source struct {
	Node   int32 // advertiser
	Prefix int32 // index into Graph.Prefixes
}

// Route is the best path set to one prefix.
type Route struct {
	Prefix netip.Prefix
	// Metric is Dist(advertiser) + prefix metric, equal for all Sources.
	Metric uint64
	// Sources are the advertisements at the best metric, ordered by
	// advertiser index (one per advertiser).
	Sources []Source
	// FirstHops is the sorted union of the advertisers' first hops.
	FirstHops []int32
	Down      bool // IS-IS up/down bit of the selected advertisements
	External  bool
}

// Routes selects, per prefix, the advertisements at the lowest metric and
// merges their first hops. Rules:
//   - a prefix that Self advertises itself is skipped (it is local);
//   - advertisements of unreachable nodes are ignored;
//   - preference before metric: up (Down=false) before down, then internal
//     before external (RFC 5302 §3.3 in spirit: an up/down-bit prefix leaked
//     from the other level never beats a native one);
//   - equal best metric from several advertisers keeps all of them.
//
// Down and External describe the winning class. A prefix advertised twice by
// one node keeps the entry with the lowest metric.
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
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && ps[j].Prefix == ps[i].Prefix {
			j++
		}
		grp := ps[i:j]
		base := i
		i = j
		local := false
		bestClass, best := 4, uint64(Infinity)
		for k := range grp {
			p := &grp[k]
			if p.Node == r.Self {
				local = true
				break
			}
			d := r.Dist[p.Node]
			if d == Infinity {
				continue
			}
			m := d + uint64(p.Metric)
			c := class(p)
			if c < bestClass || (c == bestClass && m < best) {
				bestClass, best = c, m
			}
		}
		if local || bestClass == 4 {
			continue
		}
		s0 := len(srcBuf)
		for k := range grp {
			p := &grp[k]
			if class(p) != bestClass || r.Dist[p.Node] == Infinity || r.Dist[p.Node]+uint64(p.Metric) != best {
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
		out = append(out, Route{
			Prefix:    grp[0].Prefix,
			Metric:    best,
			Sources:   srcs,
			FirstHops: fh,
			Down:      bestClass&1 != 0,
			External:  bestClass&2 != 0,
		})
	}
	return out
}

func class(p *lsdb.Prefix) int {
	c := 0
	if p.Down {
		c |= 1
	}
	if p.External {
		c |= 2
	}
	return c
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
// endpoints, metrics; read from Graph.Topo). Bandwidths, addresses and prefixes may differ. When
// it holds, a previous Result can be rebound with Reuse.
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
	ta, tb := a.TopoLinks(), b.TopoLinks()
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

// Reuse rebinds prev's DAG to g without running Dijkstra, refreshing the
// bandwidth snapshot (LinkBW) from g. The caller must have checked
// SameTopology(prev.Graph, g); Reuse checks counts and Self only and falls
// back to a full Run on a mismatch. The DAG slices are shared with prev.
func Reuse(prev *Result, g *lsdb.Graph) *Result {
	if !reusable(prev, g) {
		return Run(g)
	}
	r := *prev
	r.Graph = g
	r.LinkBW = make([]float32, len(prev.LinkBW))
	r.LinkHasBW = make([]bool, len(prev.LinkHasBW))
	topo := g.TopoLinks()
	for p, li := range r.EdgeLinks {
		l := &topo[li]
		r.LinkBW[p], r.LinkHasBW[p] = l.MaxBW, l.HasBW
	}
	return &r
}

// ReuseChanged is Reuse when the links whose bandwidth changed are known
// (from TopologyDiff): it copies prev's bandwidth snapshot and patches only
// those links, instead of reading every DAG link of g.
func ReuseChanged(prev *Result, g *lsdb.Graph, changedBW []int32) *Result {
	if !reusable(prev, g) {
		return Run(g)
	}
	r := *prev
	r.Graph = g
	if len(changedBW) == 0 {
		return &r // the snapshot is immutable: share it
	}
	r.LinkBW = append([]float32(nil), prev.LinkBW...)
	r.LinkHasBW = append([]bool(nil), prev.LinkHasBW...)
	topo := g.TopoLinks()
	for _, li := range changedBW {
		if p := r.EntryOf(li); p >= 0 {
			l := &topo[li]
			r.LinkBW[p], r.LinkHasBW[p] = l.MaxBW, l.HasBW
		}
	}
	return &r
}

// EntryOf returns the position in EdgeLinks of link li, or -1 if li is not
// on the DAG.
func (r *Result) EntryOf(li int32) int32 {
	if r.ParentStart == nil || li < 0 || int(li) >= len(r.Graph.Links) {
		return -1
	}
	g := r.Graph
	var v int32
	if len(g.Topo) == len(g.Links) {
		v = g.Topo[li].To
	} else {
		v = g.Links[li].To
	}
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
