package isis

import (
	"math"
	"testing"
	"time"
)

// The pacer is a token bucket of lspBurst LSPs refilled one per interval;
// times are given, so the arithmetic is checked without a clock.
func TestPacerBudget(t *testing.T) {
	const iv = 33 * time.Millisecond
	t0 := time.Unix(1000, 0)
	var p pacer
	if got := p.budget(t0, iv); got != lspBurst {
		t.Fatalf("quiet interface: budget %d, want the burst %d", got, lspBurst)
	}
	for i := 0; i < lspBurst; i++ {
		p.spend(iv)
	}
	if got := p.budget(t0, iv); got != 0 {
		t.Errorf("after the burst: budget %d, want 0", got)
	}
	if got := p.budget(t0.Add(iv-time.Millisecond), iv); got != 0 {
		t.Errorf("less than one interval later: budget %d, want 0", got)
	}
	if got := p.budget(t0.Add(3*iv), iv); got != 3 {
		t.Errorf("three intervals later: budget %d, want 3", got)
	}
	if got := p.budget(t0.Add(time.Hour), iv); got != lspBurst {
		t.Errorf("an hour later: budget %d, want no more than the burst %d", got, lspBurst)
	}
	if got := p.budget(t0, 0); got != math.MaxInt {
		t.Errorf("pacing off: budget %d, want unlimited", got)
	}
}
