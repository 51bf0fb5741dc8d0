package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// statusCommand: farectl status.
func statusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "Daemon status: version, router id, uptime, modules", Args: cobra.NoArgs,
		RunE: show(g, at("/status"), printStatus),
	}
}

// reloadCommand: farectl reload.
func reloadCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "reload", Short: "Re-read the configuration file (as SIGHUP does) and say what each module changed", Args: cobra.NoArgs,
		RunE: act(g, "/reload", func([]string) any { return nil }, printReload),
	}
}

// printStatus: the daemon's identity, then the warnings and the panics
// recovered per module (each a bug).
func printStatus(w io.Writer, v wire.Status) error {
	fmt.Fprintf(w, "version    %s\nhostname   %s\nrouter-id  %s\nconfig     %s\nuptime     %s\nmodules    %s\nforwarding ipv4 %s, ipv6 %s\n",
		v.Version, v.Hostname, v.RouterID, v.Config, v.Uptime, strings.Join(v.Modules, ", "), onOff(v.Forwarding.IPv4), onOff(v.Forwarding.IPv6))
	for _, m := range v.Warnings {
		fmt.Fprintf(w, "WARNING    %s\n", m)
	}
	for _, m := range sortedKeys(v.Panics) {
		fmt.Fprintf(w, "BUG        %s: %d panics recovered (inputs dropped; the log has the first of each with its stack)\n", m, v.Panics[m])
	}
	return nil
}

// printReload: what each module did with the new configuration.
func printReload(w io.Writer, v wire.Reload) error {
	fmt.Fprintln(w, "configuration reloaded")
	for _, n := range v.Started {
		fmt.Fprintf(w, "  %s: started (section added)\n", n)
	}
	for _, n := range v.Stopped {
		fmt.Fprintf(w, "  %s: stopped (section removed)\n", n)
	}
	for _, name := range sortedKeys(v.Modules) {
		m := v.Modules[name]
		if len(m.Changed) == 0 && len(m.Warnings) == 0 && m.Error == "" {
			fmt.Fprintf(w, "  %s: unchanged\n", name)
			continue
		}
		fmt.Fprintf(w, "  %s:\n", name)
		for _, c := range m.Changed {
			fmt.Fprintf(w, "    changed  %s\n", c)
		}
		for _, x := range m.Warnings {
			fmt.Fprintf(w, "    NOT applied  %s\n", x)
		}
		if m.Error != "" {
			fmt.Fprintf(w, "    error  %s\n", m.Error)
		}
	}
	return nil
}
