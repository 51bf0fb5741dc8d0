package inc

import (
	"context"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/promx"
)

// Prometheus metrics of the INC module (docs/metrics.md). A switch's come
// from the data plane's published view (the one farectl inc switch
// shows, immutable, no lock); a manager's from its loop, asked with a
// short timeout like every module's collector.

// Collectors is the daemon.Collector capability.
func (m *module) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&promx.Collector{Descs: []*prometheus.Desc{incRegistered, incTrees, incSlots, incEvents, incBad, incCPU,
		incGroups, incClients, incSwitches, incRefused, incScrape}, ScrapeError: incScrape, Scrape: m.scrape}}
}

var (
	incRegistered = prometheus.NewDesc("fared_inc_switch_registered",
		"1 while this INC switch is registered with its manager.", nil, nil)
	incTrees = prometheus.NewDesc("fared_inc_switch_trees",
		"Aggregation trees programmed on this switch, by role (root, leaf).", []string{"role"}, nil)
	incSlots = prometheus.NewDesc("fared_inc_switch_slots_in_use",
		"Aggregation slots of this switch holding a message.", nil, nil)
	incEvents = prometheus.NewDesc("fared_inc_aggregator_events_total",
		"Aggregator events of this switch, the totals of farectl inc switch (packets, completed, duplicates_suppressed, retransmissions_served, nacks_sent, ...).", []string{"event"}, nil)
	incBad = prometheus.NewDesc("fared_inc_bad_packets_total",
		"INC packets this switch dropped as malformed, for no tree it holds, or refused by the per-packet checks (pkey, qp, rkey, source, ingress, rank), by kind.", []string{"kind"}, nil)
	incCPU = prometheus.NewDesc("fared_inc_switch_cpu_seconds_total",
		"CPU time of the INC data plane goroutine's thread.", nil, nil)
	incGroups = prometheus.NewDesc("fared_inc_groups",
		"Collective groups the manager holds, by state (waiting, programming, ready, no-tree).", []string{"state"}, nil)
	incClients = prometheus.NewDesc("fared_inc_clients",
		"Clients (ranks) joined to the manager's groups.", nil, nil)
	incSwitches = prometheus.NewDesc("fared_inc_registered_switches",
		"INC switches registered with the manager, by whether their session is alive.", []string{"alive"}, nil)
	incRefused = prometheus.NewDesc("fared_inc_refused_total",
		"Calls the INC manager refused, by reason (no_token, bad_token, expired_token, token_scope, cap_*, switch_*, not_local; docs/inc.md).", []string{"reason"}, nil)
	incScrape = prometheus.NewDesc("fared_inc_scrape_error",
		"The INC manager did not answer the scrape.", nil, nil)
)

// scrape emits the switch's metrics and the manager's, whichever run here;
// only the manager can fail to answer.
func (m *module) scrape(ctx context.Context, ch chan<- prometheus.Metric) error {
	if m.dp != nil {
		collectSwitch(ch, m.dp.view.Load())
	}
	if m.mgr != nil {
		return m.collectManager(ctx, ch)
	}
	return nil
}

// refusalFields are the totals that fared_inc_bad_packets_total carries
// (kinds pkey, qp, rkey, source, ingress) rather than the events; bad_rank stays
// an event as it always was, and is the kind rank too.
var refusalFields = map[string]bool{"bad_qp": true, "bad_rkey": true, "bad_source": true, "bad_ingress": true, "bad_pkey": true}

func collectSwitch(ch chan<- prometheus.Metric, v *wire.INCSwitch) {
	if v == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(incRegistered, prometheus.GaugeValue, promx.Flag(v.Registered))
	roles := map[string]int{"root": 0, "leaf": 0}
	for _, t := range v.Trees {
		roles[t.Role]++
	}
	promx.ByKey(ch, incTrees, prometheus.GaugeValue, roles)
	ch <- prometheus.MustNewConstMetric(incSlots, prometheus.GaugeValue, float64(v.SlotsInUse))
	// One series per counter of farectl's totals, named by its JSON field;
	// the refusals of the per-packet checks are kinds of bad packets.
	tv, tt := reflect.ValueOf(v.Totals), reflect.TypeOf(v.Totals)
	for i := range tt.NumField() {
		name, _, _ := strings.Cut(tt.Field(i).Tag.Get("json"), ",")
		if refusalFields[name] {
			continue
		}
		ch <- prometheus.MustNewConstMetric(incEvents, prometheus.CounterValue, float64(tv.Field(i).Uint()), name)
	}
	bad := map[string]uint64{"unknown_tree": v.Unknown}
	for k, n := range v.Bad {
		bad[k] = n
	}
	promx.ByKey(ch, incBad, prometheus.CounterValue, bad)
	if v.CPU != nil {
		ch <- prometheus.MustNewConstMetric(incCPU, prometheus.CounterValue, v.CPU.Seconds)
	}
}

func (m *module) collectManager(ctx context.Context, ch chan<- prometheus.Metric) error {
	groups, err := m.mgr.Groups(ctx)
	var clients []wire.INCClient
	var switches []wire.INCRegisteredSwitch
	if err == nil {
		clients, err = m.mgr.Clients(ctx)
	}
	if err == nil {
		switches, err = m.mgr.Switches(ctx)
	}
	if err != nil {
		return err
	}
	states := map[string]int{"waiting": 0, "programming": 0, "ready": 0, "no-tree": 0}
	for _, g := range groups {
		if g.State != "dismantled" {
			states[g.State]++
		}
	}
	promx.ByKey(ch, incGroups, prometheus.GaugeValue, states)
	ch <- prometheus.MustNewConstMetric(incClients, prometheus.GaugeValue, float64(len(clients)))
	alive := map[string]int{"true": 0, "false": 0}
	for _, s := range switches {
		if s.Alive {
			alive["true"]++
		} else {
			alive["false"]++
		}
	}
	promx.ByKey(ch, incSwitches, prometheus.GaugeValue, alive)
	// Every reason, at 0 until it happens, so alerts see the series.
	promx.ByKey(ch, incRefused, prometheus.CounterValue, m.mgr.Refused())
	return nil
}
