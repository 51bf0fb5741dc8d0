package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// ospfCommand: farectl ospf neighbors | interfaces | database [TYPE]
// [--area A] [--detail] | lsdb | summaries | bandwidth IFACE BW | clear
// neighbor.
func ospfCommand(g *globals) *cobra.Command {
	return group("ospf", "OSPF state",
		view(g, "neighbors", "OSPF neighbours", "/ospf/neighbors", printOSPFNeighbors, "neighbor", "nei"),
		view(g, "interfaces", "OSPF interfaces and their counters", "/ospf/interfaces", printOSPFInterfaces, "interface", "int"),
		ospfDatabaseCmd(g),
		lookup(g, "lsdb [AREA]", "The topology snapshot of each OSPF area", "/ospf/lsdb", "area", cobra.MaximumNArgs(1), printOSPFLSDB),
		view(g, "summaries", "The Summary LSAs this ABR originates, with their Path Bandwidth re-advertisement (draft-xu-lsr-fare §4.2)",
			"/ospf/summaries", printOSPFSummaries, "summary"),
		bandwidthCommand(g, "ospf"), ospfClearCommand(g))
}

// ospfDatabaseCmd: the LSAs of --area, those of one type with an
// argument.
func ospfDatabaseCmd(g *globals) *cobra.Command {
	var area string
	c := databaseCommand(g, "database [TYPE]",
		"OSPF link-state database (TYPE: router, network, summary, asbr-summary, external, opaque-link, opaque-area, opaque-as or a number)",
		"decode every LSA, TLV and sub-TLV",
		func(args []string, detail bool) string {
			return query("/ospf/database", "area", area, "type", firstArg(args), "detail", optional(detail))
		}, printOSPFDatabase)
	c.Flags().StringVarP(&area, "area", "a", "", "only this area (dotted quad, number, or AS)")
	return c
}

// ospfClearCommand: farectl ospf clear neighbor [ROUTER-ID].
func ospfClearCommand(g *globals) *cobra.Command {
	return clearCommand(g, "Reset OSPF state (as vtysh's clear ip ospf ...)", &cobra.Command{
		Use: "neighbor [ROUTER-ID]", Aliases: []string{"neighbors", "neighbour"},
		Short: "Drop one neighbour (all without ROUTER-ID); it re-forms through hellos and a new database exchange",
	}, "/ospf/clear-neighbor", func(id string) any { return wire.OSPFClearRequest{RouterID: id} }, printOSPFCleared)
}

func printOSPFNeighbors(w io.Writer, v []wire.OSPFNeighbor) error {
	return printTable(w, "Neighbor ID\tPri\tState\tDead\tAddress\tInterface\tArea\tRole\tReq\tRxmt", v, func(tw io.Writer, n wire.OSPFNeighbor) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d\n", n.RouterID, n.Priority, n.State, n.DeadIn, n.Address, n.Interface, n.Area, n.Role, n.Requests, n.Retransmit)
	})
}

// printOSPFInterfaces: two lines per interface, then its counters.
func printOSPFInterfaces(w io.Writer, v []wire.OSPFInterface) error {
	for _, i := range v {
		fmt.Fprintf(w, "%s  area %s  state %s  type %s  ifindex %d  mtu %d  cost %d  bandwidth %s%s\n",
			i.Name, i.Area, i.State, i.Type, i.Index, i.MTU, i.Cost, formatBytesPerSec(float64(i.BandwidthBytes)), overrideNote(i.BandwidthOverride))
		fmt.Fprintf(w, "  address %s  hello %gs  dead %gs  priority %d  DR %s  BDR %s  neighbors %d  full %d\n",
			i.Address, i.HelloInterval, i.DeadInterval, i.Priority, dash(i.DR), dash(i.BDR), i.Neighbors, i.Adjacencies)
		printCounters(w, "    %-36s %d\n", i.Counters)
	}
	return nil
}

// printOSPFDatabase: a row per LSA (ours starred; a link-scope LSA names
// its link); with detail, every LSA decoded below.
func printOSPFDatabase(w io.Writer, v []wire.OSPFLSA, detail bool) error {
	err := printTable(w, "Area\tType\tLink State ID\tADV Router\tAge\tSeq#\tCkSum\tLen", v, func(tw io.Writer, l wire.OSPFLSA) {
		area := l.Area
		if l.Interface != "" {
			area += " (" + l.Interface + ")" // link scope: one table per link
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%d\t%s\t%s\t%d\n", area, l.TypeName, l.ID, l.AdvRouter, ownMark(l.Own), l.Age, l.SeqHex, l.ChecksumX, l.Length)
	})
	if err != nil || !detail {
		return err
	}
	for _, l := range v {
		fmt.Fprintf(w, "\n%s %s %s adv %s seq %s checksum %s age %d\n", l.Area, l.TypeName, l.ID, l.AdvRouter, l.SeqHex, l.ChecksumX, l.Age)
		if body, ok := l.Detail["body"].(map[string]any); ok {
			printFields(w, body, "  ", nil)
		}
	}
	return nil
}

// printOSPFLSDB: per area its links and its prefixes, in OSPF's columns.
func printOSPFLSDB(w io.Writer, v []wire.Topology) error {
	for _, t := range v {
		fmt.Fprintf(w, "ospf area %s, self %s: %d nodes, %d prefixes\n", t.Area, t.Self, len(t.Nodes), len(t.Prefixes))
		if err := printTopology(w, t, false); err != nil {
			return err
		}
	}
	return nil
}

func printOSPFSummaries(w io.Writer, v []wire.OSPFSummary) error {
	return printTable(w, "Into area\tPrefix\tMetric\tFrom area\tAdvertisers\tOriginal PB\tCapacity\tPath bandwidth", v, func(tw io.Writer, s wire.OSPFSummary) {
		orig := "-"
		if s.OrigPathBW != nil {
			orig = formatBytesPerSec(float64(*s.OrigPathBW))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Area, s.Prefix, s.Metric, s.FromArea, strings.Join(s.Advertisers, ","),
			orig, formatBytesPerSec(float64(s.Capacity)), formatBytesPerSec(float64(s.PathBW)))
	})
}

// printOSPFCleared says how many neighbours were dropped, and which
// (routerID "": every one).
func printOSPFCleared(w io.Writer, v wire.Cleared, routerID string) error {
	return printCleared(w, "ospf: %d neighbours cleared (%s)\n", v, routerID, "every neighbour", "neighbour ")
}
