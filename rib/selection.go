package rib

import (
	"fmt"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/spf"
)

// How the rib picks one route per prefix among its topologies' (a
// protocol may have several: levels, areas), and among protocols. The
// rib knows no protocol: each routing protocol gives its Selection with
// its Routing (the daemon takes it from the module), and the rib applies
// the one rule (better):
//
//  1. the lower administrative distance (Routing.Distance);
//  2. between routes of one protocol, the lower rank, which the
//     protocol's Ranker computes per route (a path type, up before down,
//     a level), then the lower metric;
//  3. between protocols at one distance, up before down, the lower level
//     (a protocol without levels has level 0), then the lower metric;
//
// and on a tie the route merged first (topologies in topoKey order)
// stays.

// Topology is one computed topology of a protocol, as its Selection sees
// it.
type Topology struct {
	Graph  *lsdb.Graph
	Result *spf.Result
}

// Ranker decides whether one route of topology g takes part in the merge
// (use), and ranks it against the protocol's other routes for the same
// prefix: the lower rank wins, before the metric. fr is the FARE route;
// sr the SPF route it weighs, nil when not known (the rank must then
// be the protocol's best kind).
type Ranker func(g *lsdb.Graph, fr *fare.Route, sr *spf.Route) (rank uint64, use bool)

// Selection returns a protocol's Ranker for one merge, given the
// protocol's computed topologies in topoKey order (a protocol may rank
// one topology's routes by the state of another: OSPF's ABR looks at the
// backbone).
type Selection func(topos []Topology) Ranker

// rankers gives each protocol with a Selection its Ranker for one merge
// of the topologies keys (sorted).
func (m *Manager) rankers(keys []string) map[string]Ranker {
	var byProto map[string][]Topology
	for _, k := range keys {
		if ls := m.levels[k]; ls.result != nil {
			if byProto == nil {
				byProto = map[string][]Topology{}
			}
			p := ls.result.Graph.Protocol
			byProto[p] = append(byProto[p], Topology{Graph: ls.result.Graph, Result: ls.result})
		}
	}
	out := make(map[string]Ranker, len(byProto))
	for p, topos := range byProto {
		if sel := m.proto(p).routing.Select; sel != nil {
			out[p] = sel(topos)
		}
	}
	return out
}

// distance is the administrative distance of a protocol's routes.
func (m *Manager) distance(protocol string) int {
	return int(m.proto(protocol).routing.Distance)
}

// topoKey names the topology of a snapshot: protocol plus level or area.
func topoKey(g *lsdb.Graph) string {
	if g.Area != "" {
		return g.Protocol + "/" + g.Area
	}
	return fmt.Sprintf("%s/L%d", g.Protocol, g.Level)
}

// better reports whether route a (of rank ra, protocol distance da) beats
// route b (rb, db) for the same prefix: the rules above.
func better(a Route, ra uint64, da int, b Route, rb uint64, db int) bool {
	if da != db {
		return da < db
	}
	if a.Protocol == b.Protocol {
		if ra != rb {
			return ra < rb
		}
		return a.Metric < b.Metric
	}
	if a.Down != b.Down {
		return !a.Down
	}
	if a.Level != b.Level {
		return a.Level < b.Level
	}
	return a.Metric < b.Metric
}
