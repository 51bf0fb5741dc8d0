package qos

import (
	"context"
	"fmt"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/qosconfig"
)

// The ECN overlay (docs/qos.md "ECN overlay"): the backend is asked to
// make the node's tunnels carry ECN by RFC 6040, and what it found is
// kept for `farectl qos status`. It is applied at start, on a reload and
// when a tunnel comes up (a recreated vxlan device has lost its tos).

// overlayRun is the overlay as last applied (loop-owned).
type overlayRun struct {
	on      bool // the backend was given an overlay (so a removal is told)
	tunnels []model.TunnelECN
	err     error
	at      time.Time
}

// overlayCheck is the loop event of a tunnel that came up.
type overlayCheck struct{}

// applyOverlay gives the backend q's overlay (or its removal) and keeps
// the report.
func (m *Module) applyOverlay(q *qosconfig.Config) {
	if q.Overlay == nil && !m.overlay.on {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run := overlayRun{on: q.Overlay != nil, at: time.Now()}
	if ob, ok := m.be.(model.OverlayBackend); ok {
		run.tunnels, run.err = ob.ApplyOverlay(ctx, q.Overlay.Model())
	} else {
		run.err = fmt.Errorf("the %s backend has no tunnels", m.be.Name())
	}
	if run.err != nil && (m.overlay.err == nil || m.overlay.err.Error() != run.err.Error()) {
		m.log.Warn("ecn overlay", "err", run.err)
	}
	for _, t := range run.tunnels {
		if len(t.Changed) > 0 {
			m.log.Info("ecn overlay: tunnel set", "tunnel", t.Name, "changed", t.Changed)
		}
		if key := "overlay/" + t.Name + "/" + t.Note; !t.Conforms && !m.said[key] {
			if m.said == nil {
				m.said = map[string]bool{}
			}
			m.said[key] = true
			m.log.Warn("ecn overlay: tunnel does not conform", "tunnel", t.Name, "kind", t.Kind, "why", t.Note)
		}
	}
	m.overlay = run
}

// overlayTunnel reports whether a link named name is one of the
// overlay's tunnels (every link may be, when it names none).
func overlayTunnel(q *qosconfig.Config, name string) bool {
	if q.Overlay == nil {
		return false
	}
	if len(q.Overlay.Tunnels) == 0 {
		return true
	}
	for _, n := range q.Overlay.Tunnels {
		if n == name {
			return true
		}
	}
	return false
}

// overlayView is the status's ecn_overlay (nil without the section).
func (m *Module) overlayView(q *qosconfig.Config) *wire.QoSECNOverlay {
	if q.Overlay == nil {
		return nil
	}
	o := q.Overlay.Model()
	out := &wire.QoSECNOverlay{Decap: string(o.Decap), DSCP: o.DSCP, CheckedAt: ts(m.overlay.at), Tunnels: []wire.QoSOverlayTunnel{}}
	if m.overlay.err != nil {
		out.Error = m.overlay.err.Error()
	}
	for _, t := range m.overlay.tunnels {
		wt := wire.QoSOverlayTunnel{Name: t.Name, Kind: t.Kind, VNI: t.VNI, Local: t.Local, Remote: t.Remote, DSCP: t.DSCP,
			EncapECN: t.Encap, DecapECN: string(t.Decap), Conforms: t.Conforms, Changed: t.Changed, Note: t.Note}
		if t.DSCP == "fixed" {
			tos := t.Fixed
			wt.OuterTOS = &tos
		}
		if t.ECNDrops >= 0 {
			n := uint64(t.ECNDrops)
			wt.ECNDropPackets = &n
		}
		out.Tunnels = append(out.Tunnels, wt)
	}
	return out
}

// retryOverlay re-applies an overlay the backend failed (Redis away), at
// most once a second, as the QoS state is retried every poll.
func (m *Module) retryOverlay(now time.Time) {
	if m.overlay.on && m.overlay.err != nil && now.Sub(m.overlay.at) >= time.Second {
		m.applyOverlay(m.config())
	}
}
