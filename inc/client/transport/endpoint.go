package transport

import (
	"errors"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// Endpoint sends and receives INC packets over a raw socket in the current
// network namespace, for one address and a set of local QPs.
type Endpoint struct {
	conn  *rawsock.Conn
	addr  netip.Addr
	frame rocev2.Frame
	sbuf  []byte
	rbuf  []byte
	rlen  int // length of the last packet read into rbuf
	p     packet.Parsed
	// ingress: packets carry the interface they came in on (WithIngress).
	ingress bool
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
// ingress check). It reads with recvmsg and IP_PKTINFO.
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
	return &Endpoint{conn: c, addr: addr, frame: rocev2.Frame{Src: addr, TTL: 64, DF: true, SrcPort: src}, ingress: cfg.IfIndex, pkey: rocev2.DefaultPKey,
		sbuf: make([]byte, 0, 9216), rbuf: make([]byte, 9216), BadINC: map[string]uint64{}}, nil
}

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

// Close closes the socket.
func (e *Endpoint) Close() error { return e.conn.Close() }

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
	e.sbuf = packet.AppendINC(e.sbuf[:0], e.to(dst), e.pkey, d)
	return e.send()
}

// SendRing sends a ring data packet.
func (e *Endpoint) SendRing(dst netip.Addr, qp, psn uint32, va uint64, rkey uint32, payload []byte) error {
	e.sbuf = packet.AppendRing(e.sbuf[:0], e.to(dst), e.pkey, qp, psn, va, rkey, payload)
	return e.send()
}

// SendACK sends a cumulative ACK (last: the last PSN received in order).
func (e *Endpoint) SendACK(dst netip.Addr, qp, last uint32) error {
	e.sbuf = packet.AppendACK(e.sbuf[:0], e.to(dst), e.pkey, qp, last)
	return e.send()
}

// SendNACK sends an IRN NACK.
func (e *Endpoint) SendNACK(dst netip.Addr, qp, cum, trig uint32) error {
	e.sbuf = packet.AppendNACK(e.sbuf[:0], e.to(dst), e.pkey, qp, cum, trig)
	return e.send()
}

func (e *Endpoint) send() error {
	err := e.conn.Send(e.sbuf)
	// A full socket buffer or a route that is briefly missing loses the
	// packet like the network would: the transport recovers it.
	if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.ENETUNREACH) || errors.Is(err, unix.EPERM) {
		e.SendErrors++
		e.LastSendErr = err
		return nil
	}
	return err
}

// ErrTimeout is returned by Recv when the deadline passed.
var ErrTimeout = os.ErrDeadlineExceeded

// Recv returns the next valid packet, waiting until deadline (zero: no
// deadline). Packets that fail the codec are counted and skipped. The
// result is valid until the next Recv or TryRecv.
func (e *Endpoint) Recv(deadline time.Time) (*packet.Parsed, error) {
	if err := e.conn.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	for {
		n, ifi, err := e.read(false)
		if err != nil {
			return nil, err
		}
		if p := e.parse(n, ifi); p != nil {
			return p, nil
		}
	}
}

// read reads one packet into rbuf, with its ingress interface when the
// endpoint reports it.
func (e *Endpoint) read(try bool) (n, ifindex int, err error) {
	switch {
	case e.ingress && try:
		return e.conn.TryRecvIf(e.rbuf)
	case e.ingress:
		return e.conn.RecvIf(e.rbuf)
	case try:
		n, err = e.conn.TryRecv(e.rbuf)
	default:
		n, err = e.conn.Recv(e.rbuf)
	}
	return n, 0, err
}

// TryRecv returns a queued valid packet, or nil if none is queued.
func (e *Endpoint) TryRecv() *packet.Parsed {
	for {
		n, ifi, err := e.read(true)
		if err != nil {
			return nil
		}
		if p := e.parse(n, ifi); p != nil {
			return p
		}
	}
}

// Raw is the last packet read, as it came (valid until the next Recv or
// TryRecv): what a panic guard logs the head of.
func (e *Endpoint) Raw() []byte { return e.rbuf[:e.rlen] }

func (e *Endpoint) parse(n, ifindex int) *packet.Parsed {
	e.rlen = n
	e.p.IfIndex = ifindex
	if err := packet.Parse(e.rbuf[:n], &e.p); err != nil {
		e.LastBad = err
		if k := e.Bad.Add(err); k == 0 {
			e.BadINC[packet.KindOf(err).String()]++
		}
		return nil
	}
	return &e.p
}
