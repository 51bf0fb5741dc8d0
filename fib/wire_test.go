package fib

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The group attribute is struct nexthop_grp {u32 id; u8 weight; u8
// weight_high; u16 resvd} with weight-1 split low/high; expected bytes are
// written out by hand (little-endian host, as on amd64/arm64).
func TestEncodeGroupBytes(t *testing.T) {
	got, err := encodeGroup([]GroupMember{
		{ID: 0x0FA00001, Weight: 1},     // wire 0x0000
		{ID: 0x0FA00002, Weight: 256},   // wire 0x00FF: last 8-bit value
		{ID: 0x0FA00003, Weight: 257},   // wire 0x0100: needs weight_high
		{ID: 0x0FA00004, Weight: 1000},  // wire 0x03E7
		{ID: 0x0FA00005, Weight: 65536}, // wire 0xFFFF
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x01, 0x00, 0xA0, 0x0F, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0xA0, 0x0F, 0xFF, 0x00, 0x00, 0x00,
		0x03, 0x00, 0xA0, 0x0F, 0x00, 0x01, 0x00, 0x00,
		0x04, 0x00, 0xA0, 0x0F, 0xE7, 0x03, 0x00, 0x00,
		0x05, 0x00, 0xA0, 0x0F, 0xFF, 0xFF, 0x00, 0x00,
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeGroup:\n got % x\nwant % x", got, want)
	}
	back, err := decodeGroup(got)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []uint32{1, 256, 257, 1000, 65536} {
		if back[i].Weight != w || back[i].ID != uint32(0x0FA00001+i) {
			t.Errorf("decode[%d] = %+v, want weight %d", i, back[i], w)
		}
	}
	for _, w := range []uint32{0, 65537} {
		if _, err := encodeGroup([]GroupMember{{ID: 1, Weight: w}}); err == nil {
			t.Errorf("weight %d accepted", w)
		}
	}
	if _, err := decodeGroup(make([]byte, 7)); err == nil {
		t.Error("short NHA_GROUP accepted")
	}
}

// A whole RTM_NEWNEXTHOP group message, byte by byte.
func TestAppendGroupMessage(t *testing.T) {
	var m msgBuf
	err := appendGroup(&m, 7, unix.NLM_F_REPLACE, 0x0FA00010, 187,
		[]GroupMember{{ID: 0x0FA00001, Weight: 5}, {ID: 0x0FA00002, Weight: 2}},
		&Resilient{Buckets: 64, IdleTimer: 1500 * 1e6, UnbalancedTimer: 3e9})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		// nlmsghdr: len 88 (16+8+8+20+8+28), RTM_NEWNEXTHOP (0x68), REQUEST|ACK|REPLACE (0x105), seq 7, pid 0
		88, 0, 0, 0, 0x68, 0, 0x05, 0x01, 7, 0, 0, 0, 0, 0, 0, 0,
		// nhmsg: family AF_UNSPEC, scope 0, protocol 187, resvd, flags 0
		0, 0, 187, 0, 0, 0, 0, 0,
		// NHA_ID
		8, 0, 1, 0, 0x10, 0, 0xA0, 0x0F,
		// NHA_GROUP: two nexthop_grp, weights 5 and 2 on the wire as 4 and 1
		20, 0, 2, 0,
		0x01, 0, 0xA0, 0x0F, 4, 0, 0, 0,
		0x02, 0, 0xA0, 0x0F, 1, 0, 0, 0,
		// NHA_GROUP_TYPE = resilient (u16, padded)
		6, 0, 3, 0, 1, 0, 0, 0,
		// NHA_RES_GROUP nest (0x8000|12): buckets 64, idle 150 ticks, unbalanced 300 ticks
		28, 0, 12, 0x80,
		6, 0, 1, 0, 64, 0, 0, 0,
		8, 0, 2, 0, 150, 0, 0, 0,
		8, 0, 3, 0, 0x2C, 1, 0, 0,
	}
	if !bytes.Equal(m.b, want) {
		t.Fatalf("message:\n got % x\nwant % x", m.b, want)
	}
}

func TestAppendRouteMessage(t *testing.T) {
	h := routeHdr{prefix: netip.MustParsePrefix("10.20.0.0/16"), table: 254, protocol: 187, metric: 20}
	for _, c := range []struct {
		replace bool
		flags   [2]byte // nlmsg_flags, little endian
	}{
		{false, [2]byte{0x05, 0x06}}, // REQUEST|ACK|EXCL|CREATE: a prefix we do not hold
		{true, [2]byte{0x05, 0x01}},  // REQUEST|ACK|REPLACE: repoint a route we hold
	} {
		var m msgBuf
		appendRoute(&m, 1, h, 0x0FA00003, c.replace)
		want := []byte{
			52, 0, 0, 0, 24, 0, c.flags[0], c.flags[1], 1, 0, 0, 0, 0, 0, 0, 0, // RTM_NEWROUTE
			2, 16, 0, 0, 254, 187, 0, 1, 0, 0, 0, 0, // rtmsg: inet /16 main isis universe unicast
			8, 0, 1, 0, 10, 20, 0, 0, // RTA_DST
			8, 0, 6, 0, 20, 0, 0, 0, // RTA_PRIORITY
			8, 0, 30, 0, 3, 0, 0xA0, 0x0F, // RTA_NH_ID
		}
		if !bytes.Equal(m.b, want) {
			t.Fatalf("replace=%v message:\n got % x\nwant % x", c.replace, m.b, want)
		}
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
