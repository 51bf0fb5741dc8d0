package client

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/packet"
)

// Test data: every rank can compute every rank's input, so each checks
// the result on its own.

// Pattern names the test data.
type Pattern string

const (
	// Ints are small integers (−30..30): sums of up to 68 ranks are exact
	// in every type, fp16 included.
	Ints Pattern = "int"
	// Fractions are values in (−1, 1) with 10 significant bits: exact in
	// fp16, but their sums round.
	Fractions Pattern = "frac"
)

// Value is rank r's element i.
func (p Pattern) Value(r, i int) float64 {
	h := uint32(i)*2654435761 ^ uint32(r+1)*40503
	h ^= h >> 15
	h *= 2246822519
	h ^= h >> 13
	if p == Fractions {
		return float64(int32(h%2047)-1023) / 1024
	}
	return float64(int32(h%61) - 30)
}

// Fill writes rank r's input.
func Fill(buf []byte, dt packet.DType, p Pattern, r int) {
	for i := range len(buf) / dt.Size() {
		put(buf, dt, i, p.Value(r, i))
	}
}

func put(buf []byte, dt packet.DType, i int, v float64) {
	switch dt {
	case packet.FP16:
		binary.LittleEndian.PutUint16(buf[2*i:], aggregator.F32To16(float32(v)))
	case packet.FP32:
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
	case packet.FP64:
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
}

// Get reads element i.
func Get(buf []byte, dt packet.DType, i int) float64 {
	switch dt {
	case packet.FP16:
		return float64(aggregator.F16To32(binary.LittleEndian.Uint16(buf[2*i:])))
	case packet.FP32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])))
	case packet.FP64:
		return math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	return math.NaN()
}

// Tolerance is the stated error bound of an fp16 sum relative to the sum
// of the inputs' magnitudes: the switch accumulates in fp32 and rounds
// the result to fp16 (2^-11 relative); an inner switch rounds its partial
// too, and the ring rounds at each of its N−1 reduction hops. 2^-9 covers
// three roundings plus the fp32 accumulation.
const Tolerance = 1.0 / 512

// Check compares a result with the exact reduction of size ranks' inputs
// (computed in float64). fp32 and fp64 sums of Ints, and every min and
// max, must be exact; fp16 sums within Tolerance × Σ|x|, as must sums of
// Fractions in fp32 (2^-24 relative per add) and fp64. It returns the
// first mismatch.
func Check(buf []byte, dt packet.DType, op packet.Op, p Pattern, size int) error {
	exact := op != packet.Sum || p == Ints
	for i := range len(buf) / dt.Size() {
		want, mag := p.Value(0, i), math.Abs(p.Value(0, i))
		for r := 1; r < size; r++ {
			v := p.Value(r, i)
			mag += math.Abs(v)
			switch op {
			case packet.Sum:
				want += v
			case packet.Min:
				want = math.Min(want, v)
			case packet.Max:
				want = math.Max(want, v)
			}
		}
		got := Get(buf, dt, i)
		if exact && got != want || !exact && math.Abs(got-want) > Tolerance*mag {
			return fmt.Errorf("element %d: got %g, want %g (%s %s of %q over %d ranks)", i, got, want, dt, op, p, size)
		}
	}
	return nil
}
