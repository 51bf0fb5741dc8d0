package inject

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/isis/packet"
)

// writer sends one circuit's PDUs from its own goroutine: control PDUs
// (hellos, SNPs) first, LSPs from a FIFO, optionally paced. A circuit with
// thousands of LSPs to send never delays its hellos.
type writer struct {
	port isis.Port
	rate int

	mu      sync.Mutex
	ctrlQ   [][]byte
	lspQ    []*lsp
	wake    chan struct{}
	scratch []byte
}

func newWriter(p isis.Port, rate int) *writer {
	return &writer{port: p, rate: rate, wake: make(chan struct{}, 1)}
}

func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *writer) ctrl(pdu []byte) {
	w.mu.Lock()
	w.ctrlQ = append(w.ctrlQ, pdu)
	w.mu.Unlock()
	w.signal()
}

func (w *writer) lsps(ls []*lsp) {
	if len(ls) == 0 {
		return
	}
	w.mu.Lock()
	w.lspQ = append(w.lspQ, ls...)
	w.mu.Unlock()
	w.signal()
}

// flush drops queued LSPs (the adjacency went down).
func (w *writer) flush() {
	w.mu.Lock()
	w.lspQ = nil
	w.mu.Unlock()
}

func (w *writer) next() (ctrl []byte, l *lsp) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ctrlQ) > 0 {
		ctrl = w.ctrlQ[0]
		w.ctrlQ[0] = nil
		w.ctrlQ = w.ctrlQ[1:]
		return ctrl, nil
	}
	if len(w.lspQ) > 0 {
		l = w.lspQ[0]
		w.lspQ[0] = nil
		w.lspQ = w.lspQ[1:]
	}
	return nil, l
}

func (w *writer) run(ctx context.Context) {
	var gap time.Duration
	if w.rate > 0 {
		gap = time.Second / time.Duration(w.rate)
	}
	due := time.Now()
	for {
		ctrl, l := w.next()
		switch {
		case ctrl != nil:
			_ = w.port.Send(isis.MACAllISs, ctrl)
		case l != nil:
			if gap > 0 {
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				// A sender that fell behind catches up by at most ten gaps.
				if floor := time.Now().Add(-10 * gap); due.Before(floor) {
					due = floor
				}
				due = due.Add(gap)
			}
			w.scratch = append(w.scratch[:0], l.raw...)
			packet.SetLSPLifetime(w.scratch, l.remaining(time.Now()))
			_ = w.port.Send(isis.MACAllISs, w.scratch)
		default:
			select {
			case <-w.wake:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// OpenPorts opens an IS-IS packet port on each named interface inside the
// network namespace at nsPath (e.g. /run/netns/NAME). Sockets keep the
// namespace they were created in, so only the opening happens there.
//
// The ports are like isis.OpenPacketPort's (802.2 LLC frames, the IS-IS
// multicast groups) with a receive buffer of RcvBuf bytes: while the RUT
// floods the database back on tens of circuits, a default-sized buffer
// would drop its acknowledgements and the injector would measure its own
// losses. isis.Port does not expose its socket, hence a port of our own.
func OpenPorts(nsPath string, ifaces []string) ([]isis.Port, error) {
	var ports []isis.Port
	err := nsenter.DoNamed(nsPath, func() error {
		for _, name := range ifaces {
			ifi, err := net.InterfaceByName(name)
			if err != nil {
				return fmt.Errorf("inject: interface %s: %w", name, err)
			}
			p, err := openPort(ifi, RcvBuf)
			if err != nil {
				return err
			}
			ports = append(ports, p)
		}
		return nil
	})
	if err != nil {
		for _, p := range ports {
			p.Close()
		}
		return nil, err
	}
	return ports, nil
}
