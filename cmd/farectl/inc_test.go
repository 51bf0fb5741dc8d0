package main

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fared/fared/api/wire"
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

// farectl inc group dismantle NAME sends DELETE /v1/inc/groups/NAME (the
// name escaped), prints the answer, and passes fared's 404 on.
func TestINCGroupDismantle(t *testing.T) {
	ans := `{"name":"g/1","size":8,"joined":8,"state":"dismantled","reason":"dismantled by the operator (tree 3 removed from 5 switch(es))",` +
		`"generation":4,"created":"2026-11-28T07:00:00Z","rebuilds":0,"timeout_reports":0}`
	var req atomic.Value
	sock := fakeFared(t, 200, []byte(ans), &req)
	out, err := run(t, "-s", sock, "inc", "group", "dismantle", "g/1")
	if err != nil || req.Load() != "DELETE /v1/inc/groups/g%2F1" ||
		out != "group g/1: dismantled at generation 4, 8 of 8 members told at their next call: dismantled by the operator (tree 3 removed from 5 switch(es))\n" {
		t.Fatalf("dismantle: %v %q %v", req.Load(), out, err)
	}
	if out, err := run(t, "-s", sock, "-j", "inc", "group", "dismantle", "g/1"); err != nil || out != ans {
		t.Fatalf("-j: %q %v", out, err)
	}
	esock := serve(t, 404, `{"error":"no such group: \"x\" (farectl inc groups lists them)"}`)
	if _, err := run(t, "-s", esock, "inc", "group", "dismantle", "x"); err == nil || !strings.Contains(err.Error(), `no such group: "x"`) ||
		!strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("unknown group: %v", err)
	}
	if _, err := run(t, "-s", sock, "inc", "group", "dismantle"); err == nil {
		t.Fatal("dismantle without a name accepted")
	}
}

