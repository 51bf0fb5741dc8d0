package lsdb

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
)

// TestFinishMatchesReference: Finish builds what the reference builds,
// whether it can take the builder's links over (links added grouped by
// From in node order, some dropped by the two-way check) or must copy
// them (any order).
func TestFinishMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	took := 0
	for iter := 0; iter < 400; iter++ {
		nn := 1 + rng.IntN(30)
		grouped := iter%2 == 0
		mk := func() *Builder {
			r := rand.New(rand.NewPCG(uint64(iter), 1))
			b := NewBuilder("isis", 2, "")
			for i := 0; i < nn; i++ {
				if r.IntN(6) != 0 || !grouped {
					b.AddNode(Node{ID: fmt.Sprint("N", i), Name: fmt.Sprint("n", i)})
				}
			}
			type pl struct {
				x, y int
				l    Link
				a    LinkAddrs
			}
			var ls []pl
			for i, nl := 0, r.IntN(8*nn); i < nl; i++ {
				x, y := r.IntN(nn), r.IntN(nn+2)
				l := Link{Metric: uint32(r.IntN(4)), MaxBW: float32(r.IntN(5)), HasBW: true}
				a := LinkAddrs{Local: Addr4{10, 0, byte(i >> 8), byte(i)}}
				ls = append(ls, pl{x, y, l, a})
				if r.IntN(4) != 0 {
					ls = append(ls, pl{y, x, l, a})
				}
			}
			if grouped {
				slices.SortStableFunc(ls, func(a, b pl) int { return a.x - b.x })
			}
			for _, p := range ls {
				b.AddLinkAddrs(fmt.Sprint("N", p.x), fmt.Sprint("N", p.y), p.l, p.a)
			}
			b.AddPrefix("N0", Prefix{Prefix: netip.MustParsePrefix("10.9.0.0/16")})
			return b
		}
		want := mk().refBuild("N0")
		b := mk()
		n := len(b.links)
		got := b.Finish("N0")
		if b.links == nil && n > 0 {
			took++
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iter %d (grouped %v): Finish differs from the reference:\n%+v\n%+v", iter, grouped, got, want)
		}
	}
	if took < 100 {
		t.Fatalf("Finish took the builder's links over only %d times", took)
	}
}
