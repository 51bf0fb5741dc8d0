package lsdb

import "math"

// View is the stable JSON shape of a Graph (farectl lsdb).
type View struct {
	Protocol string       `json:"protocol"`
	Level    int          `json:"level,omitempty"`
	Area     string       `json:"area,omitempty"`
	Self     string       `json:"self,omitempty"`
	Nodes    []NodeView   `json:"nodes"`
	Prefixes []PrefixView `json:"prefixes"`
}

// NodeView is one node with its two-way-checked links.
type NodeView struct {
	ID       string     `json:"id"`
	Name     string     `json:"name,omitempty"`
	Pseudo   bool       `json:"pseudonode,omitempty"`
	Overload bool       `json:"overload,omitempty"`
	Attached bool       `json:"attached,omitempty"`
	RouterID string     `json:"router_id,omitempty"`
	Links    []LinkView `json:"links"`
}

// LinkView is one directed link; parallel links appear separately.
type LinkView struct {
	To         string   `json:"to"`
	ToName     string   `json:"to_name,omitempty"`
	Metric     uint32   `json:"metric"`
	MaxBW      *float64 `json:"max_bandwidth_bytes,omitempty"`
	LocalAddr  string   `json:"local_addr,omitempty"`
	RemoteAddr string   `json:"remote_addr,omitempty"`
}

// PrefixView is one prefix of one advertiser.
type PrefixView struct {
	Prefix     string   `json:"prefix"`
	Advertiser string   `json:"advertiser"`
	Name       string   `json:"advertiser_name,omitempty"`
	Metric     uint32   `json:"metric"`
	PathBW     *float64 `json:"path_bandwidth_bytes,omitempty"`
	Down       bool     `json:"down,omitempty"`
	External   bool     `json:"external,omitempty"`
	InterArea  bool     `json:"inter_area,omitempty"`
	Type2      bool     `json:"metric_type_2,omitempty"`
	Forward    string   `json:"forwarding_address,omitempty"`
}

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
		for _, l := range g.LinksOf(int32(i)) {
			lv := LinkView{To: g.Nodes[l.To].ID, ToName: g.Nodes[l.To].Name, Metric: l.Metric}
			if l.HasBW {
				lv.MaxBW = f64(l.MaxBW)
			}
			if l.LocalAddr.IsValid() {
				lv.LocalAddr = l.LocalAddr.String()
			}
			if l.RemoteAddr.IsValid() {
				lv.RemoteAddr = l.RemoteAddr.String()
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
