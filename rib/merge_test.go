package rib

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
)

// TestMergeWalksMatchMaps: diffRoutes and reweighted walk sorted route
// lists in step; on random lists (repeated next hops, unresolved and
// zero-weight ones included) they count what the map-based versions
// count.
func TestMergeWalksMatchMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gws := []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.3"), netip.MustParseAddr("fe80::1")}
	list := func() []Route {
		var rs []Route
		for p := 0; p < 40; p++ {
			if rng.IntN(3) == 0 {
				continue
			}
			r := Route{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 9, byte(p), 0}), 24)}
			for range rng.IntN(5) {
				r.NextHops = append(r.NextHops, NextHop{Gateway: gws[rng.IntN(len(gws))], IfIndex: 1 + rng.IntN(2),
					KernelWeight: uint32(rng.IntN(3)), Unresolved: rng.IntN(8) == 0})
			}
			rs = append(rs, r)
		}
		return rs
	}
	diffMap := func(a, b []Route) int {
		am := map[netip.Prefix]*Route{}
		for i := range a {
			am[a[i].Prefix] = &a[i]
		}
		n := 0
		seen := map[netip.Prefix]bool{}
		for i := range b {
			seen[b[i].Prefix] = true
			if !sameKernel(am[b[i].Prefix], &b[i]) {
				n++
			}
		}
		for p := range am {
			if !seen[p] {
				n++
			}
		}
		return n
	}
	for range 2000 {
		a, b := list(), list()
		if rng.IntN(4) == 0 {
			b = slices.Clone(a) // many equal prefixes
			for i := range b {
				b[i].NextHops = slices.Clone(b[i].NextHops)
				for j := range b[i].NextHops {
					if rng.IntN(3) == 0 {
						b[i].NextHops[j].KernelWeight++
					}
				}
			}
		}
		if got, want := diffRoutes(a, b), diffMap(a, b); got != want {
			t.Fatalf("diffRoutes %d, map %d\na %+v\nb %+v", got, want, a, b)
		}
		if got, want := reweighted(a, b), reweightedMap(a, b); got != want {
			t.Fatalf("reweighted %d, map %d\na %+v\nb %+v", got, want, a, b)
		}
	}
}

// TestSameHopSeesEveryFloat: sameHop compares the float fields of a next
// hop bit for bit; a float field added to NextHop must be added there.
func TestSameHopSeesEveryFloat(t *testing.T) {
	floats := 0
	v := reflect.ValueOf(NextHop{})
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.Float64 {
			floats++
		}
	}
	if floats != 7 {
		t.Fatalf("NextHop has %d float64 fields; sameHop compares 7", floats)
	}
	a := NextHop{Weight: 0}
	b := NextHop{Weight: math.Copysign(0, -1)}
	if sameHop(a, b) || !sameHop(a, a) {
		t.Fatal("sameHop does not tell 0 from -0")
	}
}
