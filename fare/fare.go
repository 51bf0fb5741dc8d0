package fare

import (
	"math"
	"net/netip"
	"sync"

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
	edgeBW, ent, f     []float64
	edgeUnk, entUnk, b []bool
	nbPos, rcount      []int32
	cc                 capCalc
}

var pool = sync.Pool{New: func() any { return new(workspace) }}

// Table is the full result of one FARE computation.
type Table struct {
	Routes    []Route   `json:"routes"`
	Anomalies Anomalies `json:"anomalies"`
}

// Compute returns the weighted routes for routes (from spf.Routes(r)).
func Compute(r *spf.Result, routes []spf.Route, opt Options) []Route {
	return ComputeTable(r, routes, opt).Routes
}

// ComputeTable is Compute with the anomaly counters.
func ComputeTable(r *spf.Result, routes []spf.Route, opt Options) Table {
	var t Table
	if r == nil || r.Self < 0 || len(routes) == 0 {
		t.Routes = []Route{}
		return t
	}
	g := r.Graph
	an := &t.Anomalies
	ws := pool.Get().(*workspace)
	defer pool.Put(ws)
	ne := len(r.EdgeParent)
	edgeBW, edgeUnk := grow(ws.edgeBW, ne), grow(ws.edgeUnk, ne)
	edgeBandwidths(r, an, edgeBW, edgeUnk)
	ws.edgeBW, ws.edgeUnk = edgeBW, edgeUnk
	cc := &ws.cc
	cc.reset(r, edgeBW, edgeUnk)
	defer func() { cc.r, cc.edgeBW, cc.edgeUnk = nil, nil, nil }()

	// Per neighbour: bw(self, N), and each of Self's links' own value.
	nn := len(r.Neighbors)
	nbPos := grow(ws.nbPos, len(g.Nodes))
	ws.nbPos = nbPos
	for i := range nbPos {
		nbPos[i] = -1
	}
	ws.f = grow(ws.f, 4*nn+len(r.NeighborLinks))
	ws.b = grow(ws.b, 2*nn)
	clear(ws.f)
	clear(ws.b)
	selfBW, capPB, down, pbs, lval := ws.f[:nn], ws.f[nn:2*nn], ws.f[2*nn:3*nn], ws.f[3*nn:4*nn], ws.f[4*nn:]
	selfUnk, unk := ws.b[:nn], ws.b[nn:]
	nls := r.NeighborLinkStart
	for i, nb := range r.Neighbors {
		nbPos[nb] = int32(i)
		for j := nls[i]; j < nls[i+1]; j++ {
			v, known := linkBW(g, r.NeighborLinks[j])
			lval[j] = v
			selfBW[i] += v
			selfUnk[i] = selfUnk[i] || !known
		}
	}

	// Output storage, allocated once.
	nh, na := 0, 0
	rcount := grow(ws.rcount, len(routes))
	ws.rcount = rcount
	for i := range routes {
		na += len(routes[i].Sources)
		c := int32(0)
		for _, nb := range routes[i].FirstHops {
			if p := nbPos[nb]; p >= 0 {
				c += nls[p+1] - nls[p]
			}
		}
		rcount[i] = c
		nh += int(c)
	}
	t.Routes = make([]Route, len(routes))
	hops := make([]NextHop, nh)
	advs := make([]int32, na)
	ids := make([]string, na)

	nr := 0
	for ri := range routes {
		sr := &routes[ri]
		rt := &t.Routes[nr]
		nr++
		*rt = Route{Prefix: sr.Prefix, Metric: sr.Metric, Down: sr.Down, External: sr.External, HasPathBW: true}
		ns := len(sr.Sources)
		rt.Advertisers, advs = advs[:ns:ns], advs[ns:]
		rt.AdvertiserIDs, ids = ids[:ns:ns], ids[ns:]
		for _, nb := range sr.FirstHops {
			if p := nbPos[nb]; p >= 0 {
				capPB[p], down[p], pbs[p], unk[p] = 0, 0, 0, false
			}
		}
		for si, s := range sr.Sources {
			rt.Advertisers[si] = s.Node
			rt.AdvertiserIDs[si] = g.Nodes[s.Node].ID
			px := &g.Prefixes[s.Prefix]
			an.countPath(px.PathBW, px.HasPathBW)
			pb := pathValue(px.PathBW, px.HasPathBW)
			rt.HasPathBW = rt.HasPathBW && px.HasPathBW
			rt.PathBW += pb
			if opt.ECMPOnly {
				continue
			}
			cv, cu := cc.caps(s.Node)
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
		rt.PathBW = out(rt.PathBW)
		if !rt.HasPathBW {
			rt.PathBW = Unconstrained
		}

		// Mode.
		mode := ModeWeighted
		if opt.ECMPOnly {
			mode = ModeECMP
		} else {
			anyPos := false
			for _, nb := range sr.FirstHops {
				p := nbPos[nb]
				if p < 0 {
					continue
				}
				if unk[p] || selfUnk[p] {
					mode = ModeMissingBW
				}
				if min(selfBW[p], capPB[p]) > 0 {
					anyPos = true
				}
			}
			if !anyPos {
				mode = ModeZeroCapacity
			}
		}
		switch mode {
		case ModeMissingBW:
			an.RoutesMissingBW++
		case ModeZeroCapacity:
			an.RoutesZeroCapacity++
		}
		rt.Mode = mode

		// Next hops, written in place.
		cnt := rcount[ri]
		buf := hops[:cnt:cnt]
		hops = hops[cnt:]
		k := 0
		total := 0.0
		zeros := 0
		for _, nb := range sr.FirstHops {
			p := nbPos[nb]
			if p < 0 {
				continue
			}
			w := min(selfBW[p], capPB[p])
			nbw, dc, pw := out(selfBW[p]), out(down[p]), out(pbs[p])
			if opt.ECMPOnly {
				dc, pw = 0, 0
			}
			for j := nls[p]; j < nls[p+1]; j++ {
				lb := lval[j]
				h := &buf[k]
				k++
				h.Neighbor, h.Link = nb, r.NeighborLinks[j]
				h.LinkBW, h.NeighborBW, h.DownCap, h.PathBW = out(lb), nbw, dc, pw
				var wt float64
				switch mode {
				case ModeWeighted:
					if w > 0 && lb > 0 {
						wt = w * (lb / selfBW[p])
					}
				case ModeMissingBW:
					if w > 0 && lb > 0 {
						wt = 1
					}
				default:
					wt = 1
				}
				h.Weight = wt
				total += wt
				if wt == 0 {
					zeros++
				}
			}
		}
		// Zero weights move to Unused, order kept.
		if zeros > 0 {
			unused := make([]NextHop, 0, zeros)
			j := 0
			for i := range buf {
				if buf[i].Weight > 0 {
					buf[j] = buf[i]
					j++
				} else {
					unused = append(unused, buf[i])
				}
			}
			buf = buf[:j:j]
			rt.Unused = unused
		}
		for i := range buf {
			buf[i].Share = buf[i].Weight / total
			buf[i].Weight = out(buf[i].Weight)
		}
		rt.NextHops = buf
	}
	t.Routes = t.Routes[:nr]
	return t
}

// Readvertise returns the Path Bandwidth that Self (an L1/L2 router or ABR)
// puts on prefix P advertised by d with Path Bandwidth pb when it leaks P to
// the other level or area: min(PB, cap(Self→d)), where cap(Self→d) is
// Σ_N min(bw(Self,N), cap(N→d)) over Self's first hops (a LAN counts Self's
// link to the pseudonode once). Absent PB is no cap; an unreachable d gives
// 0; d == Self gives PB (the largest finite float32 when absent). Links
// without bandwidth count as unconstrained here: re-advertisement never
// invents a constraint it cannot see. The result is finite and ≥ 0.
func Readvertise(pb float32, hasPB bool, r *spf.Result, d int32) float32 {
	p := pathValue(pb, hasPB)
	if r == nil || r.Self < 0 || d < 0 || int(d) >= len(r.Dist) {
		return 0
	}
	bw := make([]float64, len(r.EdgeParent))
	unk := make([]bool, len(r.EdgeParent))
	var an Anomalies
	edgeBandwidths(r, &an, bw, unk)
	c := capToward(r, bw, d)
	v := min(p, c)
	if v > math.MaxFloat32 {
		v = math.MaxFloat32
	}
	return float32(v)
}
