package policy

import (
	"fmt"
	"math"

	"github.com/fared/fared/qos/model"
)

// aiECN is fared's AI ECN (docs/qos.md, "AI ECN"). It tunes a queue's
// Kmin, Kmax with it (keeping the configured Kmax/Kmin ratio until Kmax
// meets the limit) and Pmax, from what the queue shows every interval:
// utilisation, ECN marks, PAUSEs, sampled depth and the elephant/mice
// split of the bytes it sent (the large/small flow classifier). Every
// input is a measured counter and every rule a comparison; there is no
// trained model. Every change is kept with the rule that made it and the
// numbers that fired it (ECNTuner.Decisions).
//
// Utilisation band. The tuner keeps the link's utilisation between the
// target and (1 + target) / 2 (0.9 and 0.95 by default). Above the band
// with a queue, ECN may act earlier (the queue is delay nobody needs);
// below the target with marks, ECN is cutting senders the link has room
// for. In between it holds. Below the target, a link that is filling up
// by itself (at the trend of the last two intervals it reaches the target
// within aiSettle intervals: senders recovering from earlier cuts) is
// left alone.
//
// Traffic models. The mice's share of bytes puts the queue in one of
// four models: elephants [0, 2%), mostly-elephants [2%, 10%), mixed
// [10%, 30%), mice [30%, 100%] (no classifier: mixed). A move to the
// next model must be seen two intervals in a row (a new elephant counts
// as mice until the classifier catches it: a few percent of an
// interval's bytes); a jump across two or more edges is a phase change
// and is taken at once. Leaving a model it has been in for aiSettle
// intervals, the tuner remembers its Kmin (averaged over the intervals,
// aiMemory) and Pmax; coming back it jumps there and watches aiSettle
// intervals before adjusting (they show the phase change itself, not the
// thresholds) — the seed's "matches a known traffic model: infer its
// threshold". A model never met starts from the thresholds the operator
// gives for it (models, also watched aiSettle intervals); else, between
// two models with mice, the tuner continues from where it is; crossing
// between elephants alone and traffic with mice, from the configured
// profile (what was learnt for the one says nothing about the other).
//
// Elephants alone (< 2% mice). No one in the queue needs a short wait,
// and with DCQCN senders a low threshold is what keeps the link full (a
// late mark lets the queue overshoot and then earns every sender several
// cuts in a row), so the tuner probes toward earlier marking while the
// link stays full, and steps back when it does not:
//
//	E1. above the band: Kmin halves (straight down to the deepest sampled
//	    queue when that is lower: a Kmin above every sample marked
//	    nothing), not below the model's floor; at the floor Pmax doubles,
//	    up to the model's cap;
//	E2. below the target with marks, not recovering, for aiGuard
//	    intervals in a row (a joining flow costs one or two): one step
//	    back — Pmax halves (not below the configured Pmax), else Kmin
//	    doubles — and the step back becomes the model's cap or floor;
//	E3. otherwise hold.
//
// With mice (>= 2% of bytes, or no classifier). Mice arrive in bursts
// that drain by themselves; ECN that marks inside a burst cuts the
// elephants for nothing. Kmin's job is to sit above the bursts, Pmax's to
// push the elephants' standing queue down. A change shows in the counters
// an interval later, so after each change the tuner watches one interval
// before deciding again (a second blind step overshoots):
//
//	M1. below the target with marks, not recovering, no PAUSE: the bursts
//	    are marked and the elephants cut while the link has room — Kmin x
//	    (1 + 2 x the shortfall / target), at most x 2, the shortfall being
//	    what the utilisation still lacks after aiSettle intervals at its
//	    trend (PAUSEs mean ECN acted too late: never raise then);
//	M2. above the band with a queue: the queue is only delay for the mice
//	    — Kmin x (0.9 - 0.2 x mice share), faster with more mice as the
//	    seed asks, and Pmax x 2 (a steeper slope above Kmin);
//	M3. otherwise hold.
type aiECN struct {
	target float64
	models map[string]model.WRED // known models given in the configuration
}

// AIModelNames are AI ECN's traffic models, by rising mice share.
func AIModelNames() []string { return aiModelNames[:] }

var (
	aiModelEdges = [...]float64{0.02, 0.10, 0.30}
	aiModelNames = [...]string{"elephants", "mostly-elephants", "mixed", "mice"}
)

const (
	aiSettle = 3    // intervals: before a model is remembered, of watching after a jump, of a recovery's horizon
	aiGuard  = 3    // E2: intervals below the target with marks before a step back
	aiIdle   = 0.05 // utilisation below which (without marks) nothing is learnt
	aiLower  = 0.9  // M2: Kmin factor, minus 0.2 x the mice share
	aiMemory = 0.25 // weight of each interval in a model's remembered Kmin
)

