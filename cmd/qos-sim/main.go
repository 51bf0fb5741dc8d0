// Command qos-sim runs a QoS scenario on fared's software data plane
// (qos/sim) with fared's QoS policies on every switch, and prints the
// metrics: per-port throughput, queue p50/p99, PAUSE frames, drops, ECN
// marks, flow completion times and the watchdog's events. With -j it
// emits them as JSON. Scenario files are described in docs/qos.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/fared/fared/qos/sim/scenario"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "qos-sim:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("qos-sim", flag.ContinueOnError)
	js := fs.Bool("j", false, "print JSON")
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	dur := fs.Duration("duration", 0, "override the scenario's duration")
	flows := fs.Bool("flows", false, "list every flow (text output)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: qos-sim [-j] [-seed N] [-duration D] [-flows] SCENARIO.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("one scenario file expected")
	}
	s, err := scenario.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	if *seed != 0 {
		s.Params.Seed = *seed
	}
	if *dur != 0 {
		s.Duration = *dur
	}
	o, err := s.Run()
	if err != nil {
		return err
	}
	if *js {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	}
	printText(out, o, *flows)
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fus", float64(d)/1e3) }

func printText(out io.Writer, o *scenario.Output, flows bool) {
	r := o.Results
	fmt.Fprintf(out, "scenario %s  seed %d  simulated %v  wall %.3fs  (%.4g sim s per wall s, %d events)\n\n",
		o.Scenario, o.Seed, r.Duration, o.WallSeconds, o.SimPerWall, r.Events)
	tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "Node\tPort\tGb/s\tUtil\tPAUSE tx\tPAUSE rx\tDrops\tMarks\tQueue\tq mean\tq p50\tq p99\tq max")
	for _, p := range r.Ports {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.1f%%\t%d\t%d\t%d\t%d\t\t\t\t\t\n", p.Node, p.Port, p.Gbps, p.Util*100, p.PauseTx, p.PauseRx, p.Drops, p.Marks)
		for _, q := range p.Queues {
			if q.TxBytes == 0 && q.Depth.Max == 0 {
				continue
			}
			fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t%d\t%.0f\t%d\t%d\t%d\n", q.Prio, q.Depth.Mean, q.Depth.P50, q.Depth.P99, q.Depth.Max)
		}
	}
	tw.Flush()
	fmt.Fprintf(out, "\nPAUSE frames: %d sent, %d received\n", r.PauseTx, r.PauseRx)
	keys := slices.Sorted(maps.Keys(r.Drops))
	fmt.Fprint(out, "drops:")
	if len(keys) == 0 {
		fmt.Fprint(out, " none")
	}
	for _, k := range keys {
		fmt.Fprintf(out, " %s=%d", k, r.Drops[k])
	}
	fmt.Fprintf(out, "\nCNPs: receiver %d, switch %d\n", r.CNPs["receiver"], r.CNPs["switch"])
	fmt.Fprintf(out, "FCT mice:      %d/%d done  mean %s  p50 %s  p99 %s\n", r.Mice.Done, r.Mice.Flows, us(r.Mice.Mean), us(r.Mice.P50), us(r.Mice.P99))
	fmt.Fprintf(out, "FCT elephants: %d/%d done  mean %s  p50 %s  p99 %s\n", r.Elephants.Done, r.Elephants.Flows, us(r.Elephants.Mean), us(r.Elephants.P50), us(r.Elephants.P99))
	if flows {
		tw = tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFlow\tSrc\tDst\tSize\tDelivered\tDone\tFCT\tGb/s\tCNPs\tLost")
		for _, f := range r.Flows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%v\t%s\t%.2f\t%d\t%d\n", f.Name, f.Src, f.Dst, f.Size, f.Delivered, f.Done, us(f.FCT), f.Gbps, f.CNPs, f.Lost)
		}
		tw.Flush()
	}
	for _, name := range sortedKeys(o.Tuning) {
		for _, q := range o.Tuning[name] {
			if q.Reason == "" {
				continue
			}
			fmt.Fprintf(out, "\necn tuning %s %s/%d (%s, model %s): %d/%d/%d%% (configured %d/%d/%d%%), last: %s\n", name, q.Iface, q.Prio,
				q.Algorithm, q.Model, q.Applied.Min, q.Applied.Max, q.Applied.Prob, q.Base.Min, q.Base.Max, q.Base.Prob, q.Reason)
		}
	}
	for _, name := range sortedKeys(o.IPCC) {
		st := o.IPCC[name]
		fmt.Fprintf(out, "\nipcc %s: %d packets observed, %d flows, %d QPs learnt (%d ambiguous), %d CNPs, skipped: no QP %d, interval %d\n",
			name, st.Observed, st.Flows, st.Learned, st.Ambiguous, st.CNPs, st.NoQP, st.RateLimit)
	}
	if len(o.Watchdog) > 0 {
		fmt.Fprintln(out, "\nwatchdog:")
		for _, e := range o.Watchdog {
			at := e.At.Sub(scenario.Epoch)
			line := fmt.Sprintf("  %10s  %-3s %-9s %s", us(at), e.Node, e.Kind, e.Iface)
			if e.Prio >= 0 {
				line += fmt.Sprintf(" prio %d (XOFF since %s)", e.Prio, us(e.Since.Sub(scenario.Epoch)))
			}
			fmt.Fprintln(out, line)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
