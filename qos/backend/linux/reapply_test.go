package linux

import (
	"context"
	"testing"
)

// TestReapply: a second Apply with a changed DSCP map replaces the
// filters (HTB has no change operation; the qdisc stays) and traffic
// follows the new map.
func TestReapply(t *testing.T) {
	l, b := shapedLab(t)
	ctx := context.Background()
	d := qosDesired(nil)
	if _, err := b.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	d.DSCP[46] = 4
	if _, err := b.Apply(ctx, d); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	l.sender(t, 40005, 46).send(t, 40, 100, 0)
	c, err := b.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p4, p5 := classOf(c, "a0", 4).Packets, classOf(c, "a0", 5).Packets; p4 != 40 || p5 != 0 {
		t.Errorf("DSCP 46 after the change: class 1:14 %d, 1:15 %d packets; want 40 and 0", p4, p5)
	}
}
