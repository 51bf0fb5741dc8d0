package ospf

import (
	"context"
	"fmt"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/lsdb"
)

// Spec is OSPF's entry in fared's module table: configured by the ospf
// section, its API below /v1/ospf/.
var Spec = daemon.Spec{
	Name:       "ospf",
	Configured: func(c *config.Config) bool { return c.OSPF != nil },
	New: func(core *daemon.Core, cfg *config.Config) (daemon.Module, error) {
		in, err := New(cfg, Options{Logger: core.Log, Repair: core.RIB, OnGraph: func(area string, g *lsdb.Graph) {
			core.RIB.Submit(g, fmt.Sprintf("ospf area %s lsdb", area))
		}})
		if err != nil {
			return nil, err
		}
		return &module{in: in, cfg: cfg.OSPF}, nil
	},
}

// module adapts an Instance to the daemon's contract.
type module struct {
	in  *Instance
	cfg *config.OSPF // the section in force (Reconfigure's goroutine only)
}

func (m *module) Run(ctx context.Context) error { return m.in.Run(ctx) }

// Check validates the new ospf section against the running instance:
// everything it accepts, Reconfigure applies live.
func (m *module) Check(cfg *config.Config) error { return m.in.Check(cfg) }

// Reconfigure applies the new section and reports, per setting and per
// interface, what the instance did with it.
func (m *module) Reconfigure(ctx context.Context, cfg *config.Config) (daemon.Change, error) {
	rep, err := m.in.Reconfigure(ctx, cfg)
	if err != nil {
		return daemon.Change{}, err
	}
	m.cfg = cfg.OSPF
	return daemon.Change{Changed: rep.Changed, Warnings: rep.Warnings}, nil
}

func (m *module) LinkEvent(ev netif.Event) { m.in.Notify(ev.Name) }
func (m *module) Converged() bool          { return m.in.Converged() }
