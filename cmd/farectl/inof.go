package main

import (
	"fmt"
	"strings"

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

// inofCommand: farectl inof hosts | zones | zone add|del NAME [HOST...] |
// peers | events | status | register | deregister.
func inofCommand(g *globals) *cobra.Command {
	ic := &cobra.Command{Use: "inof", Short: "iNOF: NVMe-oF hosts, zones, IBGP sessions, notifications"}
	ic.AddCommand(&cobra.Command{
		Use: "hosts", Short: "Hosts this switch knows (a host: its zone peers)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v []wire.INOFHost
			b, err := g.get(cmd.Context(), "/inof/hosts", &v)
			if err != nil || g.json {
				return g.emit(b, err)
			}
			tw := g.table("Host\tRole\tSwitch\tPort\tAddresses\tZones\tSource\tNQN")
			for _, h := range v {
				sw := h.Switch
				if h.SwitchName != "" {
					sw = h.SwitchName + " (" + h.Switch + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Role, sw, h.Port, dashJoin(h.Addresses), dashJoin(h.Zones), h.Source, dash(h.NQN))
			}
			return tw.Flush()
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
				fmt.Fprintf(g.out, "%s %s: %d hosts here, %d in the fabric, %d zones from %s (ready %v), %d notifications pending\n",
					v.Role, v.RouterID, v.LocalHosts, v.Records, v.Zones, dash(v.ZonesFrom), v.ZonesReady, v.Pending)
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
