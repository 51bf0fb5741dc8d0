package rib

import (
	"net/netip"
	"slices"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

type resolved struct {
	gw  netip.Addr
	adj *lsdb.Adjacency
	ok  bool
}

// route resolves one FARE route into kernel next hops. sr, when known,
// is the spf route fr weighs: its advertisers are the advertisements'
// (fr's are where the paths lead: for an OSPF external with a forwarding
// address, the exits toward that address).
func (m *Manager) route(g *lsdb.Graph, res *hopResolver, st *routeStore, fr *fare.Route, sr *spf.Route, maxW uint32) Route {
	r := Route{Prefix: fr.Prefix, Protocol: g.Protocol, Level: g.Level, Area: g.Area, Metric: fr.Metric, Mode: fr.Mode, Down: fr.Down,
		PathBW: fr.PathBW, HasPathBW: fr.HasPathBW}
	a0 := len(st.advs)
	if sr != nil {
		st.advN = st.advN[:0]
		for _, s := range sr.Sources {
			if a := g.Prefixes[s.Prefix].Node; !slices.Contains(st.advN, a) {
				st.advN = append(st.advN, a)
				st.advs = append(st.advs, nodeLabel(g, a))
			}
		}
	} else {
		for _, a := range fr.Advertisers {
			st.advs = append(st.advs, nodeLabel(g, a))
		}
	}
	if n := len(st.advs); n > a0 {
		r.Advertisers = st.advs[a0:n:n]
	}
	n := len(fr.NextHops)
	if n == 0 {
		r.NextHops = []NextHop{}
		return r
	}
	// Resolve, then present the next hops in interface order (stable;
	// an unresolved hop has no interface); weights move with them.
	v4 := fr.Prefix.Addr().Is4()
	st.res, st.idx = st.res[:0], st.idx[:0]
	for i, nh := range fr.NextHops {
		gw, adj, ok := res.resolve(nh, v4)
		st.res = append(st.res, resolved{gw, adj, ok})
		st.idx = append(st.idx, i)
	}
	ifname := func(i int) string {
		if x := &st.res[i]; x.ok {
			return x.adj.IfName
		}
		return ""
	}
	idx := st.idx
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && ifname(idx[j]) < ifname(idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	st.tmp, st.ws = st.tmp[:0], st.ws[:0]
	for _, i := range idx {
		nh := &fr.NextHops[i]
		h := NextHop{
			Neighbor: g.Nodes[nh.Neighbor].ID, NeighborName: g.Nodes[nh.Neighbor].Name,
			LinkBW: nh.LinkBW, NeighborBW: nh.NeighborBW, DownCap: nh.DownCap, PathBW: nh.PathBW,
			Weight: nh.Weight, Share: nh.Share,
		}
		if x := &st.res[i]; x.ok {
			h.Gateway, h.Interface, h.IfIndex = x.gw, x.adj.IfName, x.adj.IfIndex
		} else {
			h.Unresolved = true
		}
		st.tmp = append(st.tmp, h)
		st.ws = append(st.ws, nh.Weight)
	}
	q, qerr := fare.QuantizeTo(st.q, st.ws, maxW)
	st.q = q
	var qsum uint64
	for _, x := range q {
		qsum += uint64(x)
	}
	for i := range st.tmp {
		st.tmp[i].KernelWeight = q[i]
		if qsum > 0 {
			st.tmp[i].KernelShare = float64(q[i]) / float64(qsum)
		}
	}
	r.QuantError = qerr
	r.NextHops = st.keep(r.Prefix, st.tmp)
	return r
}

func nodeLabel(g *lsdb.Graph, n int32) string {
	if g.Nodes[n].Name != "" {
		return g.Nodes[n].Name
	}
	return g.Nodes[n].ID
}

// hopResolver turns FARE next hops into (gateway, interface) through
// Self's adjacencies, indexed by neighbour node once per graph.
type hopResolver struct {
	g      *lsdb.Graph
	byNode map[int32][]int32 // indices into g.Adjacencies, in their order
}

func newHopResolver(g *lsdb.Graph) *hopResolver {
	r := &hopResolver{g: g, byNode: make(map[int32][]int32, len(g.Adjacencies))}
	for i := range g.Adjacencies {
		if n := g.Lookup(g.Adjacencies[i].Node); n >= 0 {
			r.byNode[n] = append(r.byNode[n], int32(i))
		}
	}
	return r
}

// resolve finds the gateway and interface of one FARE next hop: the
// adjacency to the first-hop neighbour on the interface that owns the
// local address of Self's link (parallel links differ only there).
func (r *hopResolver) resolve(nh fare.NextHop, v4 bool) (netip.Addr, *lsdb.Adjacency, bool) {
	g := r.g
	var local netip.Addr
	if nh.Link >= 0 && int(nh.Link) < len(g.Links) {
		local = g.LinkAddrs(nh.Link).Local.Addr()
	}
	var cand *lsdb.Adjacency
	for _, i := range r.byNode[nh.Neighbor] {
		a := &g.Adjacencies[i]
		if local.IsValid() && !slices.ContainsFunc(a.Local, func(p netip.Prefix) bool { return p.Addr() == local }) {
			continue
		}
		cand = a
		break
	}
	if cand == nil {
		return netip.Addr{}, nil, false
	}
	for _, x := range cand.NbrAddrs {
		if x.Is4() == v4 {
			return x, cand, true
		}
	}
	return netip.Addr{}, cand, false
}
