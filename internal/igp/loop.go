package igp

import (
	"context"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/loop"
)

// Handlers are an instance's loop duties. The events of this package are
// dispatched to their handler; the instance's own (received packets,
// protocol-specific requests) to Other.
type Handlers struct {
	// Start runs on the loop's goroutine before anything else, at the
	// loop's start time (interfaces come up); Stop after the last event
	// (sessions and sockets close).
	Start func(now time.Time)
	Stop  func()

	Refresh      func(iface string)                            // NotifyEvent: re-read an interface
	Reconfigure  func(cfg *config.Config) daemon.Change        // ReconfigEvent
	SetBandwidth func(iface string, bw config.Bandwidth) error // BandwidthEvent
	Clear        func(which string) ClearResult                // ClearEvent
	BFD          func(e bfd.Event)                             // BFDEvent
	Other        func(ev any)

	Tick, Settle func(now time.Time)
}

// ClearEvent: drop adjacencies (which: an interface or neighbour, ""
// all) as an operator's clear command does; answer on Done.
type ClearEvent struct {
	Which string
	Done  chan<- ClearResult
}

// ClearResult is how many adjacencies a clear dropped, or why none.
type ClearResult struct {
	N   int
	Err error
}

// RunLoop runs the instance's loop until ctx ends (the instance's Run):
// ticks every tick, time from now.
func (b *Base) RunLoop(ctx context.Context, tick time.Duration, now func() time.Time, h Handlers) error {
	b.start = now()
	h.Start(b.start)
	defer h.Stop()
	b.lp.Run(ctx, tick, now, handler{&h})
	return nil
}

// AskClear has the loop drop adjacencies (ClearEvent) and returns how
// many it dropped.
func (b *Base) AskClear(ctx context.Context, which string) (int, error) {
	r, err := loop.Ask(ctx, b.lp, func(r chan<- ClearResult) any { return ClearEvent{Which: which, Done: r} })
	if err != nil {
		return 0, err
	}
	return r.N, r.Err
}

// handler adapts Handlers to loop.Handler.
type handler struct{ h *Handlers }

func (w handler) Handle(ev any) {
	h := w.h
	switch e := ev.(type) {
	case NotifyEvent:
		h.Refresh(e.Name)
	case ReconfigEvent:
		e.Done <- h.Reconfigure(e.Cfg)
	case BandwidthEvent:
		e.Done <- h.SetBandwidth(e.Iface, e.BW)
	case ClearEvent:
		e.Done <- h.Clear(e.Which)
	case BFDEvent:
		h.BFD(e.Ev)
	default:
		h.Other(ev)
	}
}

func (w handler) Tick(now time.Time)   { w.h.Tick(now) }
func (w handler) Settle(now time.Time) { w.h.Settle(now) }
