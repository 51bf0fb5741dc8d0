package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// routeCommand: farectl route [PREFIX|ADDRESS].
func routeCommand(g *globals) *cobra.Command {
	return lookup(g, "route [PREFIX|ADDRESS]", "Computed routes with their weighted next hops", "/route", "prefix", cobra.MaximumNArgs(1), printRoutes)
}

// fareCommand: farectl fare PREFIX|ADDRESS.
func fareCommand(g *globals) *cobra.Command {
	return lookup(g, "fare PREFIX|ADDRESS", "How FARE weighs the next hops of one prefix", "/fare", "prefix", cobra.ExactArgs(1), printFare)
}

// printRoutes: a row per next hop, the route's own columns on its first.
func printRoutes(w io.Writer, v []wire.Route) error {
	return printTable(w, "Prefix\tFrom\tMetric\tMode\tVia\tInterface\tNeighbor\tWeight (bw)\tShare\tKernel weight", v, func(tw io.Writer, r wire.Route) {
		for i, h := range r.NextHops {
			p, l, m, mode := "", "", "", ""
			if i == 0 {
				p, l, m, mode = r.Prefix.String(), where(r), fmt.Sprint(r.Metric), r.Mode
			}
			via := h.Gateway.String()
			if h.Unresolved {
				via = "(unresolved)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%d\n", p, l, m, mode, via, h.Interface, firstNonEmpty(h.NeighborName, h.Neighbor), formatBytesPerSec(h.Weight), 100*h.Share, h.KernelWeight)
		}
		if len(r.NextHops) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t-\t\t\t\t\t\n", r.Prefix, where(r), r.Metric, r.Mode)
		}
	})
}

// printFare: the prefix, the formula, and each next hop's terms of it.
func printFare(w io.Writer, v wire.FareView) error {
	fmt.Fprintf(w, "%s  %s  metric %d  mode %s  advertisers %s  path bandwidth %s\n", v.Prefix, where(v.Route), v.Metric, v.Mode,
		strings.Join(v.Advertisers, ","), optBytesPerSec(v.PathBW, "none (no constraint)"))
	fmt.Fprintf(w, "weight = min(link bandwidth to neighbour, downstream capacity, path bandwidth); kernel weights: scaled to at most %d, then divided by their GCD\n\n", v.WeightMax)
	err := printTable(w, "Neighbor\tVia\tInterface\tLink bw\tNeighbor bw\tDownstream cap\tPath bw\tWeight\tShare\tKernel weight\tKernel share", v.NextHops, func(tw io.Writer, h wire.NextHop) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f%%\t%d\t%.2f%%\n", firstNonEmpty(h.NeighborName, h.Neighbor), h.Gateway, h.Interface,
			formatBytesPerSec(h.LinkBW), formatBytesPerSec(h.NeighborBW), formatBytesPerSec(h.DownCap), formatBytesPerSec(h.PathBW),
			formatBytesPerSec(h.Weight), 100*h.Share, h.KernelWeight, 100*h.KernelShare)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nquantisation error: %.3f percentage points\n", v.QuantError)
	return nil
}

// where says which protocol topology a route comes from: "isis L2",
// "ospf 0.0.0.0".
func where(r wire.Route) string {
	if r.Area != "" {
		return r.Protocol + " " + r.Area
	}
	return fmt.Sprintf("%s L%d", r.Protocol, r.Level)
}
