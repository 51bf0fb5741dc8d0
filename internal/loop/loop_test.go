package loop

import (
	"context"
	"testing"
	"time"
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
