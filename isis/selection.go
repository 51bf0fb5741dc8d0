package isis

import (
	"golang.org/x/sys/unix"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

// routing is what the core needs of IS-IS (daemon.Routing): the kernel
// protocol of fared's routes when IS-IS is the first routing protocol
// configured, and how its routes rank in the rib's merge of topologies.
var routing = &daemon.Routing{KernelProto: unix.RTPROT_ISIS, Select: selection}

// selection ranks IS-IS's routes across its levels (it needs no other
// topology's state).
func selection([]rib.Topology) rib.Ranker { return rank }

// rank: an up route beats a down one (RFC 5302 §3.3: a prefix an L1L2
// router leaked into L1 never wins over the L2 route it came from); then
// level 1 beats level 2 (ISO 10589 §7.2.12); the rib then compares
// metrics.
func rank(g *lsdb.Graph, fr *fare.Route, _ *spf.Route) (uint64, bool) {
	var down uint64
	if fr.Down {
		down = 1
	}
	return down<<8 | uint64(g.Level), true
}