// aiPoint is a model's remembered thresholds.
type aiPoint struct {
	k     float64 // Kmin
	ratio float64 // Kmax / Kmin
	prob  int     // Pmax, percent
	// floor is the lowest Kmin E1 may probe to, and pCap the highest
	// Pmax at it (E2 sets them where the link last fell short).
	floor float64
	pCap  int
}

type aiState struct {
	k        float64 // Kmin
	ratio    float64 // Kmax / Kmin in use
	model    int     // -1 before the first busy interval
	pending  int     // a different model seen once, -1 none
	inModel  int
	known    [len(aiModelNames)]aiPoint // remembered per model, k 0 = none
	floor    float64                    // E1's floor in the current model
	pCap     int                        // and the Pmax cap at it
	short    int                        // E2: intervals in a row below the target with marks
	watch    bool                       // M: the last interval changed something, watch this one
	hold     int                        // intervals left to watch after a jump to a known model
	logK     float64                    // log Kmin averaged over the model's intervals (remembered)
	prevUtil [2]float64                 // the last two intervals' utilisation, latest first
	// baseRatio is the configured profile's Kmax/Kmin.
	baseRatio float64
}

func aiModel(mice float64) int {
	if mice < 0 {
		return 2 // no classifier: "mixed"
	}
	for i, e := range aiModelEdges {
		if mice < e {
			return i
		}
	}
	return len(aiModelEdges)
}

func (a *aiECN) start(q *tunedQueue) {
	b := q.cur
	ratio := 1.0
	if b.Min > 0 {
		ratio = float64(b.Max) / float64(b.Min)
	}
	q.state = &aiState{k: float64(b.Min), ratio: ratio, baseRatio: ratio, model: -1, pending: -1}
	q.model = ""
}

// with returns the thresholds for Kmin = k and Pmax = prob percent.
func (s *aiState) with(q *tunedQueue, k float64, prob int) model.WRED {
	lo, hi := float64(q.lo), float64(q.hi)
	// Kmin may rise to 90% of the limit: Kmax then stops at the limit
	// and the band narrows.
	k = math.Min(math.Max(k, math.Max(lo, 1)), math.Max(0.9*hi, lo))
	s.k = k
	w := q.cur
	w.Min = uint64(math.Round(k))
	w.Max = uint64(math.Min(math.Round(k*math.Max(s.ratio, 1)), hi))
	if w.Max <= w.Min {
		w.Max = min(w.Min+1, q.hi)
	}
	w.Prob = min(max(prob, q.pLo), q.pHi)
	w.ProbExact = 0
	return w
}

// kMin is the lowest Kmin with() gives.
func kMin(q *tunedQueue) float64 { return math.Max(float64(q.lo), 1) }

// kMax is the highest.
func kMax(q *tunedQueue) float64 { return math.Max(0.9*float64(q.hi), float64(q.lo)) }

func (a *aiECN) decide(q *tunedQueue, o Observation) (model.WRED, string) {
	s := q.state.(*aiState)
	if o.Util >= 0 && o.Util < aiIdle && o.Marks == 0 {
		return q.cur, "" // idle: nothing to learn from
	}
	// ahead: the utilisation in aiSettle intervals if it keeps rising as
	// over the last two; rising: that reaches the target (senders
	// recovering from earlier cuts: marks seen meanwhile are not what
	// holds the link down).
	ahead := o.Util + math.Max(0, (o.Util-s.prevUtil[1])/2)*aiSettle
	rising := o.Util >= 0 && ahead >= a.target
	s.prevUtil = [2]float64{o.Util, s.prevUtil[0]}
	mice := math.Max(o.MiceShare, 0)
	m := aiModel(o.MiceShare)
	if m != s.model && s.model >= 0 && m != s.pending && abs(m-s.model) < 2 {
		s.pending = m
		return q.cur, ""
	}
	s.pending = -1
	if m != s.model {
		return a.enter(q, s, m, o)
	}
	s.inModel++
	if s.inModel == aiSettle {
		s.logK = math.Log(s.k)
	} else if s.inModel > aiSettle {
		s.logK += aiMemory * (math.Log(s.k) - s.logK)
	}
	if s.hold > 0 {
		s.hold--
		return q.cur, ""
	}
	prob := q.cur.Prob
	if m == 0 && o.MiceShare >= 0 {
		return a.elephants(q, s, o, rising)
	}
	high := (1 + a.target) / 2
	if s.watch {
		s.watch = false
		return q.cur, ""
	}
	switch {
	case o.Util >= 0 && o.Util < a.target && o.Marks > 0 && !rising && o.Pauses == 0 && s.k < kMax(q):
		f := math.Min(2, 1+2*(a.target-ahead)/a.target)
		s.watch = true
		return s.with(q, s.k*f, prob), fmt.Sprintf("M1 %s: utilisation %.2f below %.2f (%.2f in %d intervals at its trend), %d marks, mice %.0f%% of bytes: the bursts cut the elephants, Kmin x %.2f",
			aiModelNames[m], o.Util, a.target, ahead, aiSettle, o.Marks, mice*100, f)
	case o.Util >= high && o.MeanDepth > 0:
		f := aiLower - 0.2*mice
		s.watch = true
		return s.with(q, s.k*f, prob*2), fmt.Sprintf("M2 %s: utilisation %.2f above %.2f with a queue (mean %.0f bytes), mice %.0f%%: Kmin x %.2f, Pmax x 2",
			aiModelNames[m], o.Util, high, o.MeanDepth, mice*100, f)
	}
	return q.cur, ""
}

