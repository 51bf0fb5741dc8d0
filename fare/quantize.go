package fare

import "math"

// Kernel weight ranges.
const (
	Max8  = 255   // nexthop_grp.weight (8 bits, wire value weight-1)
	Max16 = 65535 // weight + weight_high<<8 (kernel ≥ 6.12)
)

// Quantize turns weights into kernel integers: scale so the largest weight
// becomes max, round to nearest, keep every non-zero weight at least 1, then
// divide all by their GCD so that equal ratios produce identical vectors (and
// share one kernel nexthop group). Weights that are NaN, negative or zero
// quantise to 0; +Inf weights are treated as the largest float64. max 0 means
// Max8.
//
// err is the largest absolute difference, over the entries, between the
// intended share w_i/Σw and the quantised share q_i/Σq, in percentage points.
// All-zero input gives all-zero output and err 0.
func Quantize(w []float64, max uint32) (q []uint32, err float64) {
	return QuantizeTo(nil, w, max)
}

// QuantizeTo is Quantize writing into dst's storage when it has room (the
// rib quantises every route of a table with one buffer).
func QuantizeTo(dst []uint32, w []float64, max uint32) (q []uint32, err float64) {
	if max == 0 {
		max = Max8
	}
	if cap(dst) >= len(w) {
		q = dst[:len(w)]
		clear(q)
	} else {
		q = make([]uint32, len(w))
	}
	clean := func(x float64) float64 {
		switch {
		case math.IsNaN(x) || x <= 0:
			return 0
		case math.IsInf(x, 1):
			return math.MaxFloat64
		}
		return x
	}
	top, sum := 0.0, 0.0
	for _, x := range w {
		x = clean(x)
		top = math.Max(top, x)
		sum += x / float64(len(w)) // averaged to avoid overflow with MaxFloat64
	}
	if top == 0 {
		return q, 0
	}
	var g uint32
	for i, x := range w {
		x = clean(x)
		if x == 0 {
			continue
		}
		// x/top*max rather than x*(max/top): exact for the usual integers
		// (100/200*255 = 127.5 → 128, where 100*1.275 gives 127.4999…).
		v := math.Round(x / top * float64(max))
		if v < 1 {
			v = 1
		}
		if v > float64(max) {
			v = float64(max)
		}
		q[i] = uint32(v)
		g = gcd(g, q[i])
	}
	var qs uint64
	for i := range q {
		q[i] /= g
		qs += uint64(q[i])
	}
	for i, x := range w {
		x = clean(x)
		intended := x / float64(len(w)) / sum
		got := float64(q[i]) / float64(qs)
		err = math.Max(err, math.Abs(intended-got)*100)
	}
	return q, err
}

func gcd(a, b uint32) uint32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
