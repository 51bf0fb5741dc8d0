package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, qosCommand) }

// qosCommand: farectl qos status | pfc [restore IFACE] | watchdog | ecn | flows.
func qosCommand(g *globals) *cobra.Command {
	qc := &cobra.Command{Use: "qos", Short: "Lossless QoS: PFC, deadlock watchdog, ECN, large/small flows"}
	qc.AddCommand(&cobra.Command{
		Use: "status", Short: "Backend and supported features per interface", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSStatus
			b, err := g.get(cmd.Context(), "/qos/status", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			state := "applied"
			if !v.Applied {
				state = "NOT applied"
			}
			fmt.Fprintf(g.out, "backend %s  poll %gs  %s  polls %d\n", v.Backend, v.PollSeconds, state, v.Polls)
			if v.LastError != "" {
				fmt.Fprintf(g.out, "last error: %s\n", v.LastError)
			}
			tw := g.table("Interface\tFeature\tSupported\tHow / why not")
			for _, i := range v.Interfaces {
				for _, f := range i.Features {
					yes := "yes"
					if !f.Supported {
						yes = "NO"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", i.Name, f.Feature, yes, f.Reason)
				}
			}
			return tw.Flush()
		},
	})
	pfc := &cobra.Command{
		Use: "pfc", Short: "PFC per interface and priority: enabled, XOFF, PAUSE counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSPFC
			b, err := g.get(cmd.Context(), "/qos/pfc", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Interface\tMode\tPrio\tConfigured\tEnabled\tXOFF\tPAUSE rx\tPAUSE tx\tOnsets\tXOFF/XON/headroom")
			for _, i := range v.Interfaces {
				for _, p := range i.Priorities {
					if !p.Configured && !p.Enabled && p.PauseRx == 0 && p.PauseTx == 0 {
						continue
					}
					xoff := "?"
					if p.XOFF != nil {
						xoff = map[bool]string{true: "XOFF", false: "-"}[*p.XOFF]
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%v\t%s\t%d\t%d\t%d\t%d/%d/%d\n", i.Name, i.Mode, p.Priority, p.Configured, p.Enabled,
						xoff, p.PauseRx, p.PauseTx, p.XOFFOnsets, p.XOFFBytes, p.XONBytes, p.Headroom)
				}
			}
			return tw.Flush()
		},
	}
	pfc.AddCommand(&cobra.Command{
		Use: "restore IFACE", Short: "Turn PFC and deadlock detection back on after the deadlock limit", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v wire.QoSRestore
			b, err := g.post(cmd.Context(), "/qos/pfc/restore", wire.QoSRestoreRequest{Interface: args[0]}, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			if v.Restored {
				fmt.Fprintf(g.out, "%s: PFC and deadlock detection restored (mode %s)\n", v.Interface, v.Mode)
			} else {
				fmt.Fprintf(g.out, "%s: nothing to restore (mode %s)\n", v.Interface, v.Mode)
			}
			return nil
		},
	})
	qc.AddCommand(pfc)
	qc.AddCommand(&cobra.Command{
		Use: "watchdog", Short: "PFC deadlock watchdog: state per queue, detections, recoveries, limit", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSWatchdog
			b, err := g.get(cmd.Context(), "/qos/watchdog", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			limit := "none"
			if v.Limit > 0 {
				limit = fmt.Sprintf("%d in %gs", v.Limit, v.WindowSeconds)
			}
			fmt.Fprintf(g.out, "enabled %v  detection %gs  restoration %gs  poll %gs  action %s  limit %s\n\n",
				v.Enabled, v.DetectionSeconds, v.RestorationSeconds, v.PollSeconds, v.Action, limit)
			tw := g.table("Interface\tMode\tDetections\tRecoveries\tLimit hits\tIn window\tRecovers at")
			for _, i := range v.Interfaces {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", i.Name, i.Mode, i.Detections, i.Recoveries, i.LimitHits, i.InWindow, dash(i.RecoversAt))
			}
			tw.Flush()
			fmt.Fprintln(g.out)
			tw = g.table("Interface\tPrio\tMode\tXOFF since\tDetections\tLast detection")
			for _, q := range v.Queues {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\n", q.Interface, q.Priority, q.Mode, dash(q.XOFFSince), q.Detections, dash(q.LastDetect))
			}
			tw.Flush()
			if len(v.Events) > 0 {
				fmt.Fprintln(g.out, "\nevents:")
				for _, e := range v.Events {
					line := fmt.Sprintf("  %s  %-9s %s", e.At, e.Kind, e.Interface)
					if e.Priority >= 0 {
						line += fmt.Sprintf(" priority %d", e.Priority)
					}
					if e.LatencySeconds > 0 {
						line += fmt.Sprintf(" (XOFF for %.3fs)", e.LatencySeconds)
					}
					fmt.Fprintln(g.out, line)
				}
			}
			return nil
		},
	})
	qc.AddCommand(&cobra.Command{
		Use: "ecn", Short: "WRED/ECN profiles and marks per queue", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSECN
			b, err := g.get(cmd.Context(), "/qos/ecn", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Profile\tECN\tMark at\tColour\tMin\tMax\tProbability")
			for _, p := range v.Profiles {
				for _, c := range p.Colors {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d%%\n", p.Name, p.ECN, p.Mark, c.Color, c.Min, c.Max, c.Probability)
				}
			}
			tw.Flush()
			fmt.Fprintln(g.out)
			tw = g.table("Interface\tPrio\tProfile\tMarks\tDrops\tDepth")
			for _, q := range v.Queues {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\n", q.Interface, q.Priority, q.Profile, q.Marks, q.Drops, q.Depth)
			}
			return tw.Flush()
		},
	})
	qc.AddCommand(&cobra.Command{
		Use: "flows", Short: "Large/small flows: classification and bytes per class", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSFlows
			b, err := g.get(cmd.Context(), "/qos/flows", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			if v.Rule == nil {
				fmt.Fprintln(g.out, "no large-flow rule configured")
			} else {
				fmt.Fprintf(g.out, "elephant: over %s after %d bytes -> priority %d, %s\n",
					formatBytesPerSec(v.Rule.RateBps/8), v.Rule.Size, v.Rule.Priority, v.Rule.Color)
			}
			for _, i := range v.Interfaces {
				fmt.Fprintf(g.out, "\n%s: elephant bytes %d, mice bytes %d\n", i.Name, i.ElephantBytes, i.MiceBytes)
				if len(i.Classes) > 0 {
					tw := g.table("  Class\tPrio\tBytes\tPackets\tBacklog\tDrops")
					for _, c := range i.Classes {
						fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", c.Name, c.Priority, c.Bytes, c.Packets, c.Backlog, c.Drops)
					}
					tw.Flush()
				}
				var el, mice []string
				for _, f := range i.Flows {
					if f.Elephant {
						el = append(el, f.Key)
					} else {
						mice = append(mice, f.Key)
					}
				}
				if len(el) > 0 {
					fmt.Fprintf(g.out, "  elephants: %s\n", strings.Join(el, ", "))
				}
				if len(mice) > 0 {
					fmt.Fprintf(g.out, "  mice: %s\n", strings.Join(mice, ", "))
				}
			}
			return nil
		},
	})
	return qc
}
