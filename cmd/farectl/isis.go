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
// leaks | bandwidth.
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
				fmt.Fprintf(g.out, "%s  state %s  type %s  ifindex %d  mtu %d  metric %d  bandwidth %s  circuit-id %d\n",
					i.Name, i.State, i.Type, i.Index, i.MTU, i.Metric, formatBytesPerSec(float64(i.BandwidthBytes)), i.CircuitID)
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
	isisCmd.AddCommand(bandwidthCommand(g, "isis"))
	return isisCmd
}

// bandwidthCommand overrides an interface's advertised bandwidth of one
// protocol at run time.
func bandwidthCommand(g *globals, proto string) *cobra.Command {
	return &cobra.Command{
		Use: "bandwidth IFACE BANDWIDTH", Short: "Override an interface's advertised bandwidth at run time (e.g. 40G)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v struct {
				Interface string `json:"interface"`
				Bandwidth string `json:"bandwidth"`
			}
			b, err := g.post(cmd.Context(), "/"+proto+"/bandwidth", wire.BandwidthRequest{Interface: args[0], Bandwidth: args[1]}, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "%s interface %s: bandwidth %s\n", proto, v.Interface, v.Bandwidth)
			return nil
		},
	}
}
