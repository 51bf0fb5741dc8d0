package nlmsg

import "golang.org/x/sys/unix"

// Chunking: ACK skbs are charged to the receive buffer by truesize
// (well under 1 KiB each with NETLINK_CAP_ACK), so a chunk must not queue
// more ACKs than the buffer holds or the kernel drops them (ENOBUFS).
// Measured on 100k routes: 2048-message chunks ~185k routes/s, 8192
// ~220k routes/s (fewer wake-ups); the cap follows the buffer we got.
const (
	MaxChunkMsgs = 8192
	ChunkBytes   = 1024 << 10
	SockBuf      = 32 << 20
	AckTruesize  = 1024 // conservative
)

// Tune sets a NETLINK_ROUTE socket up for batches, as fib's writer and
// the ceiling's bare loop both use it: 32 MiB buffers, ACKs that carry
// only the request's header (CAP_ACK) and the kernel's error text
// (EXT_ACK). It returns the chunk (requests per sendmsg) the receive
// buffer it got allows.
func Tune(fd int) (chunk int) {
	// FORCE needs CAP_NET_ADMIN, which writing routes needs anyway; fall
	// back to the capped variant for read-only use.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, SockBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, SockBuf)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, SockBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, SockBuf)
	}
	// CAP_ACK: ACKs carry only the header of our request, not a copy.
	// EXT_ACK: errors carry the kernel's text ("Nexthop id does not exist").
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	chunk = MaxChunkMsgs
	if rb, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil {
		chunk = min(max(rb/AckTruesize, 16), MaxChunkMsgs)
	}
	return chunk
}

// Batch is a run of requests in one buffer, numbered from First: the
// i-th message has sequence number First()+i, which is how its ACK is
// matched to it.
type Batch struct {
	Buf
	first uint32
	offs  []int // start offset of each message
}

// NewBatch starts a batch whose first message gets sequence number first.
func NewBatch(first uint32) *Batch { return &Batch{first: first} }

// First is the sequence number of the first message.
func (b *Batch) First() uint32 { return b.first }

// Next reserves the sequence number of the next message; call it just
// before encoding that message.
func (b *Batch) Next() uint32 {
	b.offs = append(b.offs, len(b.b))
	return b.first + uint32(len(b.offs)-1)
}

// Drop forgets the message just started (encoding failed).
func (b *Batch) Drop() {
	n := len(b.offs) - 1
	b.b = b.b[:b.offs[n]]
	b.offs = b.offs[:n]
}

// Len is the number of messages.
func (b *Batch) Len() int { return len(b.offs) }

// ChunkEnd is where the chunk starting at message lo ends: at most max
// messages and ChunkBytes bytes (one message at least), n messages in
// all.
func (b *Batch) ChunkEnd(lo, n, max int) int {
	hi := lo
	for hi < n && hi-lo < max {
		end := len(b.b)
		if hi+1 < len(b.offs) {
			end = b.offs[hi+1]
		}
		if end-b.offs[lo] > ChunkBytes && hi > lo {
			break
		}
		hi++
	}
	return hi
}

// Chunk is messages [lo, hi) as encoded so far, for one sendmsg.
func (b *Batch) Chunk(lo, hi int) []byte {
	end := len(b.b)
	if hi < len(b.offs) {
		end = b.offs[hi]
	}
	return b.b[b.offs[lo]:end:end]
}

// SizeFrom is the number of bytes from message lo to the end.
func (b *Batch) SizeFrom(lo int) int { return len(b.b) - b.offs[lo] }
