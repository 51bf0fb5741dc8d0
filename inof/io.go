package inof

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
)

// EtherTypeLLDP is IEEE 802.1AB's.
const EtherTypeLLDP = 0x88CC

// port is an AF_PACKET socket bound to one interface and one EtherType,
// member of the nearest-bridge group (where hosts send, and LLDP goes).
type port struct {
	name  string
	index int
	mac   net.HardwareAddr
	proto uint16
	f     *os.File
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPort(ifi *net.Interface, proto uint16) (*port, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(proto)))
	if err != nil {
		return nil, fmt.Errorf("inof: AF_PACKET socket on %s: %w", ifi.Name, err)
	}
	// A burst of registrations (hundreds of hosts behind one port at
	// once) must not overflow the default buffer.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inof: bind %s: %w", ifi.Name, err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_MULTICAST, Alen: 6}
	copy(mreq.Address[:], l2.GroupMAC)
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inof: join %s on %s: %w", l2.GroupMAC, ifi.Name, err)
	}
	return &port{name: ifi.Name, index: ifi.Index, mac: append(net.HardwareAddr(nil), ifi.HardwareAddr...), proto: proto,
		f: os.NewFile(uintptr(fd), "inof-"+ifi.Name)}, nil
}

// send transmits a whole Ethernet frame.
func (p *port) send(frame []byte) error {
	sll := &unix.SockaddrLinklayer{Ifindex: p.index, Halen: 6, Protocol: htons(p.proto)}
	copy(sll.Addr[:], frame[:6])
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
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

// read calls deliver for every frame until the socket is closed. Frames
// we sent ourselves (the kernel loops outgoing frames back to packet
// sockets only with PACKET_OUTGOING, which a bound socket does not see;
// the check is for bridges that reflect) are skipped.
//
// A panic here (a bug) is recovered through the module's guard: the
// socket is reported failed, and its owner opens it again.
func (p *port) read(g *guard.Guard, deliver func(frame []byte), failed func(error)) {
	defer g.Recover("reader "+p.name, nil, func(any) { failed(errReaderPanic) })
	buf := make([]byte, 9216)
	for {
		n, err := p.f.Read(buf)
		if err != nil {
			retry, closed := loop.ReadResult(err)
			if retry {
				continue
			}
			if !closed {
				failed(err)
			}
			return
		}
		if n < 14 || net.HardwareAddr(buf[6:12]).String() == p.mac.String() {
			continue
		}
		deliver(append([]byte(nil), buf[:n]...))
	}
}

func (p *port) close() error { return p.f.Close() }

var errReaderPanic = errors.New("the reader panicked (a bug, logged once): reopening")

// GuardInput shows the head of a received frame when handling it
// panicked (internal/loop's guard).
func (e frameEv) GuardInput() []byte { return e.b }

// GuardInput: the same for a host's frame.
func (e hostFrameEv) GuardInput() []byte { return e.b }
