package fib

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

func TestNormaliseRejects(t *testing.T) {
	f := &FIB{caps: Capabilities{NexthopObjects: true, Weight16: true}, down: map[int]bool{}}
	gw := netip.MustParseAddr("10.0.0.2")
	for _, c := range []struct {
		name string
		r    []Route
		msg  string
	}{
		{"weight 0", []Route{{Prefix: pfx("10.1.0.0/16"), NextHops: []NextHop{nh(gw, 2, 0)}}}, "weight 0"},
		{"no ifindex", []Route{{Prefix: pfx("10.1.0.0/16"), NextHops: []NextHop{nh(gw, 0, 1)}}}, "no interface"},
		{"v4 gw for v6", []Route{{Prefix: pfx("fd00::/64"), NextHops: []NextHop{nh(gw, 2, 1)}}}, "IPv4 gateway"},
		{"duplicate", []Route{{Prefix: pfx("10.1.0.0/16")}, {Prefix: pfx("10.1.0.0/16")}}, "twice"},
		{"invalid prefix", []Route{{}}, "invalid prefix"},
	} {
		_, err := f.normalise(c.r)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.msg)
		}
	}
	// Same gateway twice is one path with summed weight; host bits masked.
	ws, err := f.normalise([]Route{{Prefix: pfx("10.1.2.3/16"), NextHops: []NextHop{nh(gw, 2, 3), nh(gw, 2, 1), nh(netip.MustParseAddr("10.0.0.3"), 2, 2)}}})
	if err != nil {
		t.Fatal(err)
	}
	if ws[0].prefix != pfx("10.1.0.0/16") || len(ws[0].set.keys) != 2 || ws[0].set.weights[0] != 2 || ws[0].set.weights[1] != 1 {
		t.Errorf("normalise = %+v", ws[0])
	}
}

// sortMerge sorts a route's next hops and sums the weights of a gateway
// named twice (checked by hand: 10.0.0.3 appears as 2+5 and 0xffffffff
// saturates).
func TestSortMerge(t *testing.T) {
	k := func(s string, idx int) nhKey {
		return nhKey{fam: unix.AF_INET, gw: netip.MustParseAddr(s), ifindex: idx}
	}
	ks := []nhKey{k("10.0.0.3", 2), k("10.0.0.1", 2), k("10.0.0.3", 2), k("10.0.0.2", 7), k("10.0.0.1", 1), k("10.0.0.2", 7)}
	ws := []uint32{2, 1, 5, 0xffffffff, 4, 3}
	n, moved := sortMerge(ks, ws)
	want := []nhKey{k("10.0.0.1", 1), k("10.0.0.1", 2), k("10.0.0.2", 7), k("10.0.0.3", 2)}
	wantW := []uint32{4, 1, 0xffffffff, 7}
	if n != len(want) || !slices.Equal(ks[:n], want) || !slices.Equal(ws[:n], wantW) {
		t.Errorf("sortMerge: %d %v %v, want %v %v", n, ks[:n], ws[:n], want, wantW)
	}
	if !moved {
		t.Error("sortMerge: unsorted input not reported as moved")
	}
	if n, moved := sortMerge(nil, nil); n != 0 || moved {
		t.Errorf("sortMerge(nil) = %d, %v", n, moved)
	}
	sorted := []nhKey{k("10.0.0.1", 1), k("10.0.0.2", 1)}
	if n, moved := sortMerge(sorted, []uint32{1, 2}); n != 2 || moved {
		t.Errorf("sortMerge(sorted) = %d, %v", n, moved)
	}
}
