package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// bfdCommand: farectl bfd sessions.
func bfdCommand(g *globals) *cobra.Command {
	return group("bfd", "BFD sessions of the daemon's one BFD speaker (IS-IS, OSPF and iNOF share it)",
		view(g, "sessions", "BFD sessions: state, clients, timers in force, authentication, counters", "/bfd/sessions",
			func(w io.Writer, v wire.BFDSessions) error { return printBFDSessions(w, v, time.Now()) }, "session", "peers"))
}

// printBFDSessions writes the sessions as a table, then the speaker's
// counters (sorted).
func printBFDSessions(w io.Writer, v wire.BFDSessions, now time.Time) error {
	err := printTable(w, "Interface\tPeer\tLocal\tState\tRemote\tDiag\tClients\tAuth\tTx\tDetect\tUp since\tUps\tDowns\tSent\tReceived\tRejected", v.Sessions, func(tw io.Writer, s wire.BFDSession) {
		since := "-"
		if !s.UpSince.IsZero() && s.State == "Up" {
			since = now.Sub(s.UpSince).Round(time.Second).String() + " ago"
		}
		auth := "-"
		if s.Auth != "" {
			auth = s.Auth
			if s.AuthKeyID != nil {
				auth += fmt.Sprintf("/%d", *s.AuthKeyID)
			}
			if s.AuthExpiredKey {
				auth += " (expired)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Interface, s.Peer, s.Local, s.State, s.RemoteState,
			s.Diag, dashJoin(s.Clients), auth, s.TxInterval, s.DetectTime, since, s.Ups, s.Downs, s.Sent, s.Received, s.Rejected)
	})
	printCounters(w, "%s: %d\n", v.Counters)
	return err
}
