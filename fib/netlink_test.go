package fib

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fared/fared/internal/nlmsg"

	"golang.org/x/sys/unix"
)

// decodeGroup reads back what nlmsg encodes, weight_high included.
func TestDecodeGroup(t *testing.T) {
	ms := []GroupMember{{ID: 0x0FA00001, Weight: 1}, {ID: 0x0FA00002, Weight: 256}, {ID: 0x0FA00003, Weight: 257},
		{ID: 0x0FA00004, Weight: 1000}, {ID: 0x0FA00005, Weight: 65536}}
	var m nlmsg.Buf
	if err := appendGroup(&m, 1, 0, 99, 187, ms, nil); err != nil {
		t.Fatal(err)
	}
	// After nlmsghdr (16), nhmsg (8), NHA_ID (8) and NHA_GROUP's header (4).
	back, err := decodeGroup(m.Bytes()[16+8+8+4:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, ms) {
		t.Errorf("decodeGroup = %v, want %v", back, ms)
	}
	if _, err := decodeGroup(make([]byte, 7)); err == nil {
		t.Error("short NHA_GROUP accepted")
	}
	// A weight out of range appends nothing.
	if err := appendGroup(&m, 2, 0, 100, 187, []GroupMember{{ID: 1, Weight: 65537}}, nil); err == nil || len(m.Bytes()) != int(ne.Uint32(m.Bytes())) {
		t.Errorf("weight 65537: err %v, %d bytes left", err, len(m.Bytes()))
	}
}

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
