package fib

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// conn is one NETLINK_ROUTE socket, opened in the target namespace, that
// sends requests in batches: many messages per sendmsg, then the ACKs.
// netlink_rcv_skb processes every message of a datagram in order and
// keeps going after a failed one, so one bad object never hides the
// result of the others.
type conn struct {
	fd   int
	seq  uint32
	rbuf []byte
	// msgs counts requests sent, for Stats.Messages.
	msgs  int
	chunk int // requests per sendmsg
}

// Chunking: ACK skbs are charged to our receive buffer by truesize
// (well under 1 KiB each with NETLINK_CAP_ACK), so a chunk must not queue
// more ACKs than the buffer holds or the kernel drops them (ENOBUFS).
// Measured on 100k routes: 2048-message chunks ~185k routes/s, 8192
// ~220k routes/s (fewer wake-ups); the cap follows the buffer we got.
const (
	maxChunkMsgs = 8192
	chunkBytes   = 1024 << 10
	sockBuf      = 32 << 20
	ackTruesize  = 1024 // conservative
)

// inNetNS runs fn with the calling thread switched into ns (if ns is
// open). Sockets keep the namespace they were created in, so only
// socket creation needs this.
func inNetNS(ns netns.NsHandle, fn func() error) error {
	// The zero handle (Config's zero value) means the current namespace:
	// fd 0 is never a namespace handle we were given.
	if !ns.IsOpen() || ns == 0 {
		return fn()
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("fib: current netns: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("fib: enter netns: %w", err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// Leave the thread locked: the runtime then retires it with the
		// goroutine instead of reusing a thread in the wrong namespace.
		return fmt.Errorf("fib: restore netns: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

func dial(ns netns.NsHandle, groups ...uint32) (*conn, error) {
	var fd int
	err := inNetNS(ns, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fib: netlink socket: %w", err)
	}
	c := &conn{fd: fd, rbuf: make([]byte, 1<<20)}
	// FORCE needs CAP_NET_ADMIN, which writing routes needs anyway; fall
	// back to the capped variant for read-only use.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, sockBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, sockBuf)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, sockBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, sockBuf)
	}
	// CAP_ACK: ACKs carry only the header of our request, not a copy.
	// EXT_ACK: errors carry the kernel's text ("Nexthop id does not exist").
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	c.chunk = maxChunkMsgs
	if rb, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil {
		c.chunk = min(max(rb/ackTruesize, 16), maxChunkMsgs)
	}
	// A wedged kernel reply must not hang the daemon forever.
	tv := unix.Timeval{Sec: 30}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	sa := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fib: netlink bind: %w", err)
	}
	for _, g := range groups {
		if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(g)); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("fib: join group %d: %w", g, err)
		}
	}
	return c, nil
}

func (c *conn) close() error { return unix.Close(c.fd) }

// batch collects requests. Each request is one message with a fresh seq
// and a description used in error reports.
type batch struct {
	buf   msgBuf
	first uint32 // seq of the first message
	offs  []int  // start offset of each message in buf
}

func (c *conn) newBatch() *batch {
	c.seq++
	return &batch{first: c.seq}
}

// next reserves the seq for the next message.
func (b *batch) next() uint32 {
	b.offs = append(b.offs, len(b.buf.b))
	return b.first + uint32(len(b.offs)-1)
}

// drop forgets the message just started (encoding failed).
func (b *batch) drop() {
	n := len(b.offs) - 1
	b.buf.b = b.buf.b[:b.offs[n]]
	b.offs = b.offs[:n]
}

func (b *batch) len() int { return len(b.offs) }

// OpError is one kernel request that failed.
type OpError struct {
	Op  string // e.g. "add group 0x0fa00002 [0x0fa00000 w5, 0x0fa00001 w2]"
	Err error  // the errno (syscall.Errno)
	Msg string // the kernel's extended ACK text, if any
}

