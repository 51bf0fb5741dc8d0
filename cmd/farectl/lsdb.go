package main

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, lsdbCommand) }

// lsdbCommand: farectl lsdb [--level L] [--area A] [--protocol P].
func lsdbCommand(g *globals) *cobra.Command {
	var level int
	var area, proto string
	c := &cobra.Command{
		Use: "lsdb", Short: "The protocol-neutral topology snapshots SPF ran on: every IS-IS level and OSPF area", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			var v []wire.Topology
			b, err := g.get(cmd.Context(), "/lsdb?"+q.Encode(), &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, gv := range v {
				where := fmt.Sprintf("level %d", gv.Level)
				if gv.Area != "" {
					where = "area " + gv.Area
				}
				fmt.Fprintf(g.out, "%s %s, self %s: %d nodes, %d prefixes\n", gv.Protocol, where, gv.Self, len(gv.Nodes), len(gv.Prefixes))
				tw := g.table("Node\tName\tNeighbor\tName\tMetric\tMax bandwidth\tLocal\tRemote")
				for _, n := range gv.Nodes {
					name := n.Name
					if n.Overload {
						name += " (OL)"
					}
					if len(n.Links) == 0 {
						fmt.Fprintf(tw, "%s\t%s\t-\t\t\t\t\t\n", n.ID, name)
					}
					for _, l := range n.Links {
						bw := "-"
						if l.MaxBW != nil {
							bw = formatBytesPerSec(*l.MaxBW)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", n.ID, name, l.To, l.ToName, l.Metric, bw, l.LocalAddr, l.RemoteAddr)
					}
				}
				tw.Flush()
				tw = g.table("\nPrefix\tAdvertiser\tName\tMetric\tPath bandwidth")
				for _, p := range gv.Prefixes {
					pb := "-"
					if p.PathBW != nil {
						pb = formatBytesPerSec(*p.PathBW)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.Prefix, p.Advertiser, p.Name, p.Metric, pb)
				}
				tw.Flush()
				fmt.Fprintln(g.out)
			}
			return nil
		},
	}
	c.Flags().IntVarP(&level, "level", "l", 0, "only this IS-IS level (1 or 2)")
	c.Flags().StringVarP(&area, "area", "a", "", "only this OSPF area")
	c.Flags().StringVarP(&proto, "protocol", "p", "", "only this protocol (isis, ospf)")
	return c
}
