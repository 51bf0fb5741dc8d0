package fib

import (
	"fmt"
	"net/netip"
	"testing"
)

// TestSyncStreamsChunks: a table large enough that both streamed stages
// go out in several chunks (routes: 256, 512, 1024, …; groups: 600, so
// 256, 344), with a refused request far from the first chunk: a foreign
// route on prefix 2,900 (EEXIST, then the conflict path) and nothing
// else wrong. Every other route is in the kernel on the group its
// weights ask for, checked route by route against a dump.
//
// With 8-request chunks the same table is 375 route chunks and 75 group
// chunks: more than both queues between the two goroutines hold.
func TestSyncStreamsChunks(t *testing.T) {
	for _, chunk := range []int{0, 8} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) { testSyncStreamsChunks(t, chunk) })
	}
}

func testSyncStreamsChunks(t *testing.T, chunk int) {
	n, l, f := openWith(t, 3, Config{})
	if chunk > 0 {
		f.c.chunk = chunk
	}
	const N, groups = 3000, 600
	pfxOf := func(i int) netip.Prefix {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{20, byte(i >> 8), byte(i), 0}), 24)
	}
	n.ip("route", "add", pfxOf(2900).String(), "via", l[2].gw4.String(), "proto", "static", "metric", "20")
	// Group g: weights 1, 2+g/3, 3+g (reduced they stay distinct).
	weights := func(g int) [3]uint32 { return [3]uint32{1, uint32(2 + g/3), uint32(3 + g)} }
	routes := make([]Route, N)
	for i := range routes {
		w := weights(i % groups)
		routes[i] = Route{Prefix: pfxOf(i), NextHops: []NextHop{nh(l[0].gw4, l[0].idx, w[0]), nh(l[1].gw4, l[1].idx, w[1]), nh(l[2].gw4, l[2].idx, w[2])}}
	}
	st, err := f.Sync(routes)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if st.RoutesAdded != N-1 || st.RoutesConflicting() != 1 || st.GroupsAdded != groups || st.NexthopsAdded != 3 {
		t.Fatalf("stats %+v: want %d routes added, 1 conflicting, %d groups, 3 nexthops", st, N-1, groups)
	}
	rs, nhs := n.dump()
	byPrefix := map[netip.Prefix]KernelRoute{}
	for _, r := range rs {
		byPrefix[r.Prefix] = r
	}
	gwOf := map[uint32]netip.Addr{}
	for id, k := range nhs {
		if len(k.Group) == 0 {
			gwOf[id] = k.Gateway
		}
	}
	for i := range routes {
		r, ok := byPrefix[pfxOf(i)]
		if i == 2900 {
			if ok {
				t.Errorf("%s: ours installed over the static route: %+v", pfxOf(i), r)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s missing from the kernel", pfxOf(i))
		}
		g := nhs[r.NhID]
		got := map[netip.Addr]uint32{}
		for _, m := range g.Group {
			got[gwOf[m.ID]] = m.Weight
		}
		w := weights(i % groups)
		want := map[netip.Addr]uint32{l[0].gw4: w[0], l[1].gw4: w[1], l[2].gw4: w[2]}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s via group %#x %v, want %v", pfxOf(i), r.NhID, got, want)
		}
	}
	// A second Sync of the same table writes only the conflicting prefix.
	st, err = f.Sync(routes)
	if err != nil || st.Messages != 1 || st.RoutesAdded != 0 {
		t.Errorf("second Sync: %+v, %v; want one message (the conflict's retry)", st, err)
	}
}
