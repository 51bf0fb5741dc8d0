package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// isisCommand: farectl isis neighbors | interfaces | database | levels |
// leaks | flooding | bandwidth | overload | clear adjacency.
func isisCommand(g *globals) *cobra.Command {
	level := new(int)
	c := group("isis", "IS-IS state",
		view(g, "neighbors", "IS-IS adjacencies", "/isis/neighbors",
			func(w io.Writer, v []wire.ISISNeighbor) error { return printISISNeighbors(w, v, *level) }, "neighbor", "nei"),
		view(g, "interfaces", "IS-IS interfaces and their counters", "/isis/interfaces", printISISInterfaces, "interface", "int"),
		isisDatabaseCmd(g, level),
		view(g, "levels", "Per-level summary: LSPs, originations, ATT, leaking", "/isis/levels", printISISLevels),
		view(g, "leaks", "Prefixes leaked between levels and where their Path Bandwidth came from", "/isis/leaks", printISISLeaks),
		view(g, "flooding", "Flooding reduction per interface: who gets new LSPs, why, and LSPs sent, suppressed, duplicated", "/isis/flooding", printISISFlooding),
		bandwidthCommand(g, "isis"), isisOverloadCommand(g), isisClearCommand(g))
	c.PersistentFlags().IntVarP(level, "level", "l", 0, "only this level (1 or 2)")
	return c
}

// isisDatabaseCmd: the LSPs of --level, one with an argument.
func isisDatabaseCmd(g *globals, level *int) *cobra.Command {
	return databaseCommand(g, "database [LSPID|HOSTNAME[.PP-FF]]", "IS-IS link-state database", "decode every TLV and sub-TLV",
		func(args []string, detail bool) string {
			return query("/isis/database", "level", optional(*level), "lsp", firstArg(args), "detail", optional(detail))
		}, printISISDatabase)
}

// isisOverloadCommand sets the overload bit at run time (maintenance
// drains): on, off, or config (back to the file's value).
func isisOverloadCommand(g *globals) *cobra.Command {
	get := show(g, at("/isis/overload"), printISISOverload)
	set := act(g, "/isis/overload", func(args []string) any { return wire.ISISOverloadRequest{Overload: args[0]} }, printISISOverload)
	return &cobra.Command{
		Use:   "overload [on|off|config]",
		Short: "Show or set the overload bit at run time (a maintenance drain); config returns to the file's value",
		Long: "Without an argument, show the overload bit. on/off set it at run time: our LSPs carry it at once,\n" +
			"so neighbours route around this node but still reach its own prefixes. The setting survives reloads\n" +
			"that leave `overload` in the file unchanged; `config` drops it.",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"on", "off", "config"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return get(cmd, args)
			}
			return set(cmd, args)
		},
	}
}

// isisClearCommand: farectl isis clear adjacency [IFACE].
func isisClearCommand(g *globals) *cobra.Command {
	return clearCommand(g, "Reset IS-IS state (as vtysh's clear isis ...)", &cobra.Command{
		Use: "adjacency [IFACE]", Aliases: []string{"adjacencies", "neighbor", "neighbors"},
		Short: "Drop the adjacencies of one interface (all without IFACE); they re-form through hellos",
	}, "/isis/clear-adjacency", func(iface string) any { return wire.ISISClearRequest{Interface: iface} }, printISISCleared)
}

// printISISNeighbors: a row per adjacency (level 0: all, else those of
// that level).
func printISISNeighbors(w io.Writer, v []wire.ISISNeighbor, level int) error {
	return printTable(w, "System Id\tHostname\tInterface\tLevel\tState\tHold\tSNPA\tIPv4", v, func(tw io.Writer, n wire.ISISNeighbor) {
		if level == 0 || strings.Contains(n.Level, fmt.Sprint(level)) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\n", n.SystemID, n.Hostname, n.Interface, n.Level, n.State, n.ExpiresIn, n.SNPA, strings.Join(n.IPv4, ","))
		}
	})
}

// printISISInterfaces: two lines per circuit, a line per LAN level, then
// its counters.
func printISISInterfaces(w io.Writer, v []wire.ISISInterface) error {
	for _, i := range v {
		fmt.Fprintf(w, "%s  state %s  type %s  ifindex %d  mtu %d  metric %d  bandwidth %s%s  circuit-id %d\n",
			i.Name, i.State, i.Type, i.Index, i.MTU, i.Metric, formatBytesPerSec(float64(i.BandwidthBytes)), overrideNote(i.BandwidthOverride), i.CircuitID)
		fmt.Fprintf(w, "  addresses %s  hello %gs  hold %gs  adjacencies up %d\n", strings.Join(i.Addresses, ", "), i.HelloInterval, i.HoldTime, i.Adjacencies)
		for _, l := range i.Levels {
			fmt.Fprintf(w, "  L%d: DIS %v  LAN id %s  priority %d\n", l.Level, l.DIS, l.LANID, i.Priority)
		}
		printCounters(w, "    %-32s %d\n", i.Counters)
	}
	return nil
}

