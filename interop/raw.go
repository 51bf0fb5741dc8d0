package interop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RawSocket is an AF_PACKET socket on one interface of a lab node,
// opened from the test process: tests send and receive whole Ethernet
// frames through it (a generator of many hosts, malformed frames).
type RawSocket struct {
	f     *os.File
	index int
	proto uint16
	MAC   net.HardwareAddr
}

// OpenRaw opens a packet socket for EtherType proto on iface of node.
// Frames to any destination MAC arrive (a veth delivers frames for other
// hosts to packet sockets), so a test can play many hosts at once.
func (l *Lab) OpenRaw(node, iface string, proto uint16) (*RawSocket, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	// The socket belongs to the namespace it is created in; the thread
	// goes back to ours right after.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return nil, err
	}
	defer orig.Close()
	target, err := netns.GetFromName(n.Netns)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return nil, err
	}
	defer netns.Set(orig)
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	htons := func(v uint16) uint16 { return v<<8 | v>>8 }
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(proto)))
	if err != nil {
		return nil, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &RawSocket{f: os.NewFile(uintptr(fd), "raw-"+iface), index: ifi.Index, proto: proto, MAC: ifi.HardwareAddr}, nil
}

// Send transmits a whole frame (destination MAC first).
func (r *RawSocket) Send(frame []byte) error {
	sll := &unix.SockaddrLinklayer{Ifindex: r.index, Halen: 6, Protocol: r.proto<<8 | r.proto>>8}
	copy(sll.Addr[:], frame[:6])
	rc, err := r.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), frame, 0, sll)
		return !errors.Is(serr, unix.EAGAIN)
	}); err != nil {
		return err
	}
	return serr
}

// Recv returns the next frame, or an error after timeout.
func (r *RawSocket) Recv(buf []byte, timeout time.Duration) (int, error) {
	_ = r.f.SetReadDeadline(time.Now().Add(timeout))
	return r.f.Read(buf)
}

// Close closes the socket.
func (r *RawSocket) Close() error { return r.f.Close() }
