package interop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// PacketSocket is a raw AF_PACKET socket on one interface of a lab
// namespace, for tests that inject hand-made frames (spoofed hellos) or
// read frames off a LAN without a daemon in between. It sees every frame
// of the interface (ETH_P_ALL), both directions.
type PacketSocket struct {
	f       *os.File
	ifindex int
}

// OpenPacketSocket opens a PacketSocket on iface inside the named network
// namespace (e.g. a LAN's bridge namespace, Link.Netns, and Link.Bridge).
// The socket belongs to that namespace for its whole life, whichever
// thread uses it later.
func OpenPacketSocket(netns, iface string) (*PacketSocket, error) {
	type result struct {
		s   *PacketSocket
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread enters the namespace only while the socket is made
		// and comes back; it is unlocked only once back home. A thread
		// left in the lab's namespace (the main thread may run this)
		// would make the test process one of the namespace's pids, which
		// the lab's Down terminates.
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer home.Close()
		s, err := openIn(netns, iface)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{s, err}
	}()
	r := <-ch
	return r.s, r.err
}

func openIn(netns, iface string) (*PacketSocket, error) {
	ns, err := os.Open(filepath.Join("/run/netns", netns))
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", netns, err)
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("setns %s: %w", netns, err)
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", netns, err)
	}
	proto := htons(unix.ETH_P_ALL)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		return nil, fmt.Errorf("netns %s: AF_PACKET socket: %w", netns, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netns %s: bind %s: %w", netns, iface, err)
	}
	return &PacketSocket{f: os.NewFile(uintptr(fd), "packet-"+netns+"-"+iface), ifindex: ifi.Index}, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Send transmits one complete Ethernet frame (header included) as is.
func (s *PacketSocket) Send(frame []byte) error {
	if len(frame) < 14 {
		return errors.New("packet socket: frame shorter than an Ethernet header")
	}
	rc, err := s.f.SyscallConn()
	if err != nil {
		return err
	}
	sll := &unix.SockaddrLinklayer{Ifindex: s.ifindex, Halen: 6}
	copy(sll.Addr[:], frame[:6])
	var serr error
	werr := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), frame, 0, sll)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if werr != nil {
		return werr
	}
	return serr
}

// Recv returns the next frame that arrived on the interface (frames this
// host sent are skipped), or an error once deadline passes.
func (s *PacketSocket) Recv(buf []byte, deadline time.Time) (int, error) {
	if err := s.f.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	rc, err := s.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err != nil {
			return 0, err
		}
		if rerr != nil {
			return 0, rerr
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		return n, nil
	}
}

// Close closes the socket.
func (s *PacketSocket) Close() error { return s.f.Close() }
