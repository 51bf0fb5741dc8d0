package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, ospfCommand) }

// ospfCommand: farectl ospf neighbors | interfaces | database [TYPE]
// [--area A] [--detail] | lsdb | summaries | bandwidth IFACE BW | clear
// neighbor.
func ospfCommand(g *globals) *cobra.Command {
	oc := &cobra.Command{Use: "ospf", Short: "OSPF state"}
	oc.AddCommand(ospfNeighborsCmd(g), ospfInterfacesCmd(g), ospfDatabaseCmd(g), ospfLSDBCmd(g), ospfSummariesCmd(g),
		bandwidthCommand(g, "ospf"), ospfClearCommand(g))
	return oc
}

func ospfNeighborsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "neighbors", Aliases: []string{"neighbor", "nei"}, Short: "OSPF neighbours", Args: cobra.NoArgs,
		RunE: show(g, at("/ospf/neighbors"), printOSPFNeighbors),
	}
}

func ospfInterfacesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "interfaces", Aliases: []string{"interface", "int"}, Short: "OSPF interfaces and their counters", Args: cobra.NoArgs,
		RunE: show(g, at("/ospf/interfaces"), printOSPFInterfaces),
	}
}

func ospfDatabaseCmd(g *globals) *cobra.Command {
	var detail bool
	var area string
	path := func(args []string) string {
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
		return "/ospf/database?" + q.Encode()
	}
	c := &cobra.Command{
		Use: "database [TYPE]", Aliases: []string{"db"}, Args: cobra.MaximumNArgs(1),
		Short: "OSPF link-state database (TYPE: router, network, summary, asbr-summary, external, opaque-link, opaque-area, opaque-as or a number)",
		RunE:  show(g, path, func(w io.Writer, v []wire.OSPFLSA) error { return printOSPFDatabase(w, v, detail) }),
	}
	c.Flags().BoolVarP(&detail, "detail", "d", false, "decode every LSA, TLV and sub-TLV")
	c.Flags().StringVarP(&area, "area", "a", "", "only this area (dotted quad, number, or AS)")
	return c
}

func ospfLSDBCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "lsdb [AREA]", Short: "The topology snapshot of each OSPF area", Args: cobra.MaximumNArgs(1),
		RunE: show(g, withArg("/ospf/lsdb", "area"), printOSPFLSDB),
	}
}

func ospfSummariesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "summaries", Aliases: []string{"summary"}, Args: cobra.NoArgs,
		Short: "The Summary LSAs this ABR originates, with their Path Bandwidth re-advertisement (draft-xu-lsr-fare §4.2)",
		RunE:  show(g, at("/ospf/summaries"), printOSPFSummaries),
	}
}

// ospfClearCommand: farectl ospf clear neighbor [ROUTER-ID].
func ospfClearCommand(g *globals) *cobra.Command {
	return clearCommand(g, "Reset OSPF state (as vtysh's clear ip ospf ...)", &cobra.Command{
		Use: "neighbor [ROUTER-ID]", Aliases: []string{"neighbors", "neighbour"},
		Short: "Drop one neighbour (all without ROUTER-ID); it re-forms through hellos and a new database exchange",
	}, "/ospf/clear-neighbor", func(id string) any { return wire.OSPFClearRequest{RouterID: id} }, printOSPFCleared)
}

func printOSPFNeighbors(w io.Writer, v []wire.OSPFNeighbor) error {
	tw := newTable(w, "Neighbor ID\tPri\tState\tDead\tAddress\tInterface\tArea\tRole\tReq\tRxmt")
	for _, n := range v {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d\n", n.RouterID, n.Priority, n.State, n.DeadIn, n.Address, n.Interface, n.Area, n.Role, n.Requests, n.Retransmit)
	}
	return tw.Flush()
}

