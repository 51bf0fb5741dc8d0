package ospf

import (
	"maps"
	"net/netip"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/spf"
)

// summary is one Summary LSA an ABR originates into an area, with the
// Path Bandwidth it re-advertises (draft-xu-lsr-fare §4.2).
type summary struct {
	metric uint32
	pb     float32
}

type abrRoute struct {
	metric uint32
	pb     float32
	intra  bool
}

// scheduleSummaries recomputes, after a graph change, the Summary LSAs an
// ABR originates (RFC 2328 §12.4.3): into each attached area, the
// intra-area routes of every other area, and into non-backbone areas also
// the backbone's inter-area routes. Each carries the re-advertised Path
// Bandwidth min(PB, Σ_N min(bw(self,N), cap(N→D))) toward the advertiser
// D in the source area, in an inter-area Extended Prefix LSA.
func (in *Instance) scheduleSummaries() {
	abr := in.isABR()
	per := map[*area]map[netip.Prefix]abrRoute{}
	if abr {
		for _, a := range in.areas {
			per[a] = in.areaRoutes(a)
		}
	}
	for _, t := range in.areas {
		want := map[netip.Prefix]summary{}
		if abr && in.attached(t) {
			for _, s := range in.areas {
				if s == t || !in.attached(s) {
					continue
				}
				for p, r := range per[s] {
					if !r.intra && s.id != 0 {
						continue
					}
					if own, ok := per[t][p]; ok && own.intra {
						continue // the area reaches it itself
					}
					if cur, ok := want[p]; ok && cur.metric < r.metric {
						continue
					}
					want[p] = summary{metric: r.metric, pb: r.pb}
				}
			}
		}
		if !maps.Equal(want, t.summaries) {
			t.summaries = want
			t.regen = true
		}
	}
}

// attached: the area has a running interface.
func (in *Instance) attached(a *area) bool {
	for _, ifc := range in.ifaces {
		if ifc.area == a && ifc.running {
			return true
		}
	}
	return false
}

// areaRoutes is what area a contributes to summaries: its routes (from SPF
// over its graph) and our own prefixes in it.
func (in *Instance) areaRoutes(a *area) map[netip.Prefix]abrRoute {
	out := map[netip.Prefix]abrRoute{}
	if a.graph != nil && a.graph.Self >= 0 {
		r := spf.Run(a.graph)
		rv := fare.NewReadvertiser(r)
		g := a.graph
		for _, rt := range spf.Routes(r) {
			if rt.External || len(rt.Sources) == 0 {
				continue
			}
			intra := true
			pb := float32(0)
			for _, s := range rt.Sources {
				if a.interArea[prefixAdv{rt.Prefix, g.Nodes[s.Node].ID}] {
					intra = false
				}
				gp := &g.Prefixes[s.Prefix]
				pb = max(pb, rv.PathBW(gp.PathBW, gp.HasPathBW, s.Node))
			}
			out[rt.Prefix] = abrRoute{metric: uint32(min(rt.Metric, lsInfinity-1)), pb: pb, intra: intra}
		}
	}
	_, stubs := in.routerLSA(a)
	for _, s := range stubs {
		out[s.prefix] = abrRoute{metric: uint32(s.metric), pb: s.pb, intra: true}
	}
	for _, ifc := range in.ifaces {
		if ifc.area == a && ifc.running && ifc.transit() {
			out[ifc.addr.Masked()] = abrRoute{metric: uint32(ifc.cfg.Cost), pb: MaxPathBandwidth, intra: true}
		}
	}
	return out
}
