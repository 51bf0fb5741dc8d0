package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// incCommand: farectl inc groups|trees|clients|switches|security|switch,
// and inc group dismantle NAME.
func incCommand(g *globals) *cobra.Command {
	return group("inc", "In-network computing: groups, trees, clients (on the manager), the data plane (on a switch)",
		view(g, "groups", "Collective groups: members, state, tree", "/inc/groups", printINCGroups),
		view(g, "trees", "Aggregation trees: root, levels, members, bottleneck bandwidth, switches", "/inc/trees", printINCTrees),
		view(g, "clients", "Clients: group, rank, address, QP, heartbeat, attachment, task statistics (operations, bytes, retransmissions, timeouts)", "/inc/clients", printINCClients),
		view(g, "switches", "Switches registered with the manager", "/inc/switches", printINCSwitches),
		view(g, "security", "The manager's control-plane trust: TLS, client-auth, caps, refused calls by reason", "/inc/security", printINCSecurity),
		view(g, "switch", "This switch's data plane: slots in use, packets, duplicates suppressed, retransmissions served", "/inc/switch", printINCSwitch),
		group("group", "The operator's actions on one collective group (on the manager)", incDismantleCmd(g)))
}

// incDismantleCmd: inc group dismantle NAME, DELETE /v1/inc/groups/NAME.
func incDismantleCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "dismantle NAME",
		Short: "Dismantle group NAME: its tree leaves the switches, its members' next call fails with the reason",
		Args:  cobra.ExactArgs(1),
		RunE: answer(g, func(ctx context.Context, args []string) ([]byte, error) {
			return g.del(ctx, "/inc/groups/"+url.PathEscape(args[0]))
		}, printINCDismantled),
	}
}

// printINCDismantled renders the group a dismantle answered.
func printINCDismantled(w io.Writer, v wire.INCGroup) error {
	_, err := fmt.Fprintf(w, "group %s: %s at generation %d, %d of %d members told at their next call: %s\n",
		v.Name, v.State, v.Generation, v.Joined, v.Size, firstNonEmpty(v.Reason, "-"))
	return err
}

func printINCGroups(w io.Writer, v []wire.INCGroup) error {
	return printTable(w, "Group\tRanks\tState\tGeneration\tTree\tRoot\tRebuilds\tTimeout reports\tReason", v, func(tw io.Writer, x wire.INCGroup) {
		tree := "-"
		if x.TreeID != 0 {
			tree = fmt.Sprint(x.TreeID)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", x.Name, x.Joined, x.Size, x.State, x.Generation, tree,
			firstNonEmpty(x.Root, "-"), x.Rebuilds, x.Timeouts, x.Reason)
	})
}

