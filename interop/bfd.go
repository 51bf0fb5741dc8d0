package interop

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// BFDSpec is a node's `bfd` option: BFD on every adjacency of the node,
// for fared (its isis/ospf section's bfd key), for FRR (bfdd started in
// the node's namespace, a profile with these timers, `isis bfd` / `ip ospf
// bfd` on every interface) and for BIRD (protocol bfd, `bfd yes` on its
// OSPF interfaces). Keys authenticate the sessions (RFC 5880 §6.7; fared
// and BIRD: FRR 8.4's bfdd has none), algorithms simple, keyed-md5,
// meticulous-keyed-md5, keyed-sha1, meticulous-keyed-sha1 (one for all
// keys of a BIRD node, which has one type per interface).
//
//	nodes:
//	  f1: {kind: fared, bfd: {interval: 50ms, multiplier: 3}}
//	  r1: {kind: frr, bfd: {interval: 50ms, multiplier: 3}}
//	  b1: {kind: bird, bfd: {interval: 100ms, auth: [{id: 1, algorithm: keyed-sha1, secret: s}]}}
type BFDSpec struct {
	Interval   time.Duration
	Multiplier int
	Auth       []AuthKey
}

// birdBFDAuth is BIRD 2's name of a BFD authentication type.
var birdBFDAuth = map[string]string{"simple": "simple", "keyed-md5": "keyed md5", "meticulous-keyed-md5": "meticulous keyed md5",
	"keyed-sha1": "keyed sha1", "meticulous-keyed-sha1": "meticulous keyed sha1"}

// bfdProfile is the name of the bfdd profile farelab renders.
const bfdProfile = "farelab"

// bfdSpec parses a node's bfd value: a mapping with interval (10ms..60s,
// FRR's range; default 300ms as bfdd's) and multiplier (2..255, default 3).
func (p *tparser) bfdSpec(what string, v *yaml.Node) *BFDSpec {
	b := &BFDSpec{Interval: 300 * time.Millisecond, Multiplier: 3}
	what += ": bfd"
	if v.Kind != yaml.MappingNode {
		p.errf(v, "%s: want a mapping {interval, multiplier}", what)
		return nil
	}
	p.keys(v, what, map[string]func(k, v *yaml.Node){
		"interval": func(k, v *yaml.Node) {
			var d time.Duration
			p.dur(what, &d)(k, v)
			if d == 0 {
				return
			}
			if d < 10*time.Millisecond || d > 60*time.Second || d%time.Millisecond != 0 {
				p.errf(v, "%s: interval %s: want whole milliseconds, 10ms..60s (FRR's unit and range)", what, d)
				return
			}
			b.Interval = d
		},
		"multiplier": p.integer(what, 2, 255, &b.Multiplier),
		"auth": func(k, v *yaml.Node) {
			b.Auth = p.authKeys(what, v)
			for _, key := range b.Auth {
				if birdBFDAuth[key.Algorithm] == "" {
					p.errf(v, "%s: auth: algorithm %q is not a BFD one (simple, keyed-md5, meticulous-keyed-md5, keyed-sha1, meticulous-keyed-sha1)", what, key.Algorithm)
				}
			}
		},
	})
	return b
}

// RenderBFDd renders bfdd.conf for an FRR node with BFD: one profile with
// the node's timers, used by isisd/ospfd's sessions.
func RenderBFDd(n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "! rendered by farelab for node %s\nhostname %s\nlog timestamp precision 3\n!\n", n.Name, n.Hostname)
	ms := n.BFD.Interval.Milliseconds()
	fmt.Fprintf(&b, "bfd\n profile %s\n  detect-multiplier %d\n  receive-interval %d\n  transmit-interval %d\n exit\n !\nexit\n!\n",
		bfdProfile, n.BFD.Multiplier, ms, ms)
	return b.String()
}

// frrBFDIface is the interface lines that put an FRR adjacency under BFD
// (proto "isis" or "ospf"); empty without the node option.
func frrBFDIface(n *Node, proto string) string {
	if n.BFD == nil {
		return ""
	}
	if proto == "ospf" {
		return " ip ospf bfd\n ip ospf bfd profile " + bfdProfile + "\n"
	}
	return " isis bfd\n isis bfd profile " + bfdProfile + "\n"
}

// renderBIRDBFD is protocol bfd of a BIRD node with the bfd option: every
// interface with the node's timers and keys. BIRD's OSPF asks it for a
// session per neighbour (`bfd yes`, renderBIRD).
func renderBIRDBFD(n *Node) string {
	var b strings.Builder
	ms := n.BFD.Interval.Milliseconds()
	fmt.Fprintf(&b, "protocol bfd {\n  debug { states, events };\n  interface \"*\" {\n    min rx interval %d ms;\n    min tx interval %d ms;\n    multiplier %d;\n",
		ms, ms, n.BFD.Multiplier)
	if len(n.BFD.Auth) > 0 {
		fmt.Fprintf(&b, "    authentication %s;\n", birdBFDAuth[n.BFD.Auth[0].Algorithm])
		for _, k := range n.BFD.Auth {
			fmt.Fprintf(&b, "    password %q { id %d; };\n", k.Secret, k.ID)
		}
	}
	b.WriteString("  };\n}\n")
	return b.String()
}

// BIRDBFDSession is one row of BIRD's `show bfd sessions`.
type BIRDBFDSession struct {
	Address, Interface, State string
}

// ParseBIRDBFDSessions parses `birdc show bfd sessions` (BIRD 2.0.12):
//
//	bfd1:
//	IP address                Interface  State      Since         Interval  Timeout
//	10.254.0.0                f1-1       Up         10:20:30.123    0.100    0.500
func ParseBIRDBFDSessions(out string) []BIRDBFDSession {
	var rows []BIRDBFDSession
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.ContainsAny(f[0], ".:") && f[0] != "IP" {
			if _, err := netip.ParseAddr(f[0]); err == nil {
				rows = append(rows, BIRDBFDSession{Address: f[0], Interface: f[1], State: f[2]})
			}
		}
	}
	return rows
}

// BFDPeer is one row of FRR's `show bfd peers brief`.
type BFDPeer struct {
	Local, Peer, Status string
}

// BFDPeers returns an FRR node's BFD sessions (`show bfd peers brief`).
func (l *Lab) BFDPeers(ctx context.Context, node string) ([]BFDPeer, error) {
	out, err := l.Vtysh(ctx, node, "show bfd peers brief")
	if err != nil {
		return nil, err
	}
	return parseBFDPeers(out), nil
}

func parseBFDPeers(out string) []BFDPeer {
	var ps []BFDPeer
	for _, line := range strings.Split(out, "\n") {
		// "3384617813 10.254.0.1   10.254.0.0   up"
		f := strings.Fields(line)
		if len(f) != 4 || f[0] == "SessionId" || strings.HasPrefix(f[0], "=") {
			continue
		}
		ps = append(ps, BFDPeer{Local: f[1], Peer: f[2], Status: f[3]})
	}
	return ps
}

// frrDaemons is the start order of an FRR node's daemons: zebra first,
// then bfdd (with the bfd option), then the routing daemon, so its
// sessions find bfdd through zebra from the start.
func frrDaemons(n *Node) []string {
	if n.BFD != nil {
		return []string{"zebra", "bfdd", frrDaemon(n)}
	}
	return []string{"zebra", frrDaemon(n)}
}
