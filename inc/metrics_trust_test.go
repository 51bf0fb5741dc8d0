package inc

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fared/fared/inc/manager"
	"github.com/fared/fared/inc/protos"
)

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
	c := incCollector{m}
	if probs, err := testutil.CollectAndLint(c); err != nil || len(probs) > 0 {
		t.Fatalf("promlint: %v %+v", err, probs)
	}
	want := `
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
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "fared_inc_refused_total"); err != nil {
		t.Error(err)
	}
}
