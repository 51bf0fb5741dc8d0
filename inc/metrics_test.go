package inc

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/manager"
	"github.com/fared/fared/inc/protos"
)

// A switch's metrics are its published view: every total of farectl inc
// switch under its JSON name, trees by role, bad packets by kind (the
// unknown-tree count among them), promlint clean. The expected text is
// written from the view by hand.
func TestSwitchMetrics(t *testing.T) {
	m := &module{dp: &dataPlane{}}
	m.dp.view.Store(&wire.INCSwitch{
		Registered: true,
		SlotsInUse: 3,
		Totals: wire.INCSwitchCounters{Packets: 1000, Completed: 120, Results: 60, Partials: 60, Duplicates: 7, Served: 4, NACKs: 2,
			BadRKey: 3, BadIngress: 2, BadPKey: 4},
		Trees: []wire.INCSwitchTree{{Role: "root"}, {Role: "leaf"}, {Role: "leaf"}},
		// As the data plane publishes them: refusals are kinds of bad
		// packets (and not events).
		Bad:     map[string]uint64{"bad_icrc": 5, "rkey": 3, "ingress": 2, "source": 0, "qp": 0, "rank": 0, "pkey": 4},
		Unknown: 9,
		CPU:     &wire.INCSwitchCPU{Seconds: 1.5},
	})
	checkMetrics(t, m.Collectors()[0], `
# HELP fared_inc_aggregator_events_total Aggregator events of this switch, the totals of farectl inc switch (packets, completed, duplicates_suppressed, retransmissions_served, nacks_sent, ...).
# TYPE fared_inc_aggregator_events_total counter
fared_inc_aggregator_events_total{event="bad_rank"} 0
fared_inc_aggregator_events_total{event="completed"} 120
fared_inc_aggregator_events_total{event="duplicate_results"} 0
fared_inc_aggregator_events_total{event="duplicates_suppressed"} 7
fared_inc_aggregator_events_total{event="mismatch"} 0
fared_inc_aggregator_events_total{event="nacks_sent"} 2
fared_inc_aggregator_events_total{event="packets"} 1000
fared_inc_aggregator_events_total{event="partial_resends"} 0
fared_inc_aggregator_events_total{event="partials_sent"} 60
fared_inc_aggregator_events_total{event="results_sent"} 60
fared_inc_aggregator_events_total{event="retransmissions_served"} 4
fared_inc_aggregator_events_total{event="stale"} 0
fared_inc_aggregator_events_total{event="unexpected"} 0
# HELP fared_inc_bad_packets_total INC packets this switch dropped as malformed, for no tree it holds, or refused by the per-packet checks (pkey, qp, rkey, source, ingress, rank), by kind.
# TYPE fared_inc_bad_packets_total counter
fared_inc_bad_packets_total{kind="bad_icrc"} 5
fared_inc_bad_packets_total{kind="ingress"} 2
fared_inc_bad_packets_total{kind="pkey"} 4
fared_inc_bad_packets_total{kind="qp"} 0
fared_inc_bad_packets_total{kind="rank"} 0
fared_inc_bad_packets_total{kind="rkey"} 3
fared_inc_bad_packets_total{kind="source"} 0
fared_inc_bad_packets_total{kind="unknown_tree"} 9
# HELP fared_inc_switch_cpu_seconds_total CPU time of the INC data plane goroutine's thread.
# TYPE fared_inc_switch_cpu_seconds_total counter
fared_inc_switch_cpu_seconds_total 1.5
# HELP fared_inc_switch_registered 1 while this INC switch is registered with its manager.
# TYPE fared_inc_switch_registered gauge
fared_inc_switch_registered 1
# HELP fared_inc_switch_slots_in_use Aggregation slots of this switch holding a message.
# TYPE fared_inc_switch_slots_in_use gauge
fared_inc_switch_slots_in_use 3
# HELP fared_inc_switch_trees Aggregation trees programmed on this switch, by role (root, leaf).
# TYPE fared_inc_switch_trees gauge
fared_inc_switch_trees{role="leaf"} 2
fared_inc_switch_trees{role="root"} 1
`)
}

// Before the data plane has published anything, a switch exports nothing
// (no zeros that would read as a reset).
func TestSwitchMetricsBeforeFirstView(t *testing.T) {
	if n := testutil.CollectAndCount((&module{dp: &dataPlane{}}).Collectors()[0]); n != 0 {
		t.Errorf("%d series before the first view", n)
	}
}

// A manager exports its refusals by reason, every reason from 0; a call
// from beyond loopback to a manager without tls counts as not_local.
func TestManagerRefusedMetric(t *testing.T) {
	m := &module{mgr: manager.New(manager.Config{}, slog.New(slog.DiscardHandler), nil)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.mgr.Run(ctx)
	if _, err := m.mgr.Join(ctx, &protos.JoinRequest{Group: "g"}); err == nil || !strings.Contains(err.Error(), "serves its own node only") {
		t.Fatalf("join without a peer: %v", err)
	}
	checkMetrics(t, m.Collectors()[0], `
# HELP fared_inc_refused_total Calls the INC manager refused, by reason (no_token, bad_token, expired_token, token_scope, cap_*, switch_*, not_local; docs/inc.md).
# TYPE fared_inc_refused_total counter
fared_inc_refused_total{reason="bad_token"} 0
fared_inc_refused_total{reason="cap_group_size"} 0
fared_inc_refused_total{reason="cap_groups"} 0
fared_inc_refused_total{reason="cap_groups_per_token"} 0
fared_inc_refused_total{reason="expired_token"} 0
fared_inc_refused_total{reason="no_token"} 0
fared_inc_refused_total{reason="not_local"} 1
fared_inc_refused_total{reason="switch_address"} 0
fared_inc_refused_total{reason="switch_bad_cert"} 0
fared_inc_refused_total{reason="switch_no_cert"} 0
fared_inc_refused_total{reason="switch_unknown_router"} 0
fared_inc_refused_total{reason="token_scope"} 0
`, "fared_inc_refused_total")
}

// checkMetrics: c's metrics are promlint clean, and those named (all of
// them without names) are want, in the text exposition format.
func checkMetrics(t *testing.T, c prometheus.Collector, want string, names ...string) {
	t.Helper()
	if probs, err := testutil.CollectAndLint(c); err != nil || len(probs) > 0 {
		t.Fatalf("promlint: %v %+v", err, probs)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}
