package main

import (
	"strings"
	"testing"
)

// farectl qos ipcc shows the flow table's bounds and the learning
// counters next to the rest.
func TestQoSIPCCView(t *testing.T) {
	v := `{"enabled":true,"runtime":"linux: AF_PACKET copies","capture":["ha-1","hx-1"],"watched":["hb-1"],"priorities":[3],
	"poll_seconds":0.001,"cnp_interval_seconds":0.00005,"low_bytes":10000,"high_bytes":60000,"few":2,"more":8,
	"observed":900,"captured":900,"overflow":0,"no_route":0,"qps_learned":1,"ambiguous":0,"unmatched":40,"cnps_ordered":12,
	"cnps_sent":12,"send_errors":0,"skipped_no_qp":3,"skipped_interval":1,"expired":0,"polls":50,
	"flow_count":258,"max_flows":1024,"max_flows_per_port":256,"max_flows_per_source":32,"flows_evicted":700,
	"flows_refused_table_full":0,"flows_refused_port_cap":5,"flows_refused_source_cap":6,"port_mismatch":20,
	"ack_qp_conflict":3,"qps_replaced":0,"route_cache_entries":12,"route_lookups":30,"route_cache_evicted":0,"route_cache_expired":18,
	"queues":[{"interface":"hb-1","priority":3,"depth_bytes":20000,"trend":"growing","buffer_use":"low","cnps_per_interval":2,"active_flows":2,"cnps":12,"congested_polls":9}],
	"flows":[{"src":"10.0.0.1","dst":"10.0.0.2","dest_qp":33,"src_qp":17,"learned":true,"in":"ha-1","out":"hb-1","priority":3,"packets":100,"bytes":100000,"cnps":12,"last_seen":"x"}]}`
	out, err := run(t, "-s", serve(t, 200, v), "qos", "ipcc")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"flows 258/1024 (per port 256, per source 32)  evicted 700  refused: table full 0, port cap 5, source cap 6  port mismatch 20",
		"ACKs naming another QP than the learnt one 3  QPs replaced 0",
		"route cache 12 entries  lookups 30  evicted 0  expired 18",
		"0x11", "hb-1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "-s", serve(t, 200, v), "-j", "qos", "ipcc")
	if err != nil || out != v {
		t.Fatalf("-j: %q %v", out, err)
	}
}