// printINCTrees: per tree a summary line, the roots it may not use, and a
// table of its switches.
func printINCTrees(w io.Writer, v []wire.INCTree) error {
	for i, t := range v {
		if i > 0 {
			fmt.Fprintln(w)
		}
		ready := "programming"
		if t.Ready {
			ready = "ready"
		}
		fmt.Fprintf(w, "group %s: tree %d (generation %d, %s), root %s (%s), %d level(s), %d members, bottleneck %s, from %s\n",
			t.Group, t.TreeID, t.Generation, ready, t.Root, t.RootAddr, t.Levels, t.Members, optBytesPerSec(t.Bottleneck, "unconstrained"), t.Topology)
		if len(t.Excluded) > 0 {
			fmt.Fprintf(w, "  not used after timeout reports: %s\n", strings.Join(t.Excluded, ", "))
		}
		err := printTable(w, "  Switch\tAddress\tRole\tParent\tQP\tApplied\tChildren", t.Switches, func(tw io.Writer, s wire.INCTreeSwitch) {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%v\t%s\n", s.Switch, s.Address, s.Role, firstNonEmpty(s.Parent, "-"), s.QP, s.Applied,
				strings.Join(s.Children, ", "))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// printINCClients: a row per client, its place in the group and the task
// statistics its heartbeats report.
func printINCClients(w io.Writer, v []wire.INCClient) error {
	return printTable(w, "Client\tGroup\tRank\tAddress\tQP\tLast heartbeat\tGeneration\tSends to\tTimeout reports\tOperations\tFailed\tBytes\tRetransmissions\tTimeouts",
		v, func(tw io.Writer, x wire.INCClient) {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.1fs ago\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", x.ID, x.Group, x.Rank, x.Address, x.QP, x.LastSeenAgo,
				x.Generation, firstNonEmpty(x.Attach, "-"), x.Timeouts, x.Operations, x.FailedOperations, x.Bytes, x.Retransmissions, x.RTOs)
		})
}

func printINCSwitches(w io.Writer, v []wire.INCRegisteredSwitch) error {
	return printTable(w, "Switch\tAddress\tAlive\tIn topology\tTrees\tSlots\tRanks\tPayload\tConfig\tApplied\tError", v, func(tw io.Writer, x wire.INCRegisteredSwitch) {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%s\n", x.ID, x.Address, x.Alive, x.InTopology, x.Trees, x.MaxTrees,
			x.MaxSlots, x.MaxRanks, x.MaxPayload, x.Version, x.Applied, x.Error)
	})
}

// printINCSwitch: the switch's registration, totals, CPU and refusals,
// then a row per tree it aggregates.
func printINCSwitch(w io.Writer, v wire.INCSwitch) error {
	fmt.Fprintf(w, "switch %s, manager %s, registered %v, config version %d", v.Address, v.Manager, v.Registered, v.Version)
	if v.Error != "" {
		fmt.Fprintf(w, ", refused: %s", v.Error)
	}
	fmt.Fprintln(w)
	t := v.Totals
	fmt.Fprintf(w, "slots in use %d; packets %d, aggregated messages %d, duplicates suppressed %d, retransmissions served %d, partials re-sent %d, NACKs %d\n",
		v.SlotsInUse, t.Packets, t.Completed, t.Duplicates, t.Served, t.PartialResends, t.NACKs)
	if v.CPU != nil {
		fmt.Fprintf(w, "data plane CPU %.2fs\n", v.CPU.Seconds)
	}
	printINCRefused(w, &v)
	return printTable(w, "Tree\tQP\tRole\tChildren\tSlots in use\tPackets\tDuplicates\tServed\tResults\tPartials\tStale\tMismatch\tRefused", v.Trees, func(tw io.Writer, x wire.INCSwitchTree) {
		c := x.Counters
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", x.TreeID, x.QP, x.Role, x.Children, x.SlotsInUse, x.Slots,
			c.Packets, c.Duplicates, c.Served, c.Results, c.Partials, c.Stale, c.Mismatch,
			c.BadQP+c.BadRKey+c.BadSource+c.BadIngress+c.BadRank+c.BadPKey)
	})
}

// printINCSecurity renders GET /v1/inc/security.
func printINCSecurity(w io.Writer, v wire.INCSecurity) error {
	mode := "tls (switches: client certificates checked against the LSDB)"
	if !v.TLS {
		mode = "no tls: loopback only"
	}
	auth := "join tokens required"
	if !v.ClientAuth {
		auth = "no client-auth"
	}
	fmt.Fprintf(w, "listen %s, %s, %s (%d key(s))\n", v.Listen, mode, auth, v.TokenKeys)
	fmt.Fprintf(w, "groups %d of max %d; per token max %d; ranks per group max %d\n", v.Groups, v.MaxGroups, v.MaxGroupsPerToken, v.MaxGroupSize)
	if len(v.Refused) == 0 {
		fmt.Fprintln(w, "refused: none")
	} else {
		var parts []string
		for _, k := range sortedKeys(v.Refused) {
			parts = append(parts, fmt.Sprintf("%s %d", k, v.Refused[k]))
		}
		fmt.Fprintf(w, "refused: %s\n", strings.Join(parts, ", "))
	}
	if len(v.Tokens) == 0 {
		return nil
	}
	return printTable(w, "Token\tGroups\tClients", v.Tokens, func(tw io.Writer, t wire.INCTokenUse) {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", firstNonEmpty(t.Token, "(none)"), t.Groups, t.Clients)
	})
}

// printINCRefused prints the ingress check's state and the packets the
// switch dropped, by kind (those counted at least once).
func printINCRefused(w io.Writer, v *wire.INCSwitch) {
	in := v.Ingress
	switch {
	case !in.Enabled:
		fmt.Fprintln(w, "ingress check off")
	default:
		fmt.Fprintf(w, "ingress check on: %d peers, routes read %.1fs ago", in.Peers, float64(in.AgeMS)/1000)
		if len(in.Unrouted) > 0 {
			fmt.Fprintf(w, "; no route back to %s (their packets are refused)", strings.Join(in.Unrouted, ", "))
		}
		if in.Error != "" {
			fmt.Fprintf(w, "; reading routes failed: %s", in.Error)
		}
		fmt.Fprintln(w)
	}
	var parts []string
	if v.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("unknown tree %d", v.Unknown))
	}
	for _, k := range sortedKeys(v.Bad) {
		if v.Bad[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v.Bad[k]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "refused: %s\n", strings.Join(parts, ", "))
	}
}
