package policy

import (
	"fmt"

	"github.com/fared/fared/qos/model"
)

// ared is Adaptive RED as Linux's sch_red runs it (include/net/red.h,
// red_adaptative_algo; Floyd, Gummadi and Shenker 2001): the thresholds
// stay; every interval max_p moves to keep the average queue inside
// [min + 0.4 (max - min), min + 0.6 (max - min)]:
//
//	avg > target_max and max_p <= 0.5:  max_p += min(0.01, max_p / 4)
//	avg < target_min and max_p >= 0.01: max_p *= 0.9
//
// Two differences from the kernel, both forced by a switch's telemetry:
// the average is the mean of the depths sampled at every poll of the
// interval (the kernel keeps a per-packet EWMA), and the interval is the
// tuner's (the kernel's timer fires every 500 ms, longer than the phases
// of the scenarios it is compared on).
type ared struct{}

type aredState struct{ maxP float64 }

func (ared) start(q *tunedQueue) {
	q.state = &aredState{maxP: q.cur.Probability()}
	q.model = ""
}

func (ared) decide(q *tunedQueue, o Observation) (model.WRED, string) {
	s := q.state.(*aredState)
	w := q.cur
	// The kernel divides the band into fifths in integers.
	delta := (w.Max - w.Min) / 5
	tmin, tmax := float64(w.Min+2*delta), float64(w.Min+3*delta)
	avg := o.MeanDepth
	var why string
	switch {
	case avg > tmax && s.maxP <= 0.5:
		s.maxP += min(0.01, s.maxP/4)
		why = fmt.Sprintf("average queue %.0f above the target band [%.0f, %.0f]: max_p up", avg, tmin, tmax)
	case avg < tmin && s.maxP >= 0.01:
		s.maxP *= 0.9
		why = fmt.Sprintf("average queue %.0f below the target band [%.0f, %.0f]: max_p x 0.9", avg, tmin, tmax)
	default:
		return w, ""
	}
	w.ProbExact = s.maxP
	w.Prob = int(s.maxP*100 + 0.5)
	return w, why
}
