package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, statusCommand, reloadCommand) }

// statusCommand: farectl status.
func statusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "Daemon status: version, router id, uptime, modules", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.Status
			b, err := g.get(cmd.Context(), "/status", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "version    %s\nhostname   %s\nrouter-id  %s\nconfig     %s\nuptime     %s\nmodules    %s\nforwarding ipv4 %s, ipv6 %s\n",
				v.Version, v.Hostname, v.RouterID, v.Config, v.Uptime, strings.Join(v.Modules, ", "), onOff(v.Forwarding.IPv4), onOff(v.Forwarding.IPv6))
			for _, w := range v.Warnings {
				fmt.Fprintf(g.out, "WARNING    %s\n", w)
			}
			for _, m := range sortedKeys(v.Panics) {
				fmt.Fprintf(g.out, "BUG        %s: %d panics recovered (inputs dropped; the log has the first of each with its stack)\n", m, v.Panics[m])
			}
			return nil
		},
	}
}

// reloadCommand: farectl reload.
func reloadCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "reload", Short: "Re-read the configuration file (as SIGHUP does) and say what each module changed", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.Reload
			b, err := g.post(cmd.Context(), "/reload", nil, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			printReload(g, v)
			return nil
		},
	}
}

func printReload(g *globals, v wire.Reload) {
	fmt.Fprintln(g.out, "configuration reloaded")
	for _, n := range v.Started {
		fmt.Fprintf(g.out, "  %s: started (section added)\n", n)
	}
	for _, n := range v.Stopped {
		fmt.Fprintf(g.out, "  %s: stopped (section removed)\n", n)
	}
	for _, name := range sortedKeys(v.Modules) {
		m := v.Modules[name]
		if len(m.Changed) == 0 && len(m.Warnings) == 0 && m.Error == "" {
			fmt.Fprintf(g.out, "  %s: unchanged\n", name)
			continue
		}
		fmt.Fprintf(g.out, "  %s:\n", name)
		for _, c := range m.Changed {
			fmt.Fprintf(g.out, "    changed  %s\n", c)
		}
		for _, w := range m.Warnings {
			fmt.Fprintf(g.out, "    NOT applied  %s\n", w)
		}
		if m.Error != "" {
			fmt.Fprintf(g.out, "    error  %s\n", m.Error)
		}
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
