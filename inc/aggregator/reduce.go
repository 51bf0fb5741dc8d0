package aggregator

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/fared/fared/inc/packet"
)

// acc is one slot's accumulator. fp16 and fp32 accumulate in fp32, fp64
// in fp64 (the payload is the hosts' memory: little-endian).
type acc struct {
	f32 []float32
	f64 []float64
}

// load sets the accumulator to the values of p.
func (a *acc) load(dt packet.DType, p []byte, n int) {
	switch dt {
	case packet.FP16:
		a.f32 = grow(a.f32, n)
		decode[float32, uint16](a.f32, p)
	case packet.FP32:
		a.f32 = grow(a.f32, n)
		decode[float32, uint32](a.f32, p)
	case packet.FP64:
		a.f64 = grow(a.f64, n)
		decode[float64, uint64](a.f64, p)
	}
}

// add folds the values of p into the accumulator.
func (a *acc) add(dt packet.DType, op packet.Op, p []byte, n int) {
	switch dt {
	case packet.FP16:
		fold[float32, uint16](a.f32[:n], p, op)
	case packet.FP32:
		fold[float32, uint32](a.f32[:n], p, op)
	case packet.FP64:
		fold[float64, uint64](a.f64[:n], p, op)
	}
}

// word is the wire word of a data type: uint16 for fp16, uint32 for
// fp32, uint64 for fp64.
type word interface{ uint16 | uint32 | uint64 }

// decode sets v to the first len(v) values of p.
func decode[T float32 | float64, W word](v []T, p []byte) {
	for i := range v {
		v[i] = value[T, W](p, i)
	}
}

// fold combines the first len(v) values of p into v.
func fold[T float32 | float64, W word](v []T, p []byte, op packet.Op) {
	switch op {
	case packet.Sum:
		for i := range v {
			v[i] += value[T, W](p, i)
		}
	case packet.Min:
		for i := range v {
			if x := value[T, W](p, i); x < v[i] {
				v[i] = x
			}
		}
	case packet.Max:
		for i := range v {
			if x := value[T, W](p, i); x > v[i] {
				v[i] = x
			}
		}
	}
}

// value is the i-th element of p widened to T. The switch is on the
// size of W, a constant in each instantiation of fold and decode, so the
// compiler keeps one branch and the loops stay as tight as one written
// out per data type (a type switch on W is not folded and costs ~1.5x).
func value[T float32 | float64, W word](p []byte, i int) T {
	var w W
	switch unsafe.Sizeof(w) {
	case 2:
		return T(f16tab[binary.LittleEndian.Uint16(p[2*i:])])
	case 4:
		return T(math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:])))
	}
	return T(math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])))
}

// store encodes the accumulator into out (n elements of dt).
func (a *acc) store(dt packet.DType, out []byte, n int) []byte {
	out = grow(out, n*dt.Size())
	switch dt {
	case packet.FP16:
		for i, x := range a.f32[:n] {
			binary.LittleEndian.PutUint16(out[2*i:], F32To16(x))
		}
	case packet.FP32:
		for i, x := range a.f32[:n] {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
	case packet.FP64:
		for i, x := range a.f64[:n] {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		}
	}
	return out
}

// f16tab widens every binary16 value: one load instead of the bit
// fiddling of F16To32 in the aggregation loops.
var f16tab = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = F16To32(uint16(i))
	}
	return &t
}()

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
