package spf

import (
	"math"
	"slices"

	"github.com/fared/fared/lsdb"
)

// CapacityDiff reports whether b differs from a in capacities only: the
// same topology (TopologyDiff), the same link addresses, the same Self
// adjacencies and the same prefixes but for their Path Bandwidth. links
// are the links whose Maximum Link Bandwidth differs, prefixes the
// indexes (in b.Prefixes) of the prefixes whose Path Bandwidth differs.
//
// Such a change needs no SPF and is no topology churn: the rib weighs it
// at once, outside the RFC 8405 back-off (docs/fare.md, "Capacity
// changes"). ok with no links and no prefixes: nothing the rib reads
// changed (an LSP refresh).
func CapacityDiff(a, b *lsdb.Graph) (ok bool, links, prefixes []int32) {
	same, links := TopologyDiff(a, b, true)
	if !same || !slices.Equal(a.Addrs, b.Addrs) || !sameAdjacencies(a.Adjacencies, b.Adjacencies) || len(a.Prefixes) != len(b.Prefixes) {
		return false, nil, nil
	}
	for i := range a.Prefixes {
		x, y := a.Prefixes[i], b.Prefixes[i]
		bwChanged := x.HasPathBW != y.HasPathBW || math.Float32bits(x.PathBW) != math.Float32bits(y.PathBW)
		x.PathBW, x.HasPathBW = y.PathBW, y.HasPathBW
		if x != y {
			return false, nil, nil
		}
		if bwChanged {
			prefixes = append(prefixes, int32(i))
		}
	}
	return true, links, prefixes
}

func sameAdjacencies(a, b []lsdb.Adjacency) bool {
	return slices.EqualFunc(a, b, func(x, y lsdb.Adjacency) bool {
		return x.Node == y.Node && x.IfIndex == y.IfIndex && x.IfName == y.IfName &&
			slices.Equal(x.Local, y.Local) && slices.Equal(x.NbrAddrs, y.NbrAddrs)
	})
}
