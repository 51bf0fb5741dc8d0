package main

import (
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, lsdbCommand) }

// lsdbCommand: farectl lsdb [--level L] [--area A] [--protocol P].
func lsdbCommand(g *globals) *cobra.Command {
	var level int
	var area, proto string
	path := func([]string) string {
		q := url.Values{}
		if level != 0 {
			q.Set("level", fmt.Sprint(level))
		}
		if area != "" {
			q.Set("area", area)
		}
		if proto != "" {
			q.Set("protocol", proto)
		}
		return "/lsdb?" + q.Encode()
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
	for _, gv := range v {
		where := fmt.Sprintf("level %d", gv.Level)
		if gv.Area != "" {
			where = "area " + gv.Area
		}
		fmt.Fprintf(w, "%s %s, self %s: %d nodes, %d prefixes\n", gv.Protocol, where, gv.Self, len(gv.Nodes), len(gv.Prefixes))
		tw := newTable(w, "Node\tName\tNeighbor\tName\tMetric\tMax bandwidth\tLocal\tRemote")
		for _, n := range gv.Nodes {
			name := n.Name
			if n.Overload {
				name += " (OL)"
			}
			if len(n.Links) == 0 {
				fmt.Fprintf(tw, "%s\t%s\t-\t\t\t\t\t\n", n.ID, name)
			}
			for _, l := range n.Links {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", n.ID, name, l.To, l.ToName, l.Metric, optBytesPerSec(l.MaxBW, "-"), l.LocalAddr, l.RemoteAddr)
			}
		}
		tw.Flush()
		tw = newTable(w, "\nPrefix\tAdvertiser\tName\tMetric\tPath bandwidth")
		for _, p := range gv.Prefixes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.Prefix, p.Advertiser, p.Name, p.Metric, optBytesPerSec(p.PathBW, "-"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
