package converge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fared/fared/interop"
)

var bins struct{ fared, farectl string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fared-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/fared/fared/cmd/fared", "github.com/fared/fared/cmd/farectl")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fared:", err)
		os.Exit(1)
	}
	bins.fared, bins.farectl = filepath.Join(dir, "fared"), filepath.Join(dir, "farectl")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The CI version of the convergence benchmark: the spine carrying the
// stream loses its link to the receiving leaf, all-FRR and then all-fared.
// Both must bring the stream back; how long it took is logged, never
// asserted.
func TestConvergeLinkDown(t *testing.T) {
	interop.RequireLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cases, err := Run(ctx, Options{Modes: []string{Link}, FaredBin: bins.fared, FarectlBin: bins.farectl, Rate: 500})
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

// BFD on fared is refused with a reason until fared has BFD.
func TestBFDOnFaredRefused(t *testing.T) {
	_, err := Run(context.Background(), Options{Kinds: []string{"fared"}, BFD: true})
	if err == nil {
		t.Fatal("BFD on fared accepted")
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
