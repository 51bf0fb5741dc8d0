package ospf

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

// The OSPF metrics: neighbours by area and state, the interface state,
// the database by area and type, per-interface packet counts; a packet
// with a bad checksum moves the rejected counter of its kind without
// costing the adjacency; a silent neighbour moves the gauges and the
// transition counter.
func TestPrometheusMetrics(t *testing.T) {
	w := &wire{}
	r1, r2 := startP2PPair(t, w)
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))

	f, err := igptest.Gather(t, r1.in.Collectors()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		igptest.MetricIs(f, 1, "fared_ospf_neighbors", "area", "0.0.0.0", "state", "Full"),
		igptest.MetricIs(f, 1, "fared_ospf_interface_state", "interface", "e0", "area", "0.0.0.0", "state", "Point-to-Point"),
		igptest.MetricIs(f, 2, "fared_ospf_lsdb_lsas", "area", "0.0.0.0", "type", "router"), // one router-LSA each
		igptest.MetricIs(f, 1, "fared_ospf_adjacency_changes_total", "interface", "e0", "to", "full"),
	} {
		if err != nil {
			t.Error(err)
		}
	}
	if u, err := f.Undocumented("../docs/metrics.md"); err != nil || len(u) > 0 {
		t.Errorf("not in docs/metrics.md: %v %v", u, err)
	}
	// The database gauges add up to what farectl ospf database lists.
	v, err := r1.in.Database(context.Background(), DatabaseQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := f.Sum("fared_ospf_lsdb_lsas"); int(sum) != len(v) {
		t.Errorf("lsdb gauges sum to %v, database has %d: %v", sum, len(v), f.Series("fared_ospf_lsdb_lsas"))
	}
	for _, n := range []string{"fared_ospf_packets_received_total", "fared_ospf_packets_sent_total"} {
		if v, _ := f.Sum(n, "interface", "e0", "type", "hello"); v < 1 {
			t.Errorf("%s{hello}: %v", n, f.Series(n))
		}
	}

	// A hello with a broken checksum, as r2.
	h := &packet.Hello{Header: packet.Header{Version: 2, RouterID: addr("10.255.0.2"), AreaID: addr("0.0.0.0")}, Mask: addr("0.0.0.0"),
		HelloInterval: 1, Options: optE, DeadInterval: 3, DR: addr("0.0.0.0"), BDR: addr("0.0.0.0"), Neighbors: []netip.Addr{addr("10.255.0.1")}}
	b := h.AppendTo(nil)
	b[12] ^= 0xff
	// r2 goes silent: after the dead interval (3 s) no Full neighbour.
	igptest.MetricsThroughFailures(t, igptest.Failures{
		Collectors: r1.in.Collectors, StopPeer: r2.stop, Stop: r1.stop,
		SendBad:  func() { w.port(addr("10.254.0.1")).Send(AllSPFRouters, b) },
		Rejected: igptest.Metric(1, "fared_ospf_packets_rejected_total", "interface", "e0", "reason", "bad_checksum"),
		Adjacent: igptest.Metric(1, "fared_ospf_neighbors", "area", "0.0.0.0", "state", "Full"),
		Changes:  "fared_ospf_adjacency_changes_total",
	})
}
