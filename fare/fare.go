package fare

import (
	"math"
	"net/netip"

	"github.com/fared/fared/internal/recycle"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Options tune Compute.
type Options struct {
	// ECMPOnly ignores all bandwidths: every next hop gets weight 1.
	ECMPOnly bool `json:"ecmp_only"`
}

// Modes of a route (Route.Mode).
const (
	ModeWeighted     = "weighted"               // FARE weights
	ModeECMP         = "ecmp"                   // Options.ECMPOnly
	ModeMissingBW    = "ecmp-missing-bandwidth" // a hop lacked bandwidth: equal weights over usable next hops
	ModeZeroCapacity = "ecmp-zero-capacity"     // every first hop had capacity 0: equal weights over all
)

// NextHop is one kernel next hop: one of Self's links toward one first-hop
// neighbour. Bandwidths are bytes/s; Unconstrained (max float32) stands for
// "no constraint".
//
// NextHop holds no pointers (it is allocated by the ten thousand and must
// not cost the garbage collector); Route.View adds the neighbour ids.
type NextHop struct {
	Neighbor int32 `json:"neighbor"` // node index of the first-hop router
	Link     int32 `json:"link"`     // index into Graph.Links of Self's link
	// LinkBW is this link's bandwidth; NeighborBW is bw(self, N), the sum over
	// Self's links that reach N.
	LinkBW     float64 `json:"link_bandwidth"`
	NeighborBW float64 `json:"neighbor_bandwidth"`
	// DownCap is Σ over the route's advertisers D reached via N of cap(N→D).
	DownCap float64 `json:"downstream_capacity"`
	// PathBW is Σ over those advertisers of their Path Bandwidth.
	PathBW float64 `json:"path_bandwidth"`
	// Weight is this link's part of w(N) (split in proportion to LinkBW);
	// Share is Weight over the route's total, in [0,1].
	Weight float64 `json:"weight"`
	Share  float64 `json:"share"`
}

// Route is the weighted next-hop set of one prefix.
type Route struct {
	Prefix        netip.Prefix `json:"prefix"`
	Metric        uint64       `json:"metric"`
	Advertisers   []int32      `json:"advertisers"`
	AdvertiserIDs []string     `json:"advertiser_ids"`
	Mode          string       `json:"mode"`
	NextHops      []NextHop    `json:"next_hops"`
	// Unused lists next hops on the shortest paths that got weight 0
	// (zero bandwidth or capacity).
	Unused []NextHop `json:"unused,omitempty"`
	// PathBW is the sum of the advertisers' Path Bandwidth; HasPathBW is
	// true when every advertiser sent one.
	PathBW    float64 `json:"path_bandwidth"`
	HasPathBW bool    `json:"has_path_bandwidth"`
	Down      bool    `json:"down,omitempty"`
	External  bool    `json:"external,omitempty"`

	key uint64 // hash of the advertisements (Update's change check)
}

// Weights returns the weights of the next hops (for Quantize).
func (rt *Route) Weights() []float64 {
	w := make([]float64, len(rt.NextHops))
	for i := range rt.NextHops {
		w[i] = rt.NextHops[i].Weight
	}
	return w
}

// NextHopView is a NextHop with the neighbour's id and name.
type NextHopView struct {
	NextHop
	NeighborID   string `json:"neighbor_id"`
	NeighborName string `json:"neighbor_name,omitempty"`
}

// RouteView is the JSON shape printed by farectl: a Route whose next hops
// carry the neighbour ids.
type RouteView struct {
	Route
	NextHops []NextHopView `json:"next_hops"`
	Unused   []NextHopView `json:"unused,omitempty"`
}

// View resolves the neighbour ids of rt against g (the Graph of the
// spf.Result rt was computed from).
func (rt *Route) View(g *lsdb.Graph) RouteView {
	conv := func(hs []NextHop) []NextHopView {
		if hs == nil {
			return nil
		}
		out := make([]NextHopView, len(hs))
		for i, h := range hs {
			out[i] = NextHopView{NextHop: h, NeighborID: g.Nodes[h.Neighbor].ID, NeighborName: g.Nodes[h.Neighbor].Name}
		}
		return out
	}
	v := RouteView{Route: *rt, NextHops: conv(rt.NextHops), Unused: conv(rt.Unused)}
	if v.NextHops == nil {
		v.NextHops = []NextHopView{}
	}
	return v
}

// workspace holds the scratch of one Compute, recycled through pool so that
// repeated runs do not pay for fresh memory. Nothing in it is visible in the
// results.
type workspace struct {
	edgeBW, f     []float64
	edgeUnk, b    []bool
	nbPos, rcount []int32
	one, aligned  []oneHop
	cc            capCalc
}

// oneHop is what a next hop copies from its neighbour when the neighbour
// has a single link from Self (engine.oneLink).
type oneHop struct {
	sb, nbw  float64 // bw(Self, N) and its output value
	lb, lout float64 // the link's value and its output value
	nb, link int32   // N, and Self's link to N
	unk      bool    // the link's bandwidth is unknown
}

// pool recycles workspaces between computations (internal/recycle).
var pool recycle.Pool[workspace]

// Table is the full result of one FARE computation.
type Table struct {
	Routes    []Route   `json:"routes"`
	Anomalies Anomalies `json:"anomalies"`
	Options   Options   `json:"options"`
}

// Compute returns the weighted routes for routes (from spf.Routes(r)).
func Compute(r *spf.Result, routes []spf.Route, opt Options) []Route {
	return ComputeTable(r, routes, opt).Routes
}

// engine is one computation over one spf.Result.
type engine struct {
	r     *spf.Result
	g     *lsdb.Graph
	opt   Options
	an    *Anomalies
	ws    *workspace
	cc    *capCalc
	nbPos []int32
	// per neighbour position
	selfBW, capPB, down, pbs []float64
	selfUnk, unk             []bool
	lval                     []float64 // per NeighborLinks entry
	// oneLink: every neighbour has exactly one link from Self, so a
	// route's next hops are its first hops; one[p] then holds neighbour
	// p's values.
	oneLink bool
	one     []oneHop
	// aligned is one[] in the order of the first-hop set at alignedOf
	// (spf stores each distinct set once: its address names it).
	aligned   []oneHop
	alignedOf *int32
}

func newEngine(r *spf.Result, opt Options, an *Anomalies) *engine {
	g := r.Graph
	ws := pool.Get()
	e := &engine{r: r, g: g, opt: opt, an: an, ws: ws, cc: &ws.cc}
	ne := len(r.EdgeParent)
	edgeBW, edgeUnk := recycle.Grow(ws.edgeBW, ne), recycle.Grow(ws.edgeUnk, ne)
	edgeBandwidths(r, an, edgeBW, edgeUnk)
	ws.edgeBW, ws.edgeUnk = edgeBW, edgeUnk
	e.cc.reset(r, edgeBW, edgeUnk)

	// Per neighbour: bw(self, N), and each of Self's links' own value.
	nn := len(r.Neighbors)
	e.nbPos = recycle.Grow(ws.nbPos, len(g.Nodes))
	ws.nbPos = e.nbPos
	for i := range e.nbPos {
		e.nbPos[i] = -1
	}
	ws.f = recycle.Grow(ws.f, 4*nn+len(r.NeighborLinks))
	ws.b = recycle.Grow(ws.b, 2*nn)
	clear(ws.f)
	clear(ws.b)
	e.selfBW, e.capPB, e.down, e.pbs, e.lval = ws.f[:nn], ws.f[nn:2*nn], ws.f[2*nn:3*nn], ws.f[3*nn:4*nn], ws.f[4*nn:]
	e.selfUnk, e.unk = ws.b[:nn], ws.b[nn:]
	nls := r.NeighborLinkStart
	links := g.Links
	e.oneLink = len(r.NeighborLinks) == nn
	for i, nb := range r.Neighbors {
		e.nbPos[nb] = int32(i)
		for j := nls[i]; j < nls[i+1]; j++ {
			l := &links[r.NeighborLinks[j]]
			v, known := linkValue(l.MaxBW, l.HasBW)
			e.lval[j] = v
			e.selfBW[i] += v
			e.selfUnk[i] = e.selfUnk[i] || !known
		}
	}
	if e.oneLink {
		e.one = recycle.Grow(ws.one, nn)
		ws.one = e.one
		for i := range e.one {
			lb, sb := e.lval[i], e.selfBW[i]
			e.one[i] = oneHop{sb: sb, nbw: out(sb), lb: lb, lout: out(lb), nb: r.Neighbors[i], link: r.NeighborLinks[i], unk: e.selfUnk[i]}
		}
	}
	return e
}

func (e *engine) release() {
	e.cc.r, e.cc.edgeBW, e.cc.edgeUnk = nil, nil, nil
	pool.Put(e.ws)
	e.ws = nil
}

// hopCount is the number of next hops (Self's links to the first hops) of sr.
func (e *engine) hopCount(sr *spf.Route) int32 {
	if e.oneLink {
		return int32(len(sr.FirstHops)) // first hops are neighbours (spf)
	}
	nls := e.r.NeighborLinkStart
	c := int32(0)
	for _, nb := range sr.FirstHops {
		if p := e.nbPos[nb]; p >= 0 {
			c += nls[p+1] - nls[p]
		}
	}
	return c
}

// countPaths adds the Path Bandwidth anomalies of sr's advertisements.
func (e *engine) countPaths(sr *spf.Route) {
	for _, s := range sr.Sources {
		px := &e.g.Prefixes[s.Prefix]
		countPath(e.an, px.PathBW, px.HasPathBW)
	}
}

// route computes rt for sr. hops has exactly hopCount(sr) entries; advs
// and ids have len(sr.Sources).
//
// The stages are methods (sources, singleSums, mode, generalHops) called
// once per route: the loops stay inside them, so the split costs a few
// calls per route, nothing per hop (go test -bench, fare/bench_test.go).
func (e *engine) route(sr *spf.Route, rt *Route, hops []NextHop, advs []int32, ids []string) {
	*rt = Route{Prefix: sr.Prefix, Metric: sr.Metric, Down: sr.Down, External: sr.External, HasPathBW: true,
		Advertisers: advs, AdvertiserIDs: ids}
	// One advertiser (the common case): its first hops are the route's, so
	// the per-neighbour sums are plain assignments, done together with the
	// mode checks in one pass.
	single := len(sr.Sources) == 1 && !e.opt.ECMPOnly && sameSlice(sr.FirstHops, e.r.FirstHops(sr.Sources[0].Node))
	if !single {
		for _, nb := range sr.FirstHops {
			if p := e.nbPos[nb]; p >= 0 {
				e.capPB[p], e.down[p], e.pbs[p], e.unk[p] = 0, 0, 0, false
			}
		}
	}
	cv1, cu1, pb1 := e.sources(sr, rt, advs, ids, single)
	missingAny, anyPos := false, false
	if single {
		if missingAny, anyPos = e.weightedSingle(sr, rt, hops, cv1, cu1, pb1); !missingAny && anyPos {
			return
		}
		// Not weighted after all (rare): the per-neighbour values for the
		// general pass below.
		e.singleSums(sr.FirstHops, cv1, cu1, pb1)
	}
	e.generalHops(sr, rt, hops, e.mode(sr, rt, single, missingAny, anyPos))
}

// sources walks sr's advertisements: it fills advs and ids, counts the
// Path Bandwidth anomalies, sets rt's Path Bandwidth and cache key and,
// unless single, adds each advertiser's capacities to the per-neighbour
// sums (capPB, down, pbs, unk). For a single advertiser it returns its
// caps (cv, cu, aligned with its first hops) and Path Bandwidth value
// instead.
func (e *engine) sources(sr *spf.Route, rt *Route, advs []int32, ids []string, single bool) (cv1 []float64, cu1 []bool, pb1 float64) {
	r, g, an := e.r, e.g, e.an
	nbPos, capPB, down, pbs, unk := e.nbPos, e.capPB, e.down, e.pbs, e.unk
	ecmpOnly := e.opt.ECMPOnly
	key := uint64(14695981039346656037)
	for si, s := range sr.Sources {
		advs[si] = s.Node
		ids[si] = g.Nodes[s.Node].ID
		px := &g.Prefixes[s.Prefix]
		countPath(an, px.PathBW, px.HasPathBW)
		key = mix(key, uint64(uint32(s.Node)), uint64(math.Float32bits(px.PathBW)), b2u(px.HasPathBW))
		pb := pathValue(px.PathBW, px.HasPathBW)
		rt.HasPathBW = rt.HasPathBW && px.HasPathBW
		rt.PathBW += pb
		if ecmpOnly {
			continue
		}
		cv, cu := e.cc.caps(s.Node)
		if single {
			cv1, cu1, pb1 = cv, cu, pb
			continue
		}
		for j, nb := range r.FirstHops(s.Node) {
			p := nbPos[nb]
			if p < 0 {
				continue
			}
			capPB[p] += min(cv[j], pb)
			down[p] += cv[j]
			pbs[p] += pb
			unk[p] = unk[p] || cu[j]
		}
	}
	rt.key = key
	rt.PathBW = out(rt.PathBW)
	if !rt.HasPathBW {
		rt.PathBW = Unconstrained
	}
	return cv1, cu1, pb1
}

// singleSums sets the per-neighbour sums of a single-advertiser route
// whose first hops are fh, from the advertiser's caps cv, cu and Path
// Bandwidth value pb, exactly as sources would have added them.
func (e *engine) singleSums(fh []int32, cv []float64, cu []bool, pb float64) {
	cv, cu = cv[:len(fh)], cu[:len(fh)]
	for j, nb := range fh {
		if p := e.nbPos[nb]; p >= 0 {
			// 0 + x, not x: the same sum as sources, bit for bit (-0).
			e.capPB[p], e.down[p], e.pbs[p], e.unk[p] = 0+min(cv[j], pb), 0+cv[j], 0+pb, cu[j]
		}
	}
}

// hopKind is how generalHops weighs a route's next hops.
type hopKind int

const (
	kindWeighted hopKind = iota // by capacity
	kindMissing                 // a bandwidth is unknown: equal weights among the usable hops
	kindEqual                   // ECMP only, or no capacity anywhere: all equal
)

// mode sets rt.Mode from the per-neighbour sums (or, for a single
// advertiser, from weightedSingle's missingAny and anyPos) and returns
// how to weigh the next hops.
func (e *engine) mode(sr *spf.Route, rt *Route, single, missingAny, anyPos bool) hopKind {
	kind := kindWeighted
	rt.Mode = ModeWeighted
	switch {
	case e.opt.ECMPOnly:
		kind, rt.Mode = kindEqual, ModeECMP
	case single:
		if missingAny {
			kind, rt.Mode = kindMissing, ModeMissingBW
		}
		if !anyPos {
			kind, rt.Mode = kindEqual, ModeZeroCapacity
		}
	default:
		anyPos := false
		for _, nb := range sr.FirstHops {
			p := e.nbPos[nb]
			if p < 0 {
				continue
			}
			if e.unk[p] || e.selfUnk[p] {
				kind, rt.Mode = kindMissing, ModeMissingBW
			}
			if min(e.selfBW[p], e.capPB[p]) > 0 {
				anyPos = true
			}
		}
		if !anyPos {
			kind, rt.Mode = kindEqual, ModeZeroCapacity
		}
	}
	return kind
}

// generalHops writes sr's next hops in place from the per-neighbour sums,
// weighed as kind says, and finishes rt.
func (e *engine) generalHops(sr *spf.Route, rt *Route, hops []NextHop, kind hopKind) {
	r, opt := e.r, e.opt
	nbPos, selfBW, capPB, down, pbs := e.nbPos, e.selfBW, e.capPB, e.down, e.pbs
	nls := r.NeighborLinkStart
	k := 0
	total := 0.0
	zeros := 0
	for _, nb := range sr.FirstHops {
		p := nbPos[nb]
		if p < 0 {
			continue
		}
		sb := selfBW[p]
		w := min(sb, capPB[p])
		nbw, dc, pw := out(sb), out(down[p]), out(pbs[p])
		if opt.ECMPOnly {
			dc, pw = 0, 0
		}
		lo, hi := nls[p], nls[p+1]
		for j := lo; j < hi; j++ {
			lb := e.lval[j]
			var wt float64
			switch {
			case kind == kindEqual:
				wt = 1
			case w > 0 && lb > 0:
				switch {
				case kind == kindMissing:
					wt = 1
				case hi-lo == 1:
					wt = w
				default:
					// A neighbour's weight is split over its parallel
					// links in proportion to their bandwidth.
					wt = w * (lb / sb)
				}
			}
			h := &hops[k]
			k++
			h.Neighbor, h.Link = nb, r.NeighborLinks[j]
			h.LinkBW, h.NeighborBW, h.DownCap, h.PathBW, h.Weight = out(lb), nbw, dc, pw, wt
			total += wt
			if wt == 0 {
				zeros++
			}
		}
	}
	e.finish(rt, hops, total, zeros)
}

// weightedSingle writes the next hops of a single-advertiser route (sr's
// first hops are the advertiser's, cv and cu its caps aligned with them,
// pb its Path Bandwidth value) as the general pass of route does for a
// weighted route, in one pass, and finishes rt. It reports the two facts
// that decide the mode; unless the route is weighted (!missingAny &&
// anyPos) the hops and rt must be rewritten by the caller.
func (e *engine) weightedSingle(sr *spf.Route, rt *Route, hops []NextHop, cv []float64, cu []bool, pb float64) (missingAny, anyPos bool) {
	var total float64
	var zeros int
	if e.oneLink {
		missingAny, anyPos, total, zeros = weightedOne(e.alignedOne(sr.FirstHops), hops, cv, cu, pb)
	} else {
		missingAny, anyPos, total, zeros = e.weightedMany(sr.FirstHops, hops, cv, cu, pb)
	}
	if !missingAny && anyPos {
		rt.Mode = ModeWeighted
		e.finish(rt, hops, total, zeros)
	}
	return missingAny, anyPos
}

// weightedMany is weightedSingle's loop over first hops fh when a
// neighbour may have several links from Self. total is the sum of the
// weights, zeros the number of zero weights.
func (e *engine) weightedMany(fh []int32, hops []NextHop, cv []float64, cu []bool, pb float64) (missingAny, anyPos bool, total float64, zeros int) {
	nbPos, selfBW, selfUnk, lval := e.nbPos, e.selfBW, e.selfUnk, e.lval
	nls, nl := e.r.NeighborLinkStart, e.r.NeighborLinks
	cv, cu = cv[:len(fh)], cu[:len(fh)]
	k := 0
	for j, nb := range fh {
		p := nbPos[nb]
		if p < 0 {
			continue
		}
		// 0 + x, not x: the same sums as the general pass, bit for bit (-0).
		c := 0 + min(cv[j], pb)
		sb := selfBW[p]
		w := min(sb, c)
		if cu[j] || selfUnk[p] {
			missingAny = true
		}
		if w > 0 {
			anyPos = true
		}
		nbw, dc, pw := out(sb), out(0+cv[j]), out(0+pb)
		lo, hi := nls[p], nls[p+1]
		for jj := lo; jj < hi; jj++ {
			lb := lval[jj]
			var wt float64
			if w > 0 && lb > 0 {
				if hi-lo == 1 {
					wt = w
				} else {
					wt = w * (lb / sb)
				}
			}
			hops[k] = NextHop{Neighbor: nb, Link: nl[jj], LinkBW: out(lb), NeighborBW: nbw, DownCap: dc, PathBW: pw, Weight: wt}
			k++
			total += wt
			if wt == 0 {
				zeros++
			}
		}
	}
	return missingAny, anyPos, total, zeros
}

// alignedOne returns the neighbour records of the first hops fh (a set of
// the spf.Result: first hops are neighbours), in fh's order.
func (e *engine) alignedOne(fh []int32) []oneHop {
	if len(fh) == 0 || (&fh[0] == e.alignedOf && len(fh) == len(e.aligned)) {
		return e.aligned[:len(fh)]
	}
	al := recycle.Grow(e.ws.aligned, len(fh))
	e.ws.aligned = al
	for j, nb := range fh {
		al[j] = e.one[e.nbPos[nb]]
	}
	e.aligned, e.alignedOf = al, &fh[0]
	return al
}

// weightedOne is weightedSingle's loop when every neighbour has one link:
// next hop j is first hop j, whose record is al[j].
func weightedOne(al []oneHop, hops []NextHop, cv []float64, cu []bool, pb float64) (missingAny, anyPos bool, total float64, zeros int) {
	hops, cv, cu = hops[:len(al)], cv[:len(al)], cu[:len(al)]
	pw := out(0 + pb)
	for j := range al {
		o := &al[j]
		c := 0 + min(cv[j], pb)
		w := min(o.sb, c)
		if cu[j] || o.unk {
			missingAny = true
		}
		var wt float64
		if w > 0 {
			anyPos = true
			if o.lb > 0 {
				wt = w
			}
		}
		h := &hops[j]
		h.Neighbor, h.Link, h.LinkBW, h.NeighborBW = o.nb, o.link, o.lout, o.nbw
		h.DownCap, h.PathBW, h.Weight = out(0+cv[j]), pw, wt
		total += wt
		if wt == 0 {
			zeros++
		}
	}
	return missingAny, anyPos, total, zeros
}

// sameSlice reports whether a and b are the same slice (same elements in
// the same memory).
func sameSlice(a, b []int32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// finish moves zero-weight hops to Unused and sets the shares.
func (e *engine) finish(rt *Route, hops []NextHop, total float64, zeros int) {
	if zeros > 0 {
		unused := make([]NextHop, 0, zeros)
		j := 0
		for i := range hops {
			if hops[i].Weight > 0 {
				hops[j] = hops[i]
				j++
			} else {
				unused = append(unused, hops[i])
			}
		}
		hops = hops[:j:j]
		rt.Unused = unused
	}
	inv := 1 / total
	for i := range hops {
		hops[i].Share = hops[i].Weight * inv
		hops[i].Weight = out(hops[i].Weight)
	}
	rt.NextHops = hops
}

func countMode(a *Anomalies, mode string) {
	switch mode {
	case ModeMissingBW:
		a[RoutesMissingBW]++
	case ModeZeroCapacity:
		a[RoutesZeroCapacity]++
	}
}

func mix(h uint64, xs ...uint64) uint64 {
	for _, x := range xs {
		h ^= x
		h *= 1099511628211
	}
	return h
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// ComputeTable is Compute with the anomaly counters.
func ComputeTable(r *spf.Result, routes []spf.Route, opt Options) Table {
	t := Table{Options: opt}
	if r == nil || r.Self < 0 || len(routes) == 0 {
		t.Routes = []Route{}
		return t
	}
	e := newEngine(r, opt, &t.Anomalies)
	defer e.release()

	// Output storage, allocated once.
	nh, na := 0, 0
	rcount := recycle.Grow(e.ws.rcount, len(routes))
	e.ws.rcount = rcount
	for i := range routes {
		na += len(routes[i].Sources)
		rcount[i] = e.hopCount(&routes[i])
		nh += int(rcount[i])
	}
	t.Routes = make([]Route, len(routes))
	hops := make([]NextHop, nh)
	advs := make([]int32, na)
	ids := make([]string, na)
	for i := range routes {
		sr := &routes[i]
		c, ns := rcount[i], len(sr.Sources)
		e.route(sr, &t.Routes[i], hops[:c:c], advs[:ns:ns], ids[:ns:ns])
		countMode(&t.Anomalies, t.Routes[i].Mode)
		hops, advs, ids = hops[c:], advs[ns:], ids[ns:]
	}
	return t
}

// Update is the route-only recompute. prev must be the Table computed for
// prevR; r must share prevR's DAG (spf.Reuse or spf.ReuseChanged of prevR),
// routes = spf.Routes(r), and changedBW the links whose bandwidth changed
// (spf.TopologyDiff). Routes whose advertisers' shortest-path sub-DAGs
// contain no changed link, and whose advertisements (advertisers, Path
// Bandwidth, metric) are unchanged, are carried over from prev (Route values
// are immutable and shared); the others are recomputed. Anomalies are
// recounted. When the preconditions do not hold (a different DAG or Self,
// other options, or a change on one of Self's own links, which touches
// every route) it falls back to ComputeTable. The result equals
// ComputeTable(r, routes, opt).
func Update(prev Table, prevR, r *spf.Result, routes []spf.Route, changedBW []int32, opt Options) Table {
	if prevR == nil || r == nil || r.Self < 0 || prevR.Self != r.Self || prev.Options != opt ||
		len(prevR.EdgeParent) != len(r.EdgeParent) || len(prevR.Dist) != len(r.Dist) ||
		(len(r.EdgeParent) > 0 && &prevR.EdgeParent[0] != &r.EdgeParent[0]) {
		return ComputeTable(r, routes, opt)
	}
	g := r.Graph
	n := len(g.Nodes)
	// Seeds: children of changed DAG links. A change on Self's link: full.
	var aff []bool
	links := g.Links
	for _, li := range changedBW {
		if li < 0 || int(li) >= len(links) {
			continue
		}
		l := &links[li]
		if l.From == r.Self {
			return ComputeTable(r, routes, opt)
		}
		if r.EntryOf(li) < 0 {
			continue
		}
		if aff == nil {
			aff = make([]bool, n)
		}
		aff[l.To] = true
	}
	if aff != nil {
		// Affected = seeds and their DAG descendants (topological order).
		for _, v := range r.Order {
			if aff[v] {
				continue
			}
			for e := r.ParentStart[v]; e < r.ParentStart[v+1]; e++ {
				if aff[r.EdgeParent[e]] {
					aff[v] = true
					break
				}
			}
		}
	}

	t := Table{Options: opt, Routes: make([]Route, len(routes))}
	e := newEngine(r, opt, &t.Anomalies)
	defer e.release()
	old := prev.Routes
	j := 0
	redo := e.ws.rcount[:0]
	for i := range routes {
		sr := &routes[i]
		for j < len(old) && prefixLess(old[j].Prefix, sr.Prefix) {
			j++
		}
		if j < len(old) && old[j].Prefix == sr.Prefix && e.same(&old[j], sr, aff) {
			t.Routes[i] = old[j]
			e.countPaths(sr)
			countMode(&t.Anomalies, old[j].Mode)
			continue
		}
		redo = append(redo, int32(i))
	}
	e.ws.rcount = redo
	nh, na := 0, 0
	for _, i := range redo {
		nh += int(e.hopCount(&routes[i]))
		na += len(routes[i].Sources)
	}
	hops := make([]NextHop, nh)
	advs := make([]int32, na)
	ids := make([]string, na)
	for _, i := range redo {
		sr := &routes[i]
		c, ns := e.hopCount(sr), len(sr.Sources)
		e.route(sr, &t.Routes[i], hops[:c:c], advs[:ns:ns], ids[:ns:ns])
		countMode(&t.Anomalies, t.Routes[i].Mode)
		hops, advs, ids = hops[c:], advs[ns:], ids[ns:]
	}
	return t
}

// same reports whether old, computed for the previous graph, is still the
// result for sr.
func (e *engine) same(old *Route, sr *spf.Route, aff []bool) bool {
	if old.Metric != sr.Metric || old.Down != sr.Down || old.External != sr.External || len(old.Advertisers) != len(sr.Sources) {
		return false
	}
	key := uint64(14695981039346656037)
	for i, s := range sr.Sources {
		if old.Advertisers[i] != s.Node || (aff != nil && aff[s.Node]) {
			return false
		}
		px := &e.g.Prefixes[s.Prefix]
		key = mix(key, uint64(uint32(s.Node)), uint64(math.Float32bits(px.PathBW)), b2u(px.HasPathBW))
	}
	return key == old.key
}

// prefixLess is the order of lsdb.Graph.Prefixes (address, then length).
func prefixLess(a, b netip.Prefix) bool {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c < 0
	}
	return a.Bits() < b.Bits()
}

// Readvertise returns the Path Bandwidth that Self (an L1/L2 router or ABR)
// puts on prefix P advertised by d with Path Bandwidth pb when it leaks P to
// the other level or area: min(PB, cap(Self→d)), where cap(Self→d) is
// Σ_N min(bw(Self,N), cap(N→d)) over Self's first hops (a LAN counts Self's
// link to the pseudonode once). Absent PB is no cap; an unreachable d gives
// 0; d == Self gives PB (the largest finite float32 when absent). Links
// without bandwidth count as unconstrained here: re-advertisement never
// invents a constraint it cannot see. The result is finite and ≥ 0.
// For many prefixes use a Readvertiser.
func Readvertise(pb float32, hasPB bool, r *spf.Result, d int32) float32 {
	return NewReadvertiser(r).PathBW(pb, hasPB, d)
}

// Readvertiser answers Readvertise for many prefixes of one spf.Result,
// computing the edge bandwidths once and memoising cap(Self→D) per
// advertiser. Not safe for concurrent use.
type Readvertiser struct {
	r       *spf.Result
	bw      []float64
	capSelf map[int32]float64
}

// NewReadvertiser prepares re-advertisement for r.
func NewReadvertiser(r *spf.Result) *Readvertiser {
	x := &Readvertiser{r: r, capSelf: map[int32]float64{}}
	if r != nil && r.Self >= 0 {
		x.bw = make([]float64, len(r.EdgeParent))
		unk := make([]bool, len(r.EdgeParent))
		var an Anomalies
		edgeBandwidths(r, &an, x.bw, unk)
	}
	return x
}

// PathBW is Readvertise(pb, hasPB, r, d).
func (x *Readvertiser) PathBW(pb float32, hasPB bool, d int32) float32 {
	r := x.r
	if r == nil || r.Self < 0 || d < 0 || int(d) >= len(r.Dist) {
		return 0
	}
	c, ok := x.capSelf[d]
	if !ok {
		c = capToward(r, x.bw, d)
		x.capSelf[d] = c
	}
	v := min(pathValue(pb, hasPB), c)
	if v > math.MaxFloat32 {
		v = math.MaxFloat32
	}
	return float32(v)
}
