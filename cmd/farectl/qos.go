package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// qosCommand: farectl qos status | pfc [restore IFACE] | watchdog | ecn |
// flows | ipcc | ecn-tuning.
func qosCommand(g *globals) *cobra.Command {
	pfc := view(g, "pfc", "PFC per interface and priority: enabled, XOFF, PAUSE counters", "/qos/pfc", printQoSPFC)
	pfc.AddCommand(qosPFCRestoreCmd(g))
	return group("qos", "Lossless QoS: PFC, deadlock watchdog, ECN, large/small flows",
		view(g, "status", "Backend and supported features per interface", "/qos/status", printQoSStatus),
		pfc,
		view(g, "watchdog", "PFC deadlock watchdog: state per queue, detections, recoveries, limit", "/qos/watchdog", printQoSWatchdog),
		view(g, "ecn", "WRED/ECN profiles and marks per queue", "/qos/ecn", printQoSECN),
		view(g, "flows", "Large/small flows: classification and bytes per class", "/qos/flows", printQoSFlows),
		view(g, "ipcc", "IPCC: RoCEv2 flow table, watched queues, switch-sent CNPs, bad packets", "/qos/ipcc", printQoSIPCC),
		view(g, "ecn-tuning", "AI ECN / Adaptive RED: tuned thresholds per queue and the reasons", "/qos/ecn-tuning", printQoSTuning, "ai-ecn", "tuning"))
}

func qosPFCRestoreCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "restore IFACE", Short: "Turn PFC and deadlock detection back on after the deadlock limit", Args: cobra.ExactArgs(1),
		RunE: act(g, "/qos/pfc/restore", func(args []string) any { return wire.QoSRestoreRequest{Interface: args[0]} }, printQoSRestore),
	}
}

// printQoSStatus: the backend, then one row per interface and feature.
func printQoSStatus(w io.Writer, v wire.QoSStatus) error {
	state := "applied"
	if !v.Applied {
		state = "NOT applied"
	}
	fmt.Fprintf(w, "backend %s  poll %gs  %s  polls %d\n", v.Backend, v.PollSeconds, state, v.Polls)
	if v.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", v.LastError)
	}
	err := printTable(w, "Interface\tFeature\tSupported\tHow / why not", v.Interfaces, func(tw io.Writer, i wire.QoSIfaceStatus) {
		for _, f := range i.Features {
			yes := "yes"
			if !f.Supported {
				yes = "NO"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", i.Name, f.Feature, yes, f.Reason)
		}
	})
	if err != nil || v.ECNOverlay == nil {
		return err
	}
	return printQoSOverlay(w, *v.ECNOverlay)
}

// printQoSOverlay: the ECN overlay's request, then one row per tunnel.
func printQoSOverlay(w io.Writer, o wire.QoSECNOverlay) error {
	fmt.Fprintf(w, "\nECN overlay: decap %s", o.Decap)
	if o.DSCP != "" {
		fmt.Fprintf(w, "  dscp %s", o.DSCP)
	}
	fmt.Fprintf(w, "  checked %s\n", dash(o.CheckedAt))
	if o.Error != "" {
		fmt.Fprintf(w, "error: %s\n", o.Error)
	}
	return printTable(w, "Tunnel\tKind\tVNI\tLocal\tRemote\tDSCP\tEncap ECN\tDecap ECN\tECN drops\tConforms\tChanged\tNote", o.Tunnels, func(tw io.Writer, t wire.QoSOverlayTunnel) {
		dscp, drops, ok := dash(t.DSCP), "-", "yes"
		if t.OuterTOS != nil {
			dscp = fmt.Sprintf("fixed %#02x", *t.OuterTOS)
		}
		if t.ECNDropPackets != nil {
			drops = fmt.Sprint(*t.ECNDropPackets)
		}
		if !t.Conforms {
			ok = "NO"
		}
		vni := "-"
		if t.VNI != 0 {
			vni = fmt.Sprint(t.VNI)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, dash(t.Kind), vni, dash(t.Local), dash(t.Remote),
			dscp, dash(t.EncapECN), dash(t.DecapECN), drops, ok, dashJoin(t.Changed), t.Note)
	})
}

// printQoSPFC: one row per interface and priority that is configured,
// enabled or has seen PAUSE frames (idle priorities are left out).
func printQoSPFC(w io.Writer, v wire.QoSPFC) error {
	return printTable(w, "Interface\tMode\tPrio\tConfigured\tEnabled\tXOFF\tPAUSE rx\tPAUSE tx\tOnsets\tXOFF/XON/headroom", v.Interfaces, func(tw io.Writer, i wire.QoSPFCIface) {
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
	})
}