// printOSPFInterfaces: two lines per interface, then its counters.
func printOSPFInterfaces(w io.Writer, v []wire.OSPFInterface) error {
	for _, i := range v {
		fmt.Fprintf(w, "%s  area %s  state %s  type %s  ifindex %d  mtu %d  cost %d  bandwidth %s%s\n",
			i.Name, i.Area, i.State, i.Type, i.Index, i.MTU, i.Cost, formatBytesPerSec(float64(i.BandwidthBytes)), overrideNote(i.BandwidthOverride))
		fmt.Fprintf(w, "  address %s  hello %gs  dead %gs  priority %d  DR %s  BDR %s  neighbors %d  full %d\n",
			i.Address, i.HelloInterval, i.DeadInterval, i.Priority, dash(i.DR), dash(i.BDR), i.Neighbors, i.Adjacencies)
		for _, k := range sortedKeys(i.Counters) {
			fmt.Fprintf(w, "    %-36s %d\n", k, i.Counters[k])
		}
	}
	return nil
}

// printOSPFDatabase: a row per LSA (ours starred; a link-scope LSA names
// its link); with detail, every LSA decoded below.
func printOSPFDatabase(w io.Writer, v []wire.OSPFLSA, detail bool) error {
	tw := newTable(w, "Area\tType\tLink State ID\tADV Router\tAge\tSeq#\tCkSum\tLen")
	for _, l := range v {
		own := ""
		if l.Own {
			own = " *"
		}
		area := l.Area
		if l.Interface != "" {
			area += " (" + l.Interface + ")" // link scope: one table per link
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%d\t%s\t%s\t%d\n", area, l.TypeName, l.ID, l.AdvRouter, own, l.Age, l.SeqHex, l.ChecksumX, l.Length)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if detail {
		for _, l := range v {
			fmt.Fprintf(w, "\n%s %s %s adv %s seq %s checksum %s age %d\n", l.Area, l.TypeName, l.ID, l.AdvRouter, l.SeqHex, l.ChecksumX, l.Age)
			if body, ok := l.Detail["body"].(map[string]any); ok {
				printFields(w, body, "  ", nil)
			}
		}
	}
	return nil
}

// printOSPFLSDB: per area its links and its prefixes (OSPF's columns:
// no names, external routes marked).
func printOSPFLSDB(w io.Writer, v []wire.Topology) error {
	for _, gv := range v {
		fmt.Fprintf(w, "ospf area %s, self %s: %d nodes, %d prefixes\n", gv.Area, gv.Self, len(gv.Nodes), len(gv.Prefixes))
		tw := newTable(w, "Node\tNeighbor\tMetric\tMax bandwidth\tLocal\tRemote")
		for _, n := range gv.Nodes {
			if len(n.Links) == 0 {
				fmt.Fprintf(tw, "%s\t-\t\t\t\t\n", n.ID)
			}
			for _, l := range n.Links {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", n.ID, l.To, l.Metric, optBytesPerSec(l.MaxBW, "-"), l.LocalAddr, l.RemoteAddr)
			}
		}
		tw.Flush()
		tw = newTable(w, "\nPrefix\tAdvertiser\tMetric\tPath bandwidth\tExternal")
		for _, p := range gv.Prefixes {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\n", p.Prefix, p.Advertiser, p.Metric, optBytesPerSec(p.PathBW, "-"), p.External)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func printOSPFSummaries(w io.Writer, v []wire.OSPFSummary) error {
	tw := newTable(w, "Into area\tPrefix\tMetric\tFrom area\tAdvertisers\tOriginal PB\tCapacity\tPath bandwidth")
	for _, s := range v {
		orig := "-"
		if s.OrigPathBW != nil {
			orig = formatBytesPerSec(float64(*s.OrigPathBW))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Area, s.Prefix, s.Metric, s.FromArea, strings.Join(s.Advertisers, ","),
			orig, formatBytesPerSec(float64(s.Capacity)), formatBytesPerSec(float64(s.PathBW)))
	}
	return tw.Flush()
}

// printOSPFCleared says how many neighbours were dropped, and which
// (routerID "": every one).
func printOSPFCleared(w io.Writer, v wire.Cleared, routerID string) error {
	who := "every neighbour"
	if routerID != "" {
		who = "neighbour " + routerID
	}
	fmt.Fprintf(w, "ospf: %d neighbours cleared (%s)\n", v.Cleared, who)
	return nil
}
