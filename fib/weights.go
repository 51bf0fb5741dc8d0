package fib

func gcd(a, b uint32) uint32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// reduceWeights returns the weights divided by their GCD and, if the
// largest then exceeds limit, scaled so the largest is limit, rounded to
// nearest with every weight at least 1, and reduced again. Dividing by
// the GCD is what makes 100/40 and 5/2 the same group; scaling is what
// lets 16-bit ratios run on an 8-bit kernel (with a quantisation error
// the fare package reports).
func reduceWeights(ws []uint32, limit uint32) []uint32 {
	out := make([]uint32, len(ws))
	copy(out, ws)
	reduceInPlace(out, limit)
	return out
}

func reduceInPlace(out []uint32, limit uint32) {
	divide(out)
	var hi uint32
	for _, w := range out {
		hi = max(hi, w)
	}
	if hi > limit {
		for i, w := range out {
			v := (uint64(w)*uint64(limit) + uint64(hi)/2) / uint64(hi)
			out[i] = uint32(max(v, 1))
		}
		divide(out)
	}
}

func divide(ws []uint32) {
	var g uint32
	for _, w := range ws {
		if g = gcd(g, w); g == 1 {
			return // FARE's weights are mostly coprime: no need to look further
		}
	}
	if g > 1 {
		for i := range ws {
			ws[i] /= g
		}
	}
}
