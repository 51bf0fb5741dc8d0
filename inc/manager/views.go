package manager

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/protos"
)

// The API's views of the state (GET /v1/inc/...).

func stateProto(st string) protos.GroupState {
	switch st {
	case StateWaiting, StateProgramming:
		return protos.GroupState_GROUP_STATE_WAITING
	case StateReady:
		return protos.GroupState_GROUP_STATE_READY
	case StateNoTree:
		return protos.GroupState_GROUP_STATE_NO_TREE
	case StateDismantled:
		return protos.GroupState_GROUP_STATE_DISMANTLED
	}
	return protos.GroupState_GROUP_STATE_UNSPECIFIED
}

func (s *State) name(key string) string {
	if sw := s.switches[key]; sw != nil && sw.reg != nil {
		return sw.reg.NodeId
	}
	return key
}

// Groups is GET /v1/inc/groups.
func (s *State) Groups() []wire.INCGroup {
	out := []wire.INCGroup{}
	for _, name := range sortedIDs(s.groups) {
		out = append(out, s.groupView(s.groups[name]))
	}
	return out
}

// groupView is g's row of GET /v1/inc/groups (and the dismantle's answer).
func (s *State) groupView(g *group) wire.INCGroup {
	v := wire.INCGroup{Name: g.name, Size: g.size, Joined: s.joined(g), State: g.state, Reason: g.reason,
		Generation: g.gen, Created: g.created, Rebuilds: g.rebuilds, Timeouts: g.timeouts}
	if g.tree != nil {
		v.TreeID, v.Root = g.tree.id, s.name(g.tree.plan.Root)
	}
	return v
}

// Trees is GET /v1/inc/trees.
func (s *State) Trees() []wire.INCTree {
	out := []wire.INCTree{}
	for _, name := range sortedIDs(s.groups) {
		g := s.groups[name]
		t := g.tree
		if t == nil {
			continue
		}
		v := wire.INCTree{Group: g.name, TreeID: t.id, Generation: g.gen, Root: s.name(t.plan.Root), RootAddr: t.plan.Root,
			Levels: t.plan.Levels, Members: g.size, Ready: g.state == StateReady, Topology: t.topo, Switches: []wire.INCTreeSwitch{}}
		if !math.IsInf(t.plan.Bottleneck, 1) {
			b := t.plan.Bottleneck
			v.Bottleneck = &b
		}
		for _, key := range sortedIDs(t.plan.Nodes) {
			n := t.plan.Nodes[key]
			ts := wire.INCTreeSwitch{Switch: s.name(key), Address: key, Role: "leaf", QP: t.qp[key], Children: []string{},
				Applied: s.switches[key].applied >= t.need[key]}
			if n.Parent == "" {
				ts.Role = "root"
			} else {
				ts.Parent = s.name(n.Parent)
			}
			for _, c := range n.Children {
				if c.Member >= 0 {
					ts.Children = append(ts.Children, fmt.Sprintf("rank %d", c.Member))
				} else {
					ts.Children = append(ts.Children, s.name(c.Switch))
				}
			}
			v.Switches = append(v.Switches, ts)
		}
		for k := range g.exclude {
			v.Excluded = append(v.Excluded, s.name(k))
		}
		slices.Sort(v.Excluded)
		out = append(out, v)
	}
	return out
}

// Clients is GET /v1/inc/clients.
func (s *State) Clients() []wire.INCClient {
	out := []wire.INCClient{}
	now := s.now()
	for _, id := range sortedIDs(s.clients) {
		c := s.clients[id]
		v := wire.INCClient{ID: c.id, Group: c.g.name, Rank: c.rank, Address: c.addr.String(), QP: c.qpn, Host: c.host,
			LastSeenAgo: now.Sub(c.last).Seconds(), Generation: c.gen, Timeouts: c.timeouts,
			Bytes: c.stats.bytes, Operations: c.stats.operations, FailedOperations: c.stats.failed,
			Retransmissions: c.stats.retransmissions, RTOs: c.stats.timeouts}
		if t := c.g.tree; t != nil {
			v.Attach = s.name(t.plan.Attach[c.rank].Switch)
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b wire.INCClient) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		return a.Rank - b.Rank
	})
	return out
}

// security fills the state's part of GET /v1/inc/security.
func (s *State) security(v *wire.INCSecurity) {
	v.MaxGroups, v.MaxGroupsPerToken, v.MaxGroupSize = s.cfg.MaxGroups, s.cfg.MaxGroupsPerToken, s.cfg.MaxGroupSize
	v.Groups = len(s.groups)
	v.Tokens = []wire.INCTokenUse{}
	for _, id := range sortedIDs(s.perToken) {
		u := wire.INCTokenUse{Token: id, Groups: len(s.perToken[id])}
		for _, n := range s.perToken[id] {
			u.Clients += n
		}
		v.Tokens = append(v.Tokens, u)
	}
}

// Switches is GET /v1/inc/switches.
func (s *State) Switches() []wire.INCRegisteredSwitch {
	out := []wire.INCRegisteredSwitch{}
	used := s.trees(nil)
	for _, key := range sortedIDs(s.switches) {
		sw := s.switches[key]
		v := wire.INCRegisteredSwitch{ID: sw.reg.NodeId, Address: key, Alive: sw.alive, MaxTrees: int(sw.reg.MaxTrees),
			MaxSlots: int(sw.reg.MaxSlots), MaxRanks: int(sw.reg.MaxRanks), MaxPayload: int(sw.reg.MaxPayload),
			Trees: used[key], Version: sw.version, Applied: sw.applied, Error: sw.err,
			InTopology: s.graph != nil && attachNode(s.graph, sw.addr) >= 0}
		out = append(out, v)
	}
	return out
}
