package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, isisCommand) }

// isisCommand: farectl isis neighbors | interfaces | database | levels |
// leaks | bandwidth | overload | clear adjacency.
func isisCommand(g *globals) *cobra.Command {
	isisCmd := &cobra.Command{Use: "isis", Short: "IS-IS state"}
	var level int
	isisCmd.PersistentFlags().IntVarP(&level, "level", "l", 0, "only this level (1 or 2)")
	isisCmd.AddCommand(&cobra.Command{
		Use: "neighbors", Aliases: []string{"neighbor", "nei"}, Short: "IS-IS adjacencies", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.ISISNeighbor
			b, err := g.get(cmd.Context(), "/isis/neighbors", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("System Id\tHostname\tInterface\tLevel\tState\tHold\tSNPA\tIPv4")
			for _, n := range v {
				if level != 0 && !strings.Contains(n.Level, fmt.Sprint(level)) {
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\n", n.SystemID, n.Hostname, n.Interface, n.Level, n.State, n.ExpiresIn, n.SNPA, strings.Join(n.IPv4, ","))
			}
			return tw.Flush()
		},
	})
	isisCmd.AddCommand(&cobra.Command{
		Use: "interfaces", Aliases: []string{"interface", "int"}, Short: "IS-IS interfaces and their counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.ISISInterface
			b, err := g.get(cmd.Context(), "/isis/interfaces", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, i := range v {
				fmt.Fprintf(g.out, "%s  state %s  type %s  ifindex %d  mtu %d  metric %d  bandwidth %s%s  circuit-id %d\n",
					i.Name, i.State, i.Type, i.Index, i.MTU, i.Metric, formatBytesPerSec(float64(i.BandwidthBytes)), overrideNote(i.BandwidthOverride), i.CircuitID)
				fmt.Fprintf(g.out, "  addresses %s  hello %gs  hold %gs  adjacencies up %d\n", strings.Join(i.Addresses, ", "), i.HelloInterval, i.HoldTime, i.Adjacencies)
				for _, l := range i.Levels {
					fmt.Fprintf(g.out, "  L%d: DIS %v  LAN id %s  priority %d\n", l.Level, l.DIS, l.LANID, i.Priority)
				}
				for _, k := range sortedKeys(i.Counters) {
					fmt.Fprintf(g.out, "    %-32s %d\n", k, i.Counters[k])
				}
			}
			return nil
		},
	})
	var detail bool
	dbCmd := &cobra.Command{
		Use: "database [LSPID|HOSTNAME[.PP-FF]]", Aliases: []string{"db"}, Short: "IS-IS link-state database", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			if level != 0 {
				q.Set("level", fmt.Sprint(level))
			}
			if len(args) == 1 {
				q.Set("lsp", args[0])
			}
			if detail {
				q.Set("detail", "true")
			}
			var v []wire.ISISLSP
			b, err := g.get(cmd.Context(), "/isis/database?"+q.Encode(), &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Level\tLSP ID\tHostname\tSeq\tChecksum\tLifetime\tLen\tATT/P/OL")
			for _, l := range v {
				own := ""
				if l.Own {
					own = " *"
				}
				fmt.Fprintf(tw, "L%d\t%s%s\t%s\t%s\t%s\t%d\t%d\t%d/%d/%d\n", l.Level, l.LSPID, own, l.Hostname, l.SeqHex, l.ChecksumX, l.Lifetime, l.Length, b2i(l.Attached), 0, b2i(l.Overload))
			}
			tw.Flush()
			if detail {
				for _, l := range v {
					fmt.Fprintf(g.out, "\n%s (L%d) seq %s checksum %s lifetime %d\n", l.LSPID, l.Level, l.SeqHex, l.ChecksumX, l.Lifetime)
					for _, t := range l.TLVs {
						printTLV(g.out, t)
					}
				}
			}
			return nil
		},
	}
	dbCmd.Flags().BoolVarP(&detail, "detail", "d", false, "decode every TLV and sub-TLV")
	isisCmd.AddCommand(dbCmd)
	isisCmd.AddCommand(&cobra.Command{
		Use: "levels", Short: "Per-level summary: LSPs, originations, ATT, leaking", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.ISISLevel
			b, err := g.get(cmd.Context(), "/isis/levels", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Level\tLSPs\tOriginated\tATT\tOverload\tLeaked into\tLeak recomputations from\tConverged")
			for _, l := range v {
				fmt.Fprintf(tw, "L%d\t%d\t%d\t%v\t%s\t%d\t%d\t%v\n", l.Level, l.LSPs, l.Originated, l.Attached, onOff(l.Overload), l.LeakedInto, l.Recomputations, l.Converged)
			}
			return tw.Flush()
		},
	})
	isisCmd.AddCommand(&cobra.Command{
		Use: "leaks", Short: "Prefixes leaked between levels and where their Path Bandwidth came from", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.ISISLeak
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
	isisCmd.AddCommand(bandwidthCommand(g, "isis"), isisOverloadCommand(g), isisClearCommand(g))
	return isisCmd
}

// bandwidthCommand overrides an interface's advertised bandwidth of one
// protocol at run time, or drops the override (--clear).
func bandwidthCommand(g *globals, proto string) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "bandwidth IFACE [BANDWIDTH | --clear]",
		Short: "Override an interface's advertised bandwidth at run time (e.g. 40G), or --clear the override",
		Long: "Override an interface's advertised bandwidth at run time (bits/s with K, M, G or T, e.g. 40G).\n" +
			"The override is logged, and survives reloads that leave the interface's configured bandwidth\n" +
			"unchanged (the reload answer says \"override kept\"); a reload that changes it drops the override.\n" +
			"--clear puts the configured bandwidth (or the interface speed) back in force.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.BandwidthRequest{Interface: args[0], Clear: clear}
			switch {
			case clear && len(args) == 2:
				return fmt.Errorf("give a bandwidth or --clear, not both")
			case !clear && len(args) == 1:
				return fmt.Errorf("give a bandwidth (e.g. 40G), or --clear to drop the override")
			case !clear:
				req.Bandwidth = args[1]
			}
			var v wire.BandwidthOverride
			b, err := g.post(cmd.Context(), "/"+proto+"/bandwidth", req, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			if v.Cleared {
				fmt.Fprintf(g.out, "%s interface %s: bandwidth override cleared (configured bandwidth in force)\n", proto, v.Interface)
				return nil
			}
			fmt.Fprintf(g.out, "%s interface %s: bandwidth %s (run-time override)\n", proto, v.Interface, v.Bandwidth)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "drop the run-time override")
	return cmd
}

// overrideNote marks a bandwidth set at run time.
func overrideNote(o string) string {
	if o == "" {
		return ""
	}
	return " (run-time override " + o + ")"
}

// isisOverloadCommand sets the overload bit at run time (maintenance
// drains): on, off, or config (back to the file's value).
func isisOverloadCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "overload [on|off|config]",
		Short: "Show or set the overload bit at run time (a maintenance drain); config returns to the file's value",
		Long: "Without an argument, show the overload bit. on/off set it at run time: our LSPs carry it at once,\n" +
			"so neighbours route around this node but still reach its own prefixes. The setting survives reloads\n" +
			"that leave `overload` in the file unchanged; `config` drops it.",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"on", "off", "config"},
		RunE: func(cmd *cobra.Command, args []string) error {
			var v wire.ISISOverload
			var b []byte
			var err error
			if len(args) == 0 {
				b, err = g.get(cmd.Context(), "/isis/overload", &v)
			} else {
				b, err = g.post(cmd.Context(), "/isis/overload", wire.ISISOverloadRequest{Overload: args[0]}, &v)
			}
			if err != nil || g.json {
				return g.emit(b, err)
			}
			src := "from the config"
			if v.RunTime {
				src = fmt.Sprintf("set at run time; config says %s", onOff(v.Configured))
			}
			fmt.Fprintf(g.out, "isis overload %s (%s)\n", onOff(v.Overload), src)
			return nil
		},
	}
}

// isisClearCommand: farectl isis clear adjacency [IFACE].
func isisClearCommand(g *globals) *cobra.Command {
	clear := &cobra.Command{Use: "clear", Short: "Reset IS-IS state (as vtysh's clear isis ...)"}
	clear.AddCommand(&cobra.Command{
		Use: "adjacency [IFACE]", Aliases: []string{"adjacencies", "neighbor", "neighbors"},
		Short: "Drop the adjacencies of one interface (all without IFACE); they re-form through hellos",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.ISISClearRequest{}
			if len(args) == 1 {
				req.Interface = args[0]
			}
			var v wire.Cleared
			b, err := g.post(cmd.Context(), "/isis/clear-adjacency", req, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			where := "on every interface"
			if req.Interface != "" {
				where = "on " + req.Interface
			}
			fmt.Fprintf(g.out, "isis: %d adjacencies cleared %s\n", v.Cleared, where)
			return nil
		},
	})
	return clear
}
