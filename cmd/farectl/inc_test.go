package main

import (
	"strings"
	"testing"
)

// farectl inc trees and inc switch render fared's JSON as tables.
func TestINCTables(t *testing.T) {
	trees := `[{"group":"g","tree_id":3,"generation":2,"root":"s1","root_address":"10.255.0.5","levels":2,"members":8,
	"bottleneck_bandwidth":1250000000,"ready":true,"topology":"isis L2","switches":[
	{"switch":"l1","address":"10.255.0.1","role":"leaf","parent":"s1","qpn":257,"children":["rank 0","rank 1"],"applied":true},
	{"switch":"s1","address":"10.255.0.5","role":"root","qpn":258,"children":["l1"],"applied":true}]}]`
	out, err := run(t, "-s", serve(t, 200, trees), "inc", "trees")
	if err != nil || !strings.Contains(out, "root s1 (10.255.0.5), 2 level(s), 8 members, bottleneck 10G, from isis L2") ||
		!strings.Contains(out, "rank 0, rank 1") {
		t.Fatalf("trees: %q %v", out, err)
	}
	sw := `{"address":"10.255.0.1","manager":"10.255.0.6:7791","registered":true,"config_version":4,"slots_in_use":3,
	"totals":{"packets":100,"completed":40,"duplicates_suppressed":7,"retransmissions_served":2,"partial_resends":1,"nacks_sent":5},
	"trees":[{"tree_id":3,"qpn":257,"role":"leaf","children":2,"slots":256,"slots_in_use":3,"counters":{"packets":100}}],
	"bad_packets":{"bad_icrc":2,"ingress":5,"qp":0,"rank":0,"rkey":3,"source":0},"unknown_tree":1,"cpu":{"seconds":1.5},
	"ingress_check":{"enabled":true,"peers":3,"unrouted":["10.1.1.9"],"age_ms":1200}}`
	out, err = run(t, "-s", serve(t, 200, sw), "inc", "switch")
	if err != nil || !strings.Contains(out, "duplicates suppressed 7, retransmissions served 2") ||
		!strings.Contains(out, "refused: unknown tree 1, bad_icrc 2, ingress 5, rkey 3\n") ||
		!strings.Contains(out, "ingress check on: 3 peers, routes read 1.2s ago; no route back to 10.1.1.9") ||
		!strings.Contains(out, "3/256") || !strings.Contains(out, "data plane CPU 1.50s") {
		t.Fatalf("switch: %q %v", out, err)
	}
	out, err = run(t, "-s", serve(t, 200, sw), "-j", "inc", "switch")
	if err != nil || out != sw {
		t.Fatalf("-j: %q %v", out, err)
	}
}

// farectl inc security: trust mode, caps, refusals by reason, tokens.
func TestINCSecurity(t *testing.T) {
	sec := `{"listen":"0.0.0.0:7791","tls":true,"client_auth":true,"loopback_only":false,"token_keys":1,"max_groups":1024,
	"max_groups_per_token":32,"max_group_size":1024,"groups":3,"refused":{"token_scope":4,"switch_no_cert":2},
	"tokens":[{"token":"ab12","groups":2,"clients":5}]}`
	out, err := run(t, "-s", serve(t, 200, sec), "inc", "security")
	if err != nil || !strings.Contains(out, "listen 0.0.0.0:7791, tls (switches") || !strings.Contains(out, "join tokens required (1 key(s))") ||
		!strings.Contains(out, "groups 3 of max 1024; per token max 32") || !strings.Contains(out, "refused: switch_no_cert 2, token_scope 4") ||
		!strings.Contains(out, "ab12") {
		t.Fatalf("security: %q %v", out, err)
	}
	out, err = run(t, "-s", serve(t, 200, sec), "-j", "inc", "security")
	if err != nil || out != sec {
		t.Fatalf("-j: %q %v", out, err)
	}
}
