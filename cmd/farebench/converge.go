package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/bench/converge"
)

func convergeCommand() *cobra.Command {
	var o converge.Options
	var kinds, modes, jsonOut, faredBin, farectlBin, faredBFD string
	cmd := &cobra.Command{
		Use:   "converge",
		Short: "Data-plane loss window after a spine failure, all-FRR against all-fared (RFC 6413 style)",
		Example: "  farebench converge\n" +
			"  farebench converge --modes silent --kinds frr --bfd",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.FaredBin, err = findBin(faredBin, "fared"); err != nil && strings.Contains(kinds, "fared") {
				return err
			}
			if o.FarectlBin, err = findBin(farectlBin, "farectl"); err != nil && strings.Contains(kinds, "fared") {
				return err
			}
			o.Kinds, o.Modes = strings.Split(kinds, ","), strings.Split(modes, ",")
			if faredBFD != "" {
				b, err := os.ReadFile(faredBFD)
				if err != nil {
					return err
				}
				o.FaredBFD = string(b)
			}
			o.Log = os.Stderr
			ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			cases, err := converge.Run(ctx, o)
			WriteConverge(cmd.OutOrStdout(), cases)
			if jsonOut != "" {
				if werr := writeJSON(jsonOut, cases); werr != nil && err == nil {
					err = werr
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&kinds, "kinds", "frr,fared", "router kinds, each a whole lab")
	cmd.Flags().StringVar(&modes, "modes", "link,silent,kill", "failures: link (carrier down), silent (drops, carrier up), kill (kill -9 of the spine's routing daemon)")
	cmd.Flags().BoolVar(&o.BFD, "bfd", false, "BFD 50 ms x 3 on every IS-IS interface")
	cmd.Flags().StringVar(&faredBFD, "fared-bfd", "", "YAML appended to every fared config with --bfd (default: bfd: {interval: 50ms, multiplier: 3})")
	cmd.Flags().IntVar(&o.Rate, "rate", 1000, "stream packets per second")
	cmd.Flags().IntVar(&o.Repeat, "repeat", 1, "runs of every failure and router kind (fresh labs; the summary gives medians)")
	cmd.Flags().IntVar(&o.Spines, "spines", 2, "spines")
	cmd.Flags().IntVar(&o.Leaves, "leaves", 2, "leaves (the stream runs from l1 to the last)")
	cmd.Flags().DurationVar(&o.Hello, "hello", time.Second, "IS-IS hello interval (hold time 3x)")
	cmd.Flags().StringVar(&faredBin, "fared", "", "fared binary")
	cmd.Flags().StringVar(&farectlBin, "farectl", "", "farectl binary")
	cmd.Flags().StringVar(&jsonOut, "json", "", "write the cases as JSON to this file")
	return cmd
}

// WriteConverge prints the cases, all-FRR and all-fared side by side.
func WriteConverge(w io.Writer, cases []converge.Case) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "failure\tBFD\trouters\tspine\tsent\tlost\tloss window\tlongest gap\trecovered\t")
	for _, c := range cases {
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%d\t%d\t%v\t%v\t%v\t\n", c.Mode, c.BFD, c.Kind, c.Spine, c.Sent, c.Lost,
			c.LossWindow, c.LongestGap, c.Recovered)
	}
	tw.Flush()
	fmt.Fprintln(w)
	sums := converge.Summarise(cases)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "failure\tBFD\trouters\truns\tmedian loss window\tmin\tmax\tnot recovered\tfared/FRR (median)\t")
	frr := map[string]time.Duration{}
	for _, s := range sums {
		if s.Kind == "frr" {
			frr[s.Mode] = s.Median
		}
	}
	for _, s := range sums {
		ratio := ""
		if f, ok := frr[s.Mode]; ok && s.Kind == "fared" && f > 0 {
			ratio = fmt.Sprintf("%.2f", float64(s.Median)/float64(f))
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%d\t%v\t%v\t%v\t%d\t%s\t\n", s.Mode, s.BFD, s.Kind, s.N, s.Median, s.Min, s.Max, s.NotRecovered, ratio)
	}
	tw.Flush()
}
