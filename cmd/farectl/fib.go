package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// fibCommand: farectl fib | fib capabilities.
func fibCommand(g *globals) *cobra.Command {
	c := view(g, "fib", "Our routes and nexthop objects as the kernel holds them (read back over netlink)", "/fib", printFIB)
	c.AddCommand(view(g, "capabilities", "What the kernel supports: nexthop objects, 16-bit weights, resilient groups", "/fib/capabilities",
		printFIBCapabilities))
	return c
}

// printFIB: a row per route with its group's members, the counts, then
// the prefixes another protocol's route kept out.
func printFIB(w io.Writer, v wire.FIBView) error {
	nhs := map[uint32]wire.KernelNexthop{}
	for _, n := range v.Nexthops {
		nhs[n.ID] = n
	}
	printTable(w, "Prefix\tMetric\tNH id\tMembers (id:gateway@ifindex weight)", v.Routes, func(tw io.Writer, r wire.KernelRoute) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", r.Prefix, r.Metric, r.NhID, describeNH(nhs, r.NhID))
	})
	fmt.Fprintf(w, "\n%d routes, %d nexthop objects\n", len(v.Routes), len(v.Nexthops))
	if len(v.Conflicts) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nNot installed: another protocol's route holds the same table, prefix and metric\n")
	return printTable(w, "Prefix\tTable\tMetric\tHeld by\tType\tSince", v.Conflicts, func(tw io.Writer, c wire.FIBConflict) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s (%d)\t%s\t%s\n", c.Prefix, c.Table, c.Metric, c.ProtocolName, c.Protocol, c.Type, c.Since.Format(time.DateTime))
	})
}

func printFIBCapabilities(w io.Writer, v wire.FIBCapabilities) error {
	_, err := fmt.Fprintf(w, "nexthop objects   %v\n16-bit weights    %v\nresilient groups  %v\n", v.NexthopObjects, v.Weight16, v.Resilient)
	return err
}

func describeNH(nhs map[uint32]wire.KernelNexthop, id uint32) string {
	n, ok := nhs[id]
	if !ok {
		return "?"
	}
	one := func(n wire.KernelNexthop) string {
		return fmt.Sprintf("%d:%s@%d", n.ID, n.Gateway, n.IfIndex)
	}
	if len(n.Group) == 0 {
		return one(n)
	}
	var parts []string
	for _, m := range n.Group {
		parts = append(parts, fmt.Sprintf("%s w%d", one(nhs[m.ID]), m.Weight))
	}
	return strings.Join(parts, ", ")
}
