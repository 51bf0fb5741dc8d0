package packetsock

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/testns"
)

func TestHtons(t *testing.T) {
	// In memory, the value the kernel reads is big-endian.
	b := binary.NativeEndian.AppendUint16(nil, Htons(0x88CC))
	if b[0] != 0x88 || b[1] != 0xCC {
		t.Fatalf("Htons(0x88CC) in memory: % x", b)
	}
}

// A frame sent on one end of a veth arrives on the other, with the
// socket's EtherType; a socket of another EtherType does not see it; an
// ETH_P_ALL socket sees both directions and tells them apart; a
// multicast group is joined; Close ends a blocked Read.
func TestSendRead(t *testing.T) {
	n := testns.New(t, "psock")
	n.IP("link", "add", "a0", "type", "veth", "peer", "name", "b0")
	n.IP("link", "set", "a0", "up")
	n.IP("link", "set", "b0", "up")
	const proto = 0x88B5 // IEEE local experimental
	group := net.HardwareAddr{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E}
	var a, b, other, all *Socket
	n.Do(func() {
		open := func(name string, proto uint16, o Options) *Socket {
			ifi, err := net.InterfaceByName(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(ifi, proto, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		a = open("a0", proto, Options{})
		b = open("b0", proto, Options{RcvBuf: 1 << 20, Groups: []net.HardwareAddr{group}})
		other = open("b0", 0x88B6, Options{})
		all = open("a0", unix.ETH_P_ALL, Options{})
	})
	if rb, err := unix.GetsockoptInt(b.FD(), unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil || rb != 2<<20 {
		t.Errorf("receive buffer %d, %v", rb, err)
	}
	frame := append(append(append([]byte(nil), group...), 2, 0, 0, 0, 0, 1), 0x88, 0xB5)
	frame = append(frame, bytes.Repeat([]byte{0xAB}, 46)...)
	if err := a.Send(frame); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := b.Read(buf); err != nil || !bytes.Equal(buf[:n], frame) {
		t.Fatalf("b read %d bytes (% x), %v", n, buf[:n], err)
	}
	other.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := other.Read(buf); err == nil {
		t.Errorf("a socket of another EtherType read % x", buf[:n])
	}
	all.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, pt, err := all.ReadFrom(buf); err != nil || pt != unix.PACKET_OUTGOING || !bytes.Equal(buf[:n], frame) {
		t.Errorf("ETH_P_ALL: %d bytes, packet type %d, %v", n, pt, err)
	}
	// An ETH_P_ALL socket sends too: the kernel takes the EtherType from
	// the frame.
	if err := all.Send(frame); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Read(buf); err != nil || !bytes.Equal(buf[:n], frame) {
		t.Fatalf("b read %d bytes after the ETH_P_ALL send, %v", n, err)
	}
	done := make(chan error, 1)
	b.SetReadDeadline(time.Time{})
	go func() { _, err := b.Read(buf); done <- err }()
	time.Sleep(50 * time.Millisecond)
	b.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Read after Close: no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a blocked Read")
	}
}
