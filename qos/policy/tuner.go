package policy

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/fared/fared/internal/setting"
	"github.com/fared/fared/qos/model"
)

// ECN tuning: a policy that rewrites the green WRED/ECN thresholds of
// chosen queues while traffic runs, from what the queues show. Two
// algorithms share the sampling, limits and bookkeeping here:
//
//   - AI ECN (aiecn.go): fared's tuner of Kmin/Kmax and Pmax from the
//     queue's traffic model (elephant/mice split), utilisation, marks and
//     depth;
//   - Adaptive RED (ared.go): Linux sch_red's adaptive rule (max_p only),
//     the baseline AI ECN is measured against.
//
// The tuner samples every poll (depth, counters) and decides once per
// Interval. Whatever it decides stays within the configured limits and
// below the queue's PFC XOFF: ECN must act before PFC.

// Algorithms.
const (
	AlgoAIECN = "ai-ecn"
	AlgoARED  = "adaptive-red"
)

// TunerConfig is the ecn-tuning section.
type TunerConfig struct {
	Algorithm string
	// Prios are the tuned queues (on every interface whose queue has an
	// ECN profile with green enabled).
	Prios model.Prios
	// Interval is the decision period (a multiple of the poll).
	Interval time.Duration
	// MinThreshold and MaxThreshold bound Kmin and Kmax (bytes);
	// MaxThreshold is below the XOFF of every tuned PFC queue (conf
	// checks, and the tuner clamps again to XOFF - 1).
	MinThreshold, MaxThreshold uint64
	// MinProb and MaxProb bound Pmax (percent).
	MinProb, MaxProb int
	// UtilTarget is the lowest port utilisation AI ECN keeps (0..1); it
	// holds the utilisation between it and (1 + UtilTarget) / 2.
	UtilTarget float64
	// Models are AI ECN's known traffic models given by the operator
	// (measured offline, e.g. by bench/aiecn's sweeps): the thresholds a
	// model starts from the first time the queue's traffic matches it.
	// Keys are AIModelNames.
	Models map[string]model.WRED
}

// QueueKey names a queue.
type QueueKey struct {
	Iface string
	Prio  int
}

// sortedQueues is the queues of m by interface, then priority.
func sortedQueues[V any](m map[QueueKey]V) []QueueKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b QueueKey) int {
		return cmp.Or(cmp.Compare(a.Iface, b.Iface), cmp.Compare(a.Prio, b.Prio))
	})
}

// Observation is what a queue showed over one decision interval.
type Observation struct {
	Span    time.Duration
	Samples int
	// Util is sent bits / (span x port speed), -1 when the speed is
	// unknown.
	Util float64
	// Marks and TxPackets are the interval's ECN marks and packets.
	Marks, TxPackets uint64
	// MiceShare is the mice's share of the bytes sent (by the large/small
	// classifier), -1 without a classifier.
	MiceShare float64
	// Depth over the polls of the interval (bytes).
	MeanDepth          float64
	MinDepth, MaxDepth uint64
	// Pauses is how many PAUSE frames the node sent for the queue's
	// priority (its ingress buffers filled up: ECN acted too late).
	Pauses uint64
}

// Decision is one change the tuner made, with its reason.
type Decision struct {
	At     time.Time
	Iface  string
	Prio   int
	Before model.WRED
	After  model.WRED
	Reason string
	Obs    Observation
}

// TunedQueue is the view of one tuned queue.
type TunedQueue struct {
	Iface     string
	Prio      int
	Algorithm string
	Base      model.WRED // from the configured profile
	Applied   model.WRED // what the tuner applies now
	// Model is AI ECN's traffic model in use ("" for Adaptive RED).
	Model  string
	Last   Observation
	Reason string // of the last decision ("" before any)
}

// algorithm is one tuning rule over a queue's observations.
type algorithm interface {
	// start initialises the queue's state from its base thresholds.
	start(q *tunedQueue)
	// decide returns the new thresholds and why ("" reason: no change).
	decide(q *tunedQueue, o Observation) (model.WRED, string)
}

