package interop

import (
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/packetsock"
)

// PacketSocket is a raw AF_PACKET socket on one interface of a lab
// namespace, for tests that inject hand-made frames (spoofed hellos) or
// read frames off a LAN without a daemon in between. It sees every frame
// of the interface (ETH_P_ALL), both directions.
type PacketSocket struct {
	s *packetsock.Socket
}

// OpenPacketSocket opens a PacketSocket on iface inside the named network
// namespace (e.g. a LAN's bridge namespace, Link.Netns, and Link.Bridge).
// The socket belongs to that namespace for its whole life, whichever
// thread uses it later; the test's own thread never enters it
// (internal/nsenter).
func OpenPacketSocket(netns, iface string) (*PacketSocket, error) {
	var s *packetsock.Socket
	err := nsenter.DoNamed(netns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err == nil {
			s, err = packetsock.Open(ifi, unix.ETH_P_ALL, packetsock.Options{Name: "packet-" + netns + "-" + iface})
		}
		if err != nil {
			return fmt.Errorf("netns %s: %w", netns, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &PacketSocket{s: s}, nil
}

// Send transmits one complete Ethernet frame (header included) as is.
func (s *PacketSocket) Send(frame []byte) error {
	if len(frame) < 14 {
		return errors.New("packet socket: frame shorter than an Ethernet header")
	}
	return s.s.Send(frame)
}

// Recv returns the next frame that arrived on the interface (frames this
// host sent are skipped), or an error once deadline passes.
func (s *PacketSocket) Recv(buf []byte, deadline time.Time) (int, error) {
	if err := s.s.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	for {
		n, pkttype, err := s.s.ReadFrom(buf)
		if err != nil {
			return 0, err
		}
		if pkttype != unix.PACKET_OUTGOING {
			return n, nil
		}
	}
}

// Close closes the socket.
func (s *PacketSocket) Close() error { return s.s.Close() }
