package rawsock

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/fared/fared/internal/testns"
	"github.com/fared/fared/rocev2"
)

// pair is two namespaces joined by a veth: a (10.77.0.1, interface va)
// and b (10.77.0.2, interface vb).
func pair(t testing.TB) (a, b *testns.NS) {
	a, b = testns.New(t, "rsa"), testns.New(t, "rsb")
	a.IP("link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b.Name)
	a.IP("addr", "add", "10.77.0.1/24", "dev", "va")
	b.IP("addr", "add", "10.77.0.2/24", "dev", "vb")
	a.IP("link", "set", "va", "up")
	b.IP("link", "set", "vb", "up")
	return a, b
}

func roce(src, dst string, qp uint32, n int) []byte {
	f := rocev2.Frame{Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), ID: 1, TTL: 64}
	p := rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: rocev2.DefaultPKey, DestQP: qp},
		RETH: rocev2.RETH{Length: uint32(n)}, Payload: make([]byte, n)}
	return f.Append(nil, &p)
}

// TestIngressIfIndex: a packet from the other namespace reports the veth it came
// in on; one this namespace sends to itself (over lo) reports the
// interface holding the destination address, as the kernel does for
// loopback traffic; without Config.IfIndex the index is 0.
func TestIngressIfIndex(t *testing.T) {
	a, b := pair(t)
	var recv, plain, local *Conn
	var err error
	b.Do(func() {
		if recv, err = Open(Config{DestQPs: []uint32{9}, IfIndex: true}); err != nil {
			t.Fatal(err)
		}
		if plain, err = Open(Config{DestQPs: []uint32{9}}); err != nil {
			t.Fatal(err)
		}
		if local, err = Open(Config{NoReceive: true}); err != nil {
			t.Fatal(err)
		}
	})
	defer recv.Close()
	defer plain.Close()
	defer local.Close()
	var send *Conn
	a.Do(func() {
		if send, err = Open(Config{NoReceive: true}); err != nil {
			t.Fatal(err)
		}
	})
	defer send.Close()
	vb := b.Ifindex("vb")
	// one reads a single packet with its ingress interface.
	one := func(c *Conn) (n, ifindex int, err error) {
		bt := NewBatch(1, 2048)
		if _, err := c.RecvBatch(bt, true); err != nil {
			return 0, 0, err
		}
		return bt.Lens[0], bt.IfIndex[0], nil
	}
	for _, c := range []struct {
		name string
		from *Conn
		src  string
		want int
	}{{"over the veth", send, "10.77.0.1", vb}, {"from this namespace", local, "10.77.0.2", vb}} {
		if err := c.from.Send(roce(c.src, "10.77.0.2", 9, 64)); err != nil {
			t.Fatal(err)
		}
		recv.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, ifi, err := one(recv)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ifi != c.want || n != len(roce(c.src, "10.77.0.2", 9, 64)) {
			t.Fatalf("%s: %d bytes from ifindex %d, want ifindex %d", c.name, n, ifi, c.want)
		}
		plain.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, ifi, err := one(plain); err != nil || ifi != 0 {
			t.Fatalf("%s: without IfIndex: ifindex %d, %v", c.name, ifi, err)
		}
	}
	if n, err := recv.RecvBatch(NewBatch(1, 2048), false); err == nil {
		t.Fatalf("RecvBatch without waiting returned %d packets from an empty queue", n)
	}
}

var ne = binary.NativeEndian

// TestPktinfoIfindex: the control-message parser on hand-made buffers,
// including truncated and foreign ones.
func TestPktinfoIfindex(t *testing.T) {
	msg := func(level, typ int32, ifindex int32, length uint64) []byte {
		b := make([]byte, 32)
		ne.PutUint64(b, length)
		ne.PutUint32(b[8:], uint32(level))
		ne.PutUint32(b[12:], uint32(typ))
		ne.PutUint32(b[16:], uint32(ifindex))
		return b
	}
	for _, c := range []struct {
		name string
		oob  []byte
		want int
	}{
		{"pktinfo", msg(0, 8, 7, 28), 7},
		{"other type first", append(msg(0, 2, 9, 20)[:24], msg(0, 8, 5, 28)...), 5},
		{"other level", msg(41, 8, 7, 28), 0},
		{"length beyond the buffer", msg(0, 8, 7, 99), 0},
		{"length below a header", msg(0, 8, 7, 3), 0},
		{"short", []byte{1, 2, 3}, 0},
		{"empty", nil, 0},
	} {
		if got := pktinfoIfindex(c.oob); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// BenchmarkRecv is the cost of learning the ingress interface: the same
// packets read with recvfrom (Recv) and with recvmmsg + IP_PKTINFO
// (RecvBatch of one), interleaved, 1 KB payloads over a veth. Setup sends and
// receive both run in the loop; the difference is the receive call.
func BenchmarkRecv(b *testing.B) {
	a, bb := pair(b)
	var recv, recvIf, send *Conn
	var err error
	bb.Do(func() {
		recv, err = Open(Config{DestQPs: []uint32{9}, RcvBuf: 8 << 20})
		if err == nil {
			recvIf, err = Open(Config{DestQPs: []uint32{10}, RcvBuf: 8 << 20, IfIndex: true})
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	a.Do(func() { send, err = Open(Config{NoReceive: true, SndBuf: 8 << 20}) })
	if err != nil {
		b.Fatal(err)
	}
	defer recv.Close()
	defer recvIf.Close()
	defer send.Close()
	buf := make([]byte, 2048)
	one := NewBatch(1, 2048) // a batch of one: the ingress interface's cost
	for _, c := range []struct {
		name string
		qp   uint32
		rx   func() error
	}{
		{"recvfrom", 9, func() error { _, err := recv.Recv(buf); return err }},
		{"recvmmsg+pktinfo", 10, func() error { _, err := recvIf.RecvBatch(one, true); return err }},
	} {
		pkt := roce("10.77.0.1", "10.77.0.2", c.qp, 1024)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(1024)
			for b.Loop() {
				if err := send.Send(pkt); err != nil {
					b.Fatal(err)
				}
				if err := c.rx(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzPktinfoIfindex: the control-message parser never panics or reads
// beyond its buffer, whatever the kernel (or a bug) hands it.
func FuzzPktinfoIfindex(f *testing.F) {
	b := make([]byte, 32)
	ne.PutUint64(b, 28)
	ne.PutUint32(b[12:], 8)
	ne.PutUint32(b[16:], 7)
	f.Add(b)
	f.Add([]byte{})
	f.Add(make([]byte, 15))
	f.Fuzz(func(t *testing.T, oob []byte) {
		// Aligned like the kernel's buffer (the parser casts to cmsghdr).
		buf := make([]uint64, (len(oob)+7)/8)
		a := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*8)[:len(oob)]
		copy(a, oob)
		pktinfoIfindex(a)
	})
}
