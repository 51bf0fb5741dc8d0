package main

import (
	"fmt"
	"sort"
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
	qc.AddCommand(&cobra.Command{
		Use: "ipcc", Short: "IPCC: RoCEv2 flow table, watched queues, switch-sent CNPs, bad packets", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSIPCC
			b, err := g.get(cmd.Context(), "/qos/ipcc", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "ipcc: %s\n", v.Runtime)
			if !v.Enabled {
				return nil
			}
			fmt.Fprintf(g.out, "priorities %v  poll %gs  CNP interval %gs  low %d  high %d  few %d  more %d (CNPs per interval)\n",
				v.Priorities, v.PollSeconds, v.IntervalSeconds, v.Low, v.High, v.Few, v.More)
			if len(v.Capture) > 0 || len(v.Watched) > 0 {
				fmt.Fprintf(g.out, "capture %s  watched %s\n", strings.Join(v.Capture, ","), strings.Join(v.Watched, ","))
			}
			fmt.Fprintf(g.out, "observed %d  captured %d  overflow %d  no route %d  QPs learnt %d  ambiguous %d  unmatched %d\n",
				v.Observed, v.Captured, v.Overflow, v.NoRoute, v.Learned, v.Ambiguous, v.Unmatched)
			fmt.Fprintf(g.out, "CNPs ordered %d  sent %d  send errors %d  skipped: no QP %d, interval %d  polls %d\n",
				v.CNPs, v.Sent, v.SendErrors, v.NoQP, v.RateLimit, v.Polls)
			fmt.Fprintf(g.out, "flows %d/%d (per port %d, per source %d)  evicted %d  refused: table full %d, port cap %d, source cap %d  port mismatch %d\n",
				v.FlowCount, v.MaxFlows, v.MaxFlowsPerPort, v.MaxFlowsPerSource, v.FlowsEvicted, v.RefusedTableFull, v.RefusedPortCap, v.RefusedSourceCap, v.PortMismatch)
			fmt.Fprintf(g.out, "ACKs naming another QP than the learnt one %d  QPs replaced %d\n", v.QPConflict, v.QPReplaced)
			if v.RouteLookups > 0 {
				fmt.Fprintf(g.out, "route cache %d entries  lookups %d  evicted %d  expired %d\n",
					v.RouteCacheEntries, v.RouteLookups, v.RouteCacheEvicted, v.RouteCacheExpired)
			}
			if len(v.BadPackets) > 0 {
				var kinds []string
				for k, n := range v.BadPackets {
					kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
				}
				sort.Strings(kinds)
				fmt.Fprintf(g.out, "bad packets: %s\n", strings.Join(kinds, ", "))
			}
			if v.LastError != "" {
				fmt.Fprintf(g.out, "last error: %s\n", v.LastError)
			}
			fmt.Fprintln(g.out)
			tw := g.table("Interface\tPrio\tDepth\tTrend\tBuffer use\tCNPs/interval\tActive flows\tCNPs\tCongested polls")
			for _, q := range v.Queues {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\n", q.Interface, q.Priority, q.Depth, q.Trend, q.Use, q.Count, q.Flows, q.CNPs, q.Congested)
			}
			tw.Flush()
			fmt.Fprintln(g.out)
			tw = g.table("Source\tDestination\tDest QP\tSender QP\tIn\tOut\tPrio\tPackets\tBytes\tCNPs")
			for _, f := range v.Flows {
				sq := "unknown"
				if f.Learned {
					sq = fmt.Sprintf("%#x", f.SrcQP)
				}
				fmt.Fprintf(tw, "%s\t%s\t%#x\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", f.Src, f.Dst, f.DestQP, sq, f.In, f.Out, f.Priority, f.Packets, f.Bytes, f.CNPs)
			}
			return tw.Flush()
		},
	})
	qc.AddCommand(&cobra.Command{
		Use: "ecn-tuning", Aliases: []string{"ai-ecn", "tuning"}, Short: "AI ECN / Adaptive RED: tuned thresholds per queue and the reasons", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.QoSTuning
			b, err := g.get(cmd.Context(), "/qos/ecn-tuning", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			if !v.Enabled {
				fmt.Fprintln(g.out, "ecn tuning off (static thresholds)")
				return nil
			}
			fmt.Fprintf(g.out, "algorithm %s  interval %gs  utilisation target %g  thresholds %d..%d\n\n",
				v.Algorithm, v.IntervalSeconds, v.UtilTarget, v.MinThreshold, v.MaxThreshold)
			w := func(x wire.QoSWRED) string { return fmt.Sprintf("%d/%d/%d%%", x.Min, x.Max, x.Probability) }
			tw := g.table("Interface\tPrio\tModel\tConfigured\tApplied\tUtil\tMice\tMarks\tMean depth\tLast reason")
			for _, q := range v.Queues {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.2f\t%.2f\t%d\t%.0f\t%s\n", q.Interface, q.Priority, dash(q.Model), w(q.Base), w(q.Applied),
					q.Utilisation, q.MiceShare, q.Marks, q.MeanDepth, q.Reason)
			}
			tw.Flush()
			if len(v.Decisions) > 0 {
				fmt.Fprintln(g.out, "\ndecisions (latest last):")
				for _, d := range v.Decisions {
					fmt.Fprintf(g.out, "  %s  %s/%d  %s -> %s  %s\n", d.At, d.Interface, d.Priority, w(d.Before), w(d.After), d.Reason)
				}
			}
			return nil
		},
	})
	return qc
}
