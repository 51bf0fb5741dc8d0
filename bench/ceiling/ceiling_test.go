package ceiling

import (
	"context"
	"testing"
	"time"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/interop"
)

// The CI version of the kernel ceiling: a small synthetic set and a small
// fabric's FARE table go in through fared's FIB and through the bare loop,
// which replays fared's objects; every request of both must be accepted.
// Rates are logged, never asserted.
func TestCeilingSmall(t *testing.T) {
	interop.RequireLab(t)
	fs, err := FabricSet("3-stage 8x32", closgen.ThreeStage{Spines: 8, Leaves: 32, Parallel: 5, Seed: 1}.Fabric())
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Routes) != 31 || len(fs.Links) != 10 {
		t.Fatalf("fabric set: %d routes, %d links", len(fs.Routes), len(fs.Links))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range []*Set{SyntheticSet(2000), fs} {
		r, err := Run(ctx, s, Options{Rounds: 2})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		t.Logf("%s: fared %v (%.0f routes/s), bare %v (%.0f routes/s), %.2f", s.Name, r.Fared, r.FaredRate(), r.Bare, r.BareRate(), r.Fraction())
		if r.Routes != len(s.Routes) || r.Objects == 0 || r.Messages < r.Routes+r.Objects {
			t.Errorf("%s: %+v", s.Name, r)
		}
	}
}

// SyntheticSet has fib's benchmark shape: 64 distinct weighted groups.
func TestSyntheticSet(t *testing.T) {
	s := SyntheticSet(1000)
	groups := map[string]bool{}
	for _, r := range s.Routes {
		key := ""
		for _, h := range r.Hops {
			key += h.Gateway.String() + "/" + string(rune('0'+h.Weight)) + " "
		}
		groups[key] = true
	}
	if len(s.Routes) != 1000 || len(groups) != 64 {
		t.Errorf("%d routes over %d groups", len(s.Routes), len(groups))
	}
}
