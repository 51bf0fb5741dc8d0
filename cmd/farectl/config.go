package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// runningConfigCommand: farectl running-config.
func runningConfigCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "running-config", Short: "The configuration in force, defaults included, as YAML (it parses back to the same)", Args: cobra.NoArgs,
		RunE: show(g, at("/running-config"), printRunningConfig),
	}
}

// logCommand: farectl log level LEVEL.
func logCommand(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "log", Short: "The daemon's logging"}
	c.AddCommand(&cobra.Command{
		Use: "level debug|info|warn|error", Short: "Set the log level until the next reload (which applies the config's)", Args: cobra.ExactArgs(1),
		RunE: act(g, "/log/level", func(args []string) any { return wire.LogLevel{Level: args[0]} }, printLogLevel),
	})
	return c
}

func printRunningConfig(w io.Writer, v wire.RunningConfig) error {
	_, err := fmt.Fprintf(w, "# running configuration of fared (from %s, with defaults)\n%s", v.File, v.YAML)
	return err
}

func printLogLevel(w io.Writer, v wire.LogLevel) error {
	_, err := fmt.Fprintf(w, "log level %s\n", v.Level)
	return err
}