func TestINCPrinters(t *testing.T) {
	bn := 1.25e9
	testPrinters(t, []printerCase{
		{name: "groups", print: func(w io.Writer) error {
			return printINCGroups(w, []wire.INCGroup{{Name: "golden", Size: 3, Joined: 3, State: "ready", Generation: 1, TreeID: 1, Root: "l3", Reason: "all ranks joined"},
				{Name: "late", Size: 4, Joined: 1, State: "waiting", Timeouts: 2}})
		}, want: `Group   Ranks  State    Generation  Tree  Root  Rebuilds  Timeout reports  Reason
golden  3/3    ready    1           1     l3    0         0                all ranks joined
late    1/4    waiting  0           -     -     0         2                
`},
		{name: "trees", print: func(w io.Writer) error {
			return printINCTrees(w, []wire.INCTree{
				{Group: "golden", TreeID: 1, Generation: 2, Root: "s1", RootAddr: "10.255.0.1", Levels: 2, Members: 3, Bottleneck: &bn, Ready: true, Topology: "isis L2",
					Excluded: []string{"s2"}, Switches: []wire.INCTreeSwitch{{Switch: "s1", Address: "10.255.0.1", Role: "root", QP: 258, Children: []string{"l1", "l3"}, Applied: true},
						{Switch: "l1", Address: "10.255.0.5", Role: "leaf", Parent: "s1", QP: 257, Children: []string{"rank 0"}}}},
				{Group: "g2", TreeID: 2, Root: "l3", RootAddr: "10.255.0.7", Levels: 1, Members: 2, Topology: "isis L2"},
			})
		}, want: `group golden: tree 1 (generation 2, ready), root s1 (10.255.0.1), 2 level(s), 3 members, bottleneck 10G, from isis L2
  not used after timeout reports: s2
  Switch  Address     Role  Parent  QP   Applied  Children
  s1      10.255.0.1  root  -       258  true     l1, l3
  l1      10.255.0.5  leaf  s1      257  false    rank 0

group g2: tree 2 (generation 0, programming), root l3 (10.255.0.7), 1 level(s), 2 members, bottleneck unconstrained, from isis L2
  Switch  Address  Role  Parent  QP  Applied  Children
`},
		{name: "clients", print: func(w io.Writer) error {
			return printINCClients(w, []wire.INCClient{{ID: "c1", Group: "golden", Rank: 0, Address: "10.254.0.34", QP: 8513584, LastSeenAgo: 0.42, Generation: 1, Attach: "10.255.0.7",
				Bytes: 67108864, Operations: 12, FailedOperations: 1, Retransmissions: 431, RTOs: 8},
				{ID: "c2", Group: "golden", Rank: 1, Address: "10.254.0.36", QP: 17, LastSeenAgo: 12, Timeouts: 3}})
		}, want: `Client  Group   Rank  Address      QP       Last heartbeat  Generation  Sends to    Timeout reports  Operations  Failed  Bytes     Retransmissions  Timeouts
c1      golden  0     10.254.0.34  8513584  0.4s ago        1           10.255.0.7  0                12          1       67108864  431              8
c2      golden  1     10.254.0.36  17       12.0s ago       0           -           3                0           0       0         0                0
`},
		{name: "switches", print: func(w io.Writer) error {
			return printINCSwitches(w, []wire.INCRegisteredSwitch{{ID: "l1", Address: "10.255.0.5", Alive: true, InTopology: true, Trees: 1, MaxTrees: 16, MaxSlots: 256,
				MaxRanks: 64, MaxPayload: 1024, Version: 4, Applied: 4}, {ID: "x", Address: "10.255.0.99", Error: "no certificate"}})
		}, want: `Switch  Address      Alive  In topology  Trees  Slots  Ranks  Payload  Config  Applied  Error
l1      10.255.0.5   true   true         1/16   256    64     1024     4       4        
x       10.255.0.99  false  false        0/0    0      0      0        0       0        no certificate
`},
		{name: "security without tls", print: func(w io.Writer) error {
			return printINCSecurity(w, wire.INCSecurity{Listen: "127.0.0.1:7791", LoopbackOnly: true, MaxGroups: 1024, MaxGroupsPerToken: 32, MaxGroupSize: 1024,
				Tokens: []wire.INCTokenUse{{Groups: 1, Clients: 3}}})
		}, want: `listen 127.0.0.1:7791, no tls: loopback only, no client-auth (0 key(s))
groups 0 of max 1024; per token max 32; ranks per group max 1024
refused: none
Token   Groups  Clients
(none)  1       3
`},
		{name: "switch", print: func(w io.Writer) error {
			return printINCSwitch(w, wire.INCSwitch{Address: "10.255.0.7", Manager: "10.255.0.1:7791", Registered: true, Version: 2, Error: "tree 3: too many ranks",
				SlotsInUse: 1, Totals: wire.INCSwitchCounters{Packets: 64, Completed: 16, Duplicates: 1, Served: 2, PartialResends: 0, NACKs: 1},
				Trees: []wire.INCSwitchTree{{TreeID: 1, QP: 257, Role: "root", Children: 3, Slots: 256, SlotsInUse: 1,
					Counters: wire.INCSwitchCounters{Packets: 64, Duplicates: 1, Served: 2, Results: 16, Partials: 0, Stale: 1, Mismatch: 0, BadQP: 1, BadRank: 2}}},
				Bad: map[string]uint64{"rkey": 0, "qp": 1}, Ingress: wire.INCIngress{Enabled: true, Peers: 3, AgeMS: 250, Error: "netlink: busy"}})
		}, want: `switch 10.255.0.7, manager 10.255.0.1:7791, registered true, config version 2, refused: tree 3: too many ranks
slots in use 1; packets 64, aggregated messages 16, duplicates suppressed 1, retransmissions served 2, partials re-sent 0, NACKs 1
ingress check on: 3 peers, routes read 0.2s ago; reading routes failed: netlink: busy
refused: qp 1
Tree  QP   Role  Children  Slots in use  Packets  Duplicates  Served  Results  Partials  Stale  Mismatch  Refused
1     257  root  3         1/256         64       1           2       16       0         1      0         3
`},
		{name: "switch ingress off", print: func(w io.Writer) error {
			return printINCSwitch(w, wire.INCSwitch{Address: "10.255.0.5", Manager: "10.255.0.1:7791"})
		}, want: `switch 10.255.0.5, manager 10.255.0.1:7791, registered false, config version 0
slots in use 0; packets 0, aggregated messages 0, duplicates suppressed 0, retransmissions served 0, partials re-sent 0, NACKs 0
ingress check off
Tree  QP  Role  Children  Slots in use  Packets  Duplicates  Served  Results  Partials  Stale  Mismatch  Refused
`},
	})
}
