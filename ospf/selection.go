package ospf

import (
	"golang.org/x/sys/unix"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

// routing is what the core needs of OSPF (daemon.Routing): the kernel
// protocol of fared's routes when OSPF is the first routing protocol
// configured, and how its routes rank in the rib's merge of areas.
var routing = &daemon.Routing{KernelProto: unix.RTPROT_OSPF, Select: selection}

// backbone is the backbone's area name (graph Area).
const backbone = "0.0.0.0"

// Path types, best first (RFC 2328 §11).
const (
	pathIntra = iota
	pathInter
	pathE1
	pathE2
)

// selection ranks OSPF's routes across its areas. RFC 2328 §16.2: an ABR
// examines only the backbone's Summary LSAs. As FRR's default ABR type
// (RFC 3509 §2.2), only while the backbone connection is active (Self
// has a neighbour in the backbone, FRR: a Full neighbour there); without
// it, inter-area routes of every area count. A router in one area alone
// never has both.
func selection(topos []rib.Topology) rib.Ranker {
	bbActive := false
	for _, t := range topos {
		if t.Graph.Area == backbone && len(t.Result.Neighbors) > 0 {
			bbActive = true
		}
	}
	return func(g *lsdb.Graph, _ *fare.Route, sr *spf.Route) (uint64, bool) {
		kind, t2 := pathType(sr)
		if kind == pathInter && bbActive && g.Area != backbone {
			return 0, false
		}
		return rank(kind, t2), true
	}
}

// rank orders routes of one prefix from different areas by path type
// (RFC 2328 §11: intra-area, inter-area, type-1 external, type-2
// external; §16.4(6)(a)-(b)), type-2 externals by their type-2 metric;
// the rib then compares metrics (for type 2, the distance to the ASBR or
// forwarding address, §16.4(6)(d)).
func rank(kind int, t2 uint32) uint64 { return uint64(kind)<<32 | uint64(t2) }

// pathType is the path type of an SPF route (nil: not known, intra) and,
// for a type-2 external, its type-2 metric.
func pathType(sr *spf.Route) (kind int, t2 uint32) {
	switch {
	case sr == nil:
		return pathIntra, 0
	case sr.External && sr.Type2:
		return pathE2, sr.Type2Metric
	case sr.External:
		return pathE1, 0
	case sr.Inter:
		return pathInter, 0
	}
	return pathIntra, 0
}
