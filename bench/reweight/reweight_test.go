package reweight

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
)

// TestReweightBurst plays the burst (10 changes 1 s apart by default) and
// reports each change's latency, its median and maximum, and what l1's
// SPF log says of the computation. It asserts correctness only: every
// change reaches l1's kernel with the hand-computed weights (Run fails
// otherwise); the figures are logged, never asserted.
//
//	CI=true go test -v -run TestReweightBurst ./bench/reweight/
//
// FARED_BENCH_REWEIGHT_CHANGES=n changes; FARED_BENCH_REWEIGHT_FARED=bin
// runs another build of fared (e.g. main's, for the figures before);
// FARED_BENCH_REWEIGHT_OUT=file.json keeps the result.
func TestReweightBurst(t *testing.T) {
	bins := interop.LabBins(t)
	if v := os.Getenv("FARED_BENCH_REWEIGHT_FARED"); v != "" {
		bins.Fared = v
	}
	o := Options{Log: logWriter{t}}
	o.defaults()
	if v, err := strconv.Atoi(os.Getenv("FARED_BENCH_REWEIGHT_CHANGES")); err == nil {
		o.Changes = v
	}
	lab := interop.StartLab(t, Topology(o.Spines, o.Leaves), interop.Options{Name: "rw", FaredBin: bins.Fared, FarectlBin: bins.Farectl})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, lab, o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "change  s1→leaf  s1 share  latency   l1's computation\n")
	for _, c := range res.Changes {
		at := ""
		if c.SPFCapacity {
			at = " (at once)"
		}
		fmt.Fprintf(&b, "%6d  %5gG  %8.4f  %8v  %s%s: %s\n", c.N, c.Bandwidth, c.Share, c.Latency.Round(100*time.Microsecond), c.SPFKind, at, c.SPFReason)
	}
	fmt.Fprintf(&b, "FIGURE reweight: %d changes, median %v, max %v", len(res.Changes), res.Median.Round(100*time.Microsecond), res.Max.Round(100*time.Microsecond))
	t.Log("\n" + b.String())
	if out := os.Getenv("FARED_BENCH_REWEIGHT_OUT"); out != "" {
		data, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// By hand: s1's share at l1 with 2 spines is min(100, bw)/(min(100, bw)+100).
func TestShareOfS1(t *testing.T) {
	for _, c := range []struct{ bw, want float64 }{{40, 40.0 / 140}, {10, 10.0 / 110}, {100, 0.5}, {400, 0.5}} {
		if got := ShareOfS1(c.bw, 2); got != c.want {
			t.Errorf("%gG: %v, want %v", c.bw, got, c.want)
		}
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
