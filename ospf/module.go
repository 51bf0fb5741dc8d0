package ospf

import (
	"fmt"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/lsdb"
)

// Spec is OSPF's entry in fared's module table: configured by the ospf
// section, its API below /v1/ospf/. The Instance is the module
// (igp.Module): it runs, checks and applies reloads (reconfig.go), serves
// its API (api.go), exports its metrics (metrics.go), and hears of links
// and gates the FIB's start-up hold (igp.Base).
var Spec = igp.Spec(Key, routing, func(core *daemon.Core, cfg *config.Config) (*Instance, error) {
	return New(cfg, Options{Logger: core.Log, Repair: core.RIB, BFD: core.BFD, OnGraph: func(area string, g *lsdb.Graph) {
		core.RIB.Submit(g, fmt.Sprintf("ospf area %s lsdb", area))
	}})
})
