package aggregator

import (
	"encoding/binary"
	"math"

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
		for i := range n {
			a.f32[i] = f16tab[binary.LittleEndian.Uint16(p[2*i:])]
		}
	case packet.FP32:
		a.f32 = grow(a.f32, n)
		for i := range n {
			a.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		}
	case packet.FP64:
		a.f64 = grow(a.f64, n)
		for i := range n {
			a.f64[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
		}
	}
}

// add folds the values of p into the accumulator.
func (a *acc) add(dt packet.DType, op packet.Op, p []byte, n int) {
	switch dt {
	case packet.FP16:
		v := a.f32[:n]
		switch op {
		case packet.Sum:
			for i := range v {
				v[i] += f16tab[binary.LittleEndian.Uint16(p[2*i:])]
			}
		case packet.Min:
			for i := range v {
				if x := f16tab[binary.LittleEndian.Uint16(p[2*i:])]; x < v[i] {
					v[i] = x
				}
			}
		case packet.Max:
			for i := range v {
				if x := f16tab[binary.LittleEndian.Uint16(p[2*i:])]; x > v[i] {
					v[i] = x
				}
			}
		}
	case packet.FP32:
		v := a.f32[:n]
		switch op {
		case packet.Sum:
			for i := range v {
				v[i] += math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
			}
		case packet.Min:
			for i := range v {
				if x := math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:])); x < v[i] {
					v[i] = x
				}
			}
		case packet.Max:
			for i := range v {
				if x := math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:])); x > v[i] {
					v[i] = x
				}
			}
		}
	case packet.FP64:
		v := a.f64[:n]
		switch op {
		case packet.Sum:
			for i := range v {
				v[i] += math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
			}
		case packet.Min:
			for i := range v {
				if x := math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])); x < v[i] {
					v[i] = x
				}
			}
		case packet.Max:
			for i := range v {
				if x := math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])); x > v[i] {
					v[i] = x
				}
			}
		}
	}
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
