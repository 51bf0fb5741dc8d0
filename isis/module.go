package isis

import (
	"context"
	"fmt"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/lsdb"
)

// Spec is IS-IS's entry in fared's module table: configured by the isis
// section, its API below /v1/isis/.
var Spec = daemon.Spec{
	Name:       "isis",
	Configured: func(c *config.Config) bool { return c.ISIS != nil },
	New: func(core *daemon.Core, cfg *config.Config) (daemon.Module, error) {
		in, err := New(cfg, Options{Logger: core.Log, Repair: core.RIB, OnGraph: func(level int, g *lsdb.Graph) {
			core.RIB.Submit(g, fmt.Sprintf("isis L%d lsdb", level))
		}})
		if err != nil {
			return nil, err
		}
		return &module{in: in, cfg: cfg.ISIS}, nil
	},
}

// module adapts an Instance to the daemon's contract.
type module struct {
	in  *Instance
	cfg *config.ISIS // the section in force (Reconfigure's goroutine only)
}

func (m *module) Run(ctx context.Context) error { return m.in.Run(ctx) }

// Check validates the new isis section against the running instance:
// everything it accepts, Reconfigure applies live.
func (m *module) Check(cfg *config.Config) error { return m.in.Check(cfg) }

// Reconfigure applies the new section and reports, per setting and per
// interface, what the instance did with it.
func (m *module) Reconfigure(ctx context.Context, cfg *config.Config) (daemon.Change, error) {
	rep, err := m.in.Reconfigure(ctx, cfg)
	if err != nil {
		return daemon.Change{}, err
	}
	m.cfg = cfg.ISIS
	return daemon.Change{Changed: rep.Changed, Warnings: rep.Warnings}, nil
}

func (m *module) LinkEvent(ev netif.Event) { m.in.Notify(ev.Name) }
func (m *module) Converged() bool          { return m.in.Converged() }
