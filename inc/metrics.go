package inc

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api/wire"
)

// Prometheus metrics of the INC module (docs/metrics.md). A switch's come
// from the data plane's published view (the one farectl inc switch
// shows, immutable, no lock); a manager's from its loop, asked with a
// short timeout like every module's collector.

// Collectors is the daemon.Collector capability.
func (m *module) Collectors() []prometheus.Collector { return []prometheus.Collector{incCollector{m}} }

type incCollector struct{ m *module }

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
		"INC packets this switch dropped as malformed, for no tree it holds, or refused by the per-packet checks (qp, rkey, source, ingress, rank), by kind.", []string{"kind"}, nil)
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

func (c incCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{incRegistered, incTrees, incSlots, incEvents, incBad, incCPU, incGroups, incClients, incSwitches, incRefused, incScrape} {
		ch <- d
	}
}

func (c incCollector) Collect(ch chan<- prometheus.Metric) {
	if c.m.dp != nil {
		collectSwitch(ch, c.m.dp.view.Load())
	}
	if c.m.mgr != nil {
		c.collectManager(ch)
	}
}

// refusalFields are the totals that fared_inc_bad_packets_total carries
// (kinds qp, rkey, source, ingress) rather than the events; bad_rank stays
// an event as it always was, and is the kind rank too.
var refusalFields = map[string]bool{"bad_qp": true, "bad_rkey": true, "bad_source": true, "bad_ingress": true}

func collectSwitch(ch chan<- prometheus.Metric, v *wire.INCSwitch) {
	if v == nil {
		return
	}
	reg := 0.0
	if v.Registered {
		reg = 1
	}
	ch <- prometheus.MustNewConstMetric(incRegistered, prometheus.GaugeValue, reg)
	roles := map[string]int{"root": 0, "leaf": 0}
	for _, t := range v.Trees {
		roles[t.Role]++
	}
	for _, r := range slices.Sorted(maps.Keys(roles)) {
		ch <- prometheus.MustNewConstMetric(incTrees, prometheus.GaugeValue, float64(roles[r]), r)
	}
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
	for _, k := range slices.Sorted(maps.Keys(bad)) {
		ch <- prometheus.MustNewConstMetric(incBad, prometheus.CounterValue, float64(bad[k]), k)
	}
	if v.CPU != nil {
		ch <- prometheus.MustNewConstMetric(incCPU, prometheus.CounterValue, v.CPU.Seconds)
	}
}

func (c incCollector) collectManager(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	groups, err := c.m.mgr.Groups(ctx)
	var clients []wire.INCClient
	var switches []wire.INCRegisteredSwitch
	if err == nil {
		clients, err = c.m.mgr.Clients(ctx)
	}
	if err == nil {
		switches, err = c.m.mgr.Switches(ctx)
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(incScrape, err)
		return
	}
	states := map[string]int{"waiting": 0, "programming": 0, "ready": 0, "no-tree": 0}
	for _, g := range groups {
		if g.State != "dismantled" {
			states[g.State]++
		}
	}
	for _, s := range slices.Sorted(maps.Keys(states)) {
		ch <- prometheus.MustNewConstMetric(incGroups, prometheus.GaugeValue, float64(states[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(incClients, prometheus.GaugeValue, float64(len(clients)))
	alive := map[string]int{"true": 0, "false": 0}
	for _, s := range switches {
		if s.Alive {
			alive["true"]++
		} else {
			alive["false"]++
		}
	}
	for _, a := range slices.Sorted(maps.Keys(alive)) {
		ch <- prometheus.MustNewConstMetric(incSwitches, prometheus.GaugeValue, float64(alive[a]), a)
	}
	// Every reason, at 0 until it happens, so alerts see the series.
	refused := c.m.mgr.Refused()
	for _, r := range slices.Sorted(maps.Keys(refused)) {
		ch <- prometheus.MustNewConstMetric(incRefused, prometheus.CounterValue, float64(refused[r]), r)
	}
}
