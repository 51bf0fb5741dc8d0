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
)

// Port is where single-hop BFD Control packets go (RFC 5881 §4).
const Port = 3784

// UDP is the production IO: RFC 5881 sockets in the current network
// namespace.
type UDP struct{}

// Listen receives on UDP 3784 over IPv4 and IPv6, with the TTL (hop
// limit) and the arrival interface of every packet. One family failing
// (IPv6 off in the namespace) is logged by the caller only when both do.
func (UDP) Listen(ctx context.Context, deliver func(Received)) error {
	c4, err4 := net.ListenPacket("udp4", fmt.Sprintf("0.0.0.0:%d", Port))
	c6, err6 := net.ListenPacket("udp6", fmt.Sprintf("[::]:%d", Port))
	if err4 != nil && err6 != nil {
		return fmt.Errorf("listen on UDP %d: %w", Port, errors.Join(err4, err6))
	}
	done := make(chan struct{}, 2)
	n := 0
	if err4 == nil {
		n++
		p := ipv4.NewPacketConn(c4)
		if err := p.SetControlMessage(ipv4.FlagTTL|ipv4.FlagInterface, true); err != nil {
			c4.Close()
			return fmt.Errorf("IP_RECVTTL/IP_PKTINFO: %w", err)
		}
		go func() {
			defer func() { done <- struct{}{} }()
			buf := make([]byte, 1500)
			for {
				k, cm, src, err := p.ReadFrom(buf)
				if err != nil {
					return
				}
				r := Received{TTL: -1, At: time.Now(), Data: append([]byte(nil), buf[:k]...)}
				if cm != nil {
					r.TTL, r.IfIndex = cm.TTL, cm.IfIndex
				}
				if a, ok := src.(*net.UDPAddr); ok {
					r.Src, _ = netip.AddrFromSlice(a.IP)
					r.Src = r.Src.Unmap()
				}
				deliver(r)
			}
		}()
	}
	if err6 == nil {
		n++
		p := ipv6.NewPacketConn(c6)
		if err := p.SetControlMessage(ipv6.FlagHopLimit|ipv6.FlagInterface, true); err != nil {
			c6.Close()
			return fmt.Errorf("IPV6_RECVHOPLIMIT/IPV6_RECVPKTINFO: %w", err)
		}
		go func() {
			defer func() { done <- struct{}{} }()
			buf := make([]byte, 1500)
			for {
				k, cm, src, err := p.ReadFrom(buf)
				if err != nil {
					return
				}
				r := Received{TTL: -1, At: time.Now(), Data: append([]byte(nil), buf[:k]...)}
				if cm != nil {
					r.TTL, r.IfIndex = cm.HopLimit, cm.IfIndex
				}
				if a, ok := src.(*net.UDPAddr); ok {
					r.Src, _ = netip.AddrFromSlice(a.IP)
					r.Src = r.Src.WithZone("")
				}
				deliver(r)
			}
		}()
	}
	<-ctx.Done()
	if c4 != nil {
		c4.Close()
	}
	if c6 != nil {
		c6.Close()
	}
	for range n {
		<-done
	}
	return nil
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
