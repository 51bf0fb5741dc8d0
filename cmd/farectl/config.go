package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, runningConfigCommand, logCommand) }

// runningConfigCommand: farectl running-config.
func runningConfigCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "running-config", Short: "The configuration in force, defaults included, as YAML (it parses back to the same)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.RunningConfig
			b, err := g.get(cmd.Context(), "/running-config", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "# running configuration of fared (from %s, with defaults)\n%s", v.File, v.YAML)
			return nil
		},
	}
}

// logCommand: farectl log level LEVEL.
func logCommand(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "log", Short: "The daemon's logging"}
	c.AddCommand(&cobra.Command{
		Use: "level debug|info|warn|error", Short: "Set the log level until the next reload (which applies the config's)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v wire.LogLevel
			b, err := g.post(cmd.Context(), "/log/level", wire.LogLevel{Level: args[0]}, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "log level %s\n", v.Level)
			return nil
		},
	})
	return c
}
