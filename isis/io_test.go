package isis

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/testns"
)

// fared's IS-IS sockets get the receive buffer packetRcvbuf asks for (the
// kernel reports twice the request), not the 208 KB default that drops a
// large flood; a port whose size must be forced still gets exactly its own.
func TestPacketPortReceiveBuffer(t *testing.T) {
	ns := testns.New(t, "isio")
	ns.IP("link", "add", "a0", "type", "veth", "peer", "name", "b0")
	ns.IP("link", "set", "a0", "up")
	ns.IP("link", "set", "b0", "up")

	rcvbuf := func(name string, open func(*net.Interface) (Port, error)) int {
		t.Helper()
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := open(ifi)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		n, err := unix.GetsockoptInt(p.(*packetPort).sock.FD(), unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	ns.Do(func() {
		if got := rcvbuf("a0", OpenPacketPort); got != 2*packetRcvbuf {
			t.Errorf("OpenPacketPort: SO_RCVBUF %d, want %d", got, 2*packetRcvbuf)
		}
		sized := func(ifi *net.Interface) (Port, error) { return OpenPacketPortSized(ifi, 3<<20) }
		if got := rcvbuf("b0", sized); got != 2*(3<<20) {
			t.Errorf("OpenPacketPortSized(3 MB): SO_RCVBUF %d, want %d", got, 2*(3<<20))
		}
	})
}
