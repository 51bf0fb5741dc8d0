package rawsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBatch: a batch of packets of different sizes sent with one
// SendBatch, one of them to an address without a route, arrives whole and
// in order through RecvBatch (several calls if need be), each with the
// veth it came in on; the unroutable one is reported by its index and
// does not stop the rest. TryRecv-style reading of an empty queue says
// EAGAIN.
func TestBatch(t *testing.T) {
	a, b := pair(t)
	var recv, send *Conn
	var err error
	b.Do(func() {
		if recv, err = Open(Config{DestQPs: []uint32{9}, IfIndex: true}); err != nil {
			t.Fatal(err)
		}
	})
	defer recv.Close()
	a.Do(func() {
		if send, err = Open(Config{NoReceive: true}); err != nil {
			t.Fatal(err)
		}
	})
	defer send.Close()

	const n, bad = 12, 5
	sb := NewBatch(n, 2048)
	var want [][]byte
	for i := range n {
		dst := "10.77.0.2"
		if i == bad {
			dst = "10.99.0.1" // a has no route there
		}
		p := roce("10.77.0.1", dst, 9, 64+8*i)
		binary.BigEndian.PutUint16(p[4:], uint16(i+1)) // IPv4 ID: which packet
		sb.Lens[i] = copy(sb.Bufs[i], p)
		if i != bad {
			want = append(want, p)
		}
	}
	sb.N = n
	var refused []int
	if err := send.SendBatch(sb, func(i int, err error) {
		if !errors.Is(err, unix.ENETUNREACH) {
			t.Errorf("packet %d: %v, want ENETUNREACH", i, err)
		}
		refused = append(refused, i)
	}); err != nil {
		t.Fatal(err)
	}
	if len(refused) != 1 || refused[0] != bad || sb.N != 0 {
		t.Fatalf("refused %v (batch left with %d), want [%d] and an empty batch", refused, sb.N, bad)
	}

	rb := NewBatch(4, 2048) // smaller than what was sent: several reads
	vb := b.Ifindex("vb")
	var got [][]byte
	recv.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < len(want) {
		k, err := recv.RecvBatch(rb, true)
		if err != nil {
			t.Fatalf("after %d packets: %v", len(got), err)
		}
		for i := range k {
			if rb.IfIndex[i] != vb {
				t.Errorf("packet %d: ifindex %d, want %d", len(got), rb.IfIndex[i], vb)
			}
			got = append(got, bytes.Clone(rb.Bufs[i][:rb.Lens[i]]))
		}
	}
	for i := range want {
		// The kernel filled the IPv4 checksum: compare past it.
		if !bytes.Equal(got[i][12:], want[i][12:]) || !bytes.Equal(got[i][:10], want[i][:10]) {
			t.Fatalf("packet %d: got % x…, want % x…", i, got[i][:24], want[i][:24])
		}
	}
	if k, err := recv.RecvBatch(rb, false); k != 0 || !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("empty queue: %d packets, %v; want 0, EAGAIN", k, err)
	}
}
