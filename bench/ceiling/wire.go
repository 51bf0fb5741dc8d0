package ceiling

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/nsenter"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The bare loop: the same socket settings and chunking as fib's conn
// (32 MiB buffers, capped ACKs, at most rcvbuf/1 KiB and 8192 requests or
// 1 MiB per sendmsg), and nothing else.
const (
	maxChunkMsgs = 8192
	chunkBytes   = 1 << 20
	sockBuf      = 32 << 20
	ackTruesize  = 1024
	rtaNHID      = 30
)

var ne = binary.NativeEndian

type conn struct {
	fd    int
	seq   uint32
	chunk int
	rbuf  []byte
}

func dial(h netns.NsHandle) (*conn, error) {
	var fd int
	err := nsenter.Do(h, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, sockBuf)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, sockBuf)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	c := &conn{fd: fd, chunk: maxChunkMsgs, rbuf: make([]byte, 1<<20)}
	if rb, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil {
		c.chunk = min(max(rb/ackTruesize, 16), maxChunkMsgs)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return c, nil
}

// msgs is a batch of encoded requests.
type msgs struct {
	b    []byte
	offs []int
}

func (m *msgs) begin(typ, flags uint16) {
	m.offs = append(m.offs, len(m.b))
	var h [unix.SizeofNlMsghdr]byte
	ne.PutUint16(h[4:], typ)
	ne.PutUint16(h[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags)
	m.b = append(m.b, h[:]...)
}

func (m *msgs) end() {
	start := m.offs[len(m.offs)-1]
	ne.PutUint32(m.b[start:], uint32(len(m.b)-start))
}

func (m *msgs) attr(typ uint16, p []byte) {
	var h [4]byte
	ne.PutUint16(h[0:], uint16(4+len(p)))
	ne.PutUint16(h[2:], typ)
	m.b = append(m.b, h[:]...)
	m.b = append(m.b, p...)
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

func (m *msgs) u32(typ uint16, v uint32) {
	var p [4]byte
	ne.PutUint32(p[:], v)
	m.attr(typ, p[:])
}

func nhmsg(fam, proto uint8) []byte {
	b := make([]byte, unix.SizeofNhmsg)
	b[0], b[2] = fam, proto
	return b
}

func (m *msgs) nexthop(n fib.KernelNexthop) {
	m.begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	m.b = append(m.b, nhmsg(unix.AF_INET, n.Protocol)...)
	m.u32(unix.NHA_ID, n.ID)
	m.u32(unix.NHA_OIF, uint32(n.IfIndex))
	if n.Gateway.IsValid() {
		a := n.Gateway.As4()
		m.attr(unix.NHA_GATEWAY, a[:])
	}
	m.end()
}

func (m *msgs) group(n fib.KernelNexthop) {
	m.begin(unix.RTM_NEWNEXTHOP, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	m.b = append(m.b, nhmsg(unix.AF_UNSPEC, n.Protocol)...)
	m.u32(unix.NHA_ID, n.ID)
	g := make([]byte, 0, 8*len(n.Group))
	for _, x := range n.Group {
		var e [8]byte
		ne.PutUint32(e[0:], x.ID)
		e[4], e[5] = byte(x.Weight-1), byte((x.Weight-1)>>8)
		g = append(g, e[:]...)
	}
	m.attr(unix.NHA_GROUP, g)
	m.end()
}

func (m *msgs) route(r fib.KernelRoute) {
	m.begin(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	var rt [unix.SizeofRtMsg]byte
	rt[0], rt[1], rt[4], rt[5], rt[6], rt[7] = unix.AF_INET, uint8(r.Prefix.Bits()), unix.RT_TABLE_MAIN, r.Protocol, unix.RT_SCOPE_UNIVERSE, unix.RTN_UNICAST
	m.b = append(m.b, rt[:]...)
	a := r.Prefix.Addr().As4()
	m.attr(unix.RTA_DST, a[:])
	m.u32(unix.RTA_PRIORITY, r.Metric)
	m.u32(rtaNHID, r.NhID)
	m.end()
}

func (m *msgs) delNexthop(id uint32) {
	m.begin(unix.RTM_DELNEXTHOP, 0)
	m.b = append(m.b, nhmsg(unix.AF_UNSPEC, 0)...)
	m.u32(unix.NHA_ID, id)
	m.end()
}

func (c *conn) run(b *msgs) error { return c.send(b, nil) }

// runIgnore is run for clean-up: errors in ignore do not count.
func (c *conn) runIgnore(b *msgs, ignore syscall.Errno) error { return c.send(b, &ignore) }

// send numbers the messages, sends them in chunks and reads every ACK.
func (c *conn) send(b *msgs, ignore *syscall.Errno) error {
	n := len(b.offs)
	first := c.seq + 1
	for i, off := range b.offs {
		ne.PutUint32(b.b[off+8:], first+uint32(i))
	}
	c.seq += uint32(n)
	for lo := 0; lo < n; {
		hi := lo
		for hi < n && hi-lo < c.chunk {
			end := len(b.b)
			if hi+1 < n {
				end = b.offs[hi+1]
			}
			if end-b.offs[lo] > chunkBytes && hi > lo {
				break
			}
			hi++
		}
		end := len(b.b)
		if hi < n {
			end = b.offs[hi]
		}
		if err := unix.Sendto(c.fd, b.b[b.offs[lo]:end], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return fmt.Errorf("netlink send: %w", err)
		}
		for pending := hi - lo; pending > 0; {
			nr, _, err := unix.Recvfrom(c.fd, c.rbuf, 0)
			if err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return fmt.Errorf("netlink receive: %w", err)
			}
			ms, err := syscall.ParseNetlinkMessage(c.rbuf[:nr])
			if err != nil {
				return err
			}
			for _, m := range ms {
				if m.Header.Type != unix.NLMSG_ERROR || m.Header.Seq < first+uint32(lo) || m.Header.Seq >= first+uint32(hi) {
					continue
				}
				pending--
				if len(m.Data) >= 4 {
					if code := int32(ne.Uint32(m.Data)); code != 0 {
						e := syscall.Errno(-code)
						if ignore == nil || e != *ignore {
							return fmt.Errorf("request %d: %w", m.Header.Seq-first, e)
						}
					}
				}
			}
		}
		lo = hi
	}
	return nil
}
