package bfd

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
)

// Spec shows BFD below /v1/bfd/ (farectl bfd): it runs when an isis or
// ospf section turns BFD on anywhere. The sessions belong to the
// protocols (isis/bfd.go, ospf/bfd.go); this module only holds the
// shared manager while it runs and reads it.
var Spec = daemon.Spec{
	Name:       "bfd",
	Configured: configured,
	New: func(core *daemon.Core, cfg *config.Config) (daemon.Module, error) {
		return &module{core: core}, nil
	},
}

func configured(c *config.Config) bool {
	if c.ISIS != nil {
		for _, it := range c.ISIS.Interfaces {
			if config.EffectiveBFD(c.ISIS.BFD, it.BFD) != nil {
				return true
			}
		}
	}
	if c.OSPF != nil {
		for _, it := range c.OSPF.Interfaces {
			if config.EffectiveBFD(c.OSPF.BFD, it.BFD) != nil {
				return true
			}
		}
	}
	return false
}

type module struct {
	core *daemon.Core
	m    atomic.Pointer[Manager]
}

func (md *module) Run(ctx context.Context) error {
	m := Acquire(md.core.Log)
	md.m.Store(m)
	<-ctx.Done()
	md.m.Store(nil)
	Release(m)
	return nil
}

func (md *module) Check(*config.Config) error { return nil }

func (md *module) Reconfigure(context.Context, *config.Config) (daemon.Change, error) {
	return daemon.Change{}, nil // the protocols apply bfd changes
}

func (md *module) Routes(r *api.Router) {
	r.Handle("GET sessions", func(req *http.Request) (any, error) {
		m := md.m.Load()
		out := wire.BFDSessions{Sessions: []wire.BFDSession{}, Counters: map[string]uint64{}}
		if m == nil {
			return out, nil
		}
		ss, ctr, err := m.Sessions(req.Context())
		if err != nil {
			return nil, err
		}
		out.Counters = ctr
		for _, s := range ss {
			w := wire.BFDSession{Interface: s.Interface, Peer: s.Peer.String(), Local: s.Local.String(), State: s.State,
				RemoteState: s.RemoteState, Diag: s.Diag, LocalDisc: s.LocalDisc, RemoteDisc: s.RemoteDisc,
				Interval: s.Interval, Multiplier: s.Multiplier, TxInterval: s.TxInterval, DetectTime: s.DetectTime,
				RemoteMinRx: s.RemoteMinRx, RemoteMinTx: s.RemoteMinTx, RemoteMult: s.RemoteMult, UpSince: s.UpSince,
				Sent: s.Stats.Sent, Received: s.Stats.Received, Ups: s.Stats.Up, Downs: s.Stats.Down, LastDown: s.Stats.LastDown}
			if s.Stats.Down > 0 {
				w.LastDownWhy = s.Stats.LastDownDiag.String()
			}
			out.Sessions = append(out.Sessions, w)
		}
		return out, nil
	})
}
