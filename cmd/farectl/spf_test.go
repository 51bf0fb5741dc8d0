package main

import (
	"io"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

func TestSPFPrinters(t *testing.T) {
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	testPrinters(t, []printerCase{
		{name: "log", print: func(w io.Writer) error {
			return printSPFLog(w, wire.SPFView{
				Delays: map[string]wire.SPFDelay{"isis": {State: "quiet"}, "ospf": {State: "short-wait", SPFAt: now.Add(150 * time.Millisecond),
					LearnAt: now.Add(-time.Second), HolddownAt: now.Add(9 * time.Second)}},
				Log: []wire.SPFLogEntry{{At: now.Add(-2 * time.Second), Kind: "full", Duration: 1500 * time.Microsecond, Nodes: 12, RoutesChanged: 3, Trigger: "lsp 0000.0000.0006.00-00", Reason: "isis/L2 full: topology"},
					{At: now.Add(-time.Second), Kind: "route-only", Duration: 200 * time.Microsecond, Nodes: 12, Trigger: "prefix change", Reason: "isis/L2 route-only: prefixes or adjacencies"},
					{At: now, Kind: "route-only", Capacity: true, Duration: 300 * time.Microsecond, Nodes: 12, RoutesChanged: 2, Trigger: "lsp s1", Reason: "isis/L2 route-only: bandwidth change on s1→l1"}},
			}, now)
		}, want: `isis SPF back-off (RFC 8405): quiet
ospf SPF back-off (RFC 8405): short-wait, next SPF in 150ms, learn timer ends due, holddown ends in 9s

When          Kind                 Duration  Nodes  Routes changed  Trigger                   Why
02:59:58.000  full                 1.5ms     12     3               lsp 0000.0000.0006.00-00  isis/L2 full: topology
02:59:59.000  route-only           200µs     12     0               prefix change             isis/L2 route-only: prefixes or adjacencies
03:00:00.000  route-only, at once  300µs     12     2               lsp s1                    isis/L2 route-only: bandwidth change on s1→l1
`},
	})
}
