package main

import (
	"io"
	"testing"

	"github.com/fared/fared/api/wire"
)

func TestLSDBPrinters(t *testing.T) {
	bw, pb := 5e9, 2.5e9
	testPrinters(t, []printerCase{
		{name: "lsdb", print: func(w io.Writer) error {
			return printLSDB(w, []wire.Topology{
				{Protocol: "isis", Level: 1, Self: "0000.0000.0006", Nodes: []wire.TopoNode{
					{ID: "0000.0000.0006", Name: "l2", Links: []wire.TopoLink{{To: "0000.0000.0006.01", Metric: 10, MaxBW: &bw, LocalAddr: "10.253.0.6"}}},
					{ID: "0000.0000.0014", Name: "a1", Overload: true},
				}, Prefixes: []wire.TopoPrefix{{Prefix: "10.10.9.0/24", Advertiser: "0000.0000.0014", Name: "a1", Metric: 10, PathBW: &pb},
					{Prefix: "10.253.0.0/24", Advertiser: "0000.0000.0006", Name: "l2", Metric: 10}}},
				{Protocol: "ospf", Area: "0.0.0.0", Self: "10.255.0.15", Nodes: []wire.TopoNode{{ID: "10.255.0.15", Links: []wire.TopoLink{{To: "10.253.1.15", ToName: "DR", Metric: 10}}}}},
			})
		}, want: `isis level 1, self 0000.0000.0006: 2 nodes, 2 prefixes
Node            Name     Neighbor           Name  Metric  Max bandwidth  Local       Remote
0000.0000.0006  l2       0000.0000.0006.01        10      40G            10.253.0.6  
0000.0000.0014  a1 (OL)  -                                                           

Prefix         Advertiser      Name  Metric  Path bandwidth
10.10.9.0/24   0000.0000.0014  a1    10      20G
10.253.0.0/24  0000.0000.0006  l2    10      -

ospf area 0.0.0.0, self 10.255.0.15: 1 nodes, 0 prefixes
Node         Name  Neighbor     Name  Metric  Max bandwidth  Local  Remote
10.255.0.15        10.253.1.15  DR    10      -                     

Prefix  Advertiser  Name  Metric  Path bandwidth

`},
	})
}
