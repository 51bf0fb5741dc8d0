package main

import (
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

func TestFIBPrinters(t *testing.T) {
	gw := netip.MustParseAddr
	testPrinters(t, []printerCase{
		{name: "fib", print: func(w io.Writer) error {
			return printFIB(w, wire.FIBView{
				Routes: []wire.KernelRoute{{Prefix: netip.MustParsePrefix("10.10.2.0/24"), Metric: 20, NhID: 10}, {Prefix: netip.MustParsePrefix("10.255.0.1/32"), Metric: 20, NhID: 1},
					{Prefix: netip.MustParsePrefix("10.255.0.9/32"), Metric: 20, NhID: 99}},
				Nexthops: []wire.KernelNexthop{{ID: 1, Gateway: gw("10.254.0.1"), IfIndex: 3}, {ID: 2, Gateway: gw("10.254.0.3"), IfIndex: 4},
					{ID: 10, Group: []wire.GroupMember{{ID: 1, Weight: 4}, {ID: 2, Weight: 1}}}},
				Conflicts: []wire.FIBConflict{{Prefix: netip.MustParsePrefix("10.255.0.16/32"), Table: 254, Metric: 20, Protocol: 4, ProtocolName: "static", Type: "blackhole",
					Since: time.Date(2026, 11, 28, 3, 4, 5, 0, time.UTC)}},
			})
		}, want: `Prefix         Metric  NH id  Members (id:gateway@ifindex weight)
10.10.2.0/24   20      10     1:10.254.0.1@3 w4, 2:10.254.0.3@4 w1
10.255.0.1/32  20      1      1:10.254.0.1@3
10.255.0.9/32  20      99     ?

3 routes, 3 nexthop objects

Not installed: another protocol's route holds the same table, prefix and metric
Prefix          Table  Metric  Held by     Type       Since
10.255.0.16/32  254    20      static (4)  blackhole  2026-11-28 03:04:05
`},
		{name: "fib without conflicts", print: func(w io.Writer) error { return printFIB(w, wire.FIBView{}) }, want: `Prefix  Metric  NH id  Members (id:gateway@ifindex weight)

0 routes, 0 nexthop objects
`},
		{name: "capabilities", print: func(w io.Writer) error {
			return printFIBCapabilities(w, wire.FIBCapabilities{NexthopObjects: true, Weight16: true})
		}, want: `nexthop objects   true
16-bit weights    true
resilient groups  false
`},
	})
}
