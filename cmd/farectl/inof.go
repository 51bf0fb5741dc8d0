package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

func init() { nouns = append(nouns, inofCommand) }

func dashJoin(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// inofCommand: farectl inof hosts [bindings|conflicts] | release ID |
// zones | zone add|del NAME [HOST...] | peers | events | status |
// register | deregister.
func inofCommand(g *globals) *cobra.Command {
	ic := &cobra.Command{Use: "inof", Short: "iNOF: NVMe-oF hosts, zones, IBGP sessions, notifications"}
	ic.AddCommand(&cobra.Command{
		Use:   "hosts [bindings|conflicts]",
		Short: "Hosts this switch knows (a host: its zone peers); bindings: ids bound here; conflicts: refused claims",
		Long: `hosts: every host this switch knows (a host: its zone peers).
hosts bindings: the ids bound to this switch's ports (registered or away), what release acts on.
hosts conflicts: claims of a host id this switch refused (another MAC, a pinned id, a bad key), most recent first.`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"bindings", "conflicts"},
		RunE: func(cmd *cobra.Command, args []string) error {
			view := ""
			if len(args) == 1 {
				view = args[0]
			}
			switch view {
			case "":
				var v []wire.INOFHost
				b, err := g.get(cmd.Context(), "/inof/hosts", &v)
				if err != nil || g.json {
					return g.emit(b, err)
				}
				return printINOFHosts(g.out, v)
			case "bindings":
				var v []wire.INOFBinding
				b, err := g.get(cmd.Context(), "/inof/bindings", &v)
				if err != nil || g.json {
					return g.emit(b, err)
				}
				return printINOFBindings(g.out, v)
			case "conflicts":
				var v []wire.INOFConflict
				b, err := g.get(cmd.Context(), "/inof/conflicts", &v)
				if err != nil || g.json {
					return g.emit(b, err)
				}
				return printINOFConflicts(g.out, v)
			}
			return fmt.Errorf("hosts %s: want bindings or conflicts (or nothing)", view)
		},
	})
	ic.AddCommand(&cobra.Command{
		Use:   "release ID",
		Short: "Switch: release the bindings of host id ID here (its NIC was replaced); it registers again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v wire.INOFRelease
			b, err := g.post(cmd.Context(), "/inof/release", wire.INOFRelease{ID: args[0]}, &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			fmt.Fprintf(g.out, "released %s on %s\n", v.ID, strings.Join(v.Ports, ", "))
			return nil
		},
	})
	ic.AddCommand(&cobra.Command{
		Use: "zones", Short: "Zones and their members", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.INOFZone
			b, err := g.get(cmd.Context(), "/inof/zones", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			return printZones(g, v)
		},
	})
	zc := &cobra.Command{Use: "zone", Short: "Change zones (on a reflector)"}
	for _, op := range []struct{ verb, short string }{
		{"add", "Add hosts to a zone, creating it"},
		{"del", "Remove hosts from a zone, or the zone itself when no host is given"},
	} {
		zc.AddCommand(&cobra.Command{
			Use: op.verb + " NAME [HOST...]", Short: op.short, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var v []wire.INOFZone
				b, err := g.post(cmd.Context(), "/inof/zones/"+op.verb, wire.INOFZoneRequest{Name: args[0], Hosts: args[1:]}, &v)
				if err != nil || g.json {
					return g.emit(b, err)
				}
				return printZones(g, v)
			},
		})
	}
	ic.AddCommand(zc)
	ic.AddCommand(&cobra.Command{
		Use: "peers", Short: "IBGP sessions (a host: its registrations with its switches)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.INOFPeer
			b, err := g.get(cmd.Context(), "/inof/peers", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Address\tState\tBFD\tUptime\tReceived\tInterface\tPort\tLast reason")
			for _, p := range v {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.0fs\t%d\t%s\t%s\t%s\n", dash(p.Address), p.State, dash(p.BFD), p.UptimeSeconds, p.Received,
					dash(p.Interface), dash(p.Port), dash(p.Reason))
			}
			return tw.Flush()
		},
	})
	ic.AddCommand(&cobra.Command{
		Use: "events", Short: "Notifications sent (a switch) or received (a host), oldest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.INOFEvent
			b, err := g.get(cmd.Context(), "/inof/events", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Time\tEvent\tHost\tZone\tAddresses\tSwitch\tPort\tTo / via")
			for _, e := range v {
				to := e.To
				if e.ToPort != "" {
					to += " on " + e.ToPort
				}
				if e.Via != "" || e.Reason != "" {
					to = strings.TrimSpace(e.Via + " " + e.Reason)
				}
				sw := e.Switch
				if e.SwitchName != "" {
					sw = e.SwitchName
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time, e.Type, e.Host, dash(e.Zone), dashJoin(e.Addresses), sw, e.Port, dash(to))
			}
			return tw.Flush()
		},
	})
	ic.AddCommand(&cobra.Command{
		Use: "status", Short: "Summary and counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v wire.INOFStatus
			b, err := g.get(cmd.Context(), "/inof/status", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			if v.Role == "host" {
				fmt.Fprintf(g.out, "host %s: %d peer paths\n", v.ID, v.Peers)
			} else {
				printINOFStatus(g.out, v)
			}
			for _, k := range sortedKeys(v.Counters) {
				fmt.Fprintf(g.out, "  %-24s %d\n", k, v.Counters[k])
			}
			return nil
		},
	})
	for _, op := range []string{"register", "deregister"} {
		ic.AddCommand(&cobra.Command{
			Use: op, Short: "Host: " + op + " with every switch", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return g.emit(g.post(cmd.Context(), "/inof/"+op, nil, nil))
			},
		})
	}
	return ic
}

