package fib

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// normaliseOne is what normalise makes of each route on its own: the
// reference for the sharing shortcuts below.
func normaliseOne(t *testing.T, f *FIB, r Route) ([]nhKey, []uint32) {
	t.Helper()
	ws, err := f.normalise([]Route{r})
	if err != nil {
		t.Fatal(err)
	}
	return ws[0].set.keys, ws[0].set.weights
}

// Routes whose groups interleave (64 groups, route i on group i%64: the
// shape of BenchmarkSync100k) get one set per group from the memo, and
// every route's set is what it would get alone.
func TestNormaliseSharesInterleavedSets(t *testing.T) {
	f := &FIB{}
	rs := benchRoutes(3, 1000, 0)
	ws, err := f.normalise(rs)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[*hopSet]bool{}
	for i, w := range ws {
		sets[w.set] = true
		k, wt := normaliseOne(t, f, rs[i])
		if !slices.Equal(w.set.keys, k) || !slices.Equal(w.set.weights, wt) {
			t.Fatalf("route %d: %v %v, alone %v %v", i, w.set.keys, w.set.weights, k, wt)
		}
	}
	if len(sets) != 64 {
		t.Errorf("%d sets for 64 groups", len(sets))
	}
}

// Routes over the same gateways with other weights (every leaf of a
// 3-stage fabric) share one keys slice, keep their own weights, and a
// weight of 0 among them is still refused.
func TestNormaliseSharesKeysAcrossWeights(t *testing.T) {
	f := &FIB{}
	var rs []Route
	for i := range 300 {
		var hs []NextHop
		for j := range 8 {
			// Coprime-ish weights that differ per route; route 7 has a
			// common factor of 3 to check the reduction.
			w := uint32(1 + (i*7+j*j)%11)
			if i == 7 {
				w = uint32(3 * (j + 1))
			}
			hs = append(hs, NextHop{Gateway: netip.AddrFrom4([4]byte{10, 0, byte(j), 1}), IfIndex: 2 + j, Weight: w})
		}
		rs = append(rs, Route{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{20, byte(i >> 8), byte(i), 0}), 24), NextHops: hs})
	}
	ws, err := f.normalise(rs)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[*nhKey]bool{}
	for i, w := range ws {
		keys[&w.set.keys[0]] = true
		k, wt := normaliseOne(t, f, rs[i])
		if !slices.Equal(w.set.keys, k) || !slices.Equal(w.set.weights, wt) {
			t.Fatalf("route %d: %v %v, alone %v %v", i, w.set.keys, w.set.weights, k, wt)
		}
	}
	if len(keys) != 1 {
		t.Errorf("%d keys slices for one set of gateways", len(keys))
	}
	if got := ws[7].set.weights; !slices.Equal(got, []uint32{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("route 7 weights %v, want 1..8 (3..24 divided by 3)", got)
	}
	rs[5].NextHops = slices.Clone(rs[5].NextHops)
	rs[5].NextHops[3].Weight = 0
	if _, err := f.normalise(rs); err == nil || !strings.Contains(err.Error(), "weight 0") {
		t.Errorf("weight 0 behind a route with the same gateways: err = %v", err)
	}
}
