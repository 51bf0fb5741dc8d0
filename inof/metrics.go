package inof

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/promx"
)

// Prometheus metrics of the iNOF module (docs/metrics.md), read from the
// same summary as farectl inof status, inside the module's loop.

// Collectors is the daemon.Collector capability.
func (m *module) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&promx.Collector{Descs: []*prometheus.Desc{inofLocal, inofRecords, inofZones, inofPending, inofBindings,
		inofUnresponsive, inofPeers, inofEvents, inofScrape}, ScrapeError: inofScrape, Scrape: m.scrape}}
}

var (
	inofLocal = prometheus.NewDesc("fared_inof_local_hosts",
		"Hosts registered on this switch (agent and LLDP).", nil, nil)
	inofRecords = prometheus.NewDesc("fared_inof_records",
		"iNOF host records this switch knows (its own and learnt over IBGP).", nil, nil)
	inofZones   = prometheus.NewDesc("fared_inof_zones", "Zones in the configuration in force.", nil, nil)
	inofPending = prometheus.NewDesc("fared_inof_pending_notifications",
		"Notifications sent to hosts and not yet acknowledged.", nil, nil)
	inofBindings = prometheus.NewDesc("fared_inof_bindings",
		"Host ids bound to this switch's ports (registered or away).", nil, nil)
	inofUnresponsive = prometheus.NewDesc("fared_inof_unresponsive_hosts",
		"Hosts of this switch that stopped acknowledging notifications (the switch gave up on them).", nil, nil)
	inofPeers  = prometheus.NewDesc("fared_inof_zone_peers", "A host's zone peers.", nil, nil)
	inofEvents = prometheus.NewDesc("fared_inof_events_total",
		"iNOF events by kind (the counters of farectl inof status: registrations, notifications, bad frames and records, ...).", []string{"event"}, nil)
	inofScrape = prometheus.NewDesc("fared_inof_scrape_error", "The iNOF module did not answer the scrape.", nil, nil)
)

func (m *module) scrape(ctx context.Context, ch chan<- prometheus.Metric) error {
	lp, _ := m.loop()
	var st wire.INOFStatus
	if err := lp.Query(ctx, func() { st = m.status() }); err != nil {
		return err
	}
	g := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	if st.Role == "host" {
		g(inofPeers, st.Peers)
	} else {
		g(inofLocal, st.LocalHosts)
		g(inofRecords, st.Records)
		g(inofZones, st.Zones)
		g(inofPending, st.Pending)
		g(inofBindings, st.Bindings)
		g(inofUnresponsive, st.Unresponsive)
	}
	promx.ByKey(ch, inofEvents, prometheus.CounterValue, st.Counters)
	return nil
}
