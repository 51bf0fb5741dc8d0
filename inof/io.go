package inof

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/packetsock"
)

// EtherTypeLLDP is IEEE 802.1AB's.
const EtherTypeLLDP = 0x88CC

// port is an AF_PACKET socket bound to one interface and one EtherType,
// member of the nearest-bridge group (where hosts send, and LLDP goes).
type port struct {
	name string
	mac  net.HardwareAddr
	sock *packetsock.Socket
	f    io.ReadCloser // sock; a test reads frames from a pipe instead
}

func openPort(ifi *net.Interface, proto uint16) (*port, error) {
	// A burst of registrations (hundreds of hosts behind one port at
	// once) must not overflow the default buffer.
	s, err := packetsock.Open(ifi, proto, packetsock.Options{RcvBuf: 4 << 20, Groups: []net.HardwareAddr{l2.GroupMAC},
		Name: "inof-" + ifi.Name})
	if err != nil {
		return nil, fmt.Errorf("inof: %w", err)
	}
	return &port{name: ifi.Name, mac: append(net.HardwareAddr(nil), ifi.HardwareAddr...), sock: s, f: s}, nil
}

// send transmits a whole Ethernet frame.
func (p *port) send(frame []byte) error { return p.sock.Send(frame) }

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
