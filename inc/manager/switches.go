package manager

import (
	"google.golang.org/protobuf/proto"

	"github.com/fared/fared/inc/protos"
)

// Switch sessions: registration, status reports, the end of a session, and
// the configs pushed to every switch.

// SwitchUp registers a switch (a new session). It returns the session
// serial the caller passes to SwitchStatus and SwitchDown.
func (s *State) SwitchUp(r *protos.SwitchRegister) (uint64, error) {
	addr, err := ValidateRegister(r)
	if err != nil {
		return 0, err
	}
	key := addr.String()
	sw := s.switches[key]
	if sw == nil {
		sw = &swState{addr: addr, key: key, nextQP: 0x100}
		s.switches[key] = sw
	}
	s.serial++
	sw.reg, sw.alive, sw.session, sw.sent, sw.applied, sw.err = r, true, s.serial, nil, 0, ""
	s.log.Info("inc switch registered", "switch", r.NodeId, "address", key, "slots", r.MaxSlots, "ranks", r.MaxRanks, "trees", r.MaxTrees)
	s.pushAll()
	s.retry("switch " + r.NodeId + " registered")
	return sw.session, nil
}

// SwitchStatus records a switch's report.
func (s *State) SwitchStatus(key string, session uint64, st *protos.SwitchStatus) {
	sw := s.switches[key]
	if sw == nil || sw.session != session {
		return
	}
	sw.status = st
	sw.applied = st.GetAppliedVersion()
	if st.GetError() != "" && st.GetError() != sw.err {
		s.log.Warn("inc switch refused its config", "switch", sw.reg.NodeId, "error", st.GetError())
	}
	sw.err = st.GetError()
	for _, g := range s.groups {
		s.checkReady(g)
	}
}

// SwitchDown ends a session: the switch is gone, and its trees are rebuilt.
func (s *State) SwitchDown(key string, session uint64) {
	sw := s.switches[key]
	if sw == nil || sw.session != session || !sw.alive {
		return
	}
	sw.alive = false
	s.log.Warn("inc switch lost", "switch", sw.reg.NodeId, "address", key)
	for _, g := range s.groups {
		if g.tree != nil && g.tree.plan.Nodes[key] != nil {
			s.build(g, "switch "+sw.reg.NodeId+" lost")
		}
	}
	s.changed()
}

func (s *State) allocQP(sw *swState) uint32 {
	used := map[uint32]bool{}
	for _, g := range s.groups {
		if g.tree != nil {
			if qp, ok := g.tree.qp[sw.key]; ok {
				used[qp] = true
			}
		}
	}
	for {
		sw.nextQP++
		if sw.nextQP > 0xFFFFFF {
			sw.nextQP = 0x100
		}
		if !used[sw.nextQP] {
			return sw.nextQP
		}
	}
}

// pushAll sends every live switch whose tree set changed its new set.
func (s *State) pushAll() {
	want := map[string][]*protos.SwitchTree{}
	for _, name := range sortedIDs(s.groups) {
		g := s.groups[name]
		if g.tree == nil {
			continue
		}
		for key, st := range s.switchTrees(g) {
			want[key] = append(want[key], st)
		}
	}
	for _, key := range sortedIDs(s.switches) {
		sw := s.switches[key]
		if !sw.alive {
			continue
		}
		c := &protos.SwitchConfig{Trees: want[key]}
		if sw.sent != nil {
			c.Version = sw.sent.Version
			if proto.Equal(c, sw.sent) {
				continue
			}
		}
		sw.version++
		c.Version = sw.version
		sw.sent = c
		for _, g := range s.groups {
			if g.tree != nil && g.tree.plan.Nodes[key] != nil {
				g.tree.need[key] = sw.version
			}
		}
		if s.push != nil {
			s.push(key, c)
		}
	}
}

// switchTrees is the configuration of g's tree on each of its switches.
func (s *State) switchTrees(g *group) map[string]*protos.SwitchTree {
	t := g.tree
	out := map[string]*protos.SwitchTree{}
	for key, n := range t.plan.Nodes {
		st := &protos.SwitchTree{TreeId: uint32(t.id), Qpn: t.qp[key], Rkey: g.key, Slots: uint32(t.slots),
			Root: n.Parent == "", Ordered: s.cfg.Ordered}
		if n.Parent != "" {
			st.Parent = &protos.Peer{Address: n.Parent, Qpn: t.qp[n.Parent]}
			st.ParentRank = uint32(n.ParentIndex)
		}
		for _, ch := range n.Children {
			if ch.Member >= 0 {
				m := g.members[ch.Member]
				st.Children = append(st.Children, &protos.Child{Address: m.addr.String(), Qpn: m.qpn, Client: true})
			} else {
				st.Children = append(st.Children, &protos.Child{Address: ch.Switch, Qpn: t.qp[ch.Switch]})
			}
		}
		out[key] = st
	}
	return out
}
