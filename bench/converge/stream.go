package converge

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fared/fared/internal/nsenter"
)

// stream is a constant-rate UDP stream between two namespaces (RFC 6413's
// data-plane method): every packet carries its sequence number; the
// receiver records which arrived.
type stream struct {
	rate   int
	send   *net.UDPConn
	recv   *net.UDPConn
	sent   atomic.Int64 // packets sent so far (sequence numbers 0..sent-1)
	mu     sync.Mutex
	got    []bool // by sequence number
	last   int64  // highest sequence number received
	dups   int
	cancel context.CancelFunc
	done   chan struct{}
}

// udpIn opens a UDP socket inside the namespace at nsPath.
func udpIn(nsPath string, f func() (*net.UDPConn, error)) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := nsenter.DoNamed(nsPath, func() error {
		var err error
		c, err = f()
		return err
	})
	return c, err
}

// newStream binds the receiver to dst in dstNS and the sender to src in
// srcNS. Nothing is sent until start.
func newStream(srcNS string, src netip.AddrPort, dstNS string, dst netip.AddrPort, rate int) (*stream, error) {
	recv, err := udpIn(dstNS, func() (*net.UDPConn, error) { return net.ListenUDP("udp4", net.UDPAddrFromAddrPort(dst)) })
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: %w", dst, err)
	}
	_ = recv.SetReadBuffer(4 << 20)
	send, err := udpIn(srcNS, func() (*net.UDPConn, error) {
		return net.DialUDP("udp4", net.UDPAddrFromAddrPort(src), net.UDPAddrFromAddrPort(dst))
	})
	if err != nil {
		recv.Close()
		return nil, fmt.Errorf("sender on %s: %w", src, err)
	}
	return &stream{rate: rate, send: send, recv: recv, last: -1, done: make(chan struct{})}, nil
}

func (s *stream) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	go s.receive()
	go func() {
		defer close(s.done)
		buf := make([]byte, 64)
		gap := time.Second / time.Duration(s.rate)
		t0 := time.Now()
		for i := int64(0); ctx.Err() == nil; i++ {
			// Packet i leaves at t0 + i·gap; a late sender catches up at
			// once, so the average rate holds.
			if d := time.Until(t0.Add(time.Duration(i) * gap)); d > 0 {
				time.Sleep(d)
			}
			binary.BigEndian.PutUint64(buf, uint64(i))
			_, _ = s.send.Write(buf) // a send error (no route) is a lost packet
			s.sent.Store(i + 1)
		}
	}()
}

func (s *stream) receive() {
	buf := make([]byte, 256)
	for {
		n, err := s.recv.Read(buf)
		if err != nil {
			return
		}
		if n < 8 {
			continue
		}
		seq := int64(binary.BigEndian.Uint64(buf))
		s.mu.Lock()
		for int64(len(s.got)) <= seq {
			s.got = append(s.got, make([]bool, 4096)...)
		}
		if s.got[seq] {
			s.dups++
		}
		s.got[seq] = true
		s.last = max(s.last, seq)
		s.mu.Unlock()
	}
}

// progress returns packets sent and the highest sequence number received.
func (s *stream) progress() (sent, last int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent.Load(), s.last
}

// received counts the packets with sequence numbers in [from, to) that
// arrived, and the longest run of missing ones in that range.
func (s *stream) received(from, to int64) (n int64, longest int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var run int64
	for i := from; i < to; i++ {
		if i < int64(len(s.got)) && s.got[i] {
			n++
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return n, longest
}

// stop ends the sender, waits for packets in flight, and closes both.
func (s *stream) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	// Packets in flight: wait until the last one arrived, or 200 ms.
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if sent, last := s.progress(); last >= sent-1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.send.Close()
	s.recv.Close()
}
