package isis

import (
	"fmt"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/lsdb"
)

// Spec is IS-IS's entry in fared's module table: configured by the isis
// section, its API below /v1/isis/.
var Spec = daemon.Spec{
	Name:       Key,
	Configured: func(c *config.Config) bool { return Section(c) != nil },
	Routing:    routing,
	New: func(core *daemon.Core, cfg *config.Config) (daemon.Module, error) {
		in, err := New(cfg, Options{Logger: core.Log, Repair: core.RIB, BFD: core.BFD, OnGraph: func(level int, g *lsdb.Graph) {
			core.RIB.Submit(g, fmt.Sprintf("isis L%d lsdb", level))
		}})
		if err != nil {
			return nil, err
		}
		return in, nil
	},
}

// The Instance is the module: it runs, checks and applies reloads, serves
// its API (api.go), exports its metrics (metrics.go), and hears of links
// (LinkEvent) and gates the FIB's start-up hold (Converged).
var _ interface {
	daemon.Module
	daemon.LinkWatcher
	daemon.Converger
	daemon.Collector
} = (*Instance)(nil)

// LinkEvent makes the instance re-read an interface now (the monitor saw it
// change) instead of at the next poll.
func (in *Instance) LinkEvent(ev netif.Event) { in.Notify(ev.Name) }
