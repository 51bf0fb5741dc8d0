// Package loop is the shape both protocol instances share: one goroutine
// owns all state; socket readers and the API send it events; one ticker
// drives the timers; readers get copies made inside the goroutine.
package loop

import (
	"context"
	"errors"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Handler is the protocol side of a Loop. All three run on the loop's
// goroutine.
type Handler interface {
	Handle(ev any)        // one event
	Tick(now time.Time)   // timer duties, every tick
	Settle(now time.Time) // work events leave pending (after a burst or a tick)
}

// Loop carries events and queries to its goroutine.
type Loop struct {
	events  chan any
	urgent  chan any // hellos: handled before anything queued in events
	queries chan func()
}

// New returns a loop whose event queue holds size events (and as many
// urgent ones).
func New(size int) *Loop {
	return &Loop{events: make(chan any, size), urgent: make(chan any, size), queries: make(chan func())}
}

// Run is the owning goroutine; it returns when ctx is done.
func (l *Loop) Run(ctx context.Context, tick time.Duration, now func() time.Time, h Handler) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		// Urgent events first: a hello must not wait behind a flood of
		// LSPs, or a neighbour's hold time runs out while its hellos sit
		// in our own queue.
		select {
		case ev := <-l.urgent:
			h.Handle(ev)
			h.Settle(now())
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return
		case ev := <-l.urgent:
			h.Handle(ev)
		case ev := <-l.events:
			h.Handle(ev)
			// Drain what is queued so one settle covers a burst, taking
			// urgent events as they come.
		drain:
			for n := 0; n < 256; n++ {
				select {
				case ev := <-l.urgent:
					h.Handle(ev)
				case ev := <-l.events:
					h.Handle(ev)
				default:
					break drain
				}
			}
		case q := <-l.queries:
			q()
			continue
		case <-t.C:
			h.Tick(now())
		}
		h.Settle(now())
	}
}

// Post queues an event; it blocks while the queue is full (readers apply
// back-pressure rather than lose packets silently).
func (l *Loop) Post(ev any) { l.events <- ev }

// PostUrgent queues an event that is handled before every event queued
// with Post (protocol hellos: liveness must not wait behind bulk). It
// blocks while the urgent queue is full.
func (l *Loop) PostUrgent(ev any) { l.urgent <- ev }

// TryPost queues an event unless the queue is full; a hint that can be
// lost (the poll catches up) uses it.
func (l *Loop) TryPost(ev any) bool {
	select {
	case l.events <- ev:
		return true
	default:
		return false
	}
}

// PostNoWait queues an event without ever blocking the caller and without
// losing it: when the queue is full a goroutine waits in its place, so such
// events may overtake each other. For producers that must not stall, such
// as the BFD manager's one goroutine serving every instance.
func (l *Loop) PostNoWait(ev any) {
	if !l.TryPost(ev) {
		go l.Post(ev)
	}
}

// Query runs f inside the loop goroutine; f must copy what it returns.
func (l *Loop) Query(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case l.queries <- func() { f(); close(done) }:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ask posts the event mk builds around a reply channel and waits for the
// reply (Reconfigure, SetBandwidth and the like).
func Ask[T any](ctx context.Context, l *Loop, mk func(reply chan<- T) any) (T, error) {
	reply := make(chan T, 1)
	var zero T
	select {
	case l.events <- mk(reply):
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case v := <-reply:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// ReadResult classifies a socket reader's error: a link going down is
// reported once by AF_PACKET and raw IP sockets, which stay usable across
// down/up, so the reader retries; any other error ends it, and closed is
// true when that is our own Close rather than a failure worth logging.
func ReadResult(err error) (retry, closed bool) {
	if errors.Is(err, unix.ENETDOWN) {
		return true, false
	}
	return false, errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed)
}
