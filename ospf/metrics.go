package ospf

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/internal/igp"
)

// Prometheus metrics of the OSPF module (docs/metrics.md), asked of the
// loop at scrape time (igp.Collector) through the API's own queries
// (Interfaces, Neighbors, Database).

// Collectors is the daemon.Collector capability.
func (in *Instance) Collectors() []prometheus.Collector {
	return []prometheus.Collector{&igp.Collector{Descs: []*prometheus.Desc{promRx, promRejected, promTx, promTxErr, promAdjChanges, promDR, promEvents,
		promIfState, promNbrs, promLSAs, promConverged, promScrape}, ScrapeError: promScrape, Scrape: in.scrape}}
}

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

func (in *Instance) scrape(ctx context.Context, ch chan<- prometheus.Metric) error {
	ifs, err := in.Interfaces(ctx)
	if err != nil {
		return err
	}
	areas := map[string]bool{}
	for _, v := range ifs {
		areas[v.Area] = true
		ch <- prometheus.MustNewConstMetric(promIfState, prometheus.GaugeValue, 1, v.Name, v.Area, v.State)
		igp.Counters(ch, v.Name, v.Counters, promCounter)
	}
	nbrs, err := in.Neighbors(ctx)
	if err != nil {
		return err
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
	igp.Pairs(ch, promNbrs, nb)
	lsas, err := in.Database(ctx, DatabaseQuery{})
	if err != nil {
		return err
	}
	db := map[[2]string]int{}
	for _, l := range lsas {
		db[[2]string{l.Area, l.TypeName}]++
	}
	igp.Pairs(ch, promLSAs, db)
	conv := 0.0
	if in.Converged() {
		conv = 1
	}
	ch <- prometheus.MustNewConstMetric(promConverged, prometheus.GaugeValue, conv)
	return nil
}

// promCounter files one interface counter (the names iface.count and
// iface.reject use) under its metric and labels after the interface; a
// counter it does not know is still exported, as an event.
func promCounter(name string) (*prometheus.Desc, []string) {
	cm := func(d *prometheus.Desc, labels ...string) (*prometheus.Desc, []string) { return d, labels }
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
