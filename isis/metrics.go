package isis

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/internal/igp"
)

// Prometheus metrics of the IS-IS module (docs/metrics.md), asked of the
// loop at scrape time (igp.Collector).

// Collectors is the daemon.Collector capability.
func (in *Instance) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&igp.Collector{Descs: []*prometheus.Desc{promRx, promRejected, promTx, promTxErr, promAdjChanges, promDIS, promEvents,
		promIfUp, promAdj, promLSPs, promOriginated, promConverged, promScrape}, ScrapeError: promScrape, Scrape: in.scrape}}
}

var (
	promRx = prometheus.NewDesc("fared_isis_pdus_received_total",
		"IS-IS PDUs received and decoded, by interface and PDU type (rejected ones included; malformed ones are only in fared_isis_pdus_rejected_total).",
		[]string{"interface", "type"}, nil)
	promRejected = prometheus.NewDesc("fared_isis_pdus_rejected_total",
		"IS-IS PDUs dropped, by interface and reason (malformed: the decoder's error kind; otherwise the check that failed).",
		[]string{"interface", "reason"}, nil)
	promTx = prometheus.NewDesc("fared_isis_pdus_sent_total",
		"IS-IS PDUs sent, by interface and PDU type.", []string{"interface", "type"}, nil)
	promTxErr = prometheus.NewDesc("fared_isis_send_errors_total",
		"IS-IS PDUs the kernel refused to send, by interface.", []string{"interface"}, nil)
	promAdjChanges = prometheus.NewDesc("fared_isis_adjacency_changes_total",
		"IS-IS adjacency transitions to up or to down, by interface.", []string{"interface", "to"}, nil)
	promDIS = prometheus.NewDesc("fared_isis_dis_changes_total",
		"LAN DIS changes seen, by interface.", []string{"interface"}, nil)
	promEvents = prometheus.NewDesc("fared_isis_events_total",
		"Other IS-IS interface events, by interface and event (the counters of farectl isis interface).", []string{"interface", "event"}, nil)
	promIfUp = prometheus.NewDesc("fared_isis_interface_up",
		"1 if the IS-IS interface is up (running), else 0.", []string{"interface"}, nil)
	promAdj = prometheus.NewDesc("fared_isis_adjacencies",
		"IS-IS adjacencies by level (L1, L2, or L1L2 for a P2P adjacency of both) and state (Initializing, Up).", []string{"level", "state"}, nil)
	promLSPs = prometheus.NewDesc("fared_isis_lsdb_lsps",
		"LSPs in the link-state database (purged ones still held included), by level.", []string{"level"}, nil)
	promOriginated = prometheus.NewDesc("fared_isis_lsps_originated_total",
		"LSPs this router originated (new sequence numbers), by level.", []string{"level"}, nil)
	promConverged = prometheus.NewDesc("fared_isis_converged",
		"1 once the initial database synchronisation is done (the FIB's start-up hold), else 0.", nil, nil)
	promScrape = prometheus.NewDesc("fared_isis_scrape_error", "The IS-IS instance did not answer the scrape.", nil, nil)
)

func (in *Instance) scrape(ctx context.Context, ch chan<- prometheus.Metric) error {
	ifs, err := in.Interfaces(ctx)
	if err != nil {
		return err
	}
	for _, v := range ifs {
		up := 0.0
		if v.State == "up" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(promIfUp, prometheus.GaugeValue, up, v.Name)
		igp.Counters(ch, v.Name, v.Counters, promCounter)
	}
	nbrs, err := in.Neighbors(ctx)
	if err != nil {
		return err
	}
	lvls, err := in.Levels(ctx)
	if err != nil {
		return err
	}
	// Every (level, state) of a running level, zero included, so that a
	// dashboard sees an adjacency going away as a drop to 0.
	adj := map[[2]string]int{}
	for _, l := range lvls {
		for _, s := range []string{AdjInit.String(), AdjUp.String()} {
			adj[[2]string{levelName(l.Level), s}] += 0
		}
	}
	for _, n := range nbrs {
		adj[[2]string{n.Level, n.State}]++
	}
	igp.Pairs(ch, promAdj, adj)
	conv := 0.0
	for _, l := range lvls {
		ln := levelName(l.Level)
		ch <- prometheus.MustNewConstMetric(promLSPs, prometheus.GaugeValue, float64(l.LSPs), ln)
		ch <- prometheus.MustNewConstMetric(promOriginated, prometheus.CounterValue, float64(l.Originated), ln)
		if l.Converged {
			conv = 1
		}
	}
	ch <- prometheus.MustNewConstMetric(promConverged, prometheus.GaugeValue, conv)
	return nil
}

// promCounter files one interface counter (the names circuit.count and
// circuit.reject use) under its metric and labels after the interface; a
// counter it does not know is still exported, as an event.
func promCounter(name string) (*prometheus.Desc, []string) {
	cm := func(d *prometheus.Desc, labels ...string) (*prometheus.Desc, []string) { return d, labels }
	switch {
	case strings.HasPrefix(name, "rx_rejected_"):
		return cm(promRejected, strings.TrimPrefix(name, "rx_rejected_"))
	case name == "rx_p2p_hello" || name == "rx_lan_hello" || name == "rx_lsp" || name == "rx_csnp" || name == "rx_psnp":
		return cm(promRx, strings.TrimPrefix(name, "rx_"))
	case name == "tx_errors":
		return cm(promTxErr)
	case strings.HasPrefix(name, "tx_"):
		return cm(promTx, strings.TrimPrefix(name, "tx_"))
	case name == "adjacency_up":
		return cm(promAdjChanges, "up")
	case name == "adjacency_down":
		return cm(promAdjChanges, "down")
	case name == "dis_changes":
		return cm(promDIS)
	}
	return cm(promEvents, name)
}