// printISISDatabase: a row per LSP (ours starred); with detail, every
// LSP's TLVs decoded below.
func printISISDatabase(w io.Writer, v []wire.ISISLSP, detail bool) error {
	err := printTable(w, "Level\tLSP ID\tHostname\tSeq\tChecksum\tLifetime\tLen\tATT/P/OL", v, func(tw io.Writer, l wire.ISISLSP) {
		fmt.Fprintf(tw, "L%d\t%s%s\t%s\t%s\t%s\t%d\t%d\t%d/%d/%d\n", l.Level, l.LSPID, ownMark(l.Own), l.Hostname, l.SeqHex, l.ChecksumX, l.Lifetime, l.Length,
			b2i(l.Attached), 0, b2i(l.Overload))
	})
	if err != nil || !detail {
		return err
	}
	for _, l := range v {
		fmt.Fprintf(w, "\n%s (L%d) seq %s checksum %s lifetime %d\n", l.LSPID, l.Level, l.SeqHex, l.ChecksumX, l.Lifetime)
		for _, t := range l.TLVs {
			printTLV(w, t)
		}
	}
	return nil
}

func printISISLevels(w io.Writer, v []wire.ISISLevel) error {
	return printTable(w, "Level\tLSPs\tOriginated\tATT\tOverload\tLeaked into\tLeak recomputations from\tConverged", v, func(tw io.Writer, l wire.ISISLevel) {
		fmt.Fprintf(tw, "L%d\t%d\t%d\t%v\t%s\t%d\t%d\t%v\n", l.Level, l.LSPs, l.Originated, l.Attached, onOff(l.Overload), l.LeakedInto, l.Recomputations, l.Converged)
	})
}

// printISISLeaks: a row per leaked prefix, its Path Bandwidth with the
// two terms of the min it is.
func printISISLeaks(w io.Writer, v []wire.ISISLeak) error {
	return printTable(w, "Prefix\tFrom\tInto\tMetric\tDown\tPath bw\t= min(original\tcapacity to advertisers)\tAdvertisers", v, func(tw io.Writer, l wire.ISISLeak) {
		fmt.Fprintf(tw, "%s\tL%d\tL%d\t%d\t%v\t%s\t%s\t%s\t%s\n", l.Prefix, l.FromLevel, l.IntoLevel, l.Metric, l.Down,
			formatBytesPerSec(l.PathBW), optBytesPerSec(l.OrigPathBW, "none"), formatBytesPerSec(l.Capacity), strings.Join(l.Advertisers, ","))
	})
}

func printISISOverload(w io.Writer, v wire.ISISOverload) error {
	src := "from the config"
	if v.RunTime {
		src = fmt.Sprintf("set at run time; config says %s", onOff(v.Configured))
	}
	fmt.Fprintf(w, "isis overload %s (%s)\n", onOff(v.Overload), src)
	return nil
}

// printISISCleared says how many adjacencies were dropped, and where
// (iface "": on every interface).
func printISISCleared(w io.Writer, v wire.Cleared, iface string) error {
	return printCleared(w, "isis: %d adjacencies cleared %s\n", v, iface, "on every interface", "on ")
}

// printISISFlooding: the reduction's setting, then a row per interface:
// whether it refloods and why, its LSP counts and the last decision.
func printISISFlooding(w io.Writer, v wire.ISISFlooding) error {
	fmt.Fprintf(w, "flooding reduction %s (%d reflooder(s) per two-hop neighbour)\n", onOff(v.Reduction), v.Reflooders)
	return printTable(w, "Interface\tNeighbor\tRefloods\tWhy\tSent\tSuppressed\tReceived\tDuplicates\tLast decision", v.Interfaces, func(tw io.Writer, i wire.ISISFloodingInterface) {
		last := i.LastReason
		if i.LastBy != "" {
			last += " (by " + i.LastBy + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", i.Name, dash(i.Neighbor), i.Refloods, i.Why,
			i.LSPsSent, i.LSPsSuppressed, i.LSPsReceived, i.Duplicates, dash(last))
	})
}
