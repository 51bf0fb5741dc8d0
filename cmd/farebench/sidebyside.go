package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/bench/inject"
	"github.com/fared/fared/bench/sidebyside"
	"github.com/fared/fared/internal/closgen"
)

// parseFabric reads "3:SPINESxLEAVES" or "5:PODSxLEAVESxSPINESxSUPER",
// optionally followed by ",parallel=K" and ",seed=N".
func parseFabric(s string) (sidebyside.Spec, error) {
	parts := strings.Split(s, ",")
	kind, dims, ok := strings.Cut(parts[0], ":")
	if !ok {
		return sidebyside.Spec{}, fmt.Errorf("fabric %q: want 3:SxL or 5:PxLxSxX", s)
	}
	var n []int
	for _, d := range strings.Split(dims, "x") {
		v, err := strconv.Atoi(d)
		if err != nil || v <= 0 {
			return sidebyside.Spec{}, fmt.Errorf("fabric %q: %q is not a positive count", s, d)
		}
		n = append(n, v)
	}
	parallel, seed := 0, uint64(42)
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			return sidebyside.Spec{}, fmt.Errorf("fabric %q: %s: bad value %q", s, k, v)
		}
		switch k {
		case "parallel":
			parallel = x
		case "seed":
			seed = uint64(x)
		default:
			return sidebyside.Spec{}, fmt.Errorf("fabric %q: unknown option %q (parallel, seed)", s, k)
		}
	}
	switch {
	case kind == "3" && len(n) == 2:
		c := closgen.ThreeStage{Spines: n[0], Leaves: n[1], Parallel: parallel, Seed: seed}
		return sidebyside.Spec{Name: fmt.Sprintf("3-stage %dx%d", n[0], n[1]), Fabric: c.Fabric(), Change: -1}, nil
	case kind == "5" && len(n) == 4:
		c := closgen.FiveStage{Pods: n[0], Leaves: n[1], Spines: n[2], Super: n[3], Parallel: parallel, Seed: seed}
		return sidebyside.Spec{Name: fmt.Sprintf("5-stage %d pods x (%d leaves + %d spines) + %dx%d super", n[0], n[1], n[2], n[2], n[3]),
			Fabric: c.Fabric(), Change: -1}, nil
	}
	return sidebyside.Spec{}, fmt.Errorf("fabric %q: want 3:SxL or 5:PxLxSxX", s)
}

func sidebysideCommand() *cobra.Command {
	var fabrics []string
	var faredBin, jsonOut, flood, order, cmdLog string
	var rate, changes int
	var timeout time.Duration
	var quiet bool
	cmd := &cobra.Command{
		Use:   "sidebyside",
		Short: "FRR and fared on the same injected LSDB: sync, SPF, kernel, memory",
		Example: "  farebench sidebyside --fabric 3:64x512 --fabric 5:64x64x16x64 --json sbs.json\n" +
			"  farebench sidebyside --fabric 3:8x32,parallel=5",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := findBin(faredBin, "fared")
			if err != nil {
				return err
			}
			o := sidebyside.Options{FaredBin: bin, Timeout: timeout, Rate: rate, Routers: strings.Split(order, ","), Changes: changes}
			if !quiet {
				o.Log = os.Stderr
			}
			if cmdLog != "" {
				f, err := os.Create(cmdLog)
				if err != nil {
					return err
				}
				defer f.Close()
				o.Cmds = f
			}
			switch flood {
			case "all":
				o.Flood = inject.FloodAll
			case "one":
				o.Flood = inject.FloodOne
			default:
				return fmt.Errorf("--flood %q: all or one", flood)
			}
			ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			var results []*sidebyside.Result
			failed := false
			for _, fs := range fabrics {
				spec, err := parseFabric(fs)
				if err != nil {
					return err
				}
				res, err := sidebyside.Run(ctx, spec, o)
				if err != nil {
					return fmt.Errorf("%s: %w", spec.Name, err)
				}
				results = append(results, res)
				sidebyside.WriteTable(cmd.OutOrStdout(), res)
				fmt.Fprintln(cmd.OutOrStdout())
				failed = failed || !res.Agree
			}
			if jsonOut != "" {
				if err := writeJSON(jsonOut, results); err != nil {
					return err
				}
			}
			if failed {
				return fmt.Errorf("the routers disagree (see CHECKS FAILED above)")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&fabrics, "fabric", []string{"3:8x32"}, "fabric: 3:SPINESxLEAVES or 5:PODSxLEAVESxSPINESxSUPER[,parallel=K][,seed=N] (repeatable)")
	cmd.Flags().StringVar(&faredBin, "fared", "", "fared binary (default: next to farebench, then $PATH)")
	cmd.Flags().StringVar(&jsonOut, "json", "", "write the results as JSON to this file")
	cmd.Flags().StringVar(&flood, "flood", "all", "injector flooding: all (every LSP on every circuit, as spines do) or one")
	cmd.Flags().StringVar(&order, "order", "frr,fared", "routers, in the order of their phases")
	cmd.Flags().StringVar(&cmdLog, "cmd-log", "", "write the lab's commands to this file")
	cmd.Flags().IntVar(&rate, "rate", 0, "injector LSPs per second per circuit (0: unpaced)")
	cmd.Flags().IntVar(&changes, "changes", 5, "bandwidth changes for the incremental figures (-1: none)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "deadline of each wait")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress lines")
	return cmd
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
