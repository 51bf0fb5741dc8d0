package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/wire"
)

// inofCommand: farectl inof hosts [bindings|conflicts] | release ID |
// zones | zone add|del NAME [HOST...] | peers | events | status |
// register | deregister.
func inofCommand(g *globals) *cobra.Command {
	return group("inof", "iNOF: NVMe-oF hosts, zones, IBGP sessions, notifications",
		inofHostsCmd(g), inofReleaseCmd(g),
		view(g, "zones", "Zones and their members", "/inof/zones", printZones),
		group("zone", "Change zones (on a reflector)", inofZoneCmd(g, "add", "Add hosts to a zone, creating it"),
			inofZoneCmd(g, "del", "Remove hosts from a zone, or the zone itself when no host is given")),
		view(g, "peers", "IBGP sessions (a host: its registrations with its switches)", "/inof/peers", printINOFPeers),
		view(g, "events", "Notifications sent (a switch) or received (a host), oldest first", "/inof/events", printINOFEvents),
		view(g, "status", "Summary and counters", "/inof/status", printINOFStatus),
		inofRegisterCmd(g, "register"), inofRegisterCmd(g, "deregister"))
}

// inofHostsCmd: hosts, or with an argument the bindings or conflicts view.
func inofHostsCmd(g *globals) *cobra.Command {
	hosts := show(g, at("/inof/hosts"), printINOFHosts)
	bindings := show(g, at("/inof/bindings"), printINOFBindings)
	conflicts := show(g, at("/inof/conflicts"), printINOFConflicts)
	return &cobra.Command{
		Use:   "hosts [bindings|conflicts]",
		Short: "Hosts this switch knows (a host: its zone peers); bindings: ids bound here; conflicts: refused claims",
		Long: `hosts: every host this switch knows (a host: its zone peers).
hosts bindings: the ids bound to this switch's ports (registered or away), what release acts on.
hosts conflicts: claims of a host id this switch refused (another MAC, a pinned id, a bad key), most recent first.`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"bindings", "conflicts"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return hosts(cmd, args)
			}
			switch args[0] {
			case "bindings":
				return bindings(cmd, args)
			case "conflicts":
				return conflicts(cmd, args)
			}
			return fmt.Errorf("hosts %s: want bindings or conflicts (or nothing)", args[0])
		},
	}
}

func inofReleaseCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "release ID",
		Short: "Switch: release the bindings of host id ID here (its NIC was replaced); it registers again",
		Args:  cobra.ExactArgs(1),
		RunE:  act(g, "/inof/release", func(args []string) any { return wire.INOFRelease{ID: args[0]} }, printINOFRelease),
	}
}

// inofZoneCmd: zone add|del NAME [HOST...]; fared answers with the zones.
func inofZoneCmd(g *globals, verb, short string) *cobra.Command {
	return &cobra.Command{
		Use: verb + " NAME [HOST...]", Short: short, Args: cobra.MinimumNArgs(1),
		RunE: act(g, "/inof/zones/"+verb, func(args []string) any { return wire.INOFZoneRequest{Name: args[0], Hosts: args[1:]} }, printZones),
	}
}

// inofRegisterCmd: a host's register or deregister; the answer is
// printed as fared sent it.
func inofRegisterCmd(g *globals, op string) *cobra.Command {
	return &cobra.Command{
		Use: op, Short: "Host: " + op + " with every switch", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.emit(g.post(cmd.Context(), "/inof/"+op, nil))
		},
	}
}

func printINOFRelease(w io.Writer, v wire.INOFRelease) error {
	fmt.Fprintf(w, "released %s on %s\n", v.ID, strings.Join(v.Ports, ", "))
	return nil
}

func printINOFPeers(w io.Writer, v []wire.INOFPeer) error {
	return printTable(w, "Address\tState\tBFD\tUptime\tReceived\tInterface\tPort\tLast reason", v, func(tw io.Writer, p wire.INOFPeer) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0fs\t%d\t%s\t%s\t%s\n", dash(p.Address), p.State, dash(p.BFD), p.UptimeSeconds, p.Received,
			dash(p.Interface), dash(p.Port), dash(p.Reason))
	})
}

// printINOFEvents: a row per notification; the last column is whom a
// switch told (and on which port), or how a host heard it.
func printINOFEvents(w io.Writer, v []wire.INOFEvent) error {
	return printTable(w, "Time\tEvent\tHost\tZone\tAddresses\tSwitch\tPort\tTo / via", v, func(tw io.Writer, e wire.INOFEvent) {
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
	})
}

func printINOFHosts(w io.Writer, v []wire.INOFHost) error {
	return printTable(w, "Host\tRole\tSwitch\tPort\tAddresses\tZones\tSource\tNQN\tNotes", v, func(tw io.Writer, h wire.INOFHost) {
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
	})
}

func printINOFBindings(w io.Writer, v []wire.INOFBinding) error {
	return printTable(w, "Host\tPort\tMAC\tState\tPinned\tSince\tExpires", v, func(tw io.Writer, b wire.INOFBinding) {
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
	})
}

func printINOFConflicts(w io.Writer, v []wire.INOFConflict) error {
	return printTable(w, "Host\tPort\tMAC\tReason\tBound\tCount\tLast", v, func(tw io.Writer, c wire.INOFConflict) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Port, dash(c.MAC), c.Reason, dash(c.Against), c.Count, c.Last)
	})
}

// printINOFStatus: a host's id and paths, or a switch's summary and its
// ports' refusals; then the counters.
func printINOFStatus(w io.Writer, v wire.INOFStatus) error {
	if v.Role == "host" {
		fmt.Fprintf(w, "host %s: %d peer paths\n", v.ID, v.Peers)
	} else {
		fmt.Fprintf(w, "%s %s: %d hosts here, %d in the fabric, %d zones from %s (ready %v), %d notifications pending\n",
			v.Role, v.RouterID, v.LocalHosts, v.Records, v.Zones, dash(v.ZonesFrom), v.ZonesReady, v.Pending)
		fmt.Fprintf(w, "%d bindings, %d unresponsive hosts\n", v.Bindings, v.Unresponsive)
		for _, p := range v.Ports {
			fmt.Fprintf(w, "  port %-12s refused %d, conflicts %d, foreign MAC %d, auth failures %d\n", p.Port, p.Refused, p.Conflicts, p.ForeignMAC, p.AuthFailures)
		}
	}
	for _, k := range sortedKeys(v.Counters) {
		fmt.Fprintf(w, "  %-24s %d\n", k, v.Counters[k])
	}
	return nil
}

func printZones(w io.Writer, v []wire.INOFZone) error {
	return printTable(w, "Zone\tMembers\tNotes", v, func(tw io.Writer, z wire.INOFZone) {
		note := ""
		if z.Default {
			note = "default"
			if z.AutoAdd {
				note += ", auto-add of free hosts"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", z.Name, dashJoin(z.Members), note)
	})
}