type tunedQueue struct {
	key     QueueKey
	base    model.WRED
	cur     model.WRED
	lo, hi  uint64 // threshold limits for this queue
	pLo     int
	pHi     int
	speed   float64
	state   any // the algorithm's
	model   string
	last    Observation
	reason  string
	win     window
	started bool
}

// window accumulates a queue's samples over one interval.
type window struct {
	start    time.Time
	c0       model.PrioCounters
	pause0   uint64
	samples  int
	sum      float64
	min, max uint64
}

// ECNTuner runs one algorithm over the tuned queues of a node.
type ECNTuner struct {
	cfg       TunerConfig
	alg       algorithm
	queues    map[QueueKey]*tunedQueue
	decisions []Decision
}

const maxDecisions = 64

// NewECNTuner returns a tuner, or an error for an unknown algorithm.
func NewECNTuner(cfg TunerConfig) (*ECNTuner, error) {
	t := &ECNTuner{cfg: cfg, queues: map[QueueKey]*tunedQueue{}}
	setting.Default(&t.cfg.UtilTarget, 0.9)
	switch cfg.Algorithm {
	case AlgoAIECN, "":
		t.cfg.Algorithm = AlgoAIECN
		t.alg = &aiECN{target: t.cfg.UtilTarget, models: cfg.Models}
	case AlgoARED:
		t.alg = &ared{}
	default:
		return nil, fmt.Errorf("ecn tuning: unknown algorithm %q", cfg.Algorithm)
	}
	setting.Default(&t.cfg.Interval, time.Millisecond)
	setting.Default(&t.cfg.MaxProb, 100)
	return t, nil
}

// Config returns the tuner's configuration.
func (t *ECNTuner) Config() TunerConfig { return t.cfg }

// sync creates states for the queues d asks to tune and forgets others.
// d is the configured state (profiles by name, XOFF per priority).
func (t *ECNTuner) sync(d *model.Desired) {
	seen := map[QueueKey]bool{}
	for _, i := range d.Ifaces {
		for _, q := range t.cfg.Prios.List() {
			name := i.Queues[q].Profile
			if name == "" {
				continue
			}
			p := d.Profile(name)
			if p == nil || !p.Colors[model.Green].Enable {
				continue
			}
			k := QueueKey{i.Name, q}
			seen[k] = true
			base := p.Colors[model.Green]
			hi := t.cfg.MaxThreshold
			if hi == 0 {
				hi = base.Max // no limit given: never above the configured max
			}
			if i.PFCConfigured.Has(q) && i.Thresholds[q].XOFF > 0 && hi >= i.Thresholds[q].XOFF {
				hi = i.Thresholds[q].XOFF - 1 // ECN before PFC, whatever the limits say
			}
			lo := t.cfg.MinThreshold
			if lo >= hi {
				lo = hi / 2
			}
			pLo, pHi := t.cfg.MinProb, t.cfg.MaxProb
			setting.Default(&pLo, 1)
			tq := t.queues[k]
			if tq != nil && tq.base == base && tq.lo == lo && tq.hi == hi && tq.pLo == pLo && tq.pHi == pHi {
				continue
			}
			tq = &tunedQueue{key: k, base: base, lo: lo, hi: hi, pLo: pLo, pHi: pHi}
			tq.cur = tq.clamp(base)
			t.alg.start(tq)
			t.queues[k] = tq
		}
	}
	for k := range t.queues {
		if !seen[k] {
			delete(t.queues, k)
		}
	}
}

// clamp keeps w within the queue's limits: lo <= Kmin < Kmax <= hi,
// pLo <= Pmax <= pHi.
func (q *tunedQueue) clamp(w model.WRED) model.WRED {
	w.Enable = true
	w.Max = min(max(w.Max, q.lo+1), q.hi)
	w.Min = min(max(w.Min, q.lo), w.Max-1)
	if w.ProbExact > 0 {
		w.ProbExact = math.Min(math.Max(w.ProbExact, float64(q.pLo)/100), float64(q.pHi)/100)
		w.Prob = int(math.Round(w.ProbExact * 100))
	}
	w.Prob = min(max(w.Prob, q.pLo), q.pHi)
	return w
}

