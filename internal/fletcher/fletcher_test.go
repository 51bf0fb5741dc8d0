package fletcher

import (
	"math/rand"
	"testing"
)

// A checksum written into the data makes both sums zero, wherever it sits
// and whatever the length (including the 4096-byte reduction boundary).
func TestChecksumZeroesSums(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{2, 3, 27, 1492, 4096, 4097, 9000} {
		b := make([]byte, n)
		r.Read(b)
		pos := r.Intn(n - 1)
		c := Checksum(b, pos)
		b[pos], b[pos+1] = byte(c>>8), byte(c)
		if c0, c1 := Sums(b); c0 != 0 || c1 != 0 {
			t.Errorf("len %d pos %d: sums %d,%d after writing %#04x", n, pos, c0, c1, c)
		}
		if b[pos] == 0 || b[pos+1] == 0 {
			t.Errorf("len %d: zero checksum byte %#04x", n, c)
		}
	}
}
