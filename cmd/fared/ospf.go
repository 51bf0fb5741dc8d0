package main

import (
	"fmt"
	"log/slog"

	"github.com/fared/fared/config"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf"
)

// newOSPF creates the OSPF instance; every area snapshot goes to submit
// (rib.Manager.Submit) with a trigger naming the area. The caller starts
// it with `go inst.Run(ctx)` once submit's target exists.
func newOSPF(cfg *config.Config, log *slog.Logger, submit func(*lsdb.Graph, string)) (*ospf.Instance, error) {
	return ospf.New(cfg, ospf.Options{Logger: log, OnGraph: func(area string, g *lsdb.Graph) {
		submit(g, fmt.Sprintf("ospf area %s lsdb", area))
	}})
}
