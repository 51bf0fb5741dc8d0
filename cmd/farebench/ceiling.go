package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fared/fared/bench/ceiling"
)

func ceilingCommand() *cobra.Command {
	var fabrics []string
	var synthetic []int
	var rounds int
	var jsonOut string
	cmd := &cobra.Command{
		Use:   "ceiling",
		Short: "fared's FIB against a bare netlink loop installing the same objects with the same batching",
		Example: "  farebench ceiling --fabric 3:64x512 --fabric 5:64x64x16x64 --synthetic 100000\n" +
			"  farebench ceiling --synthetic 10000 --rounds 3",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			var sets []*ceiling.Set
			for _, fs := range fabrics {
				spec, err := parseFabric(fs)
				if err != nil {
					return err
				}
				s, err := ceiling.FabricSet(spec.Name+" (FARE table at the leaf)", spec.Fabric)
				if err != nil {
					return err
				}
				sets = append(sets, s)
			}
			for _, n := range synthetic {
				sets = append(sets, ceiling.SyntheticSet(n))
			}
			var results []*ceiling.Result
			for _, s := range sets {
				fmt.Fprintf(os.Stderr, "ceiling: %s (%d routes), %d rounds\n", s.Name, len(s.Routes), rounds)
				r, err := ceiling.Run(ctx, s, ceiling.Options{Rounds: rounds, Log: os.Stderr})
				if err != nil {
					return fmt.Errorf("%s: %w", s.Name, err)
				}
				results = append(results, r)
			}
			WriteCeiling(cmd.OutOrStdout(), results)
			if jsonOut != "" {
				return writeJSON(jsonOut, results)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&fabrics, "fabric", nil, "the FARE table of a fabric's leaf (as in sidebyside; repeatable)")
	cmd.Flags().IntSliceVar(&synthetic, "synthetic", nil, "N /24 prefixes over 64 weighted groups (fib's benchmark shape; repeatable)")
	cmd.Flags().IntVar(&rounds, "rounds", 5, "installs per set and writer (medians are reported)")
	cmd.Flags().StringVar(&jsonOut, "json", "", "write the results as JSON to this file")
	return cmd
}

// WriteCeiling prints the ceiling results as a table.
func WriteCeiling(w interface{ Write([]byte) (int, error) }, rs []*ceiling.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route set\troutes\tobjects\trequests\tfared Sync\tfared routes/s\tbare loop\tbare routes/s\tfared/bare\tCPU: fared\tbare\tfared/bare\t")
	for _, r := range rs {
		cpu := ""
		if r.FaredCPU > 0 {
			cpu = fmt.Sprintf("%.2f", r.BareCPU.Seconds()/r.FaredCPU.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%v\t%.0f\t%v\t%.0f\t%.2f\t%v\t%v\t%s\t\n", r.Set, r.Routes, r.Objects, r.Messages,
			r.Fared.Round(10e3), r.FaredRate(), r.Bare.Round(10e3), r.BareRate(), r.Fraction(), r.FaredCPU.Round(10e3), r.BareCPU.Round(10e3), cpu)
	}
	tw.Flush()
}
