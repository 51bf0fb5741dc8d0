package fare

import (
	"math"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// Unconstrained is how an infinite capacity appears in output: the largest
// finite float32, the same value the architecture uses as the default Path
// Bandwidth ("no constraint"). JSON cannot encode +Inf.
const Unconstrained = math.MaxFloat32

var inf = math.Inf(1)

// Anomalies counts bandwidth values that were not usable as received, and
// routes that fell back to equal weights. Link counters cover every link on
// the shortest-path DAG once (links elsewhere do not influence weights);
// path counters cover every selected prefix advertisement once. The
// counts are indexed by kind so that sums and the metrics walk them all;
// the API's JSON names each (daemon/wireconv.go).
type Anomalies [numAnomalies]int

// Anomaly is one kind of unusable value or fallback (docs/fare.md).
type Anomaly int

const (
	LinkMissing  Anomaly = iota // no Maximum Link Bandwidth sub-TLV
	LinkNaN                     // NaN → 0 (unusable)
	LinkInf                     // +Inf → largest finite float32
	LinkNegative                // < 0 or -Inf → 0 (unusable)
	LinkZero                    // 0 as received (unusable)
	PathNaN                     // Path Bandwidth NaN → 0
	PathInf                     // +Inf → largest finite float32
	PathNegative                // < 0 or -Inf → 0
	PathZero                    // 0 as received
	// RoutesMissingBW fell back to ECMP because a hop had no bandwidth.
	RoutesMissingBW
	// RoutesZeroCapacity fell back to ECMP because every first hop had
	// zero capacity.
	RoutesZeroCapacity
	numAnomalies
)

// anomalyNames are the metric labels, the same words as the API's keys.
var anomalyNames = [numAnomalies]string{"link_missing", "link_nan", "link_inf", "link_negative", "link_zero",
	"path_nan", "path_inf", "path_negative", "path_zero", "routes_missing_bandwidth", "routes_zero_capacity"}

func (k Anomaly) String() string { return anomalyNames[k] }

// Total is the number of anomalous values and fallbacks.
func (a Anomalies) Total() int {
	n := 0
	for _, c := range a {
		n += c
	}
	return n
}

// Add returns the counts of a and b summed (several topologies).
func (a Anomalies) Add(b Anomalies) Anomalies {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

// linkValue maps a wire bandwidth to the value used in the math. known is
// false when the sub-TLV was absent (the value is then +Inf, "unconstrained",
// and the route falls back to ECMP).
func linkValue(f float32, has bool) (v float64, known bool) {
	if !has {
		return inf, false
	}
	x := float64(f)
	switch {
	case math.IsNaN(x) || x < 0:
		return 0, true
	case math.IsInf(x, 1):
		return math.MaxFloat32, true
	}
	return x, true
}

func countLink(a *Anomalies, f float32, has bool) {
	if !has {
		a[LinkMissing]++
		return
	}
	countBad(a, f, linkKinds)
}

// badKinds names the anomaly each bad value of one wire field counts as;
// Link and Path Bandwidth are judged alike.
type badKinds struct{ nan, inf, negative, zero Anomaly }

var (
	linkKinds = badKinds{LinkNaN, LinkInf, LinkNegative, LinkZero}
	pathKinds = badKinds{PathNaN, PathInf, PathNegative, PathZero}
)

// countBad counts f under its kind if it is bad (a good value counts
// nothing).
func countBad(a *Anomalies, f float32, k badKinds) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		a[k.nan]++
	case math.IsInf(x, 1):
		a[k.inf]++
	case x < 0:
		a[k.negative]++
	case x == 0:
		a[k.zero]++
	}
}

// pathValue maps a wire Path Bandwidth to a cap: absent = +Inf (no cap),
// NaN and negative = 0, +Inf = largest finite float32.
func pathValue(f float32, has bool) float64 {
	if !has {
		return inf
	}
	x := float64(f)
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat32
	}
	return x
}

func countPath(a *Anomalies, f float32, has bool) {
	if has {
		countBad(a, f, pathKinds)
	}
}

// out clamps a value for output (JSON has no +Inf).
func out(x float64) float64 {
	if x > Unconstrained {
		return Unconstrained
	}
	return x
}

// edgeBandwidths returns, per DAG edge, bw(parent, child): the sum of the
// shortest-path parallel links' bandwidths, +Inf for an edge leaving a
// pseudonode (those links carry no bandwidth: the constraint is the LAN link
// into the pseudonode). unknown[e] is set when a link lacks the sub-TLV.
// Values come from Graph.Links through the DAG's EdgeLinks.
func edgeBandwidths(r *spf.Result, an *Anomalies, bw []float64, unknown []bool) {
	g := r.Graph
	links := g.Links
	if len(r.EdgeLinks) == len(r.EdgeParent) && !hasPseudo(g) {
		// One link per edge (entry e is edge e), no pseudonode: the
		// general loop below without its per-edge lookups.
		for e, li := range r.EdgeLinks[:len(bw)] {
			l := &links[li]
			f, has := l.MaxBW, l.HasBW
			if b := math.Float32bits(f); has && b-1 < 0x7f7fffff {
				bw[e], unknown[e] = float64(f), false
				continue
			}
			countLink(an, f, has)
			v, known := linkValue(f, has)
			bw[e], unknown[e] = 0+v, !known // 0 + v: the sum below (-0 → 0)
		}
		return
	}
	for e, p := range r.EdgeParent {
		if g.Nodes[p].Pseudo {
			bw[e], unknown[e] = inf, false
			continue
		}
		sum, unk := 0.0, false
		for i := r.EdgeLinkStart[e]; i < r.EdgeLinkStart[e+1]; i++ {
			l := &links[r.EdgeLinks[i]]
			f, has := l.MaxBW, l.HasBW
			// Fast path: present, positive and finite (sign bit clear,
			// exponent not all ones, not zero).
			if b := math.Float32bits(f); has && b-1 < 0x7f7fffff {
				sum += float64(f)
				continue
			}
			countLink(an, f, has)
			v, known := linkValue(f, has)
			sum += v
			unk = unk || !known
		}
		bw[e], unknown[e] = sum, unk
	}
}

func hasPseudo(g *lsdb.Graph) bool {
	for i := range g.Nodes {
		if g.Nodes[i].Pseudo {
			return true
		}
	}
	return false
}
