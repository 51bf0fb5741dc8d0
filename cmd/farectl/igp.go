// What IS-IS and OSPF share: the database, clear and bandwidth commands.

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// databaseCommand is `PROTO database [ARG]`: the LSDB at the path its
// filters give, every entry decoded in full below the table with
// --detail.
func databaseCommand[T any](g *globals, use, short, detailHelp string, path func(args []string, detail bool) string,
	pr func(w io.Writer, v T, detail bool) error) *cobra.Command {
	var detail bool
	c := &cobra.Command{
		Use: use, Aliases: []string{"db"}, Short: short, Args: cobra.MaximumNArgs(1),
		RunE: show(g, func(args []string) string { return path(args, detail) }, func(w io.Writer, v T) error { return pr(w, v, detail) }),
	}
	c.Flags().BoolVarP(&detail, "detail", "d", false, detailHelp)
	return c
}

// clearCommand is `farectl PROTO clear WHAT [ARG]`: POST path with the
// body body(ARG) ("" without: every one), then say what pr makes of the
// count.
func clearCommand(g *globals, parentShort string, c *cobra.Command, path string, body func(arg string) any,
	pr func(w io.Writer, v wire.Cleared, arg string) error) *cobra.Command {
	var arg string
	c.Args = cobra.MaximumNArgs(1)
	c.RunE = act(g, path, func(args []string) any {
		arg = firstArg(args)
		return body(arg)
	}, func(w io.Writer, v wire.Cleared) error { return pr(w, v, arg) })
	return group("clear", parentShort, c)
}

// printCleared says how many clear dropped (format takes the count and
// what): every (arg "") or the one named (one+arg).
func printCleared(w io.Writer, format string, v wire.Cleared, arg, every, one string) error {
	what := every
	if arg != "" {
		what = one + arg
	}
	_, err := fmt.Fprintf(w, format, v.Cleared, what)
	return err
}

// bandwidthCommand overrides an interface's advertised bandwidth of one
// protocol (isis, ospf) at run time, or drops the override (--clear).
func bandwidthCommand(g *globals, proto string) *cobra.Command {
	var clear bool
	set := act(g, "/"+proto+"/bandwidth", func(args []string) any {
		req := wire.BandwidthRequest{Interface: args[0], Clear: clear}
		if !clear {
			req.Bandwidth = args[1]
		}
		return req
	}, func(w io.Writer, v wire.BandwidthOverride) error { return printBandwidthOverride(w, v, proto) })
	cmd := &cobra.Command{
		Use:   "bandwidth IFACE [BANDWIDTH | --clear]",
		Short: "Override an interface's advertised bandwidth at run time (e.g. 40G), or --clear the override",
		Long: "Override an interface's advertised bandwidth at run time (bits/s with K, M, G or T, e.g. 40G).\n" +
			"The override is logged, and survives reloads that leave the interface's configured bandwidth\n" +
			"unchanged (the reload answer says \"override kept\"); a reload that changes it drops the override.\n" +
			"--clear puts the configured bandwidth (or the interface speed) back in force.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case clear && len(args) == 2:
				return fmt.Errorf("give a bandwidth or --clear, not both")
			case !clear && len(args) == 1:
				return fmt.Errorf("give a bandwidth (e.g. 40G), or --clear to drop the override")
			}
			return set(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "drop the run-time override")
	return cmd
}

func printBandwidthOverride(w io.Writer, v wire.BandwidthOverride, proto string) error {
	if v.Cleared {
		fmt.Fprintf(w, "%s interface %s: bandwidth override cleared (configured bandwidth in force)\n", proto, v.Interface)
		return nil
	}
	fmt.Fprintf(w, "%s interface %s: bandwidth %s (run-time override)\n", proto, v.Interface, v.Bandwidth)
	return nil
}

// overrideNote marks a bandwidth set at run time.
func overrideNote(o string) string {
	if o == "" {
		return ""
	}
	return " (run-time override " + o + ")"
}