func (e *OpError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("%s: %v (%s)", e.Op, e.Err, e.Msg)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// run sends the batch in chunks and returns one error per request (nil
// on success), described by what(i) — called only on failure, so a batch
// of 100,000 routes formats no strings when all goes well. onData, if set, receives non-ACK replies (RTM_GETROUTE).
// The returned error is for socket-level failures, which leave the
// outcome of the unacknowledged requests unknown.
func (c *conn) run(b *batch, what func(i int) string, onData func(i int, typ uint16, payload []byte)) ([]error, error) {
	n := b.len()
	errs := make([]error, n)
	c.seq = b.first + uint32(n)
	for lo := 0; lo < n; {
		hi := lo
		for hi < n && hi-lo < c.chunk {
			end := len(b.buf.b)
			if hi+1 < n {
				end = b.offs[hi+1]
			}
			if end-b.offs[lo] > chunkBytes && hi > lo {
				break
			}
			hi++
		}
		start := b.offs[lo]
		end := len(b.buf.b)
		if hi < n {
			end = b.offs[hi]
		}
		if err := unix.Sendto(c.fd, b.buf.b[start:end], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return errs, fmt.Errorf("fib: netlink send: %w", err)
		}
		c.msgs += hi - lo
		pending := hi - lo
		for pending > 0 {
			nr, _, err := unix.Recvfrom(c.fd, c.rbuf, 0)
			if err != nil {
				if err == unix.EINTR {
					continue
				}
				return errs, fmt.Errorf("fib: netlink receive (%d replies missing): %w", pending, err)
			}
			msgs, err := syscall.ParseNetlinkMessage(c.rbuf[:nr])
			if err != nil {
				return errs, fmt.Errorf("fib: netlink parse: %w", err)
			}
			for _, m := range msgs {
				i := int(m.Header.Seq - b.first)
				if m.Header.Seq < b.first || i < lo || i >= hi {
					continue // stale reply of an earlier, aborted batch
				}
				if m.Header.Type != unix.NLMSG_ERROR {
					if onData != nil {
						onData(i, m.Header.Type, m.Data)
					}
					continue
				}
				if e := ackError(m); e != nil {
					errs[i] = &OpError{Op: what(i), Err: e.errno, Msg: e.msg}
				}
				pending--
			}
		}
		lo = hi
	}
	return errs, nil
}

type nlErr struct {
	errno syscall.Errno
	msg   string
}

// ackError decodes struct nlmsgerr; nil means a positive ACK.
func ackError(m syscall.NetlinkMessage) *nlErr {
	if len(m.Data) < 4 {
		return &nlErr{errno: unix.EBADMSG}
	}
	code := int32(ne.Uint32(m.Data))
	if code == 0 {
		return nil
	}
	e := &nlErr{errno: syscall.Errno(-code)}
	if m.Header.Flags&unix.NLM_F_ACK_TLVS == 0 || len(m.Data) < 4+unix.SizeofNlMsghdr {
		return e
	}
	// With CAP_ACK the echoed request is only its header; TLVs follow.
	off := 4 + unix.SizeofNlMsghdr
	if m.Header.Flags&unix.NLM_F_CAPPED == 0 {
		off = 4 + int(ne.Uint32(m.Data[4:]))
	}
	for off+4 <= len(m.Data) {
		l := int(ne.Uint16(m.Data[off:]))
		t := ne.Uint16(m.Data[off+2:])
		if l < 4 || off+l > len(m.Data) {
			break
		}
		if t == unix.NLMSGERR_ATTR_MSG {
			s := m.Data[off+4 : off+l]
			for len(s) > 0 && s[len(s)-1] == 0 {
				s = s[:len(s)-1]
			}
			e.msg = string(s)
		}
		off += align4(l)
	}
	return e
}

// dump sends one NLM_F_DUMP request (built by build) and calls fn for
// every reply until NLMSG_DONE. An interrupted dump (the table changed
// underneath) is retried, because a half-consistent view would make
// Adopt delete or duplicate objects.
func (c *conn) dump(build func(m *msgBuf, seq uint32), fn func(typ uint16, payload []byte) error) error {
	for attempt := 0; ; attempt++ {
		c.seq++
		seq := c.seq
		var m msgBuf
		build(&m, seq)
		if err := unix.Sendto(c.fd, m.b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return fmt.Errorf("fib: netlink send: %w", err)
		}
		c.msgs++
		intr, err := c.readDump(seq, fn)
		if err != nil {
			return err
		}
		if !intr {
			return nil
		}
		if attempt >= 5 {
			return errors.New("fib: netlink dump kept being interrupted by concurrent changes")
		}
	}
}

func (c *conn) readDump(seq uint32, fn func(typ uint16, payload []byte) error) (interrupted bool, err error) {
	var cbErr error
	for {
		nr, _, err := unix.Recvfrom(c.fd, c.rbuf, 0)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return false, fmt.Errorf("fib: netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(c.rbuf[:nr])
		if err != nil {
			return false, fmt.Errorf("fib: netlink parse: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			if m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
				interrupted = true
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return interrupted, cbErr
			case unix.NLMSG_ERROR:
				if e := ackError(m); e != nil {
					if e.msg != "" {
						return false, fmt.Errorf("fib: dump: %w (%s)", e.errno, e.msg)
					}
					return false, fmt.Errorf("fib: dump: %w", e.errno)
				}
				return interrupted, cbErr
			default:
				if cbErr == nil {
					cbErr = fn(m.Header.Type, m.Data)
				}
			}
		}
	}
}
