package nlmsg

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// group encodes one mpath group message and returns its NHA_GROUP
// payload (after the 16-byte header, 8-byte nhmsg, 8-byte NHA_ID and the
// 4-byte NHA_GROUP header).
func group(t *testing.T, ids, weights []uint32) ([]byte, error) {
	t.Helper()
	var m Buf
	m.BeginGroup(1, 0, 99, 187)
	for i := range ids {
		if err := m.Member(ids[i], weights[i]); err != nil {
			m.Abort()
			return nil, err
		}
	}
	m.EndGroup(nil)
	return m.Bytes()[16+8+8+4:], nil
}

// The group attribute is struct nexthop_grp {u32 id; u8 weight; u8
// weight_high; u16 resvd} with weight-1 split low/high; expected bytes are
// written out by hand (little-endian host, as on amd64/arm64).
func TestGroupEntries(t *testing.T) {
	weights := []uint32{
		1,     // encoded 0x0000
		256,   // encoded 0x00FF: last 8-bit value
		257,   // encoded 0x0100: needs weight_high
		1000,  // encoded 0x03E7
		65536, // encoded 0xFFFF
	}
	ids := []uint32{0x0FA00001, 0x0FA00002, 0x0FA00003, 0x0FA00004, 0x0FA00005}
	got, err := group(t, ids, weights)
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
		t.Fatalf("NHA_GROUP:\n got % x\nwant % x", got, want)
	}
	for i, w := range weights {
		if id, back := GroupEntry(got[8*i:]); back != w || id != ids[i] {
			t.Errorf("GroupEntry[%d] = %#x w%d, want %#x w%d", i, id, back, ids[i], w)
		}
	}
	for _, w := range []uint32{0, 65537} {
		if _, err := group(t, []uint32{1}, []uint32{w}); err == nil {
			t.Errorf("weight %d accepted", w)
		}
	}
	// Abort leaves the buffer as it was before the message.
	var m Buf
	m.DelNexthop(1, 5)
	n := len(m.Bytes())
	m.BeginGroup(2, 0, 99, 187)
	m.Abort()
	if len(m.Bytes()) != n {
		t.Errorf("Abort left %d bytes, want %d", len(m.Bytes()), n)
	}
}

// A whole RTM_NEWNEXTHOP group message, byte by byte.
func TestGroupMessage(t *testing.T) {
	var m Buf
	m.BeginGroup(7, unix.NLM_F_REPLACE, 0x0FA00010, 187)
	for _, e := range [][2]uint32{{0x0FA00001, 5}, {0x0FA00002, 2}} {
		if err := m.Member(e[0], e[1]); err != nil {
			t.Fatal(err)
		}
	}
	m.EndGroup(&Resilient{Buckets: 64, IdleTimer: 1500 * time.Millisecond, UnbalancedTimer: 3 * time.Second})
	want := []byte{
		// nlmsghdr: len 88 (16+8+8+20+8+28), RTM_NEWNEXTHOP (0x68), REQUEST|ACK|REPLACE (0x105), seq 7, pid 0
		88, 0, 0, 0, 0x68, 0, 0x05, 0x01, 7, 0, 0, 0, 0, 0, 0, 0,
		// nhmsg: family AF_UNSPEC, scope 0, protocol 187, resvd, flags 0
		0, 0, 187, 0, 0, 0, 0, 0,
		// NHA_ID
		8, 0, 1, 0, 0x10, 0, 0xA0, 0x0F,
		// NHA_GROUP: two nexthop_grp, weights 5 and 2 encoded as 4 and 1
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
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatalf("message:\n got % x\nwant % x", m.Bytes(), want)
	}
}

func TestRouteMessage(t *testing.T) {
	k := RouteKey{Prefix: netip.MustParsePrefix("10.20.0.0/16"), Table: 254, Protocol: 187, Metric: 20}
	for _, c := range []struct {
		replace bool
		flags   [2]byte // nlmsg_flags, little endian
	}{
		{false, [2]byte{0x05, 0x06}}, // REQUEST|ACK|EXCL|CREATE: a prefix we do not hold
		{true, [2]byte{0x05, 0x01}},  // REQUEST|ACK|REPLACE: repoint a route we hold
	} {
		var m Buf
		m.Route(1, k, 0x0FA00003, c.replace)
		want := []byte{
			52, 0, 0, 0, 24, 0, c.flags[0], c.flags[1], 1, 0, 0, 0, 0, 0, 0, 0, // RTM_NEWROUTE
			2, 16, 0, 0, 254, 187, 0, 1, 0, 0, 0, 0, // rtmsg: inet /16 main isis universe unicast
			8, 0, 1, 0, 10, 20, 0, 0, // RTA_DST
			8, 0, 6, 0, 20, 0, 0, 0, // RTA_PRIORITY
			8, 0, 30, 0, 3, 0, 0xA0, 0x0F, // RTA_NH_ID
		}
		if !bytes.Equal(m.Bytes(), want) {
			t.Fatalf("replace=%v message:\n got % x\nwant % x", c.replace, m.Bytes(), want)
		}
	}
}

// Chunks end at the message count or at ChunkBytes, never inside a
// message, and hold one message at least.
func TestBatchChunks(t *testing.T) {
	b := NewBatch(10)
	for i := range 5 {
		seq := b.Next()
		if seq != 10+uint32(i) {
			t.Fatalf("message %d: seq %d", i, seq)
		}
		b.DelNexthop(seq, uint32(i))
	}
	one := len(b.Bytes()) / 5
	if hi := b.ChunkEnd(0, b.Len(), 2); hi != 2 || len(b.Chunk(0, hi)) != 2*one {
		t.Errorf("chunk of 2: ends at %d, %d bytes", hi, len(b.Chunk(0, hi)))
	}
	if hi := b.ChunkEnd(4, b.Len(), 8); hi != 5 || b.SizeFrom(4) != one {
		t.Errorf("last chunk: ends at %d, %d bytes", hi, b.SizeFrom(4))
	}
	b.Next()
	b.BeginGroup(0, 0, 1, 0)
	b.Drop()
	if b.Len() != 5 || len(b.Bytes()) != 5*one {
		t.Errorf("Drop: %d messages, %d bytes", b.Len(), len(b.Bytes()))
	}
}
