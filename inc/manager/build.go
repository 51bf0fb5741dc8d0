package manager

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fared/fared/lsdb"
)

// Building trees: the rib's topologies, re-examining a group's tree when
// they or its switches change, building it, tree ids and readiness.

// SetGraphs takes the rib's topologies and re-examines every tree.
func (s *State) SetGraphs(gs []*lsdb.Graph) {
	s.graphs = gs
	s.graph = s.pickGraph()
	for _, g := range s.groups {
		switch g.state {
		case StateProgramming, StateReady:
			s.reexamine(g)
		case StateNoTree:
			s.build(g, "topology changed")
		}
	}
}

// pickGraph chooses the topology that places the most registered switches
// (IS-IS L2 before L1 at a tie, by the rib's order).
func (s *State) pickGraph() *lsdb.Graph {
	var best *lsdb.Graph
	bestN := -1
	for _, g := range s.graphs {
		n := 0
		for _, sw := range s.switches {
			if attachNode(g, sw.addr) >= 0 {
				n++
			}
		}
		if n > bestN || n == bestN && g.Protocol == "isis" && g.Level == 2 && best.Level != 2 {
			best, bestN = g, n
		}
	}
	return best
}

// reexamine rebuilds g's tree when the topology makes its current shape
// worse than the best one, or impossible.
func (s *State) reexamine(g *group) {
	t := g.tree
	sws := s.switchInfos(g)
	cur, err := Compute(s.graph, sws, s.members(g), Options{Exclude: s.excluded(g), Roots: map[string]bool{t.plan.Root: true}})
	if err != nil {
		s.build(g, "topology changed: "+err.Error())
		return
	}
	best, err := Compute(s.graph, sws, s.members(g), Options{Exclude: s.excluded(g)})
	if err != nil {
		s.build(g, "topology changed: "+err.Error())
		return
	}
	switch {
	case best.Bottleneck > cur.Bottleneck*(1+1e-9):
		s.build(g, fmt.Sprintf("topology changed: root %s offers %s, the tree now has %s", best.Root, bw(best.Bottleneck), bw(cur.Bottleneck)))
	case shape(cur) != shape(t.plan):
		s.log.Info("inc tree shape changed", "group", g.name, "was", shape(t.plan), "now", shape(cur))
		s.build(g, "topology changed: the tree's shape changed")
	default:
		t.plan.Bottleneck = cur.Bottleneck
	}
}

func bw(v float64) string {
	if math.IsInf(v, 1) {
		return "unconstrained"
	}
	return fmt.Sprintf("%.3g Gb/s", v*8/1e9)
}

// shape is a canonical description of a plan's structure.
func shape(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root=%s", p.Root)
	for _, id := range sortedIDs(p.Nodes) {
		n := p.Nodes[id]
		fmt.Fprintf(&b, ";%s<%s#%d:", id, n.Parent, n.ParentIndex)
		for _, c := range n.Children {
			fmt.Fprintf(&b, "%d/%s,", c.Member, c.Switch)
		}
	}
	return b.String()
}

func (s *State) members(g *group) []MemberInfo {
	m := make([]MemberInfo, len(g.members))
	for i, c := range g.members {
		m[i] = MemberInfo{Rank: i, Addr: c.addr}
	}
	return m
}

func (s *State) excluded(g *group) map[string]bool {
	ex := map[string]bool{}
	for k := range g.exclude {
		ex[k] = true
	}
	return ex
}

// trees counts the trees of each switch, leaving out group skip's.
func (s *State) trees(skip *group) map[string]int {
	n := map[string]int{}
	for _, g := range s.groups {
		if g == skip || g.tree == nil {
			continue
		}
		for k := range g.tree.plan.Nodes {
			n[k]++
		}
	}
	return n
}

func (s *State) switchInfos(g *group) []SwitchInfo {
	used := s.trees(g)
	var out []SwitchInfo
	for _, k := range sortedIDs(s.switches) {
		sw := s.switches[k]
		if !sw.alive {
			continue
		}
		out = append(out, SwitchInfo{ID: k, Addr: sw.addr, MaxRanks: int(sw.reg.MaxRanks),
			FreeTrees: int(sw.reg.MaxTrees) - used[k], Trees: used[k]})
	}
	return out
}

