package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

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
