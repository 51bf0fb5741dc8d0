package ospf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/internal/packetsock"
)

// Port is one interface's packet I/O: raw IP protocol 89 on real
// interfaces, in-memory ports in tests.
type Port interface {
	// Send transmits one OSPF packet (without IP header) to dst, a
	// neighbour or one of the two OSPF multicast groups.
	Send(dst netip.Addr, pkt []byte) error
	// Recv blocks for the next OSPF packet that arrived on the interface;
	// it returns the IP source and destination and the OSPF packet.
	Recv(buf []byte) (src, dst netip.Addr, pkt []byte, err error)
	// JoinAllDRouters joins (true) or leaves 224.0.0.6 (DR and BDR only).
	JoinAllDRouters(join bool) error
	Close() error
}

// ProtoOSPF is the IP protocol number of OSPF.
const ProtoOSPF = 89

// rawPort is a raw IPv4 socket for protocol 89 bound to one interface.
type rawPort struct {
	f     *os.File
	ifidx int
	addr  netip.Addr
}

// OpenRawPort opens protocol-89 I/O on an interface: SO_BINDTODEVICE,
// AllSPFRouters joined, multicast out of this interface with TTL 1 and no
// loopback, TOS 0xc0 (internetwork control), IP_PKTINFO for the arrival
// interface and destination.
func OpenRawPort(ifi *net.Interface, addr netip.Addr) (Port, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, ProtoOSPF)
	if err != nil {
		return nil, fmt.Errorf("ospf: raw socket on %s: %w", ifi.Name, err)
	}
	fail := func(what string, err error) (Port, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("ospf: %s on %s: %w", what, ifi.Name, err)
	}
	if err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, ifi.Name); err != nil {
		return fail("SO_BINDTODEVICE", err)
	}
	mreqn := &unix.IPMreqn{Ifindex: int32(ifi.Index)}
	copy(mreqn.Multiaddr[:], AllSPFRouters.AsSlice())
	if err := unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreqn); err != nil {
		return fail("join 224.0.0.5", err)
	}
	ifreq := &unix.IPMreqn{Ifindex: int32(ifi.Index)}
	if addr.IsValid() {
		copy(ifreq.Address[:], addr.AsSlice())
	}
	if err := unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_MULTICAST_IF, ifreq); err != nil {
		return fail("IP_MULTICAST_IF", err)
	}
	for _, o := range []struct {
		name string
		opt  int
		val  int
	}{
		{"IP_MULTICAST_LOOP", unix.IP_MULTICAST_LOOP, 0},
		{"IP_MULTICAST_TTL", unix.IP_MULTICAST_TTL, 1},
		{"IP_TTL", unix.IP_TTL, 1},
		{"IP_TOS", unix.IP_TOS, 0xc0},
		{"IP_PKTINFO", unix.IP_PKTINFO, 1},
		// Packets larger than the MTU (a big LSA) are fragmented rather
		// than refused.
		{"IP_MTU_DISCOVER", unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DONT},
	} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, o.opt, o.val); err != nil {
			return fail(o.name, err)
		}
	}
	netif.ReceiveBuffer(fd, 4<<20)
	p := &rawPort{ifidx: ifi.Index, addr: addr}
	p.f = os.NewFile(uintptr(fd), "ospf-"+ifi.Name)
	return p, nil
}

func (p *rawPort) control(f func(fd int) error) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (p *rawPort) JoinAllDRouters(join bool) error {
	opt := unix.IP_DROP_MEMBERSHIP
	if join {
		opt = unix.IP_ADD_MEMBERSHIP
	}
	mreqn := &unix.IPMreqn{Ifindex: int32(p.ifidx)}
	copy(mreqn.Multiaddr[:], AllDRouters.AsSlice())
	err := p.control(func(fd int) error { return unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, opt, mreqn) })
	if !join && errors.Is(err, unix.EADDRNOTAVAIL) {
		return nil // not a member
	}
	return err
}

func (p *rawPort) Send(dst netip.Addr, pkt []byte) error {
	return packetsock.Sendto(p.f, pkt, &unix.SockaddrInet4{Addr: dst.As4()})
}

func (p *rawPort) Recv(buf []byte) (src, dst netip.Addr, pkt []byte, err error) {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return src, dst, nil, err
	}
	oob := make([]byte, 128)
	for {
		var n, oobn int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err != nil {
			return src, dst, nil, err
		}
		if rerr != nil {
			if errors.Is(rerr, unix.EINTR) {
				continue
			}
			return src, dst, nil, rerr
		}
		b := buf[:n]
		if n < ipHeaderLen || b[0]>>4 != 4 {
			continue
		}
		ihl := int(b[0]&0x0f) * 4
		if ihl < ipHeaderLen || ihl > n {
			continue
		}
		src = netip.AddrFrom4([4]byte(b[12:16]))
		dst = netip.AddrFrom4([4]byte(b[16:20]))
		ifidx := 0
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_PKTINFO && len(m.Data) >= int(unsafe.Sizeof(unix.Inet4Pktinfo{})) {
					pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&m.Data[0]))
					ifidx = int(pi.Ifindex)
					dst = netip.AddrFrom4(pi.Addr)
				}
			}
		}
		if ifidx != 0 && ifidx != p.ifidx {
			continue // SO_BINDTODEVICE should have filtered it
		}
		if src == p.addr {
			continue // our own multicast, should loopback be on
		}
		return src, dst, b[ihl:], nil
	}
}

func (p *rawPort) Close() error { return p.f.Close() }

// KernelInterface reads an interface from the kernel.
var KernelInterface = netif.Lookup
