package rawsock

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/rocev2"
)

// Batch is a set of packet buffers that one system call fills
// (recvmmsg, RecvBatch) or sends (sendmmsg, SendBatch): on a CPU-bound
// data plane every system call entry is time the packets wait, and a
// burst of packets costs one entry instead of one each. The kernel's
// per-message headers are allocated once, with the batch.
type Batch struct {
	// Bufs are the packet buffers, each of the batch's packet size.
	Bufs [][]byte
	// Lens: the length of each packet (set by RecvBatch; set by the
	// caller before SendBatch).
	Lens []int
	// IfIndex: the interface each received packet came in on
	// (Config.IfIndex; 0 when the kernel did not say).
	IfIndex []int
	// N is the number of packets in the batch.
	N int

	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet4
	oob   []uint64 // oobWords per message: one cmsghdr + in_pktinfo
}

// oobWords is the control buffer of one message, in uint64 (the
// alignment of cmsghdr): 16 bytes of header + 12 of in_pktinfo.
const oobWords = 4

// NewBatch returns a batch of n buffers of size bytes.
func NewBatch(n, size int) *Batch {
	b := &Batch{Bufs: make([][]byte, n), Lens: make([]int, n), IfIndex: make([]int, n),
		hdrs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), names: make([]unix.RawSockaddrInet4, n),
		oob: make([]uint64, oobWords*n)}
	mem := make([]byte, n*size)
	for i := range b.Bufs {
		b.Bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
	}
	return b
}

// Cap is the number of packets the batch holds.
func (b *Batch) Cap() int { return len(b.Bufs) }

// RecvBatch reads up to b.Cap() queued packets with one recvmmsg(2). With
// wait it blocks until at least one comes, the read deadline passes or
// the Conn is closed; without, it returns unix.EAGAIN when none is
// queued.
func (c *Conn) RecvBatch(b *Batch, wait bool) (int, error) {
	if c.recvRC == nil {
		return 0, errors.New("send-only conn")
	}
	b.N = 0
	var err error
	rerr := c.recvRC.Read(func(fd uintptr) bool {
		b.N, err = b.recv(fd)
		return !wait || err != unix.EAGAIN
	})
	if rerr != nil {
		return 0, rerr
	}
	return b.N, err
}

// recv is one recvmmsg on the non-blocking socket fd: it returns what is
// queued, up to the batch's capacity, and EAGAIN when nothing is.
func (b *Batch) recv(fd uintptr) (int, error) {
	for i := range b.hdrs {
		b.iovs[i].Base = &b.Bufs[i][0]
		b.iovs[i].SetLen(len(b.Bufs[i]))
		b.hdrs[i] = unix.Mmsghdr{Hdr: unix.Msghdr{Iov: &b.iovs[i], Iovlen: 1,
			Control: (*byte)(unsafe.Pointer(&b.oob[i*oobWords])), Controllen: 8 * oobWords}}
	}
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(len(b.hdrs)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	for i := range int(n) {
		h := &b.hdrs[i]
		b.Lens[i] = int(h.Len)
		oob := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[i*oobWords])), 8*oobWords)
		b.IfIndex[i] = pktinfoIfindex(oob[:min(int(h.Hdr.Controllen), len(oob))])
	}
	return int(n), nil
}

// SendBatch sends the batch's N IPv4 packets (headers included, Lens[i]
// bytes of Bufs[i]) with sendmmsg(2), waiting while the socket buffer
// is full. A packet the kernel refuses is skipped and reported to errs
// with its index, so one unroutable destination does not hold back the
// rest. It returns an error that is not about one packet (the Conn
// closed, a packet that is not IPv4). The batch is empty afterwards.
func (c *Conn) SendBatch(b *Batch, errs func(i int, err error)) error {
	for i := range b.N {
		ip := b.Bufs[i][:b.Lens[i]]
		if len(ip) < rocev2.IPv4HeaderLen || ip[0]>>4 != 4 {
			return errors.New("SendBatch: not an IPv4 packet")
		}
		b.names[i] = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte(ip[16:20])}
		b.iovs[i].Base = &ip[0]
		b.iovs[i].SetLen(len(ip))
		b.hdrs[i] = unix.Mmsghdr{Hdr: unix.Msghdr{Name: (*byte)(unsafe.Pointer(&b.names[i])), Namelen: unix.SizeofSockaddrInet4,
			Iov: &b.iovs[i], Iovlen: 1}}
	}
	for done := 0; done < b.N; {
		var n int
		var err error
		werr := c.sendRC.Write(func(fd uintptr) bool {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[done])), uintptr(b.N-done), 0, 0, 0)
			n, err = int(r), nil
			if e != 0 {
				n, err = 0, e
			}
			return err != unix.EAGAIN
		})
		if werr != nil {
			return werr
		}
		if err != nil {
			// sendmmsg reports an error only for the first message it
			// could not send: that packet is lost, the rest go on.
			if errs != nil {
				errs(done, err)
			}
			n = 1
		}
		done += n
	}
	b.N = 0
	return nil
}
