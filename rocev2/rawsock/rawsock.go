// Package rawsock sends and receives RoCEv2 packets as whole IP packets.
//
// RoCEv2's ICRC covers the IPv4 identification field, which a UDP socket
// lets the kernel choose after the ICRC was computed; so senders write the
// IP header themselves (IPPROTO_RAW, header included) and receivers read
// it (a raw UDP socket, which gets the IPv4 header too, filtered in the
// kernel by a BPF program on UDP port 4791 and, optionally, the BTH
// destination QP). A UDP socket bound to 4791 with a drop-all filter keeps
// the kernel from answering every packet with ICMP port unreachable.
//
// Receiving is IPv4 only (an IPv6 raw socket does not return the IPv6
// header the ICRC needs); sending works for both.
package rawsock

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/rocev2"
)

// Config says what a Conn receives.
type Config struct {
	// DestQPs, when not empty, limits reception to these BTH destination
	// QPs (the filter runs in the kernel).
	DestQPs []uint32
	// NoReceive opens a send-only Conn.
	NoReceive bool
	// RcvBuf and SndBuf set socket buffer sizes (bytes); 0 keeps the
	// default. A receiver of bursts wants a few MB.
	RcvBuf, SndBuf int
	// IfIndex makes RecvBatch report the interface each packet came in
	// on (IP_PKTINFO; Batch.IfIndex), for a receiver that checks a sender's
	// ingress (strict unicast RPF).
	IfIndex bool
}

// Conn is a raw RoCEv2 endpoint in one network namespace.
type Conn struct {
	send, recv *os.File
	sendRC     syscall.RawConn
	recvRC     syscall.RawConn
	absorb     int
	send6      *os.File
	send6RC    syscall.RawConn
	err6       error
	closeOnce  sync.Once
}

// Open opens a Conn in the calling goroutine's network namespace.
func Open(cfg Config) (*Conn, error) {
	c := &Conn{absorb: -1}
	var err error
	if c.send, c.sendRC, err = openSend(unix.AF_INET, "rocev2-send", cfg.SndBuf); err != nil {
		return nil, fmt.Errorf("raw IPv4 send socket: %w", err)
	}
	// The IPv6 socket is opened now, in this namespace (a socket opened
	// later could land in another one); a kernel without IPv6 only loses
	// IPv6 sending. IPPROTO_RAW on IPv6 implies IPV6_HDRINCL (Linux ≥ 4.5).
	if c.send6, c.send6RC, err = openSend(unix.AF_INET6, "rocev2-send6", cfg.SndBuf); err != nil {
		c.err6 = fmt.Errorf("raw IPv6 send socket: %w", err)
	}
	if cfg.NoReceive {
		return c, nil
	}
	// The filter goes on before the socket sees any traffic that is not
	// ours: attach to a socket that is not yet receiving is impossible for
	// raw sockets, so drain what slipped in before the filter.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("raw IPv4 receive socket: %w", err)
	}
	c.recv = os.NewFile(uintptr(fd), "rocev2-recv")
	if c.recvRC, err = c.recv.SyscallConn(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.SetDestQPs(cfg.DestQPs); err != nil {
		c.Close()
		return nil, err
	}
	drain(fd)
	if cfg.IfIndex {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1); err != nil {
			c.Close()
			return nil, fmt.Errorf("IP_PKTINFO: %w", err)
		}
	}
	if cfg.RcvBuf > 0 {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.RcvBuf)
	}
	if c.absorb, err = absorber(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// OpenIn opens a Conn in the named network namespace (a name under
// /run/netns or a path); "" means the current one. Sockets stay in the
// namespace they were created in.
func OpenIn(ns string, cfg Config) (*Conn, error) {
	if ns == "" {
		return Open(cfg)
	}
	var c *Conn
	err := nsenter.DoNamed(ns, func() error {
		var err error
		c, err = Open(cfg)
		return err
	})
	return c, err
}

func drain(fd int) {
	var b [64]byte
	for {
		if _, _, err := unix.Recvfrom(fd, b[:], unix.MSG_DONTWAIT); err != nil {
			return
		}
	}
}

// absorber binds UDP 4791 with a filter that drops everything: without a
// bound socket the kernel answers each packet with ICMP port unreachable.
// Several processes in one namespace share the port (SO_REUSEPORT).
func absorber() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if err := Attach(fd, []bpf.Instruction{bpf.RetConstant{Val: 0}}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: rocev2.UDPPort}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind UDP %d: %w", rocev2.UDPPort, err)
	}
	return fd, nil
}

// openSend opens a raw send socket of family (IPPROTO_RAW: we write whole
// IP packets), its send buffer forced to sndBuf when that is set.
func openSend(family int, name string, sndBuf int) (*os.File, syscall.RawConn, error) {
	fd, err := unix.Socket(family, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, nil, err
	}
	if sndBuf > 0 {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, sndBuf)
	}
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rc, nil
}

// Attach assembles prog and attaches it to the socket fd as its classic
// BPF filter (SO_ATTACH_FILTER).
func Attach(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp)
}

