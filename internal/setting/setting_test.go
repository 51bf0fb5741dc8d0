package setting

import (
	"testing"
	"time"
)

// Fill defaults the numbers that are zero or negative, keeps the positive
// ones, and leaves fields that are not numbers alone.
func TestFill(t *testing.T) {
	type cfg struct {
		Every   time.Duration
		Window  int
		Slots   uint32
		Target  float64
		Ordered bool
		Name    string
		hidden  int
	}
	def := cfg{Every: time.Second, Window: 32, Slots: 8, Target: 0.9, Ordered: true, Name: "d", hidden: 5}
	c := cfg{Every: -1, Window: 4, hidden: 0}
	Fill(&c, def)
	want := cfg{Every: time.Second, Window: 4, Slots: 8, Target: 0.9}
	if c != want {
		t.Errorf("Fill: %+v, want %+v", c, want)
	}
}
