package manager

import (
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/lsdb"
)

// Caller is who makes a client call: the verified claims of its join
// token (without client-auth, the manager's loopback-only mode, a token
// of group "*" and id "") and its address, for logs.
type Caller struct {
	Token auth.Claims
	Peer  string
}

// Anyone is the caller of a manager without client-auth.
func Anyone(peer string) Caller { return Caller{Token: auth.Claims{Group: "*"}, Peer: peer} }

// Refusal reasons: the keys of Refusals.Counts, GET /v1/inc/security and
// fared_inc_refused_total{reason}.
const (
	ReasonNoToken           = "no_token"             // a client call without a token
	ReasonBadToken          = "bad_token"            // malformed, or not signed by the manager's key
	ReasonExpiredToken      = "expired_token"        // past its expiry
	ReasonTokenScope        = "token_scope"          // the token does not cover the group (of the join, or of the client id used)
	ReasonCapGroups         = "cap_groups"           // max-groups reached
	ReasonCapGroupsPerToken = "cap_groups_per_token" // the token's max-groups-per-token reached
	ReasonCapGroupSize      = "cap_group_size"       // a group larger than max-group-size
	ReasonSwitchNoCert      = "switch_no_cert"       // a switch session without a client certificate
	ReasonSwitchBadCert     = "switch_bad_cert"      // a certificate the CA did not sign (or expired, or not for clients)
	ReasonSwitchUnknown     = "switch_unknown_router"
	ReasonSwitchAddress     = "switch_address" // the address is not the certificate's router's own
	ReasonNotLocal          = "not_local"      // a manager without tls: a call from beyond loopback
)

// Reasons lists every refusal reason.
var Reasons = []string{ReasonNoToken, ReasonBadToken, ReasonExpiredToken, ReasonTokenScope, ReasonCapGroups, ReasonCapGroupsPerToken,
	ReasonCapGroupSize, ReasonSwitchNoCert, ReasonSwitchBadCert, ReasonSwitchUnknown, ReasonSwitchAddress, ReasonNotLocal}

// maxLogged bounds the (reason, peer) pairs logged: past it, refusals are
// only counted.
const maxLogged = 1024

// Refusals counts refused calls by reason and logs each (reason, peer)
// once. It is safe for concurrent use.
type Refusals struct {
	log    *slog.Logger
	mu     sync.Mutex
	counts map[string]uint64
	logged map[string]bool
}

// NewRefusals returns an empty set of counters.
func NewRefusals(log *slog.Logger) *Refusals {
	return &Refusals{log: log, counts: map[string]uint64{}, logged: map[string]bool{}}
}

// Refuse counts a refusal of reason from peer, logs it if it is the
// first of its (reason, peer), and returns the gRPC status to answer.
func (r *Refusals) Refuse(reason, peer string, code codes.Code, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.counts[reason]++
	key := reason + "|" + peer
	first := !r.logged[key] && len(r.logged) < maxLogged
	if first {
		r.logged[key] = true
	}
	r.mu.Unlock()
	if first {
		r.log.Warn("inc manager refused a call", "reason", reason, "peer", peer, "code", code.String(), "detail", msg,
			"note", "logged once per reason and peer; further refusals are only counted (farectl inc security)")
	}
	return status.Error(code, msg)
}

// Counts returns a copy of the counters.
func (r *Refusals) Counts() map[string]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.counts)
}

// Admit decides whether a switch session may register: its address must
// be the own address (router id, or a /32 it advertises) of the router
// its certificate names in the manager's live LSDB. Without tls (the
// manager on loopback only), the caller is a process of the manager's own
// node, and the address must be that node's. A switch cannot then place
// itself in a host subnet, nor take over another switch's address.
func (s *State) Admit(r *protos.SwitchRegister, id auth.Identity, peer string) error {
	addr, err := ValidateRegister(r)
	if err != nil {
		return err
	}
	if len(s.graphs) == 0 {
		// The manager just started: not a refusal, the switch retries.
		return status.Errorf(codes.Unavailable, "switch %s (%s): the manager has no topology yet to check it against; retry", r.NodeId, addr)
	}
	var named []string
	for _, g := range s.graphs {
		for i := range g.Nodes {
			if !names(g, int32(i), id) {
				continue
			}
			if owns(g, int32(i), addr) {
				return nil
			}
			named = append(named, nodeName(g, int32(i)))
		}
	}
	if len(named) == 0 {
		return s.Refusals.Refuse(ReasonSwitchUnknown, peer, codes.PermissionDenied,
			"switch %s (%s): the certificate %s names no router of the manager's LSDB", r.NodeId, addr, id)
	}
	return s.Refusals.Refuse(ReasonSwitchAddress, peer, codes.PermissionDenied,
		"switch %s: address %s is not router %s's own (its router id or a /32 it advertises)%s",
		r.NodeId, addr, strings.Join(named, ", "), s.whose(addr))
}

// names reports whether identity id names node i of g: the certificate
// carries its router id as an IP SAN or its hostname as a DNS SAN; a
// local caller names the manager's own node.
func names(g *lsdb.Graph, i int32, id auth.Identity) bool {
	n := &g.Nodes[i]
	if n.Pseudo {
		return false
	}
	if id.Local {
		return i == g.Self
	}
	for _, a := range id.IPs {
		if n.RouterID.IsValid() && a == n.RouterID {
			return true
		}
	}
	for _, name := range id.Names {
		if n.Name != "" && strings.EqualFold(name, n.Name) {
			return true
		}
	}
	return false
}

// owns reports whether addr is node i's own address: its router id, or a
// /32 it originates itself (not one it leaks down a level, learnt from
// another area, or redistributes).
func owns(g *lsdb.Graph, i int32, addr netip.Addr) bool {
	if g.Nodes[i].RouterID == addr {
		return true
	}
	host := netip.PrefixFrom(addr, 32)
	for k := range g.Prefixes {
		p := &g.Prefixes[k]
		if p.Node == i && p.Prefix == host && !p.Down && !p.External && !p.Inter {
			return true
		}
	}
	return false
}

// whose explains where addr sits in the topology, for the refusal.
func (s *State) whose(addr netip.Addr) string {
	for _, g := range s.graphs {
		for i := range g.Nodes {
			if owns(g, int32(i), addr) {
				return fmt.Sprintf("; it is router %s's", nodeName(g, int32(i)))
			}
		}
	}
	for _, g := range s.graphs {
		best, bits := -1, -1
		for k := range g.Prefixes {
			p := &g.Prefixes[k]
			if p.Prefix.Contains(addr) && p.Prefix.Bits() > bits {
				best, bits = k, p.Prefix.Bits()
			}
		}
		if best >= 0 {
			p := &g.Prefixes[best]
			return fmt.Sprintf("; it is in %s of router %s (a subnet: hosts live there)", p.Prefix, nodeName(g, p.Node))
		}
	}
	return "; no router advertises it"
}

func nodeName(g *lsdb.Graph, i int32) string {
	n := &g.Nodes[i]
	if n.Name != "" {
		return n.Name
	}
	if n.RouterID.IsValid() {
		return n.RouterID.String()
	}
	return n.ID
}
