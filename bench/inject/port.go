package inject

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/fared/fared/isis"
	"golang.org/x/sys/unix"
)

// RcvBuf is the receive buffer of the injector's sockets.
const RcvBuf = 32 << 20

var llc = [3]byte{0xFE, 0xFE, 0x03} // 802.2: DSAP/SSAP OSI, UI

const ethHeaderLen = 14

// port is an AF_PACKET socket for IS-IS frames on one interface.
type port struct {
	f     *os.File
	ifidx int
	mac   [6]byte
	frame []byte
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPort(ifi *net.Interface, rcvbuf int) (isis.Port, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_802_2)))
	if err != nil {
		return nil, fmt.Errorf("inject: AF_PACKET socket on %s: %w", ifi.Name, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inject: receive buffer on %s: %w", ifi.Name, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_802_2), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inject: bind %s: %w", ifi.Name, err)
	}
	for _, m := range [][6]byte{isis.MACAllL1ISs, isis.MACAllL2ISs, isis.MACAllISs} {
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_MULTICAST, Alen: 6}
		copy(mreq.Address[:], m[:])
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("inject: join %x on %s: %w", m, ifi.Name, err)
		}
	}
	p := &port{ifidx: ifi.Index, f: os.NewFile(uintptr(fd), "inject-"+ifi.Name)}
	copy(p.mac[:], ifi.HardwareAddr)
	return p, nil
}

// Send is called from one goroutine per port (the circuit's writer).
func (p *port) Send(dst [6]byte, pdu []byte) error {
	n := ethHeaderLen + len(llc) + len(pdu)
	size := max(n, 60) // Ethernet minimum; the 802.3 length says where the PDU ends
	if cap(p.frame) < size {
		p.frame = make([]byte, size, max(size, 1518))
	}
	f := p.frame[:size]
	clear(f[n:])
	copy(f[0:6], dst[:])
	copy(f[6:12], p.mac[:])
	binary.BigEndian.PutUint16(f[12:14], uint16(len(llc)+len(pdu)))
	copy(f[14:17], llc[:])
	copy(f[17:], pdu)
	sll := &unix.SockaddrLinklayer{Ifindex: p.ifidx, Halen: 6, Protocol: htons(unix.ETH_P_802_2)}
	copy(sll.Addr[:], dst[:])
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	werr := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), f, 0, sll)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if werr != nil {
		return werr
	}
	return serr
}

func (p *port) Recv(buf []byte) (src [6]byte, pdu []byte, err error) {
	for {
		n, err := p.f.Read(buf)
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
			continue
		}
		end := min(ethHeaderLen+length, n)
		return src, f[ethHeaderLen+len(llc) : end], nil
	}
}

func (p *port) Close() error { return p.f.Close() }
