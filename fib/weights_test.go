package fib

import "testing"

func TestReduceWeights(t *testing.T) {
	for _, c := range []struct {
		in    []uint32
		limit uint32
		want  []uint32
	}{
		{[]uint32{100, 40}, 256, []uint32{5, 2}},
		{[]uint32{5, 2}, 256, []uint32{5, 2}},
		{[]uint32{7, 7, 7}, 256, []uint32{1, 1, 1}},
		{[]uint32{1000, 1}, 65536, []uint32{1000, 1}},
		{[]uint32{1000, 1}, 256, []uint32{256, 1}},     // scaled, floor at 1
		{[]uint32{1000, 500}, 256, []uint32{2, 1}},     // GCD first: no scaling needed
		{[]uint32{100000, 99999}, 256, []uint32{1, 1}}, // 256/256 after rounding, reduced
		{[]uint32{4e9, 1e9, 3}, 65536, []uint32{65536, 16384, 1}},
	} {
		got := reduceWeights(c.in, c.limit)
		if len(got) != len(c.want) {
			t.Fatalf("%v: %v", c.in, got)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("reduceWeights(%v, %d) = %v, want %v", c.in, c.limit, got, c.want)
				break
			}
		}
	}
}
