package isis

import (
	"context"
	"net/netip"
	"slices"
	"sort"
	"time"

	apiwire "github.com/fared/fared/api/wire"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// leak is one prefix an L1L2 router advertises into level Into because it
// learned it in the other level (RFC 1195 L1→L2, RFC 5302 L2→L1), with the
// Path Bandwidth re-advertised per draft-xu-lsr-fare §4.2.
type leak struct {
	Prefix      netip.Prefix
	Into        int
	Metric      uint32
	Down        bool
	PathBW      float32 // what we advertise
	OrigPathBW  float32 // what the advertisers sent (summed for anycast)
	HasOrigPB   bool
	Capacity    float64 // Σ over advertisers of cap(Self→D), bytes/s
	Advertisers []string
}

// maxLeakMetric: a route whose metric exceeds RFC 5305 §4's MAX_PATH_METRIC
// is not advertised into the other level.
const maxLeakMetric = maxPathMetric

// LeakView is the API shape of one leaked prefix.
type LeakView = apiwire.ISISLeak

// isL1L2 reports whether this instance leaks between levels.
func (in *Instance) isL1L2() bool { return in.icfg.Level == 3 }

// attached: an L1L2 router is attached to L2 while it has an Up L2
// adjacency (our reading of ISO 10589 §7.2.9.2 for fabrics, where every L2
// neighbour leads to other areas).
func (in *Instance) attached() bool {
	if !in.isL1L2() {
		return false
	}
	for _, c := range in.circuits {
		if c.running && c.levelOn(2) && c.hasUpAdj(2) {
			return true
		}
	}
	return false
}

// markLeak notes that level l changed, so what it leaks into the other
// level must be recomputed (damped by readvertise-hold).
func (in *Instance) markLeak(from int) {
	if in.isL1L2() {
		in.leakDirty[from-1] = true
	}
}

// settleLeaks recomputes what each level leaks into the other, at most once
// per readvertise-hold, and schedules an origination where it changed.
func (in *Instance) settleLeaks(now time.Time) {
	for from := 1; from <= 2; from++ {
		if !in.leakDirty[from-1] {
			continue
		}
		if now.Before(in.lastLeak[from-1].Add(in.icfg.ReadvertiseHold)) {
			continue // damped: a flapping link cannot drive a flooding storm
		}
		in.leakDirty[from-1] = false
		in.lastLeak[from-1] = now
		into := 3 - from
		g := in.Graph(from)
		if g == nil {
			continue
		}
		ls := in.computeLeaks(g, from)
		in.leakRuns[from-1]++
		if !slices.EqualFunc(ls, in.leaks[into-1], leakEqual) {
			in.leaks[into-1] = ls
			in.scheduleRegen(in.levels[into-1])
		}
	}
}

func leakEqual(a, b leak) bool {
	return a.Prefix == b.Prefix && a.Metric == b.Metric && a.Down == b.Down && a.PathBW == b.PathBW
}

// computeLeaks is the pure part: the prefixes of graph g (level from) to
// advertise into the other level, with their re-advertised Path Bandwidth
// (fare.Readvertiser.Route). For L1→L2 that is draft §4.2's "min(bandwidth
// toward the originating router, original path bandwidth)"; for L2→L1
// "min(original path bandwidth, total bandwidth of all paths toward the
// advertising router)".
func (in *Instance) computeLeaks(g *lsdb.Graph, from int) []leak {
	r := spf.Run(g)
	re := fare.NewReadvertiser(r)
	var out []leak
	for _, rt := range spf.Routes(r) {
		if from == 1 && rt.Down {
			continue // RFC 5302 §3.3: never re-leak a down prefix into L2
		}
		if from == 2 && !in.leakL2ToL1(rt.Prefix) {
			continue
		}
		if rt.Metric > maxLeakMetric {
			continue
		}
		lk := leak{Prefix: rt.Prefix, Into: 3 - from, Metric: uint32(rt.Metric), Down: from == 2 || rt.Down}
		for _, src := range rt.Sources {
			lk.Advertisers = append(lk.Advertisers, nodeName(g, src.Node))
		}
		ra := re.Route(rt)
		lk.PathBW, lk.OrigPathBW, lk.HasOrigPB, lk.Capacity = ra.PathBW, ra.OrigPathBW, ra.HasOrigPB, ra.Capacity
		out = append(out, lk)
	}
	sort.Slice(out, func(i, j int) bool { return prefixBefore(out[i].Prefix, out[j].Prefix) })
	return out
}

func (in *Instance) leakL2ToL1(p netip.Prefix) bool {
	for _, f := range in.icfg.LeakL2ToL1 {
		if f.Bits() <= p.Bits() && f.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

func nodeName(g *lsdb.Graph, n int32) string {
	if g.Nodes[n].Name != "" {
		return g.Nodes[n].Name
	}
	return g.Nodes[n].ID
}

func prefixBefore(a, b netip.Prefix) bool {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c < 0
	}
	return a.Bits() < b.Bits()
}

// Leaks returns what this router leaks between levels and where each
// Path Bandwidth came from.
func (in *Instance) Leaks(ctx context.Context) ([]LeakView, error) {
	return igp.Collect(ctx, in.Base, func() (out []LeakView, _ error) {
		out = []LeakView{}
		for into := 1; into <= 2; into++ {
			for _, lk := range in.leaks[into-1] {
				v := LeakView{Prefix: lk.Prefix.String(), FromLevel: 3 - into, IntoLevel: into, Metric: lk.Metric, Down: lk.Down,
					PathBW: float64(lk.PathBW), Capacity: lk.Capacity, Advertisers: lk.Advertisers, Recomputations: in.leakRuns[2-into]}
				if lk.HasOrigPB {
					o := float64(lk.OrigPathBW)
					v.OrigPathBW = &o
				}
				out = append(out, v)
			}
		}
		return
	})
}

// LevelView is the API shape of one level.
type LevelView = apiwire.ISISLevel

// Levels summarises each running level.
func (in *Instance) Levels(ctx context.Context) ([]LevelView, error) {
	return igp.Collect(ctx, in.Base, func() (out []LevelView, _ error) {
		out = []LevelView{}
		for _, lv := range in.levels {
			if lv == nil {
				continue
			}
			v := LevelView{Level: lv.n, LSPs: len(lv.db), Originated: lv.originated, LeakedInto: len(in.leaks[lv.n-1]),
				Recomputations: in.leakRuns[lv.n-1], Converged: in.Converged(), SeqWraps: lv.seqWraps, SeqWaiting: len(lv.seqWait),
				Overload: in.overloaded()}
			if lv.n == 1 {
				v.Attached = in.icfg.AttachedBit && in.attached()
			}
			out = append(out, v)
		}
		return
	})
}