func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

func printINOFHosts(w io.Writer, v []wire.INOFHost) error {
	tw := newTable(w, "Host\tRole\tSwitch\tPort\tAddresses\tZones\tSource\tNQN\tNotes")
	for _, h := range v {
		sw := h.Switch
		if h.SwitchName != "" {
			sw = h.SwitchName + " (" + h.Switch + ")"
		}
		var notes []string
		if h.Pinned {
			notes = append(notes, "pinned")
		}
		if h.Unresponsive {
			notes = append(notes, "unresponsive")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Role, sw, h.Port, dashJoin(h.Addresses), dashJoin(h.Zones), h.Source, dash(h.NQN), dashJoin(notes))
	}
	return tw.Flush()
}

func printINOFBindings(w io.Writer, v []wire.INOFBinding) error {
	tw := newTable(w, "Host\tPort\tMAC\tState\tPinned\tSince\tExpires")
	for _, b := range v {
		pin := "-"
		switch {
		case b.Static:
			pin = "static"
		case b.Pinned:
			pin = "key"
		}
		exp := "-"
		if b.ExpiresIn > 0 {
			exp = fmt.Sprintf("in %.0fs", b.ExpiresIn)
		} else if b.State == "absent" {
			exp = "never (release it)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.ID, b.Port, dash(b.MAC), b.State, pin, b.Since, exp)
	}
	return tw.Flush()
}

func printINOFConflicts(w io.Writer, v []wire.INOFConflict) error {
	tw := newTable(w, "Host\tPort\tMAC\tReason\tBound\tCount\tLast")
	for _, c := range v {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Port, dash(c.MAC), c.Reason, dash(c.Against), c.Count, c.Last)
	}
	return tw.Flush()
}

func printINOFStatus(w io.Writer, v wire.INOFStatus) {
	fmt.Fprintf(w, "%s %s: %d hosts here, %d in the fabric, %d zones from %s (ready %v), %d notifications pending\n",
		v.Role, v.RouterID, v.LocalHosts, v.Records, v.Zones, dash(v.ZonesFrom), v.ZonesReady, v.Pending)
	fmt.Fprintf(w, "%d bindings, %d unresponsive hosts\n", v.Bindings, v.Unresponsive)
	for _, p := range v.Ports {
		fmt.Fprintf(w, "  port %-12s refused %d, conflicts %d, foreign MAC %d, auth failures %d\n", p.Port, p.Refused, p.Conflicts, p.ForeignMAC, p.AuthFailures)
	}
}

func printZones(g *globals, v []wire.INOFZone) error {
	tw := g.table("Zone\tMembers\tNotes")
	for _, z := range v {
		note := ""
		if z.Default {
			note = "default"
			if z.AutoAdd {
				note += ", auto-add of free hosts"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", z.Name, dashJoin(z.Members), note)
	}
	return tw.Flush()
}
