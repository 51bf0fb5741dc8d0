package isis

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/isis/packet"
)

// The IS-IS metrics tell what the instance's own queries tell: the
// adjacency by level and state, the database size, per-interface PDU
// counts; a malformed PDU moves the rejected counter of its kind, and a
// lost neighbour moves the adjacency gauges and transition counters.
func TestPrometheusMetrics(t *testing.T) {
	w := &wire{}
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}})
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r1, 1) })
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	igptest.Poll(t, 10*time.Second, "converged", func() error {
		if !r1.in.Converged() {
			return fmt.Errorf("not yet")
		}
		return nil
	})

	f, err := igptest.Gather(t, r1.in.Collectors()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		igptest.MetricIs(f, 1, "fared_isis_adjacencies", "level", "L2", "state", "Up"),
		igptest.MetricIs(f, 0, "fared_isis_adjacencies", "level", "L2", "state", "Initializing"),
		igptest.MetricIs(f, 2, "fared_isis_lsdb_lsps", "level", "L2"), // r1's and r2's LSPs
		igptest.MetricIs(f, 1, "fared_isis_interface_up", "interface", "e0"),
		igptest.MetricIs(f, 1, "fared_isis_adjacency_changes_total", "interface", "e0", "to", "up"),
		igptest.MetricIs(f, 1, "fared_isis_converged"),
	} {
		if err != nil {
			t.Error(err)
		}
	}
	if u, err := f.Undocumented("../docs/metrics.md"); err != nil || len(u) > 0 {
		t.Errorf("not in docs/metrics.md: %v %v", u, err)
	}
	for _, n := range []string{"fared_isis_pdus_received_total", "fared_isis_pdus_sent_total"} {
		if v, _ := f.Sum(n, "interface", "e0", "type", "p2p_hello"); v < 1 {
			t.Errorf("%s{p2p_hello}: %v", n, f.Series(n))
		}
	}
	if v, _ := f.Sum("fared_isis_lsps_originated_total", "level", "L2"); v < 1 {
		t.Errorf("originated: %v", f.Series("fared_isis_lsps_originated_total"))
	}
	if _, ok := f.Sum("fared_isis_pdus_rejected_total"); ok {
		t.Fatalf("rejections before any bad PDU: %v", f.Series("fared_isis_pdus_rejected_total"))
	}

	// A truncated PDU: one rejection of kind "truncated", adjacency kept;
	// r2 goes silent: after the hold time (3 s) the adjacency is down.
	lsp := &packet.LSP{Header: packet.Header{Type: packet.TypeL2LSP}, Lifetime: 1200, ID: packet.MakeLSPID(packet.SystemID{0, 0, 0, 0, 0, 0x99}, 0, 0), Seq: 7, Flags: 3}
	igptest.MetricsThroughFailures(t, igptest.Failures{
		Collectors: r1.in.Collectors, StopPeer: r2.stop, Stop: r1.stop,
		SendBad:  func() { w.port([6]byte{0x02, 0xee, 0, 0, 0, 1}).Send(MACAllISs, lsp.AppendTo(nil)[:12]) },
		Rejected: igptest.Metric(1, "fared_isis_pdus_rejected_total", "interface", "e0", "reason", "truncated"),
		Adjacent: igptest.Metric(1, "fared_isis_adjacencies", "level", "L2", "state", "Up"),
		Changes:  "fared_isis_adjacency_changes_total",
	})
}