// enter switches the queue to model m.
func (a *aiECN) enter(q *tunedQueue, s *aiState, m int, o Observation) (model.WRED, string) {
	if s.model >= 0 && s.inModel >= aiSettle {
		s.known[s.model] = aiPoint{k: math.Exp(s.logK), ratio: s.ratio, prob: q.cur.Prob, floor: s.floor, pCap: s.pCap}
	}
	prev := s.model
	s.model, s.inModel, s.short, s.watch, s.hold = m, 0, 0, true, 0
	s.floor, s.pCap = kMin(q), q.pHi
	q.model = aiModelNames[m]
	share := "no classifier"
	if o.MiceShare >= 0 {
		share = fmt.Sprintf("mice %.1f%% of bytes", o.MiceShare*100)
	}
	if p := s.known[m]; p.k > 0 {
		s.floor, s.pCap, s.hold, s.ratio = p.floor, p.pCap, aiSettle, p.ratio
		return s.with(q, p.k, p.prob), fmt.Sprintf("traffic model %s (%s): known, its Kmin %.0f, Pmax %d%%", aiModelNames[m], share, p.k, p.prob)
	}
	if g, ok := a.models[aiModelNames[m]]; ok && g.Min > 0 && g.Max > g.Min {
		// A model given in the configuration (measured offline).
		s.ratio = float64(g.Max) / float64(g.Min)
		s.hold = aiSettle
		return s.with(q, float64(g.Min), g.Prob), fmt.Sprintf("traffic model %s (%s): configured model %d/%d/%d%%", aiModelNames[m], share, g.Min, g.Max, g.Prob)
	}
	if prev >= 0 && (prev == 0) == (m == 0) {
		s.watch = false
		return q.cur, fmt.Sprintf("traffic model %s (%s): new, adjusting online from %d/%d/%d%%", aiModelNames[m], share, q.cur.Min, q.cur.Max, q.cur.Prob)
	}
	s.ratio = s.baseRatio
	return s.with(q, float64(q.base.Min), q.base.Prob), fmt.Sprintf("traffic model %s (%s): new, from the configured profile", aiModelNames[m], share)
}

// elephants is rules E1-E3.
func (a *aiECN) elephants(q *tunedQueue, s *aiState, o Observation, rising bool) (model.WRED, string) {
	prob := q.cur.Prob
	high := (1 + a.target) / 2
	if o.Util >= a.target || o.Util < 0 || rising {
		s.short = 0
	}
	switch {
	case o.Util >= high:
		if s.k > s.floor {
			// A Kmin above every sampled depth marked nothing: it may
			// fall to the queue at once.
			k := math.Max(math.Min(s.k/2, float64(o.MaxDepth)), s.floor)
			return s.with(q, k, prob), fmt.Sprintf("E1 elephants: utilisation %.2f above %.2f, deepest queue %d: Kmin %.0f (floor %.0f)", o.Util, high, o.MaxDepth, k, s.floor)
		}
		if prob < s.pCap {
			return s.with(q, s.k, min(prob*2, s.pCap)), fmt.Sprintf("E1 elephants: utilisation %.2f above %.2f, Kmin at its floor %.0f: Pmax x 2 (cap %d%%)", o.Util, high, s.floor, s.pCap)
		}
	case o.Util >= 0 && o.Util < a.target && o.Marks > 0 && !rising:
		s.short++
		if s.short < aiGuard {
			return q.cur, ""
		}
		s.short = 0
		if base := q.base.Prob; prob > base {
			s.pCap = max(prob/2, base)
			return s.with(q, s.k, s.pCap), fmt.Sprintf("E2 elephants: utilisation below %.2f with marks, not rising, for %d intervals (last %.2f): Pmax back to %d%%, its cap here",
				a.target, aiGuard, o.Util, s.pCap)
		}
		if s.k >= kMax(q) {
			return q.cur, ""
		}
		s.floor, s.pCap = math.Min(s.k*2, kMax(q)), prob
		return s.with(q, s.floor, prob), fmt.Sprintf("E2 elephants: utilisation below %.2f with marks, not rising, for %d intervals (last %.2f): Kmin back to %.0f, the model's floor",
			a.target, aiGuard, o.Util, s.floor)
	}
	return q.cur, ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
