package main

import (
	"io"
	"net/netip"
	"testing"

	"github.com/fared/fared/api/wire"
)

func TestRoutePrinters(t *testing.T) {
	pb := 2.5e9
	routes := []wire.Route{
		{Prefix: netip.MustParsePrefix("10.10.2.0/24"), Protocol: "isis", Level: 2, Metric: 20, Mode: "fare", NextHops: []wire.NextHop{
			{Neighbor: "0000.0000.0001", NeighborName: "s1", Gateway: netip.MustParseAddr("10.254.0.1"), Interface: "s1-1", Weight: 5e9, Share: 0.2, KernelWeight: 4},
			{Neighbor: "0000.0000.0004", Gateway: netip.MustParseAddr("10.254.0.7"), Interface: "s4-1", Weight: 1.25e9, Share: 0.05, KernelWeight: 1},
			{Neighbor: "0000.0000.0009", Unresolved: true, Weight: 0, Share: 0},
		}},
		{Prefix: netip.MustParsePrefix("10.20.3.0/24"), Protocol: "ospf", Area: "0.0.0.1", Metric: 10, Mode: "ecmp"},
	}
	testPrinters(t, []printerCase{
		{name: "routes", print: func(w io.Writer) error { return printRoutes(w, routes) }, want: `Prefix        From          Metric  Mode  Via           Interface  Neighbor        Weight (bw)  Share  Kernel weight
10.10.2.0/24  isis L2       20      fare  10.254.0.1    s1-1       s1              40G          20.0%  4
                                          10.254.0.7    s4-1       0000.0000.0004  10G          5.0%   1
                                          (unresolved)             0000.0000.0009  0            0.0%   0
10.20.3.0/24  ospf 0.0.0.1  10      ecmp  -                                                            
`},
		{name: "fare", print: func(w io.Writer) error {
			return printFare(w, wire.FareView{Route: wire.Route{Prefix: netip.MustParsePrefix("10.10.3.0/24"), Protocol: "isis", Level: 2, Metric: 20, Mode: "fare",
				Advertisers: []string{"0000.0000.0007"}, PathBW: &pb, QuantError: 0.0123, NextHops: []wire.NextHop{
					{Neighbor: "0000.0000.0001", NeighborName: "s1", Gateway: netip.MustParseAddr("10.254.0.1"), Interface: "s1-1", LinkBW: 1.25e10, NeighborBW: 1.25e10,
						DownCap: 1.25e10, PathBW: 2.5e9, Weight: 2.5e9, Share: 0.5, KernelWeight: 1, KernelShare: 0.5}}},
				WeightMax: 65535})
		}, want: `10.10.3.0/24  isis L2  metric 20  mode fare  advertisers 0000.0000.0007  path bandwidth 20G
weight = min(link bandwidth to neighbour, downstream capacity, path bandwidth); kernel weights: scaled to at most 65535, then divided by their GCD

Neighbor  Via         Interface  Link bw  Neighbor bw  Downstream cap  Path bw  Weight  Share   Kernel weight  Kernel share
s1        10.254.0.1  s1-1       100G     100G         100G            20G      20G     50.00%  1              50.00%

quantisation error: 0.012 percentage points
`},
		{name: "fare unconstrained", print: func(w io.Writer) error {
			return printFare(w, wire.FareView{Route: wire.Route{Prefix: netip.MustParsePrefix("10.20.3.0/24"), Protocol: "ospf", Area: "0.0.0.1", Mode: "ecmp"}, WeightMax: 255})
		}, want: `10.20.3.0/24  ospf 0.0.0.1  metric 0  mode ecmp  advertisers   path bandwidth none (no constraint)
weight = min(link bandwidth to neighbour, downstream capacity, path bandwidth); kernel weights: scaled to at most 255, then divided by their GCD

Neighbor  Via  Interface  Link bw  Neighbor bw  Downstream cap  Path bw  Weight  Share  Kernel weight  Kernel share

quantisation error: 0.000 percentage points
`},
	})
}
