// Package packetsock opens AF_PACKET sockets bound to one interface: the
// plumbing that IS-IS (802.2 LLC frames), iNOF (its EtherType and LLDP),
// IPCC's capture and the lab's frame injectors share. Reading frames and
// making sense of them stays with each caller.
package packetsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// Htons returns v in network byte order, the order AF_PACKET takes a
// protocol number in (socket(2)'s protocol, sockaddr_ll's sll_protocol).
func Htons(v uint16) uint16 {
	if bigEndian {
		return v
	}
	return v<<8 | v>>8
}

// Options of Open. The zero value is a raw socket (whole frames) with the
// default receive buffer that joins no group.
type Options struct {
	// Type is unix.SOCK_RAW (whole frames, the default) or
	// unix.SOCK_DGRAM (cooked: from the network header on).
	Type int
	// RcvBuf > 0 forces the receive buffer to that many bytes
	// (SO_RCVBUFFORCE, which needs CAP_NET_ADMIN): a burst (hundreds of
	// registrations, a flood) must not overflow the default. Where it
	// cannot be forced the default stays; a caller that needs more says
	// so in Setup.
	RcvBuf int
	// Setup runs on the new socket before it is bound, after RcvBuf: a
	// buffer set or a filter attached here is in force before the first
	// frame is queued. Its error closes the socket and is Open's.
	Setup func(fd int) error
	// Groups are the multicast MAC addresses the socket joins once bound.
	Groups []net.HardwareAddr
	// Name names the socket's file ("packet-<interface>" when empty);
	// the runtime's read and write errors carry it.
	Name string
}

// Socket is an AF_PACKET socket bound to one interface and one protocol.
// It is non-blocking under the runtime's poller, so a blocked Read
// returns when Close is called, and a read deadline works.
type Socket struct {
	f       *os.File
	fd      int
	ifindex int
	proto   uint16 // host order
}

// Open opens a socket for protocol proto (an EtherType, unix.ETH_P_802_2
// for 802.2 LLC frames or unix.ETH_P_ALL for every frame) on ifi, in the
// calling thread's network namespace: the socket stays in that namespace
// whichever thread uses it later (see internal/nsenter).
func Open(ifi *net.Interface, proto uint16, o Options) (*Socket, error) {
	typ := o.Type
	if typ == 0 {
		typ = unix.SOCK_RAW
	}
	fd, err := unix.Socket(unix.AF_PACKET, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(Htons(proto)))
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket on %s: %w", ifi.Name, err)
	}
	if o.RcvBuf > 0 {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, o.RcvBuf)
	}
	if o.Setup != nil {
		if err := o.Setup(fd); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: Htons(proto), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind %s: %w", ifi.Name, err)
	}
	for _, m := range o.Groups {
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_MULTICAST, Alen: uint16(len(m))}
		copy(mreq.Address[:], m)
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("join %s on %s: %w", m, ifi.Name, err)
		}
	}
	name := o.Name
	if name == "" {
		name = "packet-" + ifi.Name
	}
	// os.NewFile registers the non-blocking fd with the runtime poller.
	return &Socket{f: os.NewFile(uintptr(fd), name), fd: fd, ifindex: ifi.Index, proto: proto}, nil
}

// Send transmits one whole frame (a raw socket's: Ethernet header
// included) to the MAC address in its first six bytes, waiting in the
// poller while the device queue is full.
//
// The frame leaves with the socket's protocol, except on an ETH_P_ALL
// socket, which names no protocol to send with: there the kernel reads
// it from the frame's own header.
func (s *Socket) Send(frame []byte) error {
	if len(frame) < 6 {
		return errors.New("packetsock: frame shorter than a MAC address")
	}
	sll := &unix.SockaddrLinklayer{Ifindex: s.ifindex, Halen: 6}
	if s.proto != unix.ETH_P_ALL {
		sll.Protocol = Htons(s.proto)
	}
	copy(sll.Addr[:], frame[:6])
	return Sendto(s.f, frame, sll)
}

// Sendto sends b to sa over the nonblocking socket f (this package's, or
// another raw socket: OSPF's), waiting in the runtime's poller while the
// kernel's send buffer is full.
func Sendto(f *os.File, b []byte, sa unix.Sockaddr) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	werr := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), b, 0, sa)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if werr != nil {
		return werr
	}
	return serr
}

// Read reads the next frame into buf.
func (s *Socket) Read(buf []byte) (int, error) { return s.f.Read(buf) }

// ReadFrom is Read that also reports the frame's packet type
// (unix.PACKET_HOST, PACKET_OUTGOING for one this host sent, ...).
func (s *Socket) ReadFrom(buf []byte) (n int, pkttype uint8, err error) {
	rc, err := s.f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var from unix.Sockaddr
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err != nil {
		return 0, 0, err
	}
	if rerr != nil {
		return 0, 0, rerr
	}
	if ll, ok := from.(*unix.SockaddrLinklayer); ok {
		pkttype = ll.Pkttype
	}
	return n, pkttype, nil
}

// SetReadDeadline bounds the reads that follow (os.File's rules).
func (s *Socket) SetReadDeadline(t time.Time) error { return s.f.SetReadDeadline(t) }

// FD is the socket's descriptor, for socket options after Open.
func (s *Socket) FD() int { return s.fd }

// File is the socket as an *os.File, for a caller that reads it as one.
func (s *Socket) File() *os.File { return s.f }

// Close closes the socket; a blocked Read returns.
func (s *Socket) Close() error { return s.f.Close() }
