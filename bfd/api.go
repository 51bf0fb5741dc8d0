package bfd

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api/wire"
)

// View is GET /v1/bfd/sessions (served by the core, next to /v1/fib):
// every session and the manager's counters, in the API's types.
func (m *Manager) View(ctx context.Context) (wire.BFDSessions, error) {
	out := wire.BFDSessions{Sessions: []wire.BFDSession{}, Counters: map[string]uint64{}}
	ss, ctr, err := m.Sessions(ctx)
	if err != nil {
		return out, err
	}
	out.Counters = ctr
	for _, s := range ss {
		w := wire.BFDSession{Interface: s.Interface, Peer: s.Peer.String(), Local: s.Local.String(), State: s.State,
			RemoteState: s.RemoteState, Diag: s.Diag, LocalDisc: s.LocalDisc, RemoteDisc: s.RemoteDisc,
			Interval: s.Interval, Multiplier: s.Multiplier, TxInterval: s.TxInterval, DetectTime: s.DetectTime,
			RemoteMinRx: s.RemoteMinRx, RemoteMinTx: s.RemoteMinTx, RemoteMult: s.RemoteMult, UpSince: s.UpSince,
			Sent: s.Stats.Sent, Received: s.Stats.Received, Ups: s.Stats.Up, Downs: s.Stats.Down, LastDown: s.Stats.LastDown,
			Clients: s.Clients, Rejected: s.Stats.Rejected}
		if s.Stats.Down > 0 {
			w.LastDownWhy = s.Stats.LastDownDiag.String()
		}
		if s.Auth != 0 {
			id := s.AuthKeyID
			w.Auth, w.AuthKeyID, w.AuthExpiredKey = s.Auth.String(), &id, s.AuthExpired
		}
		if w.Clients == nil {
			w.Clients = []string{}
		}
		out.Sessions = append(out.Sessions, w)
	}
	return out, nil
}

// Collector exports the manager's state to Prometheus:
// fared_bfd_sessions{state} and fared_bfd_events_total{event} (the
// counters of farectl bfd sessions: rx_rejected_<reason>, rx_no_session,
// tx_errors, open_errors, tx/rx_auth_expired_key, auth_conflicts).
func (m *Manager) Collector() prometheus.Collector { return collector{m} }

var (
	sessionsDesc = prometheus.NewDesc("fared_bfd_sessions", "BFD sessions, by state.", []string{"state"}, nil)
	eventsDesc   = prometheus.NewDesc("fared_bfd_events_total",
		"BFD events, by kind: packets dropped (rx_rejected_<reason>), unmatched, send and open errors, expired keys in use.", []string{"event"}, nil)
)

type collector struct{ m *Manager }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sessionsDesc
	ch <- eventsDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ss, ctr, err := c.m.Sessions(ctx)
	if err != nil {
		return
	}
	states := map[string]int{"AdminDown": 0, "Down": 0, "Init": 0, "Up": 0}
	for _, s := range ss {
		states[s.State]++
	}
	for st, n := range states {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(n), st)
	}
	for _, k := range slices.Sorted(maps.Keys(ctr)) {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(ctr[k]), k)
	}
}
