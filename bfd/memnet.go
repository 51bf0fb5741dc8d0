package bfd

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// MemNet is an in-memory network for tests of BFD clients: a manager
// built with IO: net.IO(addr) receives what other managers send to addr,
// with TTL 255 on interface index ifindex. Mute drops what an address
// sends.
type MemNet struct {
	mu    sync.Mutex
	rx    map[netip.Addr]func(Received)
	muted map[netip.Addr]bool
	taps  map[netip.Addr]func([]byte)
}

// NewMemNet returns an empty network.
func NewMemNet() *MemNet {
	return &MemNet{rx: map[netip.Addr]func(Received){}, muted: map[netip.Addr]bool{}}
}

// IO is the IO of the manager that owns addr, seeing packets arrive on
// interface ifindex.
func (n *MemNet) IO(addr netip.Addr, ifindex int) IO {
	return memIO{n: n, self: addr, ifindex: ifindex}
}

// Mute drops (or, with false, passes again) everything addr sends.
func (n *MemNet) Mute(addr netip.Addr, on bool) {
	n.mu.Lock()
	n.muted[addr] = on
	n.mu.Unlock()
}

type memIO struct {
	n       *MemNet
	self    netip.Addr
	ifindex int
}

func (io memIO) Listen(ctx context.Context, deliver func(Received)) error {
	io.n.mu.Lock()
	io.n.rx[io.self] = func(r Received) { r.IfIndex = io.ifindex; deliver(r) }
	io.n.mu.Unlock()
	<-ctx.Done()
	return nil
}

func (io memIO) Open(k Key, local netip.Addr, ifname string) (Sender, error) {
	return memSender{io: io, peer: k.Peer}, nil
}

type memSender struct {
	io   memIO
	peer netip.Addr
}

func (s memSender) Send(b []byte) error {
	n := s.io.n
	n.mu.Lock()
	d, muted, tap := n.rx[s.peer], n.muted[s.io.self], n.taps[s.io.self]
	n.mu.Unlock()
	if tap != nil {
		tap(append([]byte(nil), b...))
	}
	if d != nil && !muted {
		// In order, as on a link: the receiver's queue takes it.
		d(Received{Src: s.io.self, TTL: 255, Data: b, At: time.Now()})
	}
	return nil
}

func (s memSender) Close() error { return nil }

// Send delivers b to the manager that owns to as if from sent it on the
// link (TTL 255): what a host on the same link can do.
func (n *MemNet) Send(from, to netip.Addr, b []byte) {
	n.mu.Lock()
	d := n.rx[to]
	n.mu.Unlock()
	if d != nil {
		d(Received{Src: from, TTL: 255, Data: b, At: time.Now()})
	}
}

// Tap calls f with a copy of every packet from sends (nil: no tap): what
// a host on the same link can read.
func (n *MemNet) Tap(from netip.Addr, f func(b []byte)) {
	n.mu.Lock()
	if n.taps == nil {
		n.taps = map[netip.Addr]func([]byte){}
	}
	n.taps[from] = f
	n.mu.Unlock()
}
