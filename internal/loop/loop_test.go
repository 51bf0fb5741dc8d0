package loop

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/fared/fared/internal/guard"
)

type counter struct {
	events, ticks, settles int
	last                   any
}

func (c *counter) Handle(ev any) {
	c.events++
	if r, ok := ev.(ask); ok {
		r.reply <- c.events
		return
	}
	c.last = ev
}
func (c *counter) Tick(time.Time)   { c.ticks++ }
func (c *counter) Settle(time.Time) { c.settles++ }

type ask struct{ reply chan<- int }

func TestLoop(t *testing.T) {
	l := New(16)
	c := &counter{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, 10*time.Millisecond, time.Now, c); close(done) }()
	l.Post("a")
	l.Post("b")
	n, err := Ask(ctx, l, func(r chan<- int) any { return ask{r} })
	if err != nil || n != 3 {
		t.Fatalf("Ask = %d, %v; want 3 events handled", n, err)
	}
	var seen any
	if err := l.Query(ctx, func() { seen = c.last }); err != nil || seen != "b" {
		t.Fatalf("Query saw %v, %v", seen, err)
	}
	cancel()
	<-done
	if _, err := Ask(ctx, l, func(r chan<- int) any { return ask{r} }); err == nil {
		t.Fatal("Ask after stop did not fail")
	}
}

// An urgent event overtakes everything queued with Post.
func TestUrgentFirst(t *testing.T) {
	l := New(1024)
	c := &counter{}
	var order []any
	h := recorder{c: c, order: &order}
	for i := 0; i < 500; i++ {
		l.Post(i)
	}
	l.PostUrgent("hello")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, time.Hour, time.Now, h); close(done) }()
	for n := 0; n < 501; {
		if err := l.Query(ctx, func() { n = len(order) }); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	if order[0] != "hello" {
		t.Fatalf("first handled %v, want the urgent hello before 500 queued events", order[0])
	}
}

type recorder struct {
	c     *counter
	order *[]any
}

func (r recorder) Handle(ev any)    { *r.order = append(*r.order, ev) }
func (r recorder) Tick(time.Time)   {}
func (r recorder) Settle(time.Time) {}

type panicky struct{ handled int }

func (p *panicky) Handle(ev any) {
	if ev == "boom" {
		panic("bad input")
	}
	p.handled++
}
func (p *panicky) Tick(time.Time)   {}
func (p *panicky) Settle(time.Time) {}

// A guarded loop survives a panic in an event and in a query: the event
// is dropped and counted, later events are handled, and a panicking
// query still releases its caller.
func TestGuardedLoopSurvivesPanics(t *testing.T) {
	l := New(16)
	l.Guard(guard.New("looptest", slog.New(slog.DiscardHandler)))
	p := &panicky{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { l.Run(ctx, time.Hour, time.Now, p); close(done) }()
	l.Post("a")
	l.Post("boom")
	l.Post("b")
	if err := l.Query(ctx, func() { panic("query bug") }); err != nil {
		t.Fatalf("a panicking query left its caller waiting: %v", err)
	}
	// Queries and events are not ordered with each other: poll.
	for n := 0; n != 2; {
		if err := l.Query(ctx, func() { n = p.handled }); err != nil {
			t.Fatalf("handled %d (%v); want 2: the loop must go on after a panic", n, err)
		}
	}
	if c := guard.Count("looptest"); c != 2 {
		t.Fatalf("guard counted %d panics, want 2", c)
	}
	cancel()
	<-done
}
