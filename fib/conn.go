package fib

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
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

func dial(ns netns.NsHandle, groups ...uint32) (*conn, error) {
	// Sockets keep the namespace they were created in, so only the socket
	// is made in ns (internal/nsenter's thread rules; ns 0 or closed: the
	// current namespace).
	var fd int
	err := nsenter.Do(ns, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fib: netlink socket: %w", err)
	}
	c := &conn{fd: fd, rbuf: make([]byte, 1<<20), chunk: nlmsg.Tune(fd)}
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

// newBatch starts a batch of requests numbered after the last one sent.
func (c *conn) newBatch() *nlmsg.Batch {
	c.seq++
	return nlmsg.NewBatch(c.seq)
}

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
// of 100,000 routes formats no strings when all goes well. onData, if
// set, receives non-ACK replies (RTM_GETROUTE). The returned error is
// for socket-level failures, which leave the outcome of the
// unacknowledged requests unknown.
func (c *conn) run(b *nlmsg.Batch, what func(i int) string, onData func(i int, typ uint16, payload []byte)) ([]error, error) {
	n := b.Len()
	errs := make([]error, n)
	c.seq = b.First() + uint32(n)
	for lo := 0; lo < n; {
		hi := b.ChunkEnd(lo, n, c.chunk)
		err := c.exchange(b.Chunk(lo, hi), b.First(), lo, hi, func(i int, e *nlErr) {
			errs[i] = e.op(what(i))
		}, onData)
		if err != nil {
			return errs, err
		}
		lo = hi
	}
	return errs, nil
}

// exchange sends messages [lo, hi) of a batch whose first seq is first,
// encoded in buf, in one sendmsg and reads their answers: failed reports
// each refused request.
func (c *conn) exchange(buf []byte, first uint32, lo, hi int, failed func(i int, e *nlErr), onData func(i int, typ uint16, payload []byte)) error {
	if err := unix.Sendto(c.fd, buf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("fib: netlink send: %w", err)
	}
	c.msgs += hi - lo
	pending := hi - lo
	for pending > 0 {
		nr, _, err := unix.Recvfrom(c.fd, c.rbuf, 0)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("fib: netlink receive (%d replies missing): %w", pending, err)
		}
		msgs, err := syscall.ParseNetlinkMessage(c.rbuf[:nr])
		if err != nil {
			return fmt.Errorf("fib: netlink parse: %w", err)
		}
		for _, m := range msgs {
			i := int(m.Header.Seq - first)
			if m.Header.Seq < first || i < lo || i >= hi {
				continue // stale reply of an earlier, aborted batch
			}
			if m.Header.Type != unix.NLMSG_ERROR {
				if onData != nil {
					onData(i, m.Header.Type, m.Data)
				}
				continue
			}
			if e := ackError(m); e != nil {
				failed(i, e)
			}
			pending--
		}
	}
	return nil
}

// stream sends a batch while the caller is still encoding it: Flush
// hands the messages encoded so far to a goroutine that sends them in
// chunks and reads their answers, so the kernel inserts the first
// routes while the rest are encoded and the answers are filed. The
// kernel does its work inside our sendmsg, on the sending thread; the
// encoding and filing run on another CPU meanwhile.
//
// The caller must not use the conn until Wait has returned.
type stream struct {
	c        *conn
	b        *nlmsg.Batch
	handed   int            // messages handed to the sender
	chunks   chan chunk     // to send, in order
	finished chan streamAck // one per chunk, in order
	early    []streamAck    // taken from finished while handing over
	next     int            // size of the next chunk
}

type chunk struct {
	buf    []byte // messages [lo, hi)
	lo, hi int
}

type streamAck struct {
	lo, hi int
	failed map[int]*nlErr
	err    error // socket-level: the chunk's outcome is unknown
}

// firstChunk is the size of a stream's first chunk; each next one
// doubles up to the conn's chunk, so the kernel starts early and the
// bulk still goes in big chunks.
const firstChunk = 256

func (c *conn) stream(b *nlmsg.Batch) *stream {
	s := &stream{c: c, b: b, chunks: make(chan chunk, 64), finished: make(chan streamAck, 64), next: min(firstChunk, c.chunk)}
	go func() {
		defer close(s.finished)
		var broken error
		for r := range s.chunks {
			a := streamAck{lo: r.lo, hi: r.hi, err: broken}
			if broken == nil {
				a.err = c.exchange(r.buf, b.First(), r.lo, r.hi, func(i int, e *nlErr) {
					if a.failed == nil {
						a.failed = map[int]*nlErr{}
					}
					a.failed[i] = e
				}, nil)
				broken = a.err
			}
			s.finished <- a
		}
	}()
	return s
}

// Flush hands over every whole chunk encoded so far; with all, the rest.
func (s *stream) Flush(all bool) {
	n := s.b.Len()
	if !all && (s.handed == n || n-s.handed < s.next && s.b.SizeFrom(s.handed) <= nlmsg.ChunkBytes) {
		return // not a whole chunk yet: the common, cheap case
	}
	for s.handed < n {
		hi := s.b.ChunkEnd(s.handed, n, s.next)
		if hi == n && hi-s.handed < s.next && !all {
			return // not a whole chunk yet
		}
		s.handOver(chunk{buf: s.b.Chunk(s.handed, hi), lo: s.handed, hi: hi})
		s.handed = hi
		s.next = min(2*s.next, s.c.chunk)
	}
}

// handOver queues a chunk for the sender. Both queues are bounded, so
// while the chunk waits for room the sender's answers are taken in:
// otherwise a sender blocked on a full answer queue and a caller blocked
// on a full chunk queue would wait for each other (more than 128 chunks:
// a million routes, or 100,000 with the 208-request chunks of a socket
// whose buffer could not be raised).
func (s *stream) handOver(c chunk) {
	for {
		select {
		case s.chunks <- c:
			return
		case a := <-s.finished:
			s.early = append(s.early, a)
		}
	}
}

// Wait hands over the rest and returns the chunks' answers as they
// come: done is called once per chunk, in order, while later chunks are
// still in the kernel. It returns the first socket-level error.
func (s *stream) Wait(done func(a streamAck)) error {
	s.Flush(true)
	close(s.chunks)
	s.c.seq = s.b.First() + uint32(s.b.Len())
	var err error
	take := func(a streamAck) {
		if err == nil {
			err = a.err
		}
		done(a)
	}
	for _, a := range s.early {
		take(a)
	}
	s.early = nil
	for a := range s.finished {
		take(a)
	}
	return err
}

type nlErr struct {
	errno syscall.Errno
	msg   string
}

// op names the request the kernel refused.
func (e *nlErr) op(what string) *OpError { return &OpError{Op: what, Err: e.errno, Msg: e.msg} }

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
		off += nlmsg.Align4(l)
	}
	return e
}

// dump sends one NLM_F_DUMP request (built by build) and calls fn for
// every reply until NLMSG_DONE. An interrupted dump (the table changed
// underneath) is retried, because a half-consistent view would make
// Adopt delete or duplicate objects.
func (c *conn) dump(build func(m *nlmsg.Buf, seq uint32), fn func(typ uint16, payload []byte) error) error {
	for attempt := 0; ; attempt++ {
		c.seq++
		seq := c.seq
		var m nlmsg.Buf
		build(&m, seq)
		if err := unix.Sendto(c.fd, m.Bytes(), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
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
