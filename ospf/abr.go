package ospf

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"sort"

	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/ospf/packet"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/internal/igp"
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
	// For the view: the original Path Bandwidth and cap(self→D) of the
	// advertiser that gave pb, and the advertisers.
	origPB, capacity float32
	hasOrigPB        bool
	advertisers      []string
}

// SummaryView is the API shape of one originated Summary LSA.
type SummaryView = apiwire.OSPFSummary

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
		views := map[netip.Prefix]SummaryView{}
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
					v := SummaryView{Area: t.name, Prefix: p.String(), Metric: r.metric, FromArea: s.name,
						Advertisers: r.advertisers, Capacity: r.capacity, PathBW: r.pb}
					if r.hasOrigPB {
						o := r.origPB
						v.OrigPathBW = &o
					}
					views[p] = v
				}
			}
		}
		t.summaryViews = t.summaryViews[:0]
		for _, v := range views {
			t.summaryViews = append(t.summaryViews, v)
		}
		sort.Slice(t.summaryViews, func(i, j int) bool { return t.summaryViews[i].Prefix < t.summaryViews[j].Prefix })
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
			if rt.Metric >= packet.LSInfinity {
				// §12.4.3: no Summary LSA for a cost of LSInfinity or
				// more (a capped one would claim a reachable route); one
				// we originated before is flushed by installWanted.
				continue
			}
			ar := abrRoute{metric: uint32(rt.Metric), intra: true}
			for _, s := range rt.Sources {
				id := g.Nodes[s.Node].ID
				if a.interArea[prefixAdv{rt.Prefix, id}] {
					ar.intra = false
				}
				ar.advertisers = append(ar.advertisers, id)
			}
			// The same re-advertisement rule as IS-IS levels (anycast
			// included).
			ra := rv.Route(rt)
			ar.pb, ar.origPB, ar.hasOrigPB = ra.PathBW, ra.OrigPathBW, ra.HasOrigPB
			ar.capacity = float32(min(ra.Capacity, MaxPathBandwidth))
			sort.Strings(ar.advertisers)
			out[rt.Prefix] = ar
		}
	}
	_, stubs := in.routerLSA(a)
	for _, s := range stubs {
		out[s.prefix] = abrRoute{metric: uint32(s.metric), pb: s.pb, intra: true, origPB: s.pb, hasOrigPB: s.pb < MaxPathBandwidth,
			capacity: MaxPathBandwidth, advertisers: []string{in.rid.String()}}
	}
	for _, ifc := range in.ifaces {
		if ifc.area == a && ifc.running && ifc.transit() {
			out[ifc.addr.Masked()] = abrRoute{metric: uint32(ifc.cfg.Cost), pb: MaxPathBandwidth, intra: true,
				capacity: MaxPathBandwidth, advertisers: []string{in.rid.String()}}
		}
	}
	return out
}

// Summaries returns the Summary LSAs we originate as an ABR, by area and
// prefix, with their Path Bandwidth re-advertisement.
func (in *Instance) Summaries(ctx context.Context) ([]SummaryView, error) {
	return igp.Collect(ctx, in.Base, func() (out []SummaryView, _ error) {
		out = []SummaryView{}
		for _, a := range in.areas {
			for _, v := range a.summaryViews {
				v.Advertisers = slices.Clone(v.Advertisers)
				if v.OrigPathBW != nil {
					o := *v.OrigPathBW
					v.OrigPathBW = &o
				}
				out = append(out, v)
			}
		}
		return
	})
}
