package fare

import (
	"math"

	"github.com/fared/fared/spf"
)

// Readvertised is the Path Bandwidth an L1/L2 router or ABR puts on one
// leaked route, with where it came from.
type Readvertised struct {
	PathBW     float32 // what goes on the wire
	OrigPathBW float32 // the advertisers' Path Bandwidth, summed for anycast
	HasOrigPB  bool    // every advertiser sent one
	Capacity   float64 // Σ over advertisers of cap(Self→D), bytes/s
}

// Route computes the re-advertised Path Bandwidth of a route of x's
// spf.Result (draft-xu-lsr-fare §4.2, the same rule for IS-IS levels and
// OSPF areas):
//
//	one advertiser D:   PB' = min(PB, cap(Self→D)), cap(Self→D) = Σ_N min(bw(Self,N), cap(N→D))
//	anycast D1, D2...:  PB' = min(Σ PB_i, Σ cap(Self→D_i), Σ bw of Self's links toward them)
//
// Anycast sums the advertisers (each is a place the traffic may go) but
// never exceeds Self's own links toward them, which the per-advertiser
// capacities would count once per advertiser. A missing Path Bandwidth is
// no constraint. Non-finite or negative wire values count as 0.
func (x *Readvertiser) Route(rt spf.Route) Readvertised {
	r := x.r
	g := r.Graph
	var pbSum, capSum float64
	allPB := true
	for _, src := range rt.Sources {
		p := g.Prefixes[src.Prefix]
		if p.HasPathBW {
			pbSum += clampWire(p.PathBW)
		} else {
			allPB = false
		}
		capSum += float64(x.PathBW(0, false, src.Node))
	}
	out := Readvertised{Capacity: capSum}
	pb := capSum
	if allPB && len(rt.Sources) > 0 {
		out.OrigPathBW, out.HasOrigPB = float32(min(pbSum, math.MaxFloat32)), true
		pb = min(pb, pbSum)
	}
	if len(rt.Sources) > 1 {
		var egress float64
		for _, nb := range rt.FirstHops {
			for _, li := range r.SelfLinks(nb) {
				if l := g.Links[li]; l.HasBW {
					egress += clampWire(l.MaxBW)
				} else {
					egress = math.Inf(1)
				}
			}
		}
		pb = min(pb, egress)
	}
	out.PathBW = float32(min(pb, math.MaxFloat32))
	return out
}

// clampWire reads a wire bandwidth for sums: NaN or negative count as 0,
// +Inf as the largest finite float32.
func clampWire(f float32) float64 {
	v := float64(f)
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return min(v, math.MaxFloat32)
}
