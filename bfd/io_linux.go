package bfd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/guard"
)

// Port is where single-hop BFD Control packets go (RFC 5881 §4).
const Port = 3784

// UDP is the production IO: RFC 5881 sockets in the current network
// namespace. Guard, if set, recovers a panic while reading one packet
// (the packet is dropped, the reader goes on).
type UDP struct{ Guard *guard.Guard }

// Listen receives on UDP 3784 over IPv4 and IPv6, with the TTL (hop
// limit) and the arrival interface of every packet. One family failing
// (IPv6 off in the namespace) is logged by the caller only when both do.
func (u UDP) Listen(ctx context.Context, deliver func(Received)) error {
	c4, err4 := net.ListenPacket("udp4", fmt.Sprintf("0.0.0.0:%d", Port))
	c6, err6 := net.ListenPacket("udp6", fmt.Sprintf("[::]:%d", Port))
	if err4 != nil && err6 != nil {
		return fmt.Errorf("listen on UDP %d: %w", Port, errors.Join(err4, err6))
	}
	var readers []func(buf []byte) (Received, error)
	var conns []net.PacketConn
	if err4 == nil {
		p := ipv4.NewPacketConn(c4)
		if err := p.SetControlMessage(ipv4.FlagTTL|ipv4.FlagInterface, true); err != nil {
			c4.Close()
			if c6 != nil {
				c6.Close()
			}
			return fmt.Errorf("IP_RECVTTL/IP_PKTINFO: %w", err)
		}
		conns = append(conns, c4)
		readers = append(readers, reader(p.ReadFrom, netip.Addr.Unmap,
			func(cm *ipv4.ControlMessage) (int, int) { return cm.TTL, cm.IfIndex }))
	}
	if err6 == nil {
		p := ipv6.NewPacketConn(c6)
		if err := p.SetControlMessage(ipv6.FlagHopLimit|ipv6.FlagInterface, true); err != nil {
			for _, c := range append(conns, c6) {
				c.Close()
			}
			return fmt.Errorf("IPV6_RECVHOPLIMIT/IPV6_RECVPKTINFO: %w", err)
		}
		conns = append(conns, c6)
		readers = append(readers, reader(p.ReadFrom, func(a netip.Addr) netip.Addr { return a.WithZone("") },
			func(cm *ipv6.ControlMessage) (int, int) { return cm.HopLimit, cm.IfIndex }))
	}
	done := make(chan struct{}, len(readers))
	for _, read := range readers {
		go func() {
			defer func() { done <- struct{}{} }()
			u.readLoop(read, deliver)
		}()
	}
	<-ctx.Done()
	for _, c := range conns {
		c.Close()
	}
	for range readers {
		<-done
	}
	return nil
}

// readLoop reads packets until the socket closes; each is read and
// delivered under the guard.
func (u UDP) readLoop(read func([]byte) (Received, error), deliver func(Received)) {
	buf := make([]byte, 1500)
	for {
		var err error
		one := func() {
			var r Received
			if r, err = read(buf); err == nil {
				deliver(r)
			}
		}
		if u.Guard != nil {
			u.Guard.Do("rx socket", buf[:0], one)
		} else {
			one()
		}
		if err != nil {
			return
		}
	}
}

// reader receives one packet with read (an ipv4 or ipv6 PacketConn's
// ReadFrom): src turns the sender's address into the form sessions are
// keyed by, ctl reads the TTL (hop limit) and arrival interface of the
// control message; without one the TTL is -1, which no check accepts.
func reader[CM any](read func([]byte) (int, *CM, net.Addr, error), src func(netip.Addr) netip.Addr, ctl func(*CM) (ttl, ifIndex int)) func([]byte) (Received, error) {
	return func(buf []byte) (Received, error) {
		k, cm, from, err := read(buf)
		r := Received{TTL: -1, Src: src(srcAddr(from)), At: time.Now(), Data: append([]byte(nil), buf[:max(k, 0)]...)}
		if cm != nil {
			r.TTL, r.IfIndex = ctl(cm)
		}
		return r, err
	}
}

func srcAddr(a net.Addr) netip.Addr {
	if u, ok := a.(*net.UDPAddr); ok {
		ip, _ := netip.AddrFromSlice(u.IP)
		return ip
	}
	return netip.Addr{}
}

// Open returns a session's sender: a UDP socket bound to the interface
// and the local address, from a source port of 49152-65535 that the
// session keeps (RFC 5881 §4), with TTL 255 (§5).
func (UDP) Open(k Key, local netip.Addr, ifname string) (Sender, error) {
	ctl := func(network, address string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, ifname); serr != nil {
				return
			}
			if k.Peer.Is4() {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TTL, 255)
			} else {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, 255)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}
	zone := ""
	if k.Peer.Is6() && k.Peer.IsLinkLocalUnicast() {
		zone = ifname
	}
	raddr := &net.UDPAddr{IP: k.Peer.AsSlice(), Port: Port, Zone: zone}
	var last error
	for range 64 {
		port := 49152 + rand.IntN(65536-49152)
		laddr := &net.UDPAddr{Port: port}
		if local.IsValid() {
			laddr.IP, laddr.Zone = local.AsSlice(), zone
		}
		d := net.Dialer{LocalAddr: laddr, Control: ctl}
		c, err := d.Dial("udp", raddr.String())
		if err == nil {
			return udpSender{c}, nil
		}
		last = err
		if !errors.Is(err, unix.EADDRINUSE) {
			break
		}
	}
	return nil, last
}

type udpSender struct{ c net.Conn }

func (s udpSender) Send(b []byte) error {
	_, err := s.c.Write(b)
	if errors.Is(err, unix.ECONNREFUSED) {
		// An ICMP port unreachable from a peer without BFD yet: not
		// worth an error, the session just stays down.
		return nil
	}
	return err
}

func (s udpSender) Close() error { return s.c.Close() }
