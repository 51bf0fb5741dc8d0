// Command farectl inspects and drives a running fared over its control
// socket. Every show command prints a table, or with -j the API's JSON.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/lsdb"
)

type globals struct {
	socket string
	json   bool
	out    io.Writer
}

func main() {
	if err := newRoot(os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "farectl:", err)
		os.Exit(1)
	}
}

func newRoot(out io.Writer) *cobra.Command {
	g := &globals{out: out}
	root := &cobra.Command{
		Use:           "farectl",
		Short:         "Inspect and drive fared",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.socket, "socket", "s", "", "fared control socket (default $FARED_SOCKET or "+api.DefaultSocket+")")
	root.PersistentFlags().BoolVarP(&g.json, "json", "j", false, "print JSON")

	isisCmd := &cobra.Command{Use: "isis", Short: "IS-IS state"}
	var level int
	isisCmd.PersistentFlags().IntVarP(&level, "level", "l", 0, "only this level (1 or 2)")
	isisCmd.AddCommand(&cobra.Command{
		Use: "neighbors", Aliases: []string{"neighbor", "nei"}, Short: "IS-IS adjacencies", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []isis.NeighborView
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
			var v []isis.InterfaceView
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
			var v []isis.LSPView
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
	addISISWriteCommands(isisCmd, g)
	root.AddCommand(isisCmd)
	addRouteCommands(root, g)
	addOSPFCommands(root, g)

	root.AddCommand(&cobra.Command{
		Use: "lsdb", Short: "The protocol-neutral topology snapshot used by SPF", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []lsdb.View
			b, err := g.get(cmd.Context(), "/lsdb", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, gv := range v {
				fmt.Fprintf(g.out, "%s level %d, self %s: %d nodes, %d prefixes\n", gv.Protocol, gv.Level, gv.Self, len(gv.Nodes), len(gv.Prefixes))
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
			}
			return nil
		},
	})
	root.AddCommand(&cobra.Command{
		Use: "status", Short: "Daemon status", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v map[string]any
			b, err := g.get(cmd.Context(), "/status", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			for _, k := range sortedKeys(v) {
				fmt.Fprintf(g.out, "%-10s %v\n", k, v[k])
			}
			return nil
		},
	})
	return root
}

func (g *globals) get(ctx context.Context, path string, v any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := api.NewClient(api.SocketPath(g.socket)).Get(ctx, path)
	if err != nil {
		return nil, err
	}
	if !g.json {
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("unexpected answer from fared: %w", err)
		}
	}
	return b, nil
}

// emit prints the raw JSON (for -j) or returns the error.
func (g *globals) emit(b []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = g.out.Write(b)
	return err
}

func (g *globals) table(header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(g.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// formatBytesPerSec shows a wire bandwidth (bytes/s) the way operators
// configure it (bits/s with a unit).
func formatBytesPerSec(b float64) string {
	bits := b * 8
	switch {
	case bits >= 1e30:
		return "max"
	case bits >= 1e12:
		return fmt.Sprintf("%.4gT", bits/1e12)
	case bits >= 1e9:
		return fmt.Sprintf("%.4gG", bits/1e9)
	case bits >= 1e6:
		return fmt.Sprintf("%.4gM", bits/1e6)
	case bits >= 1e3:
		return fmt.Sprintf("%.4gK", bits/1e3)
	}
	return fmt.Sprintf("%g", bits)
}

// printTLV renders one decoded TLV as indented "key: value" lines; nested
// lists (neighbours, prefixes, sub-TLVs) are indented below their parent.
func printTLV(w io.Writer, t map[string]any) {
	head := fmt.Sprintf("TLV %v", t["type"])
	if n, ok := t["name"]; ok {
		head += " " + fmt.Sprint(n)
	}
	if l, ok := t["length"]; ok {
		head += fmt.Sprintf(" (length %v)", l)
	}
	fmt.Fprintf(w, "  %s\n", head)
	printFields(w, t, "    ", map[string]bool{"type": true, "name": true, "length": true})
}

func printFields(w io.Writer, m map[string]any, indent string, skip map[string]bool) {
	for _, k := range sortedKeys(m) {
		if skip[k] {
			continue
		}
		switch v := m[k].(type) {
		case []any:
			if len(v) == 0 {
				continue
			}
			if _, nested := v[0].(map[string]any); !nested {
				fmt.Fprintf(w, "%s%s: %v\n", indent, k, v)
				continue
			}
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			for _, it := range v {
				if mm, ok := it.(map[string]any); ok {
					fmt.Fprintf(w, "%s  -\n", indent)
					printFields(w, mm, indent+"    ", nil)
				}
			}
		case []map[string]any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			for _, mm := range v {
				fmt.Fprintf(w, "%s  -\n", indent)
				printFields(w, mm, indent+"    ", nil)
			}
		case map[string]any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			printFields(w, v, indent+"  ", nil)
		default:
			fmt.Fprintf(w, "%s%s: %v\n", indent, k, v)
		}
	}
}
