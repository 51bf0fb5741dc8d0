package converge

import (
	"context"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
)

// The CI version of the convergence benchmark: the spine carrying the
// stream loses its link to the receiving leaf, all-FRR and then all-fared.
// Both must bring the stream back; how long it took is logged, never
// asserted.
func TestConvergeLinkDown(t *testing.T) {
	bins := interop.LabBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cases, err := Run(ctx, Options{Modes: []string{Link}, FaredBin: bins.Fared, FarectlBin: bins.Farectl, Rate: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		t.Logf("%s %s: spine %s, lost %d of %d, loss window %v", c.Kind, c.Mode, c.Spine, c.Lost, c.Sent, c.LossWindow)
		if !c.Recovered || c.Sent == 0 || c.Lost >= c.Sent {
			t.Errorf("%s: %+v", c.Kind, c)
		}
	}
}

// The default BFD snippet is a valid fared config section: 50 ms × 3,
// the FRR profile's timers.
func TestDefaultFaredBFD(t *testing.T) {
	base := "router-id: 10.255.0.1\nsystem-id: 0000.0000.0001\nisis:\n  areas: [49.0001]\n  interfaces: [{name: e0}]\n"
	c, err := config.Parse("fared.yaml", []byte(base+DefaultFaredBFD))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.EffectiveBFD(isis.Section(c).BFD, isis.Section(c).Interfaces[0].BFD); got == nil || *got != (config.BFD{Interval: 50 * time.Millisecond, Multiplier: 3}) {
		t.Errorf("isis e0: %+v", got)
	}
}

func TestTopology(t *testing.T) {
	topo, err := interop.ParseTopology([]byte(Topology("frr", 2, 3, time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 5 || len(topo.Links) != 6 {
		t.Errorf("%d nodes, %d links", len(topo.Nodes), len(topo.Links))
	}
}
