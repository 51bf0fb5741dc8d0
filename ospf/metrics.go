package ospf

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Prometheus metrics of the OSPF module (docs/metrics.md). The promCollector
// asks the instance's loop at scrape time through the API's own queries
// (Interfaces, Neighbors, Database): the loop's state is never read from
// another goroutine, and the metrics agree with farectl.

// Collectors is the daemon.Collector capability.
func (in *Instance) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&promCollector{in: in}}
}

// promScrapeTimeout bounds a scrape's wait for a busy loop: a loop that does
// not answer costs its metrics, not the scrape.
const promScrapeTimeout = 2 * time.Second

type promCollector struct{ in *Instance }

var (
	promRx = prometheus.NewDesc("fared_ospf_packets_received_total",
		"OSPF packets received and decoded, by interface and packet type (rejected ones included; malformed ones are only in fared_ospf_packets_rejected_total).",
		[]string{"interface", "type"}, nil)
	promRejected = prometheus.NewDesc("fared_ospf_packets_rejected_total",
		"OSPF packets (or LSAs in them) dropped, by interface and reason (malformed: the decoder's error kind; otherwise the check that failed).",
		[]string{"interface", "reason"}, nil)
	promTx = prometheus.NewDesc("fared_ospf_packets_sent_total",
		"OSPF packets sent, by interface and packet type.", []string{"interface", "type"}, nil)
	promTxErr = prometheus.NewDesc("fared_ospf_send_errors_total",
		"OSPF packets the kernel refused to send, by interface.", []string{"interface"}, nil)
	promAdjChanges = prometheus.NewDesc("fared_ospf_adjacency_changes_total",
		"OSPF neighbour transitions to Full or from Full down, by interface.", []string{"interface", "to"}, nil)
	promDR = prometheus.NewDesc("fared_ospf_dr_changes_total",
		"Designated router changes, by interface.", []string{"interface"}, nil)
	promEvents = prometheus.NewDesc("fared_ospf_events_total",
		"Other OSPF interface events, by interface and event (the counters of farectl ospf interface).", []string{"interface", "event"}, nil)
	promIfState = prometheus.NewDesc("fared_ospf_interface_state",
		"1 for the OSPF interface's current state (RFC 2328 §9.1: Down, Loopback, Waiting, Point-to-Point, DROther, Backup, DR).",
		[]string{"interface", "area", "state"}, nil)
	promNbrs = prometheus.NewDesc("fared_ospf_neighbors",
		"OSPF neighbours by area and state (RFC 2328 §10.1: Down ... Full).", []string{"area", "state"}, nil)
	promLSAs = prometheus.NewDesc("fared_ospf_lsdb_lsas",
		"LSAs in the link-state database, by area (\"AS\" for AS scope) and LSA type.", []string{"area", "type"}, nil)
	promConverged = prometheus.NewDesc("fared_ospf_converged",
		"1 once the initial database synchronisation is done (the FIB's start-up hold), else 0.", nil, nil)
	promScrape = prometheus.NewDesc("fared_ospf_scrape_error", "The OSPF instance did not answer the scrape.", nil, nil)
)

func (c *promCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{promRx, promRejected, promTx, promTxErr, promAdjChanges, promDR, promEvents,
		promIfState, promNbrs, promLSAs, promConverged, promScrape} {
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
	areas := map[string]bool{}
	for _, v := range ifs {
		areas[v.Area] = true
		ch <- prometheus.MustNewConstMetric(promIfState, prometheus.GaugeValue, 1, v.Name, v.Area, v.State)
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
	// Full in every area with an interface, zero included, so that a lost
	// adjacency shows as a drop to 0.
	nb := map[[2]string]int{}
	for a := range areas {
		nb[[2]string{a, NbrFull.String()}] += 0
	}
	for _, n := range nbrs {
		nb[[2]string{n.Area, n.State}]++
	}
	promPairs(ch, promNbrs, nb)
	lsas, err := c.in.Database(ctx, DatabaseQuery{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(promScrape, err)
		return
	}
	db := map[[2]string]int{}
	for _, l := range lsas {
		db[[2]string{l.Area, l.TypeName}]++
	}
	promPairs(ch, promLSAs, db)
	conv := 0.0
	if c.in.Converged() {
		conv = 1
	}
	ch <- prometheus.MustNewConstMetric(promConverged, prometheus.GaugeValue, conv)
}

func promPairs(ch chan<- prometheus.Metric, d *prometheus.Desc, m map[[2]string]int) {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(m[k]), k[0], k[1])
	}
}

// promCounter files one interface counter (the names iface.count and
// iface.reject use) under its metric; a counter this promCollector does not
// know is still exported, as an event.
func promCounter(iface, name string, v float64) prometheus.Metric {
	cm := func(d *prometheus.Desc, labels ...string) prometheus.Metric {
		return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{iface}, labels...)...)
	}
	switch name {
	case "rx_hello", "rx_dbd", "rx_lsr", "rx_lsu", "rx_lsack":
		return cm(promRx, strings.TrimPrefix(name, "rx_"))
	case "tx_hello", "tx_dbd", "tx_lsr", "tx_lsu", "tx_lsack":
		return cm(promTx, strings.TrimPrefix(name, "tx_"))
	case "tx_errors":
		return cm(promTxErr)
	case "adjacency_full":
		return cm(promAdjChanges, "full")
	case "adjacency_down":
		return cm(promAdjChanges, "down")
	case "dr_changes":
		return cm(promDR)
	}
	if r, ok := strings.CutPrefix(name, "rx_rejected_"); ok {
		return cm(promRejected, r)
	}
	return cm(promEvents, name)
}
