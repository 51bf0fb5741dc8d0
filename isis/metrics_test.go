package isis

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fared/fared/internal/scrape"
	"github.com/fared/fared/isis/packet"
)

// gather scrapes a node's IS-IS collectors through a pedantic registry
// (what is collected must match what is described) and lints the names.
func promGather(t *testing.T, m *memNode) (scrape.Families, error) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.in.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	probs, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	f := scrape.Families{}
	for _, mf := range mfs {
		f[mf.GetName()] = mf
	}
	return f, nil
}

func promIs(f scrape.Families, want float64, name string, labels ...string) error {
	v, ok := f.Sum(name, labels...)
	if !ok || v != want {
		return fmt.Errorf("%s%v = %v (present %v), want %v; series %v", name, labels, v, ok, want, f.Series(name))
	}
	return nil
}

// The IS-IS metrics tell what the instance's own queries tell: the
// adjacency by level and state, the database size, per-interface PDU
// counts; a malformed PDU moves the rejected counter of its kind, and a
// lost neighbour moves the adjacency gauges and transition counters.
func TestPrometheusMetrics(t *testing.T) {
	w := &wire{}
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}})
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
	poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r1, 1) })
	poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	poll(t, 10*time.Second, "converged", func() error {
		if !r1.in.Converged() {
			return fmt.Errorf("not yet")
		}
		return nil
	})

	f, err := promGather(t, r1)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		promIs(f, 1, "fared_isis_adjacencies", "level", "L2", "state", "Up"),
		promIs(f, 0, "fared_isis_adjacencies", "level", "L2", "state", "Initializing"),
		promIs(f, 2, "fared_isis_lsdb_lsps", "level", "L2"), // r1's and r2's LSPs
		promIs(f, 1, "fared_isis_interface_up", "interface", "e0"),
		promIs(f, 1, "fared_isis_adjacency_changes_total", "interface", "e0", "to", "up"),
		promIs(f, 1, "fared_isis_converged"),
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

	// A truncated PDU: one rejection of kind "truncated", adjacency kept.
	lsp := &packet.LSP{Header: packet.Header{Type: packet.TypeL2LSP}, Lifetime: 1200, ID: packet.MakeLSPID(packet.SystemID{0, 0, 0, 0, 0, 0x99}, 0, 0), Seq: 7, Flags: 3}
	w.port([6]byte{0x02, 0xee, 0, 0, 0, 1}).Send(MACAllISs, lsp.AppendTo(nil)[:12])
	poll(t, 5*time.Second, "rejection counted", func() error {
		f, err := promGather(t, r1)
		if err != nil {
			return err
		}
		return promIs(f, 1, "fared_isis_pdus_rejected_total", "interface", "e0", "reason", "truncated")
	})
	if f, _ = promGather(t, r1); promIs(f, 1, "fared_isis_adjacencies", "level", "L2", "state", "Up") != nil {
		t.Fatal("adjacency lost to a bad PDU")
	}

	// r2 goes silent: after the hold time (3 s) the adjacency is down.
	r2.stop()
	poll(t, 10*time.Second, "adjacency down in the metrics", func() error {
		f, err := promGather(t, r1)
		if err != nil {
			return err
		}
		if err := promIs(f, 0, "fared_isis_adjacencies", "level", "L2", "state", "Up"); err != nil {
			return err
		}
		return promIs(f, 1, "fared_isis_adjacency_changes_total", "interface", "e0", "to", "down")
	})

	// A stopped instance costs the scrape its IS-IS metrics, with an
	// error (after promScrapeTimeout), rather than hanging it.
	r1.stop()
	if _, err := promGather(t, r1); err == nil {
		t.Fatal("a stopped instance answered")
	}
}
