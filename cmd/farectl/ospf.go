package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, ospfCommand) }

// ospfCommand: farectl ospf neighbors | interfaces | database [TYPE]
// [--area A] [--detail] | lsdb | summaries | bandwidth IFACE BW.
func ospfCommand(g *globals) *cobra.Command {
	oc := &cobra.Command{Use: "ospf", Short: "OSPF state"}
	oc.AddCommand(&cobra.Command{
		Use: "neighbors", Aliases: []string{"neighbor", "nei"}, Short: "OSPF neighbours", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.OSPFNeighbor
			b, err := g.get(cmd.Context(), "/ospf/neighbors", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Neighbor ID\tPri\tState\tDead\tAddress\tInterface\tArea\tRole\tReq\tRxmt")
			for _, n := range v {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d\n", n.RouterID, n.Priority, n.State, n.DeadIn, n.Address, n.Interface, n.Area, n.Role, n.Requests, n.Retransmit)
			}
			return tw.Flush()
		},
	})
	oc.AddCommand(&cobra.Command{
		Use: "interfaces", Aliases: []string{"interface", "int"}, Short: "OSPF interfaces and their counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.OSPFInterface
			b, err := g.get(cmd.Context(), "/ospf/interfaces", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, i := range v {
				fmt.Fprintf(g.out, "%s  area %s  state %s  type %s  ifindex %d  mtu %d  cost %d  bandwidth %s%s\n",
					i.Name, i.Area, i.State, i.Type, i.Index, i.MTU, i.Cost, formatBytesPerSec(float64(i.BandwidthBytes)), overrideNote(i.BandwidthOverride))
				fmt.Fprintf(g.out, "  address %s  hello %gs  dead %gs  priority %d  DR %s  BDR %s  neighbors %d  full %d\n",
					i.Address, i.HelloInterval, i.DeadInterval, i.Priority, dash(i.DR), dash(i.BDR), i.Neighbors, i.Adjacencies)
				for _, k := range sortedKeys(i.Counters) {
					fmt.Fprintf(g.out, "    %-36s %d\n", k, i.Counters[k])
				}
			}
			return nil
		},
	})
	var detail bool
	var area string
	dbCmd := &cobra.Command{
		Use: "database [TYPE]", Aliases: []string{"db"}, Args: cobra.MaximumNArgs(1),
		Short: "OSPF link-state database (TYPE: router, network, summary, asbr-summary, external, opaque-link, opaque-area, opaque-as or a number)",
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			if area != "" {
				q.Set("area", area)
			}
			if len(args) == 1 {
				q.Set("type", args[0])
			}
			if detail {
				q.Set("detail", "true")
			}
			var v []wire.OSPFLSA
			b, err := g.get(cmd.Context(), "/ospf/database?"+q.Encode(), &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Area\tType\tLink State ID\tADV Router\tAge\tSeq#\tCkSum\tLen")
			for _, l := range v {
				own := ""
				if l.Own {
					own = " *"
				}
				if l.Interface != "" {
					l.Area += " (" + l.Interface + ")" // link scope: one table per link
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%d\t%s\t%s\t%d\n", l.Area, l.TypeName, l.ID, l.AdvRouter, own, l.Age, l.SeqHex, l.ChecksumX, l.Length)
			}
			tw.Flush()
			if detail {
				for _, l := range v {
					fmt.Fprintf(g.out, "\n%s %s %s adv %s seq %s checksum %s age %d\n", l.Area, l.TypeName, l.ID, l.AdvRouter, l.SeqHex, l.ChecksumX, l.Age)
					if body, ok := l.Detail["body"].(map[string]any); ok {
						printFields(g.out, body, "  ", nil)
					}
				}
			}
			return nil
		},
	}
	dbCmd.Flags().BoolVarP(&detail, "detail", "d", false, "decode every LSA, TLV and sub-TLV")
	dbCmd.Flags().StringVarP(&area, "area", "a", "", "only this area (dotted quad, number, or AS)")
	oc.AddCommand(dbCmd)
	oc.AddCommand(&cobra.Command{
		Use: "lsdb [AREA]", Short: "The topology snapshot of each OSPF area", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/ospf/lsdb"
			if len(args) == 1 {
				path += "?area=" + url.QueryEscape(args[0])
			}
			var v []wire.Topology
			b, err := g.get(cmd.Context(), path, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, gv := range v {
				fmt.Fprintf(g.out, "ospf area %s, self %s: %d nodes, %d prefixes\n", gv.Area, gv.Self, len(gv.Nodes), len(gv.Prefixes))
				tw := g.table("Node\tNeighbor\tMetric\tMax bandwidth\tLocal\tRemote")
				for _, n := range gv.Nodes {
					if len(n.Links) == 0 {
						fmt.Fprintf(tw, "%s\t-\t\t\t\t\n", n.ID)
					}
					for _, l := range n.Links {
						bw := "-"
						if l.MaxBW != nil {
							bw = formatBytesPerSec(*l.MaxBW)
						}
						fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", n.ID, l.To, l.Metric, bw, l.LocalAddr, l.RemoteAddr)
					}
				}
				tw.Flush()
				tw = g.table("\nPrefix\tAdvertiser\tMetric\tPath bandwidth\tExternal")
				for _, p := range gv.Prefixes {
					pb := "-"
					if p.PathBW != nil {
						pb = formatBytesPerSec(*p.PathBW)
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\n", p.Prefix, p.Advertiser, p.Metric, pb, p.External)
				}
				tw.Flush()
			}
			return nil
		},
	})
	oc.AddCommand(&cobra.Command{
		Use: "summaries", Aliases: []string{"summary"}, Args: cobra.NoArgs,
		Short: "The Summary LSAs this ABR originates, with their Path Bandwidth re-advertisement (draft-xu-lsr-fare §4.2)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.OSPFSummary
			b, err := g.get(cmd.Context(), "/ospf/summaries", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Into area\tPrefix\tMetric\tFrom area\tAdvertisers\tOriginal PB\tCapacity\tPath bandwidth")
			for _, s := range v {
				orig := "-"
				if s.OrigPathBW != nil {
					orig = formatBytesPerSec(float64(*s.OrigPathBW))
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Area, s.Prefix, s.Metric, s.FromArea, strings.Join(s.Advertisers, ","),
					orig, formatBytesPerSec(float64(s.Capacity)), formatBytesPerSec(float64(s.PathBW)))
			}
			return tw.Flush()
		},
	})
	oc.AddCommand(bandwidthCommand(g, "ospf"), ospfClearCommand(g))
	return oc
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// ospfClearCommand: farectl ospf clear neighbor [ROUTER-ID].
func ospfClearCommand(g *globals) *cobra.Command {
	clear := &cobra.Command{Use: "clear", Short: "Reset OSPF state (as vtysh's clear ip ospf ...)"}
	clear.AddCommand(&cobra.Command{
		Use: "neighbor [ROUTER-ID]", Aliases: []string{"neighbors", "neighbour"},
		Short: "Drop one neighbour (all without ROUTER-ID); it re-forms through hellos and a new database exchange",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.OSPFClearRequest{}
			if len(args) == 1 {
				req.RouterID = args[0]
			}
			var v wire.Cleared
			b, err := g.post(cmd.Context(), "/ospf/clear-neighbor", req, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			who := "every neighbour"
			if req.RouterID != "" {
				who = "neighbour " + req.RouterID
			}
			fmt.Fprintf(g.out, "ospf: %d neighbours cleared (%s)\n", v.Cleared, who)
			return nil
		},
	})
	return clear
}