// retry gives groups without a tree another chance.
func (s *State) retry(why string) {
	if s.graph == nil {
		s.graph = s.pickGraph()
	}
	for _, g := range s.groups {
		if g.state == StateNoTree {
			s.build(g, why)
		}
	}
}

// build computes and programs g's tree (replacing any current one).
func (s *State) build(g *group, why string) {
	if s.joined(g) < g.size || g.state == StateDismantled {
		return
	}
	if s.graph == nil {
		s.graph = s.pickGraph()
	}
	old := g.tree
	plan, err := Compute(s.graph, s.switchInfos(g), s.members(g), Options{Exclude: s.excluded(g)})
	var id uint16
	if err == nil {
		id, err = s.treeID()
	}
	if err != nil {
		if g.state == StateNoTree && g.reason == err.Error() {
			return
		}
		s.log.Warn("inc group has no tree", "group", g.name, "why", why, "error", err)
		g.tree, g.state, g.reason = nil, StateNoTree, err.Error()
		g.gen++
		if old != nil {
			s.pushAll()
		}
		s.changed()
		return
	}
	t := &treeState{id: id, plan: plan, qp: map[string]uint32{}, need: map[string]uint64{},
		slots: s.cfg.Slots, payload: math.MaxInt32, topo: topoName(s.graph)}
	for key := range plan.Nodes {
		sw := s.switches[key]
		t.qp[key] = s.allocQP(sw)
		t.slots = min(t.slots, int(sw.reg.MaxSlots))
		t.payload = min(t.payload, int(sw.reg.MaxPayload))
	}
	if old != nil {
		g.rebuilds++
	}
	g.tree, g.state, g.reason, g.reports = t, StateProgramming, why, nil
	g.gen++
	s.log.Info("inc tree built", "group", g.name, "tree", t.id, "root", plan.Root, "levels", plan.Levels,
		"bottleneck", bw(plan.Bottleneck), "generation", g.gen, "why", why)
	s.pushAll()
	s.checkReady(g)
	s.changed()
}

func topoName(g *lsdb.Graph) string {
	if g.Protocol == "ospf" {
		return "ospf area " + g.Area
	}
	return fmt.Sprintf("%s L%d", g.Protocol, g.Level)
}

// errNoTreeID: every 16-bit tree id is held by a group's tree.
var errNoTreeID = errors.New("no free tree id: all 65535 are in use")

// treeID allocates the next free tree id after the last one given (ids
// are not reused at once, so a late packet of a dismantled tree does not
// land in its successor). It looks at each id at most once.
func (s *State) treeID() (uint16, error) {
	used := map[uint16]bool{}
	for _, g := range s.groups {
		if g.tree != nil {
			used[g.tree.id] = true
		}
	}
	for range 1 << 16 {
		s.nextTree++
		if s.nextTree != 0 && !used[s.nextTree] {
			return s.nextTree, nil
		}
	}
	return 0, errNoTreeID
}

// checkReady makes a programming group ready once every switch of its
// tree applied a config that carries it; a switch that refuses it is
// avoided as root and the tree rebuilt.
func (s *State) checkReady(g *group) {
	if g.state != StateProgramming || g.tree == nil {
		return
	}
	for _, key := range sortedIDs(g.tree.need) {
		sw := s.switches[key]
		if v := g.tree.need[key]; sw.sent != nil && sw.sent.Version == v && sw.err != "" && sw.applied < v {
			g.exclude[key] = s.now().Add(s.cfg.ExcludeFor)
			s.build(g, fmt.Sprintf("switch %s refused the tree: %s", sw.reg.NodeId, sw.err))
			return
		}
	}
	for key, v := range g.tree.need {
		if s.switches[key].applied < v {
			return
		}
	}
	g.state = StateReady
	s.log.Info("inc tree ready", "group", g.name, "tree", g.tree.id, "generation", g.gen)
	s.changed()
}
