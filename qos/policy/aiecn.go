package policy

import (
	"fmt"
	"math"

	"github.com/fared/fared/qos/model"
)

// aiECN is fared's AI ECN (docs/qos.md, "AI ECN"). It tunes a queue's
// Kmin, and Kmax with it (keeping the configured Kmax/Kmin ratio until
// Kmax meets the limit), from what the queue shows every interval:
// utilisation, ECN marks, sampled depth and the elephant/mice split of
// the bytes it sent (the large/small flow classifier).
//
// Traffic models. The mice's share of bytes puts the queue in one of
// four models: elephants [0, 2%), mostly-elephants [2%, 10%), mixed
// [10%, 30%), mice [30%, 100%]. A model seen for the first time starts
// from the configured profile. When the traffic leaves a model the
// threshold it settled at is remembered, and when the traffic comes back
// the tuner starts from it (the seed's "matches a known traffic model:
// infer its threshold"). A model must be seen two intervals in a row
// before the tuner switches (a new elephant counts as mice until the
// classifier catches it).
//
// Online adjustment within a model (the seed's "adjust in real time to
// ensure high bandwidth and low latency"):
//
//  1. Marks and utilisation below the target: the senders were cut while
//     the link had room.
//     a. With mice (>= 2% of bytes) the marks came from their bursts,
//     which drain by themselves: cutting the elephants for them only
//     starves the link. Kmin x 1.25, above the bursts. (Without a
//     classifier the split is unknown and this, the classic reading of
//     under-utilisation, applies.)
//     b. Elephants alone: the link emptied after the elephants' own
//     overshoot, which a late mark lets grow and which then earns every
//     sender several cuts in a row (DCQCN's target rate falls with each).
//     Kmin x 0.8: an earlier, single cut.
//  2. Utilisation at or above the target with a standing queue (it never
//     drained in the interval): the queue is only delay. Kmin x (0.9 -
//     0.2 x mice share): faster with more mice, as the seed asks.
//  3. Otherwise hold.
//
// Every input is a measured counter and every rule a comparison; there is
// no trained model.
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
	aiSettle   = 3    // intervals in a model before its threshold is remembered
	aiRaise    = 1.25 // rule 1a
	aiEarlier  = 0.8  // rule 1b
	aiLower    = 0.9  // rule 2, minus 0.2 x the mice share
	aiMiceSome = 0.02 // mice share from which marks are blamed on bursts
	aiIdle     = 0.05 // utilisation below which (without marks) nothing is learnt
)

type aiState struct {
	k       float64 // Kmin
	ratio   float64 // Kmax / Kmin of the configured profile
	model   int     // -1 before the first busy interval
	pending int     // a different model seen once, -1 none
	inModel int
	known   [len(aiModelNames)]float64 // remembered Kmin per model, 0 = none
	prob    [len(aiModelNames)]int     // and its Pmax
	base    float64
	// baseRatio is the configured profile's Kmax/Kmin; ratio the one in use.
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
	q.state = &aiState{k: float64(b.Min), ratio: ratio, baseRatio: ratio, model: -1, pending: -1, base: math.Max(float64(b.Min), 1)}
	q.model = ""
}

// with returns the thresholds for Kmin = k.
func (s *aiState) with(q *tunedQueue, k float64) model.WRED {
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
	return w
}

func (a *aiECN) decide(q *tunedQueue, o Observation) (model.WRED, string) {
	s := q.state.(*aiState)
	if o.Util >= 0 && o.Util < aiIdle && o.Marks == 0 {
		return q.cur, "" // idle: nothing to learn from
	}
	mice := math.Max(o.MiceShare, 0)
	m := aiModel(o.MiceShare)
	if m != s.model && s.model >= 0 && m != s.pending {
		s.pending = m
		return q.cur, ""
	}
	s.pending = -1
	if m != s.model {
		if s.model >= 0 && s.inModel >= aiSettle {
			s.known[s.model], s.prob[s.model] = s.k, q.cur.Prob
		}
		s.model, s.inModel = m, 0
		q.model = aiModelNames[m]
		share := "no classifier"
		if o.MiceShare >= 0 {
			share = fmt.Sprintf("mice %.1f%% of bytes", mice*100)
		}
		if k := s.known[m]; k > 0 {
			w := s.with(q, k)
			w.Prob = s.prob[m]
			return w, fmt.Sprintf("traffic model %s (%s): known, its Kmin %.0f", aiModelNames[m], share, k)
		}
		if g, ok := a.models[aiModelNames[m]]; ok && g.Min > 0 && g.Max > g.Min {
			// A model given in the configuration (measured offline).
			s.ratio = float64(g.Max) / float64(g.Min)
			w := s.with(q, float64(g.Min))
			w.Prob = g.Prob
			return w, fmt.Sprintf("traffic model %s (%s): configured model %d/%d/%d%%", aiModelNames[m], share, g.Min, g.Max, g.Prob)
		}
		s.ratio = s.baseRatio
		w := s.with(q, s.base)
		w.Prob = q.base.Prob
		return w, fmt.Sprintf("traffic model %s (%s): new, the configured profile", aiModelNames[m], share)
	}
	s.inModel++
	switch {
	case o.Util >= 0 && o.Util < a.target && o.Marks > 0 && (mice >= aiMiceSome || o.MiceShare < 0):
		return s.with(q, s.k*aiRaise), fmt.Sprintf("utilisation %.2f below %.2f, %d marks, mice %.0f%%: the bursts cut the elephants, Kmin up",
			o.Util, a.target, o.Marks, mice*100)
	case o.Util >= 0 && o.Util < a.target && o.Marks > 0:
		return s.with(q, s.k*aiEarlier), fmt.Sprintf("utilisation %.2f below %.2f, %d marks, elephants alone: overshoot and repeated cuts, Kmin down",
			o.Util, a.target, o.Marks)
	case o.Util >= a.target && o.MinDepth > 0:
		f := aiLower - 0.2*mice
		return s.with(q, s.k*f), fmt.Sprintf("utilisation %.2f with a standing queue (min %d bytes): Kmin x %.2f", o.Util, o.MinDepth, f)
	}
	return q.cur, ""
}
