package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, bfdCommand) }

// bfdCommand: farectl bfd sessions.
func bfdCommand(g *globals) *cobra.Command {
	bc := &cobra.Command{Use: "bfd", Short: "BFD sessions of the IS-IS and OSPF adjacencies"}
	bc.AddCommand(&cobra.Command{
		Use: "sessions", Aliases: []string{"session", "peers"}, Short: "BFD sessions: state, timers in force, counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.BFDSessions
			b, err := g.get(cmd.Context(), "/bfd/sessions", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Interface\tPeer\tLocal\tState\tRemote\tDiag\tTx\tDetect\tUp since\tUps\tDowns\tSent\tReceived")
			for _, s := range v.Sessions {
				since := "-"
				if !s.UpSince.IsZero() && s.State == "Up" {
					since = time.Since(s.UpSince).Round(time.Second).String() + " ago"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\t%s\t%d\t%d\t%d\t%d\n", s.Interface, s.Peer, s.Local, s.State, s.RemoteState,
					s.Diag, s.TxInterval, s.DetectTime, since, s.Ups, s.Downs, s.Sent, s.Received)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for k, n := range v.Counters {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d\n", k, n)
			}
			return nil
		},
	})
	return bc
}
