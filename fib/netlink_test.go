package fib

import (
	"slices"
	"testing"

	"github.com/fared/fared/internal/nlmsg"
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
