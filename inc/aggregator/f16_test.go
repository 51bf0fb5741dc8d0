package aggregator

import (
	"math"
	"testing"
)

// TestF16Known: values worked out by hand from the binary16 format.
func TestF16Known(t *testing.T) {
	for _, c := range []struct {
		h uint16
		f float32
	}{
		{0x0000, 0}, {0x3C00, 1}, {0xC000, -2}, {0x3555, 0.333251953125}, {0x7BFF, 65504},
		{0x0400, 6.103515625e-05}, {0x0001, 5.960464477539063e-08}, {0x03FF, 6.097555160522461e-05},
		{0x7C00, float32(math.Inf(1))}, {0xFC00, float32(math.Inf(-1))}, {0x5640, 100},
	} {
		if got := F16To32(c.h); got != c.f {
			t.Errorf("F16To32(%04x) = %g, want %g", c.h, got, c.f)
		}
		if got := F32To16(c.f); got != c.h {
			t.Errorf("F32To16(%g) = %04x, want %04x", c.f, got, c.h)
		}
	}
	// Rounding: 1 + 2^-11 is a tie between 1 and 1+2^-10: to even (1).
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{1 + 1.0/2048, 0x3C00},             // tie, down to even
		{1 + 3.0/2048, 0x3C02},             // tie, up to even
		{1 + 1.0/2048 + 1.0/65536, 0x3C01}, // above the tie
		{65520, 0x7C00},                    // rounds past the largest finite: infinity
		{65519, 0x7BFF},
		{2.980232238769531e-08, 0x0000}, // half the smallest subnormal: tie to even (0)
		{4.470348358154297e-08, 0x0001}, // 0.75 of it
		{float32(math.NaN()), 0x7E00},
	} {
		if got := F32To16(c.f); got != c.h {
			t.Errorf("F32To16(%g) = %04x, want %04x", c.f, got, c.h)
		}
	}
}

// TestF16RoundTrip: every non-NaN binary16 value survives widening and
// narrowing, and narrowing is monotonic.
func TestF16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16To32(uint16(h))
		if f != f {
			continue
		}
		if got := F32To16(f); got != uint16(h) {
			t.Fatalf("%04x -> %g -> %04x", h, f, got)
		}
	}
}
