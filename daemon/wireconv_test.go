package daemon

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
	"golang.org/x/sys/unix"
)

// jsonHas fails t unless v's JSON holds every key:value fragment.
func jsonHas(t *testing.T, v any, frags ...string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frags {
		if !strings.Contains(string(b), f) {
			t.Errorf("json %s lacks %s", b, f)
		}
	}
}

// TestWireSPFView: the core's log entry and back-off state come out under
// the wire's names; derived fields (kind, duration) are filled; a log not
// yet written stays null, as it was before the core had its own types.
func TestWireSPFView(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := &rib.Snapshot{Log: []spf.LogEntry{{At: at, Compute: time.Millisecond, Install: 2 * time.Millisecond, RoutesChanged: 3}}}
	snap.Anomalies[fare.PathZero] = 2
	snap.FIB.Conflicts = []fib.Conflict{{Prefix: netip.MustParsePrefix("10.0.0.0/24"), Protocol: unix.RTPROT_STATIC, RouteType: unix.RTN_BLACKHOLE}}
	v := wireSPFView(snap, map[string]spf.DelayView{"isis": {State: spf.ShortWait, SPFAt: at}})
	jsonHas(t, v, `"kind":"route-only"`, `"duration_ns":3000000`, `"install_ns":2000000`, `"routes_changed":3`,
		`"state":"SHORT_WAIT"`, `"spf_at":"2026-01-01T00:00:00Z"`, `"path_zero":2`, `"routes_conflicting":1`,
		`"protocol_name":"static"`, `"type":"blackhole"`)
	jsonHas(t, wireSPFView(&rib.Snapshot{}, nil), `"log":null`, `"delays":null`)
}

// TestWireRoute: bandwidths gain their _bps twins, an absent Path
// Bandwidth is omitted, and an empty next-hop list stays [].
func TestWireRoute(t *testing.T) {
	r := rib.Route{Prefix: netip.MustParsePrefix("10.1.0.0/16"), Mode: fare.ModeWeighted, PathBW: 1.25e9, HasPathBW: true,
		NextHops: []rib.NextHop{{Neighbor: "B", LinkBW: 1.25e9, KernelWeight: 7}}}
	jsonHas(t, wireRoute(&r), `"path_bandwidth":1250000000`, `"path_bandwidth_bps":10000000000`,
		`"link_bandwidth_bps":10000000000`, `"kernel_weight":7`)
	jsonHas(t, wireRoute(&rib.Route{NextHops: []rib.NextHop{}}), `"path_bandwidth_bps":null`, `"next_hops":[]`)
}

// TestWireNexthop: family and group type get iproute2's words; a
// resilient group's parameters are read through.
func TestWireNexthop(t *testing.T) {
	single := fib.KernelNexthop{ID: 1, Family: unix.AF_INET6, Gateway: netip.MustParseAddr("fe80::1"), IfIndex: 2}
	jsonHas(t, wireNexthop(&single), `"family":"inet6"`, `"gateway":"fe80::1"`)
	group := fib.KernelNexthop{ID: 2, Group: []fib.GroupMember{{ID: 1, Weight: 300}}, GroupType: fib.GroupResilient,
		Resilient: &fib.ResilientInfo{Resilient: fib.Resilient{Buckets: 64}, UnbalancedTime: time.Second}}
	jsonHas(t, wireNexthop(&group), `"group":[{"id":1,"weight":300}]`, `"group_type":"resilient"`,
		`"buckets":64`, `"unbalanced_time":1000000000`)
}

// TestWireTopology: parallel links both appear, with their bandwidths.
func TestWireTopology(t *testing.T) {
	b := lsdb.NewBuilder("isis", 2, "")
	for _, id := range []string{"A", "B"} {
		b.AddNode(lsdb.Node{ID: id})
	}
	b.AddLink("A", "B", lsdb.Link{Metric: 10, MaxBW: 100, HasBW: true})
	b.AddLink("A", "B", lsdb.Link{Metric: 10, MaxBW: 40, HasBW: true})
	b.AddLink("B", "A", lsdb.Link{Metric: 10})
	v := WireTopology(b.Build("A"))
	if v.Self != "A" || len(v.Nodes[0].Links) != 2 || *v.Nodes[0].Links[1].MaxBW != 40 || v.Prefixes == nil {
		t.Fatalf("view %+v", v)
	}
}