func printQoSRestore(w io.Writer, v wire.QoSRestore) error {
	if v.Restored {
		fmt.Fprintf(w, "%s: PFC and deadlock detection restored (mode %s)\n", v.Interface, v.Mode)
	} else {
		fmt.Fprintf(w, "%s: nothing to restore (mode %s)\n", v.Interface, v.Mode)
	}
	return nil
}

// printQoSWatchdog: the settings, a table per interface, a table per
// queue, then the recent events.
func printQoSWatchdog(w io.Writer, v wire.QoSWatchdog) error {
	limit := "none"
	if v.Limit > 0 {
		limit = fmt.Sprintf("%d in %gs", v.Limit, v.WindowSeconds)
	}
	fmt.Fprintf(w, "enabled %v  detection %gs  restoration %gs  poll %gs  action %s  limit %s\n\n",
		v.Enabled, v.DetectionSeconds, v.RestorationSeconds, v.PollSeconds, v.Action, limit)
	printTable(w, "Interface\tMode\tDetections\tRecoveries\tLimit hits\tIn window\tRecovers at", v.Interfaces, func(tw io.Writer, i wire.QoSWatchdogIface) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", i.Name, i.Mode, i.Detections, i.Recoveries, i.LimitHits, i.InWindow, dash(i.RecoversAt))
	})
	fmt.Fprintln(w)
	err := printTable(w, "Interface\tPrio\tMode\tXOFF since\tDetections\tLast detection", v.Queues, func(tw io.Writer, q wire.QoSWatchdogQueue) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\n", q.Interface, q.Priority, q.Mode, dash(q.XOFFSince), q.Detections, dash(q.LastDetect))
	})
	if err != nil {
		return err
	}
	if len(v.Events) > 0 {
		fmt.Fprintln(w, "\nevents:")
		for _, e := range v.Events {
			line := fmt.Sprintf("  %s  %-9s %s", e.At, e.Kind, e.Interface)
			if e.Priority >= 0 {
				line += fmt.Sprintf(" priority %d", e.Priority)
			}
			if e.LatencySeconds > 0 {
				line += fmt.Sprintf(" (XOFF for %.3fs)", e.LatencySeconds)
			}
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

// printQoSECN: the WRED profiles (a row per colour), then the queues.
func printQoSECN(w io.Writer, v wire.QoSECN) error {
	printTable(w, "Profile\tECN\tMark at\tColour\tMin\tMax\tProbability", v.Profiles, func(tw io.Writer, p wire.QoSProfile) {
		for _, c := range p.Colors {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d%%\n", p.Name, p.ECN, p.Mark, c.Color, c.Min, c.Max, c.Probability)
		}
	})
	fmt.Fprintln(w)
	return printTable(w, "Interface\tPrio\tProfile\tMarks\tDrops\tDepth", v.Queues, func(tw io.Writer, q wire.QoSECNQueue) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\n", q.Interface, q.Priority, q.Profile, q.Marks, q.Drops, q.Depth)
	})
}

// printQoSFlows: the elephant rule, then per interface its bytes per
// class and its flows by kind.
func printQoSFlows(w io.Writer, v wire.QoSFlows) error {
	if v.Rule == nil {
		fmt.Fprintln(w, "no large-flow rule configured")
	} else {
		fmt.Fprintf(w, "elephant: over %s after %d bytes -> priority %d, %s\n",
			formatBytesPerSec(v.Rule.RateBps/8), v.Rule.Size, v.Rule.Priority, v.Rule.Color)
	}
	for _, i := range v.Interfaces {
		fmt.Fprintf(w, "\n%s: elephant bytes %d, mice bytes %d\n", i.Name, i.ElephantBytes, i.MiceBytes)
		if len(i.Classes) > 0 {
			err := printTable(w, "  Class\tPrio\tBytes\tPackets\tBacklog\tDrops", i.Classes, func(tw io.Writer, c wire.QoSClass) {
				fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", c.Name, c.Priority, c.Bytes, c.Packets, c.Backlog, c.Drops)
			})
			if err != nil {
				return err
			}
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
			fmt.Fprintf(w, "  elephants: %s\n", strings.Join(el, ", "))
		}
		if len(mice) > 0 {
			fmt.Fprintf(w, "  mice: %s\n", strings.Join(mice, ", "))
		}
	}
	return nil
}

// printQoSIPCC: the settings and counters (only the runtime when IPCC is
// off), then the watched queues and the flow table.
func printQoSIPCC(w io.Writer, v wire.QoSIPCC) error {
	fmt.Fprintf(w, "ipcc: %s\n", v.Runtime)
	if !v.Enabled {
		return nil
	}
	printIPCCCounters(w, v)
	fmt.Fprintln(w)
	printTable(w, "Interface\tPrio\tDepth\tTrend\tBuffer use\tCNPs/interval\tActive flows\tCNPs\tCongested polls", v.Queues, func(tw io.Writer, q wire.QoSIPCCQueue) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\n", q.Interface, q.Priority, q.Depth, q.Trend, q.Use, q.Count, q.Flows, q.CNPs, q.Congested)
	})
	fmt.Fprintln(w)
	return printTable(w, "Source\tDestination\tDest QP\tSender QP\tIn\tOut\tPrio\tPackets\tBytes\tCNPs", v.Flows, func(tw io.Writer, f wire.QoSIPCCFlow) {
		sq := "unknown"
		if f.Learned {
			sq = fmt.Sprintf("%#x", f.SrcQP)
		}
		fmt.Fprintf(tw, "%s\t%s\t%#x\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", f.Src, f.Dst, f.DestQP, sq, f.In, f.Out, f.Priority, f.Packets, f.Bytes, f.CNPs)
	})
}

