package main

import (
	"io"
	"testing"

	"github.com/fared/fared/api/wire"
)

func TestISISPrinters(t *testing.T) {
	orig := 1.25e9
	neighbors := []wire.ISISNeighbor{
		{SystemID: "0000.0000.0001", Hostname: "s1", Interface: "s1-1", Level: "L2", State: "Up", ExpiresIn: 2.7, SNPA: "02:00:00:00:01:01", IPv4: []string{"10.254.0.9"}},
		{SystemID: "0000.0000.0014", Hostname: "a1", Interface: "seg", Level: "L1", State: "Initializing", ExpiresIn: 3, SNPA: "02:00:00:00:0e:01", IPv4: []string{"10.253.0.14", "10.253.9.14"}},
	}
	testPrinters(t, []printerCase{
		{name: "isis neighbors", print: func(w io.Writer) error { return printISISNeighbors(w, neighbors, 0) }, want: `System Id       Hostname  Interface  Level  State         Hold  SNPA               IPv4
0000.0000.0001  s1        s1-1       L2     Up            3     02:00:00:00:01:01  10.254.0.9
0000.0000.0014  a1        seg        L1     Initializing  3     02:00:00:00:0e:01  10.253.0.14,10.253.9.14
`},
		{name: "isis neighbors of L1", print: func(w io.Writer) error { return printISISNeighbors(w, neighbors, 1) }, want: `System Id       Hostname  Interface  Level  State         Hold  SNPA               IPv4
0000.0000.0014  a1        seg        L1     Initializing  3     02:00:00:00:0e:01  10.253.0.14,10.253.9.14
`},
		{name: "isis interfaces", print: func(w io.Writer) error {
			return printISISInterfaces(w, []wire.ISISInterface{
				{Name: "seg", Index: 9, Type: "lan", State: "up", MTU: 1500, Metric: 10, BandwidthBytes: 1.25e9, CircuitID: 1, Addresses: []string{"10.253.0.6/24"},
					HelloInterval: 1, HoldTime: 3, Priority: 64, Adjacencies: 1, Levels: []wire.ISISLANLevel{{Level: 1, DIS: true, LANID: "0000.0000.0006.01"}},
					Counters: map[string]uint64{"lan_hello_tx": 30, "csnp_tx": 4}},
				{Name: "s4-1", Index: 5, Type: "p2p", State: "up", MTU: 1500, Metric: 10, BandwidthBytes: 5e9, BandwidthOverride: "40G", CircuitID: 2,
					HelloInterval: 1, HoldTime: 3},
			})
		}, want: `seg  state up  type lan  ifindex 9  mtu 1500  metric 10  bandwidth 10G  circuit-id 1
  addresses 10.253.0.6/24  hello 1s  hold 3s  adjacencies up 1
  L1: DIS true  LAN id 0000.0000.0006.01  priority 64
    csnp_tx                          4
    lan_hello_tx                     30
s4-1  state up  type p2p  ifindex 5  mtu 1500  metric 10  bandwidth 40G (run-time override 40G)  circuit-id 2
  addresses   hello 1s  hold 3s  adjacencies up 0
`},
		{name: "isis database", print: func(w io.Writer) error {
			return printISISDatabase(w, []wire.ISISLSP{
				{LSPID: "0000.0000.0006.00-00", Hostname: "l2", Level: 1, SeqHex: "0x00000004", ChecksumX: "0x3c1d", Lifetime: 1190, Length: 120, Own: true, Attached: true},
				{LSPID: "0000.0000.0014.00-00", Hostname: "a1", Level: 1, SeqHex: "0x00000002", ChecksumX: "0x0a0b", Lifetime: 1100, Length: 90, Overload: true},
			}, false)
		}, want: `Level  LSP ID                  Hostname  Seq         Checksum  Lifetime  Len  ATT/P/OL
L1     0000.0000.0006.00-00 *  l2        0x00000004  0x3c1d    1190      120  1/0/0
L1     0000.0000.0014.00-00    a1        0x00000002  0x0a0b    1100      90   0/0/1
`},
		{name: "isis database detail", print: func(w io.Writer) error {
			return printISISDatabase(w, []wire.ISISLSP{{LSPID: "0000.0000.0014.00-00", Hostname: "a1", Level: 1, SeqHex: "0x00000002", ChecksumX: "0x0a0b",
				Lifetime: 1100, Length: 90, TLVs: []map[string]any{
					{"type": 137.0, "name": "hostname", "length": 2.0, "hostname": "a1"},
					{"type": 135.0, "name": "extended_ip_reachability", "length": 17.0, "prefixes": []any{
						map[string]any{"prefix": "10.10.9.0/24", "metric": 10.0, "down": false, "sub_tlvs": []any{
							map[string]any{"type": 32770.0, "name": "path_bandwidth", "length": 4.0, "value": 1.25e9}}}}},
				}}}, true)
		}, want: `Level  LSP ID                Hostname  Seq         Checksum  Lifetime  Len  ATT/P/OL
L1     0000.0000.0014.00-00  a1        0x00000002  0x0a0b    1100      90   0/0/0

0000.0000.0014.00-00 (L1) seq 0x00000002 checksum 0x0a0b lifetime 1100
  TLV 137 hostname (length 2)
    hostname: a1
  TLV 135 extended_ip_reachability (length 17)
    prefixes:
      -
        down: false
        metric: 10
        prefix: 10.10.9.0/24
        sub_tlvs:
          -
            length: 4
            name: path_bandwidth
            type: 32770
            value: 1.25e+09 bytes/s (10G)
`},
		{name: "isis levels", print: func(w io.Writer) error {
			return printISISLevels(w, []wire.ISISLevel{{Level: 1, LSPs: 3, Originated: 4, Attached: true, LeakedInto: 20, Converged: true},
				{Level: 2, LSPs: 11, Originated: 7, Overload: true, LeakedInto: 2, Recomputations: 3}})
		}, want: `Level  LSPs  Originated  ATT    Overload  Leaked into  Leak recomputations from  Converged
L1     3     4           true   off       20           0                         true
L2     11    7           false  on        2            3                         false
`},
		{name: "isis leaks", print: func(w io.Writer) error {
			return printISISLeaks(w, []wire.ISISLeak{
				{Prefix: "10.10.9.0/24", FromLevel: 1, IntoLevel: 2, Metric: 10, PathBW: 1.25e9, OrigPathBW: &orig, Capacity: 1.25e9, Advertisers: []string{"a1"}},
				{Prefix: "10.10.2.0/24", FromLevel: 2, IntoLevel: 1, Metric: 20, Down: true, PathBW: 3.4028235e38, Capacity: 1.625e10, Advertisers: []string{"s1", "s2"}},
			})
		}, want: `Prefix        From  Into  Metric  Down   Path bw  = min(original  capacity to advertisers)  Advertisers
10.10.9.0/24  L1    L2    10      false  10G      10G             10G                       a1
10.10.2.0/24  L2    L1    20      true   max      none            130G                      s1,s2
`},
		{name: "isis flooding", print: func(w io.Writer) error {
			return printISISFlooding(w, wire.ISISFlooding{Reduction: true, Reflooders: 1, Interfaces: []wire.ISISFloodingInterface{
				{Name: "s1-1", Type: "p2p", Neighbor: "s1", NeighborReduces: true, Refloods: "when_chosen", Why: "neighbour_reduces",
					LastReason: "other_reflooder", LastLSP: "0000.0000.0007.00-00", LastBy: "l3", LSPsSent: 12, LSPsSuppressed: 40, LSPsReceived: 61, Duplicates: 3},
				{Name: "f1-1", Type: "p2p", Neighbor: "f1", Refloods: "all", Why: "neighbour_not_capable", LastReason: "neighbour_not_capable",
					LastLSP: "0000.0000.0007.00-00", LSPsSent: 52, LSPsReceived: 20, Duplicates: 9},
				{Name: "s9-1", Type: "p2p", Refloods: "none", Why: "no_adjacency"},
			}})
		}, want: `flooding reduction on (1 reflooder(s) per two-hop neighbour)
Interface  Neighbor  Refloods     Why                    Sent  Suppressed  Received  Duplicates  Last decision
s1-1       s1        when_chosen  neighbour_reduces      12    40          61        3           other_reflooder (by l3)
f1-1       f1        all          neighbour_not_capable  52    0           20        9           neighbour_not_capable
s9-1       -         none         no_adjacency           0     0           0         0           -
`},
		{name: "isis overload from config", print: func(w io.Writer) error { return printISISOverload(w, wire.ISISOverload{}) }, want: `isis overload off (from the config)
`},
		{name: "isis overload at run time", print: func(w io.Writer) error {
			return printISISOverload(w, wire.ISISOverload{Overload: true, RunTime: true})
		}, want: `isis overload on (set at run time; config says off)
`},
		{name: "isis cleared one", print: func(w io.Writer) error { return printISISCleared(w, wire.Cleared{Cleared: 1}, "s4-1") }, want: `isis: 1 adjacencies cleared on s4-1
`},
		{name: "isis cleared all", print: func(w io.Writer) error { return printISISCleared(w, wire.Cleared{Cleared: 6}, "") }, want: `isis: 6 adjacencies cleared on every interface
`},
	})
}
