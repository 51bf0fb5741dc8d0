package main

import (
	"io"
	"strings"
	"testing"

	"github.com/fared/fared/api/wire"
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

func TestQoSPrinters(t *testing.T) {
	on, off := true, false
	testPrinters(t, []printerCase{
		{name: "status applied", print: func(w io.Writer) error {
			return printQoSStatus(w, wire.QoSStatus{Backend: "linux", PollSeconds: 1, Applied: true, Polls: 12, Interfaces: []wire.QoSIfaceStatus{
				{Name: "h1-1", Features: []wire.QoSFeature{{Feature: "dscp-map", Supported: true}, {Feature: "pfc", Reason: "dcbnl: not supported on a veth"}}},
			}})
		}, want: `backend linux  poll 1s  applied  polls 12
Interface  Feature   Supported  How / why not
h1-1       dscp-map  yes        
h1-1       pfc       NO         dcbnl: not supported on a veth
`},
		{name: "status not applied", print: func(w io.Writer) error {
			return printQoSStatus(w, wire.QoSStatus{Backend: "sonic", PollSeconds: 0.2, LastError: "redis: connection refused"})
		}, want: `backend sonic  poll 0.2s  NOT applied  polls 0
last error: redis: connection refused
Interface  Feature  Supported  How / why not
`},
		{name: "status with ecn overlay", print: func(w io.Writer) error {
			tos, drops := uint8(0), uint64(3)
			return printQoSStatus(w, wire.QoSStatus{Backend: "linux", PollSeconds: 1, Applied: true, ECNOverlay: &wire.QoSECNOverlay{
				Decap: "standard", DSCP: "inherit", CheckedAt: "2026-11-28T07:00:00Z", Tunnels: []wire.QoSOverlayTunnel{
					{Name: "vx0", Kind: "vxlan", VNI: 42, Local: "10.0.0.1", Remote: "10.0.0.2", DSCP: "inherit", EncapECN: "copy_from_inner",
						DecapECN: "standard", Conforms: true, Changed: []string{"tos inherit"}, ECNDropPackets: &drops, Note: "kernel vxlan"},
					{Name: "vx1", Kind: "vxlan", VNI: 7, DSCP: "fixed", OuterTOS: &tos, EncapECN: "copy_from_inner", DecapECN: "standard", Note: "not inherited"},
					{Name: "ghost", Note: "no such interface"},
				}}})
		}, want: `backend linux  poll 1s  applied  polls 0
Interface  Feature  Supported  How / why not

ECN overlay: decap standard  dscp inherit  checked 2026-11-28T07:00:00Z
Tunnel  Kind   VNI  Local     Remote    DSCP        Encap ECN        Decap ECN  ECN drops  Conforms  Changed      Note
vx0     vxlan  42   10.0.0.1  10.0.0.2  inherit     copy_from_inner  standard   3          yes       tos inherit  kernel vxlan
vx1     vxlan  7    -         -         fixed 0x00  copy_from_inner  standard   -          NO        -            not inherited
ghost   -      -    -         -         -           -                -          -          NO        -            no such interface
`},
		{name: "pfc", print: func(w io.Writer) error {
			return printQoSPFC(w, wire.QoSPFC{Interfaces: []wire.QoSPFCIface{{Name: "C", Mode: "limited", Priorities: []wire.QoSPFCPrio{
				{Priority: 0},
				{Priority: 3, Configured: true, XOFF: &on, PauseRx: 5, PauseTx: 7, XOFFOnsets: 2, XOFFBytes: 300000, XONBytes: 250000, Headroom: 100000},
				{Priority: 4, Enabled: true, XOFF: &off},
				{Priority: 5, PauseRx: 1},
			}}}})
		}, want: `Interface  Mode     Prio  Configured  Enabled  XOFF  PAUSE rx  PAUSE tx  Onsets  XOFF/XON/headroom
C          limited  3     true        false    XOFF  5         7         2       300000/250000/100000
C          limited  4     false       true     -     0         0         0       0/0/0
C          limited  5     false       false    ?     1         0         0       0/0/0
`},
		{name: "restore", print: func(w io.Writer) error {
			return printQoSRestore(w, wire.QoSRestore{Interface: "C", Restored: true, Mode: "normal"})
		}, want: `C: PFC and deadlock detection restored (mode normal)
`},
		{name: "restore nothing", print: func(w io.Writer) error {
			return printQoSRestore(w, wire.QoSRestore{Interface: "A", Mode: "normal"})
		}, want: `A: nothing to restore (mode normal)
`},
		{name: "watchdog", print: func(w io.Writer) error {
			return printQoSWatchdog(w, wire.QoSWatchdog{Enabled: true, DetectionSeconds: 0.2, RestorationSeconds: 0.5, PollSeconds: 0.1, Action: "drop",
				Limit: 2, WindowSeconds: 60,
				Interfaces: []wire.QoSWatchdogIface{{Name: "C", Mode: "limited", Detections: 2, Recoveries: 1, LimitHits: 1, InWindow: 2},
					{Name: "A", Mode: "storm", Detections: 1, RecoversAt: "12:00:01.500"}},
				Queues: []wire.QoSWatchdogQueue{{Interface: "A", Priority: 3, Mode: "storm", XOFFSince: "12:00:00.100", Detections: 1, LastDetect: "12:00:00.300"}},
				Events: []wire.QoSWatchdogEvent{{At: "12:00:00.300", Kind: "detected", Interface: "A", Priority: 3, LatencySeconds: 0.2004},
					{At: "12:00:05.000", Kind: "limit", Interface: "C", Priority: -1}}})
		}, want: `enabled true  detection 0.2s  restoration 0.5s  poll 0.1s  action drop  limit 2 in 60s

Interface  Mode     Detections  Recoveries  Limit hits  In window  Recovers at
C          limited  2           1           1           2          -
A          storm    1           0           0           0          12:00:01.500

Interface  Prio  Mode   XOFF since    Detections  Last detection
A          3     storm  12:00:00.100  1           12:00:00.300

events:
  12:00:00.300  detected  A priority 3 (XOFF for 0.200s)
  12:00:05.000  limit     C
`},
		{name: "watchdog no limit", print: func(w io.Writer) error {
			return printQoSWatchdog(w, wire.QoSWatchdog{DetectionSeconds: 0.2, RestorationSeconds: 0.2, PollSeconds: 0.2, Action: "forward"})
		}, want: `enabled false  detection 0.2s  restoration 0.2s  poll 0.2s  action forward  limit none

Interface  Mode  Detections  Recoveries  Limit hits  In window  Recovers at

Interface  Prio  Mode  XOFF since  Detections  Last detection
`},
		{name: "ecn", print: func(w io.Writer) error {
			return printQoSECN(w, wire.QoSECN{
				Profiles: []wire.QoSProfile{{Name: "roce", ECN: "ecn_all", Mark: "dequeue", Colors: []wire.QoSWRED{{Color: "green", Min: 20000, Max: 100000, Probability: 10}, {Color: "yellow", Min: 10000, Max: 50000, Probability: 20}}}},
				Queues:   []wire.QoSECNQueue{{Interface: "r", Priority: 3, Profile: "roce", Marks: 42, Drops: 1, Depth: 30000}}})
		}, want: `Profile  ECN      Mark at  Colour  Min    Max     Probability
roce     ecn_all  dequeue  green   20000  100000  10%
roce     ecn_all  dequeue  yellow  10000  50000   20%

Interface  Prio  Profile  Marks  Drops  Depth
r          3     roce     42     1      30000
`},
		{name: "flows", print: func(w io.Writer) error {
			return printQoSFlows(w, wire.QoSFlows{Rule: &wire.QoSElephantRule{RateBps: 1e8, Size: 20e6, Priority: 1, Color: "yellow"},
				Interfaces: []wire.QoSFlowsIface{
					{Name: "h1-1", ElephantBytes: 5e6, MiceBytes: 2000, Classes: []wire.QoSClass{{Name: "1:10", Priority: 1, Bytes: 5e6, Packets: 3400, Backlog: 1500, Drops: 2}},
						Flows: []wire.QoSFlow{{Key: "10.0.0.1:5000>10.0.0.2:9", Elephant: true}, {Key: "10.0.0.1:5001>10.0.0.2:9"}, {Key: "10.0.0.3:6000>10.0.0.2:9"}}},
					{Name: "h2-1"},
				}})
		}, want: `elephant: over 100M after 20000000 bytes -> priority 1, yellow

h1-1: elephant bytes 5000000, mice bytes 2000
  Class  Prio  Bytes    Packets  Backlog  Drops
  1:10   1     5000000  3400     1500     2
  elephants: 10.0.0.1:5000>10.0.0.2:9
  mice: 10.0.0.1:5001>10.0.0.2:9, 10.0.0.3:6000>10.0.0.2:9

h2-1: elephant bytes 0, mice bytes 0
`},
		{name: "flows no rule", print: func(w io.Writer) error { return printQoSFlows(w, wire.QoSFlows{}) }, want: `no large-flow rule configured
`},
		{name: "ipcc off", print: func(w io.Writer) error {
			return printQoSIPCC(w, wire.QoSIPCC{Runtime: "off (no ipcc section)"})
		}, want: `ipcc: off (no ipcc section)
`},
		{name: "ipcc", print: func(w io.Writer) error {
			return printQoSIPCC(w, wire.QoSIPCC{Enabled: true, Runtime: "linux: AF_PACKET copies", Capture: []string{"ha-1", "hb-1"}, Watched: []string{"hb-1"},
				Priorities: []int{3}, PollSeconds: 0.001, IntervalSeconds: 5e-05, Low: 10000, High: 60000, Few: 2, More: 8,
				Observed: 900, Captured: 890, Overflow: 1, NoRoute: 2, Learned: 1, Ambiguous: 3, Unmatched: 40, CNPs: 12, Sent: 11, SendErrors: 1,
				NoQP: 3, RateLimit: 4, Polls: 50, FlowCount: 2, MaxFlows: 1024, MaxFlowsPerPort: 256, MaxFlowsPerSource: 32, FlowsEvicted: 7,
				RefusedTableFull: 1, RefusedPortCap: 5, RefusedSourceCap: 6, PortMismatch: 20, QPConflict: 3, QPReplaced: 1,
				RouteCacheEntries: 12, RouteLookups: 30, RouteCacheEvicted: 1, RouteCacheExpired: 18,
				BadPackets: map[string]uint64{"truncated": 2, "bad_icrc": 5}, LastError: "send: no buffer space",
				Queues: []wire.QoSIPCCQueue{{Interface: "hb-1", Priority: 3, Depth: 20000, Trend: "growing", Use: "low", Count: 2, Flows: 2, CNPs: 12, Congested: 9}},
				Flows: []wire.QoSIPCCFlow{{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x11, SrcQP: 0x17, Learned: true, In: "ha-1", Out: "hb-1", Priority: 3, Packets: 100, Bytes: 100000, CNPs: 12},
					{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x12, In: "ha-1", Out: "hb-1", Priority: 3, Packets: 10, Bytes: 10000}}})
		}, want: `ipcc: linux: AF_PACKET copies
priorities [3]  poll 0.001s  CNP interval 5e-05s  low 10000  high 60000  few 2  more 8 (CNPs per interval)
capture ha-1,hb-1  watched hb-1
observed 900  captured 890  overflow 1  no route 2  QPs learnt 1  ambiguous 3  unmatched 40
CNPs ordered 12  sent 11  send errors 1  skipped: no QP 3, interval 4  polls 50
flows 2/1024 (per port 256, per source 32)  evicted 7  refused: table full 1, port cap 5, source cap 6  port mismatch 20
ACKs naming another QP than the learnt one 3  QPs replaced 1
route cache 12 entries  lookups 30  evicted 1  expired 18
bad packets: bad_icrc 5, truncated 2
last error: send: no buffer space

Interface  Prio  Depth  Trend    Buffer use  CNPs/interval  Active flows  CNPs  Congested polls
hb-1       3     20000  growing  low         2              2             12    9

Source    Destination  Dest QP  Sender QP  In    Out   Prio  Packets  Bytes   CNPs
10.0.0.1  10.0.0.2     0x11     0x17       ha-1  hb-1  3     100      100000  12
10.0.0.1  10.0.0.2     0x12     unknown    ha-1  hb-1  3     10       10000   0
`},
		{name: "ipcc on a quiet switch", print: func(w io.Writer) error {
			return printQoSIPCC(w, wire.QoSIPCC{Enabled: true, Runtime: "sim", Priorities: []int{3, 4}, PollSeconds: 1e-05, IntervalSeconds: 5e-05})
		}, want: `ipcc: sim
priorities [3 4]  poll 1e-05s  CNP interval 5e-05s  low 0  high 0  few 0  more 0 (CNPs per interval)
observed 0  captured 0  overflow 0  no route 0  QPs learnt 0  ambiguous 0  unmatched 0
CNPs ordered 0  sent 0  send errors 0  skipped: no QP 0, interval 0  polls 0
flows 0/0 (per port 0, per source 0)  evicted 0  refused: table full 0, port cap 0, source cap 0  port mismatch 0
ACKs naming another QP than the learnt one 0  QPs replaced 0

Interface  Prio  Depth  Trend  Buffer use  CNPs/interval  Active flows  CNPs  Congested polls

Source  Destination  Dest QP  Sender QP  In  Out  Prio  Packets  Bytes  CNPs
`},
		{name: "tuning off", print: func(w io.Writer) error { return printQoSTuning(w, wire.QoSTuning{}) }, want: `ecn tuning off (static thresholds)
`},
		{name: "tuning", print: func(w io.Writer) error {
			return printQoSTuning(w, wire.QoSTuning{Enabled: true, Algorithm: "ai-ecn", IntervalSeconds: 0.1, UtilTarget: 0.9, MinThreshold: 1000, MaxThreshold: 140000,
				Queues: []wire.QoSTunedQueue{{Interface: "r", Priority: 3, Model: "elephants", Base: wire.QoSWRED{Min: 20000, Max: 100000, Probability: 10},
					Applied: wire.QoSWRED{Min: 40000, Max: 140000, Probability: 10}, Utilisation: 0.85, MiceShare: 0.1, Marks: 9, MeanDepth: 35000.4, Reason: "utilisation below target"},
					{Interface: "h1", Priority: 3, Utilisation: -1, MiceShare: -1}},
				Decisions: []wire.QoSTuningDecision{{At: "12:00:00.100", Interface: "r", Priority: 3, Before: wire.QoSWRED{Min: 20000, Max: 100000, Probability: 10},
					After: wire.QoSWRED{Min: 40000, Max: 140000, Probability: 10}, Reason: "utilisation below target"}}})
		}, want: `algorithm ai-ecn  interval 0.1s  utilisation target 0.9  thresholds 1000..140000

Interface  Prio  Model      Configured        Applied           Util   Mice   Marks  Mean depth  Last reason
r          3     elephants  20000/100000/10%  40000/140000/10%  0.85   0.10   9      35000       utilisation below target
h1         3     -          0/0/0%            0/0/0%            -1.00  -1.00  0      0           

decisions (latest last):
  12:00:00.100  r/3  20000/100000/10% -> 40000/140000/10%  utilisation below target
`},
	})
}
