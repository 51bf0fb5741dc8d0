package interop

import (
	"fmt"
	"net"
	"time"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/packetsock"
)

// RawSocket is an AF_PACKET socket on one interface of a lab node,
// opened from the test process: tests send and receive whole Ethernet
// frames through it (a generator of many hosts, malformed frames).
type RawSocket struct {
	s   *packetsock.Socket
	MAC net.HardwareAddr
}

// OpenRaw opens a packet socket for EtherType proto on iface of node.
// Frames to any destination MAC arrive (a veth delivers frames for other
// hosts to packet sockets), so a test can play many hosts at once.
func (l *Lab) OpenRaw(node, iface string, proto uint16) (*RawSocket, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	// The socket belongs to the namespace it is created in; the test's
	// own thread never enters it (internal/nsenter).
	var r *RawSocket
	err = nsenter.DoNamed(n.Netns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return fmt.Errorf("node %s: %w", node, err)
		}
		s, err := packetsock.Open(ifi, proto, packetsock.Options{RcvBuf: 8 << 20, Name: "raw-" + iface})
		if err != nil {
			return err
		}
		r = &RawSocket{s: s, MAC: ifi.HardwareAddr}
		return nil
	})
	return r, err
}

// Send transmits a whole frame (destination MAC first).
func (r *RawSocket) Send(frame []byte) error { return r.s.Send(frame) }

// Recv returns the next frame, or an error after timeout.
func (r *RawSocket) Recv(buf []byte, timeout time.Duration) (int, error) {
	_ = r.s.SetReadDeadline(time.Now().Add(timeout))
	return r.s.Read(buf)
}

// Close closes the socket.
func (r *RawSocket) Close() error { return r.s.Close() }
