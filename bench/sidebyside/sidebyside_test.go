package sidebyside

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/bench/undertest"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/interop"
)

// The CI version of the side-by-side benchmark: a 3-stage 8×32 fabric with
// parallel cables, injected into FRR and fared in one run. It asserts only
// what must hold whatever the timing: both kernels hold exactly the routes
// (prefix and next-hop set) of an oracle computed by breadth-first search,
// the two kernels agree, both databases hold every injected LSP in the
// injected version and nothing else but the router's own, and the
// bandwidth change reaches both.
func TestSideBySideSmall(t *testing.T) {
	bins := interop.LabBins(t)
	var cmds strings.Builder
	spec := Spec{Name: "3-stage 8x32 (CI)", Fabric: closgen.ThreeStage{Spines: 8, Leaves: 32, Parallel: 5, Seed: 1}.Fabric(), Change: -1}
	o := Options{FaredBin: bins.Fared, Cmds: &cmds, Timeout: 2 * time.Minute, ComputeRuns: -1, Changes: 2,
		// Short RFC 8405 timers: the run waits for the back-off to end
		// twice, and CI measures nothing.
		FaredExtra: "rib:\n  spf: {time-to-learn: 100ms, holddown: 500ms}\n"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, spec, o)
	if err != nil {
		t.Fatalf("%v\ncommands:\n%s", err, cmds.String())
	}
	var table strings.Builder
	WriteTable(&table, res)
	t.Logf("\n%s", table.String())
	if !res.Agree {
		t.Fatalf("the routers disagree: %v %v %v", res.Problems, res.Router(undertest.FRR).Problems, res.Router(undertest.Fared).Problems)
	}
	for _, f := range res.Routers {
		if f.Routes != 31 { // 32 leaves, one of them the router itself
			t.Errorf("%s: %d routes in the kernel, want 31", f.Router, f.Routes)
		}
		if f.SPFIncrKind == "" || strings.HasPrefix(f.SPFIncrKind, "none") {
			t.Errorf("%s: no SPF after the bandwidth change (%q)", f.Router, f.SPFIncrKind)
		}
	}
	// FRR computes ECMP, so a bandwidth change leaves its kernel alone;
	// fared reweights the group of the leaf behind the changed cable.
	if f := res.Router(undertest.Fared); f.KernelIncrChanges == 0 {
		t.Error("fared wrote nothing to the kernel after the bandwidth change")
	}
	if f := res.Router(undertest.FRR); f.KernelIncrChanges != 0 {
		t.Errorf("FRR changed its kernel %d times after a bandwidth-only change", f.KernelIncrChanges)
	}
}
