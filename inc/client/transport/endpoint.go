package transport

import (
	"errors"
	"net/netip"
	"os"
	"time"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// Endpoint sends and receives INC packets over a raw socket in the current
// network namespace, for one address and a set of local QPs.
//
// It moves packets in batches, one system call each way per burst
// (recvmmsg, sendmmsg): received packets are read BatchSize at a time and
// handed out one by one; sent packets are queued and leave together when
// the endpoint is about to read from the kernel again (the caller has
// handled everything it had), when the queue is full, or on Flush. So a
// caller that alternates "receive what is there, answer it" sends its
// answers in one call, and nothing waits in the queue while the
// endpoint sleeps in Recv.
type Endpoint struct {
	conn  *rawsock.Conn
	addr  netip.Addr
	frame rocev2.Frame
	// rb holds the last batch read; ri is the next of its packets to
	// hand out (ri-1 the one handed out last).
	rb *rawsock.Batch
	ri int
	// sb is the queue of packets to send.
	sb *rawsock.Batch
	p  packet.Parsed
	// pkey is the P_Key of the endpoint's QPs (their partition): every
	// packet it sends carries it, and its receivers match packets
	// against it (SetPKey; rocev2.DefaultPKey unless set).
	pkey uint16
	// Bad counts packets that failed the RoCEv2 codec (by kind); BadINC
	// those that failed the INC header checks.
	Bad    rocev2.ErrorCounts
	BadINC map[string]uint64
	// LastBad is the last rejected packet's error (logged by the caller).
	LastBad error
	// SendErrors counts packets the kernel refused (no route, no
	// neighbour, full buffer): lost like on the wire, recovered by the
	// transport; LastSendErr is the last such error.
	SendErrors  uint64
	LastSendErr error
}

// Option is an option of Open.
type Option func(*rawsock.Config)

// WithIngress makes every received packet carry the interface it came in
// on (packet.Parsed.IfIndex), for a receiver that checks it (the switch's
// ingress check): the kernel adds IP_PKTINFO to each.
func WithIngress() Option { return func(c *rawsock.Config) { c.IfIndex = true } }

// Open opens an endpoint for addr receiving packets to qps.
func Open(addr netip.Addr, qps []uint32, opts ...Option) (*Endpoint, error) {
	if !addr.Is4() {
		return nil, errors.New("the INC data plane is IPv4 only")
	}
	cfg := rawsock.Config{DestQPs: qps, RcvBuf: 8 << 20, SndBuf: 4 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := rawsock.Open(cfg)
	if err != nil {
		return nil, err
	}
	src := uint16(0xC000)
	if len(qps) > 0 {
		src |= uint16(qps[0] & 0x3FFF) // fixed per endpoint: one ECMP path, no reordering
	}
	return &Endpoint{conn: c, addr: addr, frame: rocev2.Frame{Src: addr, TTL: 64, DF: true, SrcPort: src}, pkey: rocev2.DefaultPKey,
		rb: rawsock.NewBatch(BatchSize, maxPacket), sb: rawsock.NewBatch(BatchSize, maxPacket), BadINC: map[string]uint64{}}, nil
}

// BatchSize is the number of packets one system call reads or sends at
// most. A switch's burst (one packet from each child, the results to
// each) fits; more only holds packets longer in the queue.
const BatchSize = 32

// maxPacket is the largest packet the endpoint sends or receives: a
// jumbo frame's IP packet.
const maxPacket = 9216

// Addr is the endpoint's address.
func (e *Endpoint) Addr() netip.Addr { return e.addr }

// SetPKey sets the P_Key of the endpoint's QPs (a valid one: the caller
// checked it).
func (e *Endpoint) SetPKey(k uint16) { e.pkey = k }

// PKey is the P_Key of the endpoint's QPs: what its packets carry and
// what received packets must match (rocev2.PKeyMatch).
func (e *Endpoint) PKey() uint16 { return e.pkey }

// SetQPs replaces the QPs the endpoint receives.
func (e *Endpoint) SetQPs(qps []uint32) error { return e.conn.SetDestQPs(qps) }

// Close sends what is queued and closes the socket.
func (e *Endpoint) Close() error {
	e.Flush()
	return e.conn.Close()
}

func (e *Endpoint) to(dst netip.Addr) *rocev2.Frame {
	e.frame.Dst = dst
	e.frame.ID++
	if e.frame.ID == 0 { // 0 would let the kernel pick one, breaking the ICRC
		e.frame.ID = 1
	}
	return &e.frame
}

// SendINC sends an INC packet.
func (e *Endpoint) SendINC(dst netip.Addr, d *packet.Data) error {
	return e.queue(packet.AppendINC(e.slot(), e.to(dst), e.pkey, d))
}

// SendRing sends a ring data packet.
func (e *Endpoint) SendRing(dst netip.Addr, qp, psn uint32, va uint64, rkey uint32, payload []byte) error {
	return e.queue(packet.AppendRing(e.slot(), e.to(dst), e.pkey, qp, psn, va, rkey, payload))
}

// SendACK sends a cumulative ACK (last: the last PSN received in order).
func (e *Endpoint) SendACK(dst netip.Addr, qp, last uint32) error {
	return e.queue(packet.AppendACK(e.slot(), e.to(dst), e.pkey, qp, last))
}

// SendNACK sends an IRN NACK.
func (e *Endpoint) SendNACK(dst netip.Addr, qp, cum, trig uint32) error {
	return e.queue(packet.AppendNACK(e.slot(), e.to(dst), e.pkey, qp, cum, trig))
}

// slot is the next free buffer of the send queue, empty.
func (e *Endpoint) slot() []byte { return e.sb.Bufs[e.sb.N][:0] }

// queue adds the packet encoded into slot() to the send queue, and sends
// the queue when it is full. The error is Flush's.
func (e *Endpoint) queue(ip []byte) error {
	b := e.sb
	b.Bufs[b.N], b.Lens[b.N] = ip, len(ip) // ip is the slot unless it outgrew it
	b.N++
	if b.N < b.Cap() {
		return nil
	}
	return e.Flush()
}

// Flush sends the queued packets. A packet the kernel refuses (no route,
// no neighbour, a full buffer) is lost like on the wire, counted in
// SendErrors and recovered by the transport; the error returned is one
// that stops the endpoint (closed).
func (e *Endpoint) Flush() error {
	if e.sb.N == 0 {
		return nil
	}
	return e.conn.SendBatch(e.sb, e.sendFailed)
}

// sendFailed counts a packet the kernel refused.
func (e *Endpoint) sendFailed(_ int, err error) {
	e.SendErrors++
	e.LastSendErr = err
}

// ErrTimeout is returned by Recv when the deadline passed.
var ErrTimeout = os.ErrDeadlineExceeded

// Recv returns the next valid packet, waiting until deadline (zero: no
// deadline). Packets that fail the codec are counted and skipped. The
// result is valid until the next Recv or TryRecv. Before it waits for
// the kernel it sends what is queued.
func (e *Endpoint) Recv(deadline time.Time) (*packet.Parsed, error) {
	for {
		if p := e.next(); p != nil {
			return p, nil
		}
		if err := e.Flush(); err != nil {
			return nil, err
		}
		if err := e.conn.SetReadDeadline(deadline); err != nil {
			return nil, err
		}
		if err := e.fill(true); err != nil {
			return nil, err
		}
	}
}

// TryRecv returns a queued valid packet, or nil if none is queued. Before
// it reads from the kernel it sends what is queued.
func (e *Endpoint) TryRecv() *packet.Parsed {
	for {
		if p := e.next(); p != nil {
			return p
		}
		if e.Flush() != nil || e.fill(false) != nil {
			return nil
		}
	}
}

// next parses the next packet of the last batch read; nil when the batch
// has no valid packet left.
func (e *Endpoint) next() *packet.Parsed {
	for e.ri < e.rb.N {
		i := e.ri
		e.ri++
		if p := e.parse(e.rb.Bufs[i][:e.rb.Lens[i]], e.rb.IfIndex[i]); p != nil {
			return p
		}
	}
	return nil
}

// fill reads the next batch (waiting for one with wait).
func (e *Endpoint) fill(wait bool) error {
	e.ri = 0
	_, err := e.conn.RecvBatch(e.rb, wait)
	return err
}

// Raw is the last packet handed out, as it came (valid until the next
// Recv or TryRecv): what a panic guard logs the head of.
func (e *Endpoint) Raw() []byte {
	if e.ri == 0 {
		return nil
	}
	return e.rb.Bufs[e.ri-1][:e.rb.Lens[e.ri-1]]
}

func (e *Endpoint) parse(b []byte, ifindex int) *packet.Parsed {
	e.p.IfIndex = ifindex
	if err := packet.Parse(b, &e.p); err != nil {
		e.LastBad = err
		if k := e.Bad.Add(err); k == 0 {
			e.BadINC[packet.KindOf(err).String()]++
		}
		return nil
	}
	return &e.p
}
