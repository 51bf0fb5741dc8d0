package isis

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Prometheus metrics of the IS-IS module (docs/metrics.md). The promCollector
// asks the instance's loop at scrape time through the same queries as the
// API (Interfaces, Neighbors, Levels): the loop's state is never read from
// another goroutine, and the metrics always agree with farectl.

// Collectors is the daemon.Collector capability.
func (in *Instance) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&promCollector{in: in}}
}

// promScrapeTimeout bounds a scrape's wait for a busy loop: a loop that does
// not answer costs its metrics, not the scrape.
const promScrapeTimeout = 2 * time.Second

type promCollector struct{ in *Instance }

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

func (c *promCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{promRx, promRejected, promTx, promTxErr, promAdjChanges, promDIS, promEvents,
		promIfUp, promAdj, promLSPs, promOriginated, promConverged, promScrape} {
		ch <- d
	}
}

func (c *promCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), promScrapeTimeout)
	defer cancel()
	ifs, err := c.in.Interfaces(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(promScrape, err)
		return
	}
	for _, v := range ifs {
		up := 0.0
		if v.State == "up" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(promIfUp, prometheus.GaugeValue, up, v.Name)
		names := make([]string, 0, len(v.Counters))
		for k := range v.Counters {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			ch <- promCounter(v.Name, k, float64(v.Counters[k]))
		}
	}
	nbrs, err := c.in.Neighbors(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(promScrape, err)
		return
	}
	lvls, err := c.in.Levels(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(promScrape, err)
		return
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
	keys := make([][2]string, 0, len(adj))
	for k := range adj {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(promAdj, prometheus.GaugeValue, float64(adj[k]), k[0], k[1])
	}
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
}

// promCounter files one interface counter (the names circuit.count and
// circuit.reject use) under its metric; a counter this promCollector does not
// know is still exported, as an event.
func promCounter(iface, name string, v float64) prometheus.Metric {
	cm := func(d *prometheus.Desc, labels ...string) prometheus.Metric {
		return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{iface}, labels...)...)
	}
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
