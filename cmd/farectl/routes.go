package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

func addRouteCommands(root *cobra.Command, g *globals) {
	root.AddCommand(&cobra.Command{
		Use: "route [PREFIX|ADDRESS]", Short: "Computed routes with their weighted next hops", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/route"
			if len(args) == 1 {
				path += "?prefix=" + url.QueryEscape(args[0])
			}
			var v []rib.Route
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
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%d\n", p, l, m, mode, via, h.Interface, h.NeighborName, formatBytesPerSec(h.Weight), 100*h.Share, h.KernelWeight)
				}
				if len(r.NextHops) == 0 {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t-\t\t\t\t\t\n", r.Prefix, where(r), r.Metric, r.Mode)
				}
			}
			return tw.Flush()
		},
	})
	root.AddCommand(&cobra.Command{
		Use: "fare PREFIX|ADDRESS", Short: "How FARE weighs the next hops of one prefix", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v api.FareView
			b, err := g.get(cmd.Context(), "/fare?prefix="+url.QueryEscape(args[0]), &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			pb := "none (no constraint)"
			if v.PathBW != nil {
				pb = formatBytesPerSec(*v.PathBW)
			}
			fmt.Fprintf(g.out, "%s  %s  metric %d  mode %s  advertisers %s  path bandwidth %s\n", v.Prefix, where(v.Route), v.Metric, v.Mode, strings.Join(v.Advertisers, ","), pb)
			fmt.Fprintf(g.out, "weight = min(link bandwidth to neighbour, downstream capacity, path bandwidth); kernel weights scaled to %d\n\n", v.WeightMax)
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
	})
	fibCmd := &cobra.Command{
		Use: "fib", Short: "Our routes and nexthop objects as the kernel holds them (read back over netlink)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v api.FIBView
			b, err := g.get(cmd.Context(), "/fib", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			nhs := map[uint32]fib.KernelNexthop{}
			for _, n := range v.Nexthops {
				nhs[n.ID] = n
			}
			tw := g.table("Prefix\tMetric\tNH id\tMembers (id:gateway@ifindex weight)")
			for _, r := range v.Routes {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", r.Prefix, r.Metric, r.NhID, describeNH(nhs, r.NhID))
			}
			tw.Flush()
			fmt.Fprintf(g.out, "\n%d routes, %d nexthop objects\n", len(v.Routes), len(v.Nexthops))
			return nil
		},
	}
	fibCmd.AddCommand(&cobra.Command{
		Use: "capabilities", Short: "What the kernel supports: nexthop objects, 16-bit weights, resilient groups", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v fib.Capabilities
			b, err := g.get(cmd.Context(), "/fib/capabilities", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "nexthop objects   %v\n16-bit weights    %v\nresilient groups  %v\n", v.NexthopObjects, v.Weight16, v.Resilient)
			return nil
		},
	})
	root.AddCommand(fibCmd)
	spfCmd := &cobra.Command{Use: "spf", Short: "SPF state"}
	spfCmd.AddCommand(&cobra.Command{
		Use: "log", Short: "Recent SPF runs: trigger, kind, duration, nodes, routes changed", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v struct {
				Delay spf.DelayView  `json:"delay"`
				Log   []spf.LogEntry `json:"log"`
			}
			b, err := g.get(cmd.Context(), "/spf/log", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "SPF delay state: %+v\n\n", v.Delay)
			tw := g.table("When\tKind\tDuration\tNodes\tRoutes changed\tTrigger")
			for _, e := range v.Log {
				fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%d\t%s\n", e.At.Format(time.TimeOnly+".000"), e.Kind, e.Duration, e.Nodes, e.RoutesChanged, e.Trigger)
			}
			return tw.Flush()
		},
	})
	root.AddCommand(spfCmd)
	root.AddCommand(&cobra.Command{
		Use: "reload", Short: "Re-read the configuration file (as SIGHUP does)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.post(cmd.Context(), "/reload", nil)
		},
	})
}

func addISISWriteCommands(isisCmd *cobra.Command, g *globals) {
	isisCmd.AddCommand(&cobra.Command{
		Use: "levels", Short: "Per-level summary: LSPs, originations, ATT, leaking", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []isis.LevelView
			b, err := g.get(cmd.Context(), "/isis/levels", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Level\tLSPs\tOriginated\tATT\tLeaked into\tLeak recomputations from\tConverged")
			for _, l := range v {
				fmt.Fprintf(tw, "L%d\t%d\t%d\t%v\t%d\t%d\t%v\n", l.Level, l.LSPs, l.Originated, l.Attached, l.LeakedInto, l.Recomputations, l.Converged)
			}
			return tw.Flush()
		},
	})
	isisCmd.AddCommand(&cobra.Command{
		Use: "leaks", Short: "Prefixes leaked between levels and where their Path Bandwidth came from", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []isis.LeakView
			b, err := g.get(cmd.Context(), "/isis/leaks", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Prefix\tFrom\tInto\tMetric\tDown\tPath bw\t= min(original\tcapacity to advertisers)\tAdvertisers")
			for _, l := range v {
				orig := "none"
				if l.OrigPathBW != nil {
					orig = formatBytesPerSec(*l.OrigPathBW)
				}
				fmt.Fprintf(tw, "%s\tL%d\tL%d\t%d\t%v\t%s\t%s\t%s\t%s\n", l.Prefix, l.FromLevel, l.IntoLevel, l.Metric, l.Down,
					formatBytesPerSec(l.PathBW), orig, formatBytesPerSec(l.Capacity), strings.Join(l.Advertisers, ","))
			}
			return tw.Flush()
		},
	})
	isisCmd.AddCommand(&cobra.Command{
		Use: "bandwidth IFACE BANDWIDTH", Short: "Override an interface's advertised bandwidth at run time (e.g. 40G)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.post(cmd.Context(), "/isis/bandwidth", api.BandwidthRequest{Interface: args[0], Bandwidth: args[1]})
		},
	})
}

func (g *globals) post(ctx context.Context, path string, body any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if body != nil {
		json.NewEncoder(&buf).Encode(body)
	}
	b, err := api.NewClient(api.SocketPath(g.socket)).Post(ctx, path, &buf)
	if err != nil {
		return err
	}
	_, err = g.out.Write(b)
	return err
}

func describeNH(nhs map[uint32]fib.KernelNexthop, id uint32) string {
	n, ok := nhs[id]
	if !ok {
		return "?"
	}
	one := func(n fib.KernelNexthop) string {
		return fmt.Sprintf("%d:%s@%d", n.ID, n.Gateway, n.IfIndex)
	}
	if len(n.Group) == 0 {
		return one(n)
	}
	var parts []string
	for _, m := range n.Group {
		parts = append(parts, fmt.Sprintf("%s w%d", one(nhs[m.ID]), m.Weight))
	}
	return strings.Join(parts, ", ")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// where says which protocol topology a route comes from: "isis L2",
// "ospf 0.0.0.0".
func where(r rib.Route) string {
	if r.Area != "" {
		return r.Protocol + " " + r.Area
	}
	return fmt.Sprintf("%s L%d", r.Protocol, r.Level)
}
