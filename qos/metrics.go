package qos

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/promx"
)

// Prometheus metrics of the QoS module (docs/metrics.md). Like the API,
// the collector asks the module's loop for copies at scrape time, so the
// metrics always agree with farectl qos.

// Collectors is the daemon.Collector capability.
func (m *Module) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&promx.Collector{Descs: []*prometheus.Desc{qosPause, qosPFCEnabled, qosDetections, qosRecoveries,
		qosLimitHits, qosMode, qosClassBytes, qosScrape}, ScrapeError: qosScrape, Scrape: m.scrape}}
}

var (
	qosPause = prometheus.NewDesc("fared_qos_pfc_pause_frames_total",
		"PFC PAUSE frames by interface, priority and direction (rx, tx), as the backend counts them.", []string{"interface", "priority", "direction"}, nil)
	qosPFCEnabled = prometheus.NewDesc("fared_qos_pfc_enabled",
		"1 if PFC is applied on the priority now (the watchdog turns it off while recovering or limited).", []string{"interface", "priority"}, nil)
	qosDetections = prometheus.NewDesc("fared_qos_watchdog_detections_total",
		"PFC deadlocks detected, by interface.", []string{"interface"}, nil)
	qosRecoveries = prometheus.NewDesc("fared_qos_watchdog_recoveries_total",
		"Auto-recoveries completed, by interface.", []string{"interface"}, nil)
	qosLimitHits = prometheus.NewDesc("fared_qos_watchdog_limit_hits_total",
		"Times the deadlock limit kept PFC off until an operator's restore, by interface.", []string{"interface"}, nil)
	qosMode = prometheus.NewDesc("fared_qos_watchdog_mode",
		"1 for the interface's current watchdog mode (normal, recovering, limited).", []string{"interface", "mode"}, nil)
	qosClassBytes = prometheus.NewDesc("fared_qos_flow_bytes_total",
		"Bytes classified as elephant or mice flows, by interface.", []string{"interface", "class"}, nil)
	qosScrape = prometheus.NewDesc("fared_qos_scrape_error", "The QoS module did not answer the scrape.", nil, nil)
)

func (m *Module) scrape(ctx context.Context, ch chan<- prometheus.Metric) error {
	var pfc wire.QoSPFC
	var wd wire.QoSWatchdog
	var fl wire.QoSFlows
	ok := false
	err := m.loop.Query(ctx, func() {
		if m.ctl == nil {
			return
		}
		pfc, _ = m.pfc().(wire.QoSPFC)
		wd, _ = m.watchdog().(wire.QoSWatchdog)
		fl, _ = m.flows().(wire.QoSFlows)
		ok = true
	})
	if err != nil {
		return err
	}
	if !ok { // no controller yet: nothing to read
		return context.Canceled
	}
	for _, i := range pfc.Interfaces {
		for _, p := range i.Priorities {
			pr := strconv.Itoa(p.Priority)
			ch <- prometheus.MustNewConstMetric(qosPause, prometheus.CounterValue, float64(p.PauseRx), i.Name, pr, "rx")
			ch <- prometheus.MustNewConstMetric(qosPause, prometheus.CounterValue, float64(p.PauseTx), i.Name, pr, "tx")
			ch <- prometheus.MustNewConstMetric(qosPFCEnabled, prometheus.GaugeValue, promx.Flag(p.Enabled), i.Name, pr)
		}
	}
	for _, i := range wd.Interfaces {
		ch <- prometheus.MustNewConstMetric(qosDetections, prometheus.CounterValue, float64(i.Detections), i.Name)
		ch <- prometheus.MustNewConstMetric(qosRecoveries, prometheus.CounterValue, float64(i.Recoveries), i.Name)
		ch <- prometheus.MustNewConstMetric(qosLimitHits, prometheus.CounterValue, float64(i.LimitHits), i.Name)
		for _, mode := range []string{"normal", "recovering", "limited"} {
			ch <- prometheus.MustNewConstMetric(qosMode, prometheus.GaugeValue, promx.Flag(i.Mode == mode), i.Name, mode)
		}
	}
	for _, i := range fl.Interfaces {
		ch <- prometheus.MustNewConstMetric(qosClassBytes, prometheus.CounterValue, float64(i.ElephantBytes), i.Name, "elephant")
		ch <- prometheus.MustNewConstMetric(qosClassBytes, prometheus.CounterValue, float64(i.MiceBytes), i.Name, "mice")
	}
	return nil
}