// filter accepts UDP to port 4791 (the raw socket sees the packet from the
// IPv4 header) and, when qps is not empty, only those destination QPs.
//
//	X = IPv4 header length; A = UDP destination port
//	A != 4791 → drop
//	without qps: accept
//	with qps: A = BTH bytes 4-7 & 0xFFFFFF (destination QP);
//	          A == qps[i] → accept; else drop
func filter(qps []uint32) []bpf.Instruction {
	const accept, drop = 0x40000, 0
	k := len(qps)
	p := []bpf.Instruction{
		bpf.LoadMemShift{Off: 0},
		bpf.LoadIndirect{Off: 2, Size: 2},
	}
	if k == 0 {
		return append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: rocev2.UDPPort, SkipFalse: 1},
			bpf.RetConstant{Val: accept},
			bpf.RetConstant{Val: drop})
	}
	// Layout: [0 1] 2:port check, 3 4: load QP, 5..5+k-1: QP checks,
	// 5+k: drop, 6+k: accept.
	p = append(p,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: rocev2.UDPPort, SkipFalse: uint8(k + 2)},
		bpf.LoadIndirect{Off: 8 + 4, Size: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xFFFFFF},
	)
	for i, q := range qps {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: q & 0xFFFFFF, SkipTrue: uint8(k - i)})
	}
	return append(p, bpf.RetConstant{Val: drop}, bpf.RetConstant{Val: accept})
}

// SetDestQPs replaces the kernel filter's QP list (empty: every QP).
func (c *Conn) SetDestQPs(qps []uint32) error {
	if c.recvRC == nil {
		return errors.New("send-only conn")
	}
	if len(qps) > 200 {
		return fmt.Errorf("%d QPs: at most 200 in the kernel filter", len(qps))
	}
	var err error
	cerr := c.recvRC.Control(func(fd uintptr) { err = Attach(int(fd), filter(qps)) })
	return errors.Join(cerr, err)
}

// Send writes one IP packet (IPv4 or IPv6, headers included): the kernel
// fills the IPv4 checksum, and the IPv4 ID only if it is 0, so a sender
// that wants a valid ICRC sets a non-zero ID.
func (c *Conn) Send(ip []byte) error {
	if len(ip) < rocev2.IPv4HeaderLen {
		return errors.New("short packet")
	}
	var sa unix.Sockaddr
	rc := c.sendRC
	switch ip[0] >> 4 {
	case 4:
		sa = &unix.SockaddrInet4{Addr: [4]byte(ip[16:20])}
	case 6:
		if len(ip) < rocev2.IPv6HeaderLen {
			return errors.New("short packet")
		}
		if c.send6RC == nil {
			return c.err6
		}
		rc = c.send6RC
		sa = &unix.SockaddrInet6{Addr: [16]byte(ip[24:40])}
	default:
		return fmt.Errorf("IP version %d", ip[0]>>4)
	}
	var err error
	werr := rc.Write(func(fd uintptr) bool {
		err = unix.Sendto(int(fd), ip, 0, sa)
		return err != unix.EAGAIN
	})
	if werr != nil {
		return werr
	}
	return err
}

// Recv reads one IPv4 packet (header included) into b and returns its
// length. It blocks until a packet comes, the deadline passes or the Conn
// is closed (os.ErrClosed).
func (c *Conn) Recv(b []byte) (int, error) {
	if c.recvRC == nil {
		return 0, errors.New("send-only conn")
	}
	var n int
	var err error
	rerr := c.recvRC.Read(func(fd uintptr) bool {
		n, _, err = unix.Recvfrom(int(fd), b, 0)
		return err != unix.EAGAIN
	})
	if rerr != nil {
		return 0, rerr
	}
	return n, err
}

// pktinfoIfindex finds IP_PKTINFO among the control messages and returns
// its ipi_ifindex (0 if absent).
func pktinfoIfindex(oob []byte) int {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) {
			return 0
		}
		if h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && l >= unix.SizeofCmsghdr+unix.SizeofInet4Pktinfo {
			pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&oob[unix.CmsgSpace(0)]))
			return int(pi.Ifindex)
		}
		oob = oob[min(unix.CmsgSpace(l-unix.SizeofCmsghdr), len(oob)):]
	}
	return 0
}

// SetReadDeadline sets the deadline of Recv.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.recv == nil {
		return errors.New("send-only conn")
	}
	return c.recv.SetReadDeadline(t)
}

// LocalAddr returns the source address the kernel would use towards dst.
func LocalAddr(dst netip.Addr) (netip.Addr, error) {
	fam := unix.AF_INET
	var sa unix.Sockaddr = &unix.SockaddrInet4{Addr: dst.As4(), Port: 9}
	if dst.Is6() && !dst.Is4In6() {
		fam = unix.AF_INET6
		sa = &unix.SockaddrInet6{Addr: dst.As16(), Port: 9}
	}
	fd, err := unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return netip.Addr{}, err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return netip.Addr{}, err
	}
	la, err := unix.Getsockname(fd)
	if err != nil {
		return netip.Addr{}, err
	}
	switch a := la.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr), nil
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr), nil
	}
	return netip.Addr{}, errors.New("unknown address family")
}

// Close closes every socket; a blocked Recv returns os.ErrClosed.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		for _, f := range []*os.File{c.send, c.recv, c.send6} {
			if f != nil {
				f.Close()
			}
		}
		if c.absorb >= 0 {
			unix.Close(c.absorb)
		}
	})
	return nil
}
