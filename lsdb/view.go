package lsdb

import (
	"math"

	"github.com/fared/fared/api/wire"
)

// The JSON shapes of a Graph live in api/wire (farectl links them, not
// this package).
type (
	View       = wire.Topology
	NodeView   = wire.TopoNode
	LinkView   = wire.TopoLink
	PrefixView = wire.TopoPrefix
)

// View renders the graph for JSON output.
func (g *Graph) View() View {
	v := View{Protocol: g.Protocol, Level: g.Level, Area: g.Area, Nodes: []NodeView{}, Prefixes: []PrefixView{}}
	if g.Self >= 0 {
		v.Self = g.Nodes[g.Self].ID
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		nv := NodeView{ID: n.ID, Name: n.Name, Pseudo: n.Pseudo, Overload: n.Overload, Attached: n.Attached, Links: []LinkView{}}
		if n.RouterID.IsValid() {
			nv.RouterID = n.RouterID.String()
		}
		for j, l := range g.LinksOf(int32(i)) {
			lv := LinkView{To: g.Nodes[l.To].ID, ToName: g.Nodes[l.To].Name, Metric: l.Metric}
			if l.HasBW {
				lv.MaxBW = f64(l.MaxBW)
			}
			a := g.LinkAddrs(n.First + int32(j))
			if a.Local.IsValid() {
				lv.LocalAddr = a.Local.String()
			}
			if a.Remote.IsValid() {
				lv.RemoteAddr = a.Remote.String()
			}
			nv.Links = append(nv.Links, lv)
		}
		v.Nodes = append(v.Nodes, nv)
	}
	for _, p := range g.Prefixes {
		pv := PrefixView{Prefix: p.Prefix.String(), Advertiser: g.Nodes[p.Node].ID, Name: g.Nodes[p.Node].Name, Metric: p.Metric,
			Down: p.Down, External: p.External, InterArea: p.Inter, Type2: p.Type2}
		if p.Forward.IsValid() {
			pv.Forward = p.Forward.String()
		}
		if p.HasPathBW {
			pv.PathBW = f64(p.PathBW)
		}
		v.Prefixes = append(v.Prefixes, pv)
	}
	return v
}

// f64 widens a wire float for JSON; non-finite values (which a peer may send)
// cannot be encoded as JSON numbers, so they are clamped to the float32 range.
func f64(f float32) *float64 {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return nil
	case math.IsInf(x, 1):
		x = math.MaxFloat32
	case math.IsInf(x, -1):
		x = -math.MaxFloat32
	}
	return &x
}
