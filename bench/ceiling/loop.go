package ceiling

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/nlmsg"
	"github.com/fared/fared/internal/nsenter"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The bare loop: fib's encoding and chunking (internal/nlmsg: the same
// messages, the same socket settings, at most the chunk the receive
// buffer allows and nlmsg.ChunkBytes per sendmsg), then the ACKs, and
// nothing else: no state, no filing, no error reports beyond the first.

var ne = binary.NativeEndian

type conn struct {
	fd    int
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
	c := &conn{fd: fd, chunk: nlmsg.Tune(fd), rbuf: make([]byte, 1<<20)}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return c, nil
}

// after starts a batch numbered after prev (nil: the first), so every
// request of an install has its own sequence number.
func after(prev *nlmsg.Batch) *nlmsg.Batch {
	if prev == nil {
		return nlmsg.NewBatch(1)
	}
	return nlmsg.NewBatch(prev.First() + uint32(prev.Len()))
}

// The objects are replayed as fib wrote them: fib.Sync's flags
// (CREATE|EXCL for what it adds) and its encoder.

func addNexthop(b *nlmsg.Batch, n fib.KernelNexthop) {
	fam := uint8(unix.AF_INET)
	if n.Family == unix.AF_INET6 {
		fam = unix.AF_INET6
	}
	b.Nexthop(b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, n.ID, n.Protocol, fam, n.Gateway, n.IfIndex)
}

func addGroup(b *nlmsg.Batch, n fib.KernelNexthop) error {
	b.BeginGroup(b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, n.ID, n.Protocol)
	for _, m := range n.Group {
		if err := b.Member(m.ID, m.Weight); err != nil {
			return err
		}
	}
	b.EndGroup(nil) // fib.Config{}: hash-threshold groups
	return nil
}

func addRoute(b *nlmsg.Batch, r fib.KernelRoute) {
	b.Route(b.Next(), nlmsg.RouteKey{Prefix: r.Prefix, Table: r.Table, Protocol: r.Protocol, Metric: r.Metric}, r.NhID, false)
}

func (c *conn) run(b *nlmsg.Batch) error { return c.send(b, nil) }

// runIgnore is run for clean-up: errors in ignore do not count.
func (c *conn) runIgnore(b *nlmsg.Batch, ignore syscall.Errno) error { return c.send(b, &ignore) }

// send sends the batch in chunks and reads every ACK.
func (c *conn) send(b *nlmsg.Batch, ignore *syscall.Errno) error {
	n, first := b.Len(), b.First()
	for lo := 0; lo < n; {
		hi := b.ChunkEnd(lo, n, c.chunk)
		if err := unix.Sendto(c.fd, b.Chunk(lo, hi), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
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
