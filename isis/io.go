package isis

import (
	"encoding/binary"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/internal/packetsock"
)

// IS-IS multicast MAC addresses (ISO 10589 §8.4.8, ISO 9542 for AllISs).
var (
	MACAllL1ISs = [6]byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x14}
	MACAllL2ISs = [6]byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x15}
	MACAllISs   = [6]byte{0x09, 0x00, 0x2B, 0x00, 0x00, 0x05}
)

// llc is the 802.2 header every IS-IS frame carries: DSAP/SSAP 0xFE (OSI), UI.
var llc = [3]byte{0xFE, 0xFE, 0x03}

const ethHeaderLen = 14

// Port is one circuit's packet I/O. The AF_PACKET implementation is used on
// real interfaces; tests substitute in-memory ports.
type Port interface {
	// Send transmits one IS-IS PDU (without LLC) to dst.
	Send(dst [6]byte, pdu []byte) error
	// Recv blocks for the next IS-IS PDU addressed to us; it returns the
	// sender's MAC and the PDU (LLC stripped, frame padding removed).
	Recv(buf []byte) (src [6]byte, pdu []byte, err error)
	Close() error
}

// packetPort is an AF_PACKET socket bound to one interface for 802.2 frames.
type packetPort struct {
	sock *packetsock.Socket
	mac  [6]byte
}

// OpenPacketPort opens the interface for IS-IS: binds to ETH_P_802_2 (the
// kernel's protocol for LLC frames carrying a length, not an ethertype) and
// joins the three IS-IS multicast groups. Its receive buffer is
// packetRcvbuf where the process may set it.
func OpenPacketPort(ifi *net.Interface) (Port, error) {
	return openPacketPort(ifi, packetRcvbuf, false)
}

// packetRcvbuf is the receive buffer asked for fared's IS-IS sockets
// (the kernel doubles it). The default, net.core.rmem_default (208 KB on
// Debian), holds about 140 LSPs: while the instance works through a
// large database flooded by several neighbours at once, the kernel drops
// the rest, and a neighbour sends them again only after its
// retransmission interval (5 s). On the 6,144-node 5-stage side by side
// (16 neighbours, bench/README.md) 1 MB took the database sync from
// 11-20 s to 5-6 s, the injector's retransmissions from 59,000-90,000 to
// 1,800-23,000 and the peak RSS from 142-162 MB to 139-140 MB (the
// buffers are kernel memory, filled only during such floods).
const packetRcvbuf = 1 << 20

// OpenPacketPortSized is OpenPacketPort with a forced receive buffer of
// rcvbuf bytes (SO_RCVBUFFORCE, needs CAP_NET_ADMIN) when rcvbuf > 0: a
// load generator reading a whole fabric's floods needs more than the
// default.
func OpenPacketPortSized(ifi *net.Interface, rcvbuf int) (Port, error) {
	return openPacketPort(ifi, rcvbuf, true)
}

// openPacketPort opens the socket; a receive buffer that cannot be forced
// is an error only when must (else netif.ReceiveBuffer).
func openPacketPort(ifi *net.Interface, rcvbuf int, must bool) (Port, error) {
	setup := func(fd int) error {
		if rcvbuf <= 0 {
			return nil
		}
		if !must {
			netif.ReceiveBuffer(fd, rcvbuf)
		} else if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf); err != nil {
			return fmt.Errorf("receive buffer on %s: %w", ifi.Name, err)
		}
		return nil
	}
	groups := []net.HardwareAddr{MACAllL1ISs[:], MACAllL2ISs[:], MACAllISs[:]}
	s, err := packetsock.Open(ifi, unix.ETH_P_802_2, packetsock.Options{Setup: setup, Groups: groups, Name: "isis-" + ifi.Name})
	if err != nil {
		return nil, fmt.Errorf("isis: %w", err)
	}
	p := &packetPort{sock: s}
	copy(p.mac[:], ifi.HardwareAddr)
	return p, nil
}

func (p *packetPort) Send(dst [6]byte, pdu []byte) error {
	n := ethHeaderLen + len(llc) + len(pdu)
	frame := make([]byte, n, max(n, 60))
	copy(frame[0:6], dst[:])
	copy(frame[6:12], p.mac[:])
	binary.BigEndian.PutUint16(frame[12:14], uint16(len(llc)+len(pdu)))
	copy(frame[14:17], llc[:])
	copy(frame[17:], pdu)
	// Ethernet minimum frame size; the 802.3 length field tells the receiver
	// where the PDU really ends.
	return p.sock.Send(frame[:max(n, 60)])
}

func (p *packetPort) Recv(buf []byte) (src [6]byte, pdu []byte, err error) {
	for {
		n, err := p.sock.Read(buf)
		if err != nil {
			return src, nil, err
		}
		f := buf[:n]
		if n < ethHeaderLen+len(llc) {
			continue
		}
		copy(src[:], f[6:12])
		if src == p.mac {
			continue
		}
		length := int(binary.BigEndian.Uint16(f[12:14]))
		if length >= 1536 || f[14] != llc[0] || f[15] != llc[1] || f[16] != llc[2] {
			continue // an ethertype frame or not OSI LLC
		}
		end := ethHeaderLen + length
		if end > n {
			end = n // truncated frame: let the decoder report it
		}
		return src, f[ethHeaderLen+len(llc) : end], nil
	}
}

func (p *packetPort) Close() error { return p.sock.Close() }
