// Package loop is the shape both protocol instances share: one goroutine
// owns all state; socket readers and the API send it events; one ticker
// drives the timers; readers get copies made inside the goroutine.
package loop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/guard"
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
	guard   *guard.Guard
}

// New returns a loop whose event queue holds size events (and as many
// urgent ones).
func New(size int) *Loop {
	return &Loop{events: make(chan any, size), urgent: make(chan any, size), queries: make(chan func())}
}

// Guard makes the loop recover a panic in any event, query or timer duty
// (internal/guard): the event is dropped, counted against the guard's
// module, and the loop goes on. Call it before Run.
func (l *Loop) Guard(g *guard.Guard) { l.guard = g }

// guarded wraps h so that each call recovers its own panic.
type guarded struct {
	h Handler
	g *guard.Guard
}

// Handle names the event's type in the log only after a panic (a %T per
// event would cost an allocation on the hot path). An event that carries
// a packet shows its head by implementing GuardInput() []byte.
func (w guarded) Handle(ev any) {
	defer func() {
		if r := recover(); r != nil {
			var head []byte
			if b, ok := ev.(interface{ GuardInput() []byte }); ok {
				head = b.GuardInput()
			}
			w.g.Report("loop event "+typeName(ev), head, r)
		}
	}()
	w.h.Handle(ev)
}

func (w guarded) Tick(now time.Time) {
	defer w.g.Recover("loop tick", nil, nil)
	w.h.Tick(now)
}

func (w guarded) Settle(now time.Time) {
	defer w.g.Recover("loop settle", nil, nil)
	w.h.Settle(now)
}

// Run is the owning goroutine; it returns when ctx is done.
func (l *Loop) Run(ctx context.Context, tick time.Duration, now func() time.Time, h Handler) {
	if l.guard != nil {
		h = guarded{h: h, g: l.guard}
	}
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
			if l.guard != nil {
				l.guard.Do("loop query", nil, q)
			} else {
				q()
			}
			continue
		case <-t.C:
			// Hellos that arrived before the tick count before it: a
			// hold timer must not expire on a hello that sits queued.
			l.drainUrgent(h)
			h.Tick(now())
		}
		h.Settle(now())
	}
}

// drainUrgent handles every urgent event queued now.
func (l *Loop) drainUrgent(h Handler) {
	for {
		select {
		case ev := <-l.urgent:
			h.Handle(ev)
		default:
			return
		}
	}
}

// PostUntil queues an event like Post, but gives up when done is closed
// (the loop is stopping and will never take it); it reports whether the
// event was queued.
func (l *Loop) PostUntil(ev any, done <-chan struct{}) bool {
	select {
	case l.events <- ev:
		return true
	case <-done:
		return false
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
	return Call(ctx, l.queries, func(run func()) func() { return run }, f)
}

// Call runs f on the goroutine that reads ch and waits until it has run
// or ctx ends. wrap makes f into what ch carries: Query's wait, for a
// goroutine with its own event channel (bfd's manager).
func Call[E any](ctx context.Context, ch chan<- E, wrap func(run func()) E, f func()) error {
	done := make(chan struct{})
	select {
	case ch <- wrap(func() { defer close(done); f() }):
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

// typeName names an event's type for the guard's log site.
func typeName(ev any) string { return fmt.Sprintf("%T", ev) }
