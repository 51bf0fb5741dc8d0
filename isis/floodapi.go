package isis

import (
	"context"
	"strings"
	"time"

	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/isis/packet"
)

// Flooding reports flooding reduction per interface (GET /v1/isis/flooding).
func (in *Instance) Flooding(ctx context.Context) (apiwire.ISISFlooding, error) {
	return igp.Collect(ctx, in.Base, func() (out apiwire.ISISFlooding, _ error) {
		now := in.opt.Now()
		names := in.hostnames(now)
		out = apiwire.ISISFlooding{Reduction: in.icfg.FloodingReduction, Reflooders: in.icfg.FloodingReflooders,
			Interfaces: []apiwire.ISISFloodingInterface{}}
		for _, c := range in.circuits {
			if c.cfg.Passive {
				continue
			}
			out.Interfaces = append(out.Interfaces, in.floodingOf(c, names, now))
		}
		return out, nil
	})
}

// floodingOf is one circuit's row: what it gets now, and its counters.
func (in *Instance) floodingOf(c *circuit, names map[packet.SystemID]string, now time.Time) apiwire.ISISFloodingInterface {
	v := apiwire.ISISFloodingInterface{Name: c.name, Type: c.cfg.Type, Decisions: map[string]uint64{},
		LSPsSent: c.counters["tx_lsp"], LSPsSuppressed: c.counters["tx_lsp_suppressed"],
		LSPsReceived: c.counters["rx_lsp"], Duplicates: c.counters["rx_lsp_duplicate"]}
	for k, n := range c.counters {
		if r, ok := strings.CutPrefix(k, "flood_"); ok {
			v.Decisions[r] = n
		}
	}
	if last, ok := in.floodLast[c.name]; ok {
		v.LastReason, v.LastLSP = string(last.reason), last.lsp.String()
		if last.by != (packet.SystemID{}) {
			v.LastBy = nameOr(names, last.by)
		}
	}
	v.Refloods, v.Why = "all", string(floodOff)
	switch {
	case !c.running || (c.isP2P() && (c.p2p == nil || c.p2p.state != AdjUp)):
		v.Refloods, v.Why = "none", "no_adjacency"
	case !c.isP2P():
		if in.icfg.FloodingReduction {
			v.Why = string(floodLAN)
		}
	default:
		v.Neighbor = nameOr(names, c.p2p.sysID)
		v.NeighborReduces, v.Refloods, v.Why = in.p2pFlooding(c, now)
	}
	return v
}

// p2pFlooding says what a point-to-point neighbour gets, from the database
// of the highest level the adjacency runs (the decision's own checks).
func (in *Instance) p2pFlooding(c *circuit, now time.Time) (reduces bool, refloods, why string) {
	l := 2
	if !c.p2p.usesLevel(2) || in.level(2) == nil {
		l = 1
	}
	lv := in.level(l)
	if lv == nil {
		return false, "all", string(floodNbrUnknown)
	}
	n, ok := newFloodView(lv, now).node(c.p2p.sysID)
	switch {
	case !in.icfg.FloodingReduction:
		return n.reduces, "all", string(floodOff)
	case !ok || !sortedHas(n.nbrs, in.sysID):
		return n.reduces, "all", string(floodNbrUnknown)
	case !n.reduces:
		return false, "all", string(floodNotCapable)
	}
	return true, "when_chosen", "neighbour_reduces"
}

func nameOr(names map[packet.SystemID]string, id packet.SystemID) string {
	if h := names[id]; h != "" {
		return h
	}
	return id.String()
}
