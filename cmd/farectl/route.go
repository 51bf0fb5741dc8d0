package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, routeCommand, fareCommand) }

// routeCommand: farectl route [PREFIX|ADDRESS].
func routeCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "route [PREFIX|ADDRESS]", Short: "Computed routes with their weighted next hops", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/route"
			if len(args) == 1 {
				path += "?prefix=" + url.QueryEscape(args[0])
			}
			var v []wire.Route
			b, err := g.get(cmd.Context(), path, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Prefix\tFrom\tMetric\tMode\tVia\tInterface\tNeighbor\tWeight (bw)\tShare\tKernel weight")
			for _, r := range v {
				first := true
				for _, h := range r.NextHops {
					p, l, m, mode := "", "", "", ""
					if first {
						p, l, m, mode = r.Prefix.String(), where(r), fmt.Sprint(r.Metric), r.Mode
					}
					first = false
					via := h.Gateway.String()
					if h.Unresolved {
						via = "(unresolved)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%d\n", p, l, m, mode, via, h.Interface, firstNonEmpty(h.NeighborName, h.Neighbor), formatBytesPerSec(h.Weight), 100*h.Share, h.KernelWeight)
				}
				if len(r.NextHops) == 0 {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t-\t\t\t\t\t\n", r.Prefix, where(r), r.Metric, r.Mode)
				}
			}
			return tw.Flush()
		},
	}
}

// fareCommand: farectl fare PREFIX|ADDRESS.
func fareCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "fare PREFIX|ADDRESS", Short: "How FARE weighs the next hops of one prefix", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v wire.FareView
			b, err := g.get(cmd.Context(), "/fare?prefix="+url.QueryEscape(args[0]), &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			pb := "none (no constraint)"
			if v.PathBW != nil {
				pb = formatBytesPerSec(*v.PathBW)
			}
			fmt.Fprintf(g.out, "%s  %s  metric %d  mode %s  advertisers %s  path bandwidth %s\n", v.Prefix, where(v.Route), v.Metric, v.Mode, strings.Join(v.Advertisers, ","), pb)
			fmt.Fprintf(g.out, "weight = min(link bandwidth to neighbour, downstream capacity, path bandwidth); kernel weights: scaled to at most %d, then divided by their GCD\n\n", v.WeightMax)
			tw := g.table("Neighbor\tVia\tInterface\tLink bw\tNeighbor bw\tDownstream cap\tPath bw\tWeight\tShare\tKernel weight\tKernel share")
			for _, h := range v.NextHops {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f%%\t%d\t%.2f%%\n", firstNonEmpty(h.NeighborName, h.Neighbor), h.Gateway, h.Interface,
					formatBytesPerSec(h.LinkBW), formatBytesPerSec(h.NeighborBW), formatBytesPerSec(h.DownCap), formatBytesPerSec(h.PathBW),
					formatBytesPerSec(h.Weight), 100*h.Share, h.KernelWeight, 100*h.KernelShare)
			}
			tw.Flush()
			fmt.Fprintf(g.out, "\nquantisation error: %.3f percentage points\n", v.QuantError)
			return nil
		},
	}
}

// where says which protocol topology a route comes from: "isis L2",
// "ospf 0.0.0.0".
func where(r wire.Route) string {
	if r.Area != "" {
		return r.Protocol + " " + r.Area
	}
	return fmt.Sprintf("%s L%d", r.Protocol, r.Level)
}