// Step takes one poll's counters; at the end of each interval it runs
// the algorithm on every tuned queue. d is the configured state. It
// reports whether any threshold changed.
func (t *ECNTuner) Step(now time.Time, c *model.Counters, d *model.Desired) bool {
	t.sync(d)
	pauses := [model.NumPrio]uint64{}
	for _, ic := range c.Ifaces {
		for p := range pauses {
			pauses[p] += ic.Prio[p].PauseTx
		}
	}
	changed := false
	for _, k := range t.keys() {
		q := t.queues[k]
		ic := c.Ifaces[k.Iface]
		if ic == nil {
			continue
		}
		pc := ic.Prio[k.Prio]
		q.speed = float64(ic.Speed)
		if q.speed == 0 {
			if i := d.Iface(k.Iface); i != nil {
				q.speed = float64(i.Rate)
			}
		}
		if !q.started {
			q.started = true
			q.win = window{start: now, c0: pc, pause0: pauses[k.Prio], min: math.MaxUint64}
			continue
		}
		w := &q.win
		w.samples++
		w.sum += float64(pc.Depth)
		w.min = min(w.min, pc.Depth)
		w.max = max(w.max, pc.Depth)
		span := now.Sub(w.start)
		if span < t.cfg.Interval {
			continue
		}
		o := Observation{Span: span, Samples: w.samples, Util: -1, MiceShare: -1,
			Marks: pc.Marks - w.c0.Marks, TxPackets: pc.TxPackets - w.c0.TxPackets,
			MeanDepth: w.sum / float64(w.samples), MinDepth: w.min, MaxDepth: w.max,
			Pauses: pauses[k.Prio] - w.pause0}
		if q.speed > 0 {
			o.Util = float64(pc.TxBytes-w.c0.TxBytes) * 8 / span.Seconds() / q.speed
		}
		if d.Elephant != nil {
			eb, mb := pc.ElephantBytes-w.c0.ElephantBytes, pc.MiceBytes-w.c0.MiceBytes
			if eb+mb > 0 {
				o.MiceShare = float64(mb) / float64(eb+mb)
			}
		}
		q.last = o
		*w = window{start: now, c0: pc, pause0: pauses[k.Prio], min: math.MaxUint64}
		nw, why := t.alg.decide(q, o)
		if why == "" {
			continue
		}
		nw = q.clamp(nw)
		q.reason = why
		if nw == q.cur {
			continue
		}
		t.decisions = append(t.decisions, Decision{At: now, Iface: k.Iface, Prio: k.Prio, Before: q.cur, After: nw, Reason: why, Obs: o})
		if len(t.decisions) > maxDecisions {
			t.decisions = t.decisions[len(t.decisions)-maxDecisions:]
		}
		q.cur = nw
		changed = true
	}
	return changed
}

func (t *ECNTuner) keys() []QueueKey { return sortedQueues(t.queues) }

// Overlay gives d (a clone of the configured state) the tuned
// thresholds: each tuned queue gets its own profile, named
// "<profile>@<interface>/<priority>", a copy of its configured one with
// the tuned green colour.
func (t *ECNTuner) Overlay(d *model.Desired) {
	added := false
	for _, k := range t.keys() {
		q := t.queues[k]
		i := d.Iface(k.Iface)
		if i == nil {
			continue
		}
		base := d.Profile(i.Queues[k.Prio].Profile)
		if base == nil || q.cur == q.base {
			continue
		}
		p := *base
		p.Name = fmt.Sprintf("%s@%s/%d", base.Name, k.Iface, k.Prio)
		p.Colors[model.Green] = q.cur
		d.Profiles = append(d.Profiles, p)
		i.Queues[k.Prio].Profile = p.Name
		added = true
	}
	if added {
		d.Sort()
	}
}

// Queues returns the tuned queues' views.
func (t *ECNTuner) Queues() []TunedQueue {
	var out []TunedQueue
	for _, k := range t.keys() {
		q := t.queues[k]
		out = append(out, TunedQueue{Iface: k.Iface, Prio: k.Prio, Algorithm: t.cfg.Algorithm, Base: q.base, Applied: q.cur,
			Model: q.model, Last: q.last, Reason: q.reason})
	}
	return out
}

// Decisions returns the latest changes, oldest first.
func (t *ECNTuner) Decisions() []Decision { return append([]Decision(nil), t.decisions...) }
