package uc

import (
	"math"
	"testing"
	"time"
)

// TestReactionPoint checks the DCQCN rules by hand with LabDCQCN at
// 100 Mb/s (timers 1 ms, RAI 1 Mb/s, F = 5).
func TestReactionPoint(t *testing.T) {
	t0 := time.Unix(0, 0)
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	r := newRP(LabDCQCN(100e6), 100e6, t0)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, want) {
			t.Fatalf("%s: %g, want %g", what, got, want)
		}
	}
	r.cnp(ms(0.5)) // alpha 1: RC x (1 - 1/2); alpha = (1-g) 1 + g = 1
	near("rate after the first CNP", r.rate, 50e6)
	near("target", r.target, 100e6)
	near("alpha", r.alpha, 1)
	// Fast recovery: RC = (RC + RT) / 2 per rate period, from the cut.
	r.advance(ms(1.5))
	near("after one period", r.rate, 75e6)
	r.advance(ms(5.5)) // periods 2..5: still fast recovery (count < F)
	near("after five periods", r.rate, 100e6-50e6/32)
	r.advance(ms(6.5)) // period 6: additive increase, RT + RAI capped at the line
	near("target capped", r.target, 100e6)
	// Alpha decays by (1 - g) per alpha period without a CNP: of the six
	// periods since the cut, the first saw the CNP.
	near("alpha decay", r.alpha, math.Pow(1-1.0/256, 5))
	a := r.alpha
	r.cnp(ms(6.6))
	near("second cut", r.rate, (100e6-50e6/64)*(1-a/2))
	near("min rate: the first cut was lower", r.minRate, 50e6)
	// Many CNPs in a row never go below MinRate (1% of the line).
	for i := 0; i < 20; i++ {
		r.cnp(ms(6.7 + float64(i)*0.01))
	}
	near("floor", r.rate, 1e6)
}
