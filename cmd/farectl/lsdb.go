package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// lsdbCommand: farectl lsdb [--level L] [--area A] [--protocol P].
func lsdbCommand(g *globals) *cobra.Command {
	var level int
	var area, proto string
	path := func([]string) string {
		return query("/lsdb", "level", optional(level), "area", area, "protocol", proto)
	}
	c := &cobra.Command{
		Use: "lsdb", Short: "The protocol-neutral topology snapshots SPF ran on: every IS-IS level and OSPF area", Args: cobra.NoArgs,
		RunE: show(g, path, printLSDB),
	}
	c.Flags().IntVarP(&level, "level", "l", 0, "only this IS-IS level (1 or 2)")
	c.Flags().StringVarP(&area, "area", "a", "", "only this OSPF area")
	c.Flags().StringVarP(&proto, "protocol", "p", "", "only this protocol (isis, ospf)")
	return c
}

// printLSDB: per topology (an IS-IS level or OSPF area) its links and its
// prefixes, with the names of nodes where known.
func printLSDB(w io.Writer, v []wire.Topology) error {
	for _, t := range v {
		where := fmt.Sprintf("level %d", t.Level)
		if t.Area != "" {
			where = "area " + t.Area
		}
		fmt.Fprintf(w, "%s %s, self %s: %d nodes, %d prefixes\n", t.Protocol, where, t.Self, len(t.Nodes), len(t.Prefixes))
		if err := printTopology(w, t, true); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// printTopology prints a topology's nodes with their links, then its
// prefixes. named: the neutral view's columns (nodes' names, an overloaded
// node marked); else OSPF's (no names, external prefixes marked).
func printTopology(w io.Writer, t wire.Topology, named bool) error {
	nodeCols, prefixCols := "Node\tNeighbor\tMetric\tMax bandwidth\tLocal\tRemote", "\nPrefix\tAdvertiser\tMetric\tPath bandwidth\tExternal"
	if named {
		nodeCols, prefixCols = "Node\tName\tNeighbor\tName\tMetric\tMax bandwidth\tLocal\tRemote", "\nPrefix\tAdvertiser\tName\tMetric\tPath bandwidth"
	}
	err := printTable(w, nodeCols, t.Nodes, func(tw io.Writer, n wire.TopoNode) {
		node, noLinks := n.ID, "-\t\t\t\t" // a node without links: its Neighbor "-", the link's columns empty
		if named {
			name := n.Name
			if n.Overload {
				name += " (OL)"
			}
			node, noLinks = n.ID+"\t"+name, "-\t\t\t\t\t"
		}
		if len(n.Links) == 0 {
			fmt.Fprintf(tw, "%s\t%s\n", node, noLinks)
		}
		for _, l := range n.Links {
			to := l.To
			if named {
				to += "\t" + l.ToName
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", node, to, l.Metric, optBytesPerSec(l.MaxBW, "-"), l.LocalAddr, l.RemoteAddr)
		}
	})
	if err != nil {
		return err
	}
	return printTable(w, prefixCols, t.Prefixes, func(tw io.Writer, p wire.TopoPrefix) {
		if named {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.Prefix, p.Advertiser, p.Name, p.Metric, optBytesPerSec(p.PathBW, "-"))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\n", p.Prefix, p.Advertiser, p.Metric, optBytesPerSec(p.PathBW, "-"), p.External)
		}
	})
}