// printIPCCCounters: IPCC's settings and counters, a line per concern.
func printIPCCCounters(w io.Writer, v wire.QoSIPCC) {
	fmt.Fprintf(w, "priorities %v  poll %gs  CNP interval %gs  low %d  high %d  few %d  more %d (CNPs per interval)\n",
		v.Priorities, v.PollSeconds, v.IntervalSeconds, v.Low, v.High, v.Few, v.More)
	if len(v.Capture) > 0 || len(v.Watched) > 0 {
		fmt.Fprintf(w, "capture %s  watched %s\n", strings.Join(v.Capture, ","), strings.Join(v.Watched, ","))
	}
	fmt.Fprintf(w, "observed %d  captured %d  overflow %d  no route %d  QPs learnt %d  ambiguous %d  unmatched %d\n",
		v.Observed, v.Captured, v.Overflow, v.NoRoute, v.Learned, v.Ambiguous, v.Unmatched)
	fmt.Fprintf(w, "CNPs ordered %d  sent %d  send errors %d  skipped: no QP %d, interval %d  polls %d\n",
		v.CNPs, v.Sent, v.SendErrors, v.NoQP, v.RateLimit, v.Polls)
	fmt.Fprintf(w, "flows %d/%d (per port %d, per source %d)  evicted %d  refused: table full %d, port cap %d, source cap %d  port mismatch %d\n",
		v.FlowCount, v.MaxFlows, v.MaxFlowsPerPort, v.MaxFlowsPerSource, v.FlowsEvicted, v.RefusedTableFull, v.RefusedPortCap, v.RefusedSourceCap, v.PortMismatch)
	fmt.Fprintf(w, "ACKs naming another QP than the learnt one %d  QPs replaced %d\n", v.QPConflict, v.QPReplaced)
	if v.RouteLookups > 0 {
		fmt.Fprintf(w, "route cache %d entries  lookups %d  evicted %d  expired %d\n",
			v.RouteCacheEntries, v.RouteLookups, v.RouteCacheEvicted, v.RouteCacheExpired)
	}
	if len(v.BadPackets) > 0 {
		var kinds []string
		for k, n := range v.BadPackets {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(w, "bad packets: %s\n", strings.Join(kinds, ", "))
	}
	if v.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", v.LastError)
	}
}

// printQoSTuning: AI ECN's settings, the thresholds in force per queue,
// then its decisions.
func printQoSTuning(w io.Writer, v wire.QoSTuning) error {
	if !v.Enabled {
		fmt.Fprintln(w, "ecn tuning off (static thresholds)")
		return nil
	}
	fmt.Fprintf(w, "algorithm %s  interval %gs  utilisation target %g  thresholds %d..%d\n\n",
		v.Algorithm, v.IntervalSeconds, v.UtilTarget, v.MinThreshold, v.MaxThreshold)
	err := printTable(w, "Interface\tPrio\tModel\tConfigured\tApplied\tUtil\tMice\tMarks\tMean depth\tLast reason", v.Queues, func(tw io.Writer, q wire.QoSTunedQueue) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.2f\t%.2f\t%d\t%.0f\t%s\n", q.Interface, q.Priority, dash(q.Model), wred(q.Base), wred(q.Applied),
			q.Utilisation, q.MiceShare, q.Marks, q.MeanDepth, q.Reason)
	})
	if err != nil {
		return err
	}
	if len(v.Decisions) > 0 {
		fmt.Fprintln(w, "\ndecisions (latest last):")
		for _, d := range v.Decisions {
			fmt.Fprintf(w, "  %s  %s/%d  %s -> %s  %s\n", d.At, d.Interface, d.Priority, wred(d.Before), wred(d.After), d.Reason)
		}
	}
	return nil
}

// wred shows WRED thresholds as min/max/probability%.
func wred(x wire.QoSWRED) string { return fmt.Sprintf("%d/%d/%d%%", x.Min, x.Max, x.Probability) }
