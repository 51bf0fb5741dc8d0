package sidebyside

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fared/fared/bench/undertest"
)

// WriteTable prints the figures of results side by side, with ratios:
// FRR ÷ fared for times (above 1: fared is faster), fared ÷ FRR for memory
// and kernel objects.
func WriteTable(w io.Writer, results ...*Result) {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeOne(w, r)
	}
}

func writeOne(w io.Writer, r *Result) {
	fmt.Fprintf(w, "%s: %d nodes, %d cables, %d prefixes; RUT has %d circuits; %d LSPs injected (flood %s)\n",
		r.Spec, r.Nodes, r.Cables, r.Prefixes, r.Circuits, r.LSPs, r.Flood)
	fmt.Fprintf(w, "%s, %d CPUs, load %s at start, %s at end; %s\n", r.Date.Format("2006-01-02 15:04 MST"), r.CPUs, r.LoadStart, r.LoadEnd, r.FRR)
	frr, fared := r.Router(undertest.FRR), r.Router(undertest.Fared)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tFRR isisd+zebra\tfared\tratio\t")
	row := func(name string, get func(*Figures) time.Duration, kind func(*Figures) string) {
		a, b := get0(frr, get), get0(fared, get)
		ka, kb := "", ""
		if kind != nil {
			ka, kb = kind0(frr, kind), kind0(fared, kind)
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s%s\t%s\t\n", name, dur(a), ka, dur(b), kb, ratio(a, b, "FRR/fared"))
	}
	row("LSDB sync: first adjacency Up → every LSP held", func(f *Figures) time.Duration { return f.LSDBSync }, nil)
	row("kernel: first adjacency Up → every route", func(f *Figures) time.Duration { return f.KernelFull }, nil)
	row("kernel: every LSP held → every route", func(f *Figures) time.Duration { return f.SyncToKernel }, nil)
	row("kernel: first route write → every route", func(f *Figures) time.Duration { return f.KernelWrite }, nil)
	row("SPF, last full run", func(f *Figures) time.Duration { return f.SPFFull }, nil)
	row("SPF, last full run, without the kernel write", func(f *Figures) time.Duration { return f.SPFFullCompute }, nil)
	row("SPF after a bandwidth change (median)", func(f *Figures) time.Duration { return f.SPFIncr }, func(f *Figures) string { return " (" + f.SPFIncrKind + ")" })
	row("kernel after the first change (last write)", func(f *Figures) time.Duration { return f.KernelIncr },
		func(f *Figures) string { return fmt.Sprintf(" (%d msgs)", f.KernelIncrChanges) })
	row("CPU of the daemons in the phase", func(f *Figures) time.Duration { return f.CPU }, nil)
	mem := func(name string, get func(*Figures) int64, unit string) {
		a, b := getInt(frr, get), getInt(fared, get)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, num(a, unit), num(b, unit), ratioInt(b, a, "fared/FRR"))
	}
	mem("RSS after sync", func(f *Figures) int64 { return f.RSSKB }, " kB")
	mem("peak RSS", func(f *Figures) int64 { return f.PeakRSSKB }, " kB")
	mem("kernel routes", func(f *Figures) int64 { return int64(f.Routes) }, "")
	mem("kernel nexthop objects", func(f *Figures) int64 { return int64(f.NexthopObjects) }, "")
	mem("of which groups", func(f *Figures) int64 { return int64(f.Groups) }, "")
	mem("SPF runs during the sync", func(f *Figures) int64 { return int64(f.SPFRuns) }, "")
	mem("injector: LSPs sent (incl. retransmits)", func(f *Figures) int64 { return int64(f.Counters.LSPsSent) }, "")
	mem("injector: retransmits after 5 s", func(f *Figures) int64 { return int64(f.Counters.Retransmits) }, "")
	mem("adjacencies lost during the phase", func(f *Figures) int64 { return int64(f.Counters.AdjDowns) }, "")
	mem("of which the injector timed out", func(f *Figures) int64 { return int64(f.Counters.HoldExpired) }, "")
	mem("injector: worst loop stall", func(f *Figures) int64 { return f.MaxTickGap.Milliseconds() }, " ms")
	tw.Flush()
	if frr != nil && len(frr.RSS) > 0 {
		fmt.Fprintf(w, "FRR RSS: isisd %d kB + zebra %d kB. ", frr.RSS["isisd"], frr.RSS["zebra"])
	}
	if r.Compute > 0 {
		fmt.Fprintf(w, "Library reference on this machine: spf.Run+fare.ComputeTable %v, spf.Run %v.", dur(r.Compute), dur(r.ComputeSPF))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "FRR computes plain ECMP; fared's SPF figures include FARE weights and, in its SPF log, the kernel write (but in the row without it). FRR's \"last run duration\" excludes zebra.")
	if r.Agree {
		fmt.Fprintln(w, "checks: both kernels hold the oracle's routes (prefix + next-hop set) and both databases the injected LSPs.")
	} else {
		fmt.Fprintln(w, "CHECKS FAILED:")
		for _, f := range r.Routers {
			for _, p := range f.Problems {
				fmt.Fprintf(w, "  %s: %s\n", f.Router, p)
			}
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

func get0(f *Figures, get func(*Figures) time.Duration) time.Duration {
	if f == nil {
		return -1
	}
	return get(f)
}

func kind0(f *Figures, get func(*Figures) string) string {
	if f == nil {
		return ""
	}
	return get(f)
}

func getInt(f *Figures, get func(*Figures) int64) int64 {
	if f == nil {
		return -1
	}
	return get(f)
}

func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

func num(v int64, unit string) string {
	if v < 0 {
		return "—"
	}
	return fmt.Sprintf("%d%s", v, unit)
}

func ratio(a, b time.Duration, what string) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f× %s", float64(a)/float64(b), what)
}

func ratioInt(a, b int64, what string) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f× %s", float64(a)/float64(b), what)
}

// Markdown renders the table for bench/README.md.
func Markdown(r *Result) string {
	var b strings.Builder
	WriteTable(&b, r)
	return "```\n" + b.String() + "```\n"
}
