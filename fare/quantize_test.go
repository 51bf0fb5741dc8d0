package fare

import (
	"math"
	"reflect"
	"testing"
)

func TestQuantize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		w    []float64
		max  uint32
		q    []uint32
		err  float64 // percentage points, ±0.001
	}{
		// 8-bit: 100/40/40 → scale 255/100 → 255, 102, 102 → GCD 51 → 5, 2, 2.
		// Shares 5/9 = 55.56% = 100/180: exact, err 0.
		{"gcd 8-bit", []float64{100, 40, 40}, Max8, []uint32{5, 2, 2}, 0},
		// 16-bit: 65535, 26214, 26214 → GCD 13107 → 5, 2, 2: the same group.
		{"gcd 16-bit", []float64{100, 40, 40}, Max16, []uint32{5, 2, 2}, 0},
		{"same ratio", []float64{5, 2, 2}, Max8, []uint32{5, 2, 2}, 0},
		{"equal", []float64{7, 7, 7, 7}, Max8, []uint32{1, 1, 1, 1}, 0},
		// 1 and 1000 at 8 bits: 1*255/1000 = 0.255 → rounds to 0 → kept at 1;
		// 255. Shares 1/256 = 0.390625% vs 1/1001 = 0.0999001%: err 0.290725 pp.
		{"floor 1 8-bit", []float64{1, 1000}, Max8, []uint32{1, 255}, 0.290725},
		// 16 bits: 65.535 → 66, 65535 → GCD 3 → 22, 21845.
		// 22/21867 = 0.1006082% vs 0.0999001%: err 0.000708 pp.
		{"floor 1 16-bit", []float64{1, 1000}, Max16, []uint32{22, 21845}, 0.000708},
		// Zero, NaN and negative weights quantise to 0.
		{"zeros", []float64{0, 10, nan, -3}, Max8, []uint32{0, 1, 0, 0}, 0},
		{"all zero", []float64{0, 0}, Max8, []uint32{0, 0}, 0},
		// 40/100/40/200 (figure 1): 51, 127.5→128, 51, 255.
		{"figure 1", []float64{40, 100, 40, 200}, 0, []uint32{51, 128, 51, 255}, 0.0761},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Quantize(tc.w, tc.max)
			if !reflect.DeepEqual(q, tc.q) || math.Abs(err-tc.err) > 0.001 {
				t.Errorf("Quantize(%v, %d) = %v, %.6f; want %v, %.6f", tc.w, tc.max, q, err, tc.q, tc.err)
			}
		})
	}
	// +Inf is the largest weight; a finite one next to it keeps 1.
	if q, _ := Quantize([]float64{math.Inf(1), 5}, Max8); !reflect.DeepEqual(q, []uint32{255, 1}) {
		t.Errorf("inf: %v", q)
	}
}
