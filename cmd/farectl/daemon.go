// The daemon's own nouns: its status, reload, the configuration in force
// and the log level.

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
	return view(g, "status", "Daemon status: version, router id, uptime, modules", "/status", printStatus)
}

// reloadCommand: farectl reload.
func reloadCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "reload", Short: "Re-read the configuration file (as SIGHUP does) and say what each module changed", Args: cobra.NoArgs,
		RunE: act(g, "/reload", func([]string) any { return nil }, printReload),
	}
}

// runningConfigCommand: farectl running-config.
func runningConfigCommand(g *globals) *cobra.Command {
	return view(g, "running-config", "The configuration in force, defaults included, as YAML (it parses back to the same)", "/running-config",
		printRunningConfig)
}

// logCommand: farectl log level LEVEL.
func logCommand(g *globals) *cobra.Command {
	return group("log", "The daemon's logging", &cobra.Command{
		Use: "level debug|info|warn|error", Short: "Set the log level until the next reload (which applies the config's)", Args: cobra.ExactArgs(1),
		RunE: act(g, "/log/level", func(args []string) any { return wire.LogLevel{Level: args[0]} }, printLogLevel),
	})
}

// printStatus: the daemon's identity, then the warnings and the panics
// recovered per module (each a bug).
func printStatus(w io.Writer, v wire.Status) error {
	fmt.Fprintf(w, "version    %s\nhostname   %s\nrouter-id  %s\nconfig     %s\nuptime     %s\nmodules    %s\nforwarding ipv4 %s, ipv6 %s\n",
		v.Version, v.Hostname, v.RouterID, v.Config, v.Uptime, strings.Join(v.Modules, ", "), onOff(v.Forwarding.IPv4), onOff(v.Forwarding.IPv6))
	for _, m := range v.Warnings {
		fmt.Fprintf(w, "WARNING    %s\n", m)
	}
	printCounters(w, "BUG        %s: %d panics recovered (inputs dropped; the log has the first of each with its stack)\n", v.Panics)
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

func printRunningConfig(w io.Writer, v wire.RunningConfig) error {
	_, err := fmt.Fprintf(w, "# running configuration of fared (from %s, with defaults)\n%s", v.File, v.YAML)
	return err
}

func printLogLevel(w io.Writer, v wire.LogLevel) error {
	_, err := fmt.Fprintf(w, "log level %s\n", v.Level)
	return err
}
