package main

import (
	"io"
	"testing"

	"github.com/fared/fared/api/wire"
)

func TestOSPFPrinters(t *testing.T) {
	pb, bw := float32(2.5e9), 1.25e10
	testPrinters(t, []printerCase{
		{name: "ospf neighbors", print: func(w io.Writer) error {
			return printOSPFNeighbors(w, []wire.OSPFNeighbor{
				{RouterID: "10.255.0.16", Priority: 1, State: "Full", DeadIn: 2.6, Address: "10.253.1.16", Interface: "oseg", Area: "0.0.0.0", Role: "slave"},
				{RouterID: "10.255.0.17", Priority: 0, State: "ExStart", DeadIn: 3, Address: "10.254.0.49", Interface: "o3-1", Area: "0.0.0.1", Requests: 2, Retransmit: 1},
			})
		}, want: `Neighbor ID  Pri  State    Dead  Address      Interface  Area     Role   Req  Rxmt
10.255.0.16  1    Full     3     10.253.1.16  oseg       0.0.0.0  slave  0    0
10.255.0.17  0    ExStart  3     10.254.0.49  o3-1       0.0.0.1         2    1
`},
		{name: "ospf interfaces", print: func(w io.Writer) error {
			return printOSPFInterfaces(w, []wire.OSPFInterface{
				{Name: "oseg", Index: 3, Area: "0.0.0.0", Type: "broadcast", State: "DR", MTU: 1500, Cost: 10, BandwidthBytes: 1.25e9, Address: "10.253.1.15/24",
					HelloInterval: 1, DeadInterval: 3, Priority: 1, DR: "10.253.1.15", BDR: "10.253.1.16", Neighbors: 1, Adjacencies: 1,
					Counters: map[string]uint64{"hello_tx": 30, "hello_rx": 29}},
				{Name: "o3-1", Index: 4, Area: "0.0.0.1", Type: "p2p", State: "P2P", MTU: 1500, Cost: 10, BandwidthBytes: 5e9, BandwidthOverride: "40G",
					HelloInterval: 1, DeadInterval: 3, Priority: 1},
			})
		}, want: `oseg  area 0.0.0.0  state DR  type broadcast  ifindex 3  mtu 1500  cost 10  bandwidth 10G
  address 10.253.1.15/24  hello 1s  dead 3s  priority 1  DR 10.253.1.15  BDR 10.253.1.16  neighbors 1  full 1
    hello_rx                             29
    hello_tx                             30
o3-1  area 0.0.0.1  state P2P  type p2p  ifindex 4  mtu 1500  cost 10  bandwidth 40G (run-time override 40G)
  address   hello 1s  dead 3s  priority 1  DR -  BDR -  neighbors 0  full 0
`},
		{name: "ospf database", print: func(w io.Writer) error {
			return printOSPFDatabase(w, []wire.OSPFLSA{
				{Area: "0.0.0.1", TypeName: "router", ID: "10.255.0.15", AdvRouter: "10.255.0.15", Age: 12, SeqHex: "0x80000003", ChecksumX: "0x1a2b", Length: 48, Own: true},
				{Area: "0.0.0.0", Interface: "oseg", TypeName: "opaque-link", ID: "9.0.0.1", AdvRouter: "10.255.0.16", Age: 300, SeqHex: "0x80000001", ChecksumX: "0xbeef", Length: 28},
			}, false)
		}, want: `Area            Type         Link State ID  ADV Router     Age  Seq#        CkSum   Len
0.0.0.1         router       10.255.0.15    10.255.0.15 *  12   0x80000003  0x1a2b  48
0.0.0.0 (oseg)  opaque-link  9.0.0.1        10.255.0.16    300  0x80000001  0xbeef  28
`},
		{name: "ospf database detail", print: func(w io.Writer) error {
			return printOSPFDatabase(w, []wire.OSPFLSA{
				{Area: "0.0.0.1", TypeName: "summary", ID: "10.20.3.0", AdvRouter: "10.255.0.15", Age: 5, SeqHex: "0x80000002", ChecksumX: "0x0f0f", Length: 28,
					Detail: map[string]any{"body": map[string]any{"mask": "255.255.255.0", "metric": 10.0}}},
				{Area: "AS", Interface: "o3-1", TypeName: "opaque-link", ID: "9.0.0.1", AdvRouter: "10.255.0.17", SeqHex: "0x80000001", ChecksumX: "0x1111", Length: 20},
			}, true)
		}, want: `Area       Type         Link State ID  ADV Router   Age  Seq#        CkSum   Len
0.0.0.1    summary      10.20.3.0      10.255.0.15  5    0x80000002  0x0f0f  28
AS (o3-1)  opaque-link  9.0.0.1        10.255.0.17  0    0x80000001  0x1111  20

0.0.0.1 summary 10.20.3.0 adv 10.255.0.15 seq 0x80000002 checksum 0x0f0f age 5
  mask: 255.255.255.0
  metric: 10

AS opaque-link 9.0.0.1 adv 10.255.0.17 seq 0x80000001 checksum 0x1111 age 0
`},
		{name: "ospf lsdb", print: func(w io.Writer) error {
			return printOSPFLSDB(w, []wire.Topology{{Protocol: "ospf", Area: "0.0.0.1", Self: "10.255.0.15",
				Nodes: []wire.TopoNode{{ID: "10.255.0.15", Links: []wire.TopoLink{{To: "10.255.0.17", Metric: 10, MaxBW: &bw, LocalAddr: "10.254.0.48", RemoteAddr: "10.254.0.49"}}},
					{ID: "10.255.0.18"}},
				Prefixes: []wire.TopoPrefix{{Prefix: "10.20.3.0/24", Advertiser: "10.255.0.17", Metric: 10, PathBW: &bw}, {Prefix: "0.0.0.0/0", Advertiser: "10.255.0.15", Metric: 1, External: true}}}})
		}, want: `ospf area 0.0.0.1, self 10.255.0.15: 2 nodes, 2 prefixes
Node         Neighbor     Metric  Max bandwidth  Local        Remote
10.255.0.15  10.255.0.17  10      100G           10.254.0.48  10.254.0.49
10.255.0.18  -                                                

Prefix        Advertiser   Metric  Path bandwidth  External
10.20.3.0/24  10.255.0.17  10      100G            false
0.0.0.0/0     10.255.0.15  1       -               true
`},
		{name: "ospf summaries", print: func(w io.Writer) error {
			return printOSPFSummaries(w, []wire.OSPFSummary{
				{Area: "0.0.0.0", Prefix: "10.20.3.0/24", Metric: 20, FromArea: "0.0.0.1", Advertisers: []string{"10.255.0.17"}, OrigPathBW: &pb, Capacity: 5e9, PathBW: 2.5e9},
				{Area: "0.0.0.1", Prefix: "10.255.0.16/32", Metric: 10, FromArea: "0.0.0.0", Advertisers: []string{"10.255.0.16"}, Capacity: 1.25e9, PathBW: 1.25e9},
			})
		}, want: `Into area  Prefix          Metric  From area  Advertisers  Original PB  Capacity  Path bandwidth
0.0.0.0    10.20.3.0/24    20      0.0.0.1    10.255.0.17  20G          40G       20G
0.0.0.1    10.255.0.16/32  10      0.0.0.0    10.255.0.16  -            10G       10G
`},
		{name: "ospf cleared one", print: func(w io.Writer) error { return printOSPFCleared(w, wire.Cleared{Cleared: 1}, "10.255.0.15") }, want: `ospf: 1 neighbours cleared (neighbour 10.255.0.15)
`},
		{name: "ospf cleared all", print: func(w io.Writer) error { return printOSPFCleared(w, wire.Cleared{Cleared: 2}, "") }, want: `ospf: 2 neighbours cleared (every neighbour)
`},
		{name: "ospf bandwidth", print: func(w io.Writer) error {
			return printBandwidthOverride(w, wire.BandwidthOverride{Interface: "o3-1", Bandwidth: "40G"}, "ospf")
		}, want: `ospf interface o3-1: bandwidth 40G (run-time override)
`},
		{name: "ospf bandwidth cleared", print: func(w io.Writer) error {
			return printBandwidthOverride(w, wire.BandwidthOverride{Interface: "o3-1", Cleared: true}, "ospf")
		}, want: `ospf interface o3-1: bandwidth override cleared (configured bandwidth in force)
`},
	})
}
