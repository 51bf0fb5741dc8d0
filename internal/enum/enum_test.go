package enum

import (
	"testing"
)

type color uint8

var colorNames = Names[color]{1: "red", 3: "blue"}

func TestNames(t *testing.T) {
	for v, want := range map[color]string{0: "color-0", 1: "red", 2: "color-2", 3: "blue", 4: "color-4", 255: "color-255"} {
		if got := colorNames.Name(v, "color-"); got != want {
			t.Errorf("Name(%d) = %q, want %q", v, got, want)
		}
	}
	for s, want := range map[string]color{"red": 1, "blue": 3} {
		if v, ok := colorNames.Parse(s); !ok || v != want {
			t.Errorf("Parse(%q) = %d %v, want %d", s, v, ok, want)
		}
	}
	for _, s := range []string{"", "green", "color-2", "Red"} {
		if v, ok := colorNames.Parse(s); ok {
			t.Errorf("Parse(%q) = %d, want none", s, v)
		}
	}
}

func TestLookup(t *testing.T) {
	if v, err := colorNames.Lookup("color", "blue"); err != nil || v != 3 {
		t.Errorf("Lookup(blue) = %d %v", v, err)
	}
	if _, err := colorNames.Lookup("color", "green"); err == nil || err.Error() != `color "green": want red or blue` {
		t.Errorf("Lookup(green): %v", err)
	}
	three := Names[color]{1: "a", 2: "b", 3: "c"}
	if _, err := three.Lookup("letter", ""); err == nil || err.Error() != `letter "": want a, b or c` {
		t.Errorf("Lookup(\"\"): %v", err)
	}
}
