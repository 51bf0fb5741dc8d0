package isis

import (
	"testing"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
)

// IS-IS's rank in the rib's merge: an up route beats a down one whatever
// the level (RFC 5302 §3.3), then level 1 beats level 2 (ISO 10589
// §7.2.12); the rib compares metrics after the rank.
func TestRank(t *testing.T) {
	rk := routing.Select(nil)
	r := func(level int, down bool) uint64 {
		v, use := rk(&lsdb.Graph{Protocol: Key, Level: level}, &fare.Route{Down: down}, nil)
		if !use {
			t.Fatalf("L%d down=%v not used", level, down)
		}
		return v
	}
	if !(r(2, false) < r(1, true)) {
		t.Error("up L2 does not beat down L1")
	}
	if !(r(1, false) < r(2, false)) || !(r(1, true) < r(2, true)) {
		t.Error("L1 does not beat L2")
	}
}
