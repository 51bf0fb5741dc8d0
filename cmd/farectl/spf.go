package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// spfCommand: farectl spf log.
func spfCommand(g *globals) *cobra.Command {
	return group("spf", "SPF state",
		view(g, "log", "Recent SPF runs: kind and why, duration, nodes, routes changed, trigger", "/spf/log",
			func(w io.Writer, v wire.SPFView) error { return printSPFLog(w, v, time.Now()) }))
}

// printSPFLog: each protocol's back-off state (its timers relative to
// now), then a row per recent run: its path and why (a capacity change
// runs at once, outside the back-off: "at once"), what triggered it.
func printSPFLog(w io.Writer, v wire.SPFView, now time.Time) error {
	for _, p := range sortedKeys(v.Delays) {
		fmt.Fprintf(w, "%s SPF back-off (RFC 8405): %s\n", p, describeDelay(v.Delays[p], now))
	}
	fmt.Fprintln(w)
	return printTable(w, "When\tKind\tDuration\tNodes\tRoutes changed\tTrigger\tWhy", v.Log, func(tw io.Writer, e wire.SPFLogEntry) {
		kind := e.Kind
		if e.Capacity {
			kind += ", at once"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%d\t%s\t%s\n", e.At.Format(time.TimeOnly+".000"), kind, e.Duration, e.Nodes, e.RoutesChanged, e.Trigger, e.Reason)
	})
}

// describeDelay says the RFC 8405 state and its pending timers in words.
func describeDelay(d wire.SPFDelay, now time.Time) string {
	s := d.State
	in := func(t time.Time) string {
		if t.Before(now) {
			return "due"
		}
		return "in " + t.Sub(now).Round(time.Millisecond).String()
	}
	if !d.SPFAt.IsZero() {
		s += ", next SPF " + in(d.SPFAt)
	}
	if !d.LearnAt.IsZero() {
		s += ", learn timer ends " + in(d.LearnAt)
	}
	if !d.HolddownAt.IsZero() {
		s += ", holddown ends " + in(d.HolddownAt)
	}
	return s
}
