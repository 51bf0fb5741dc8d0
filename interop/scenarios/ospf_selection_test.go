package scenarios

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ospfSelection: f1 (fared) and w1 (FRR, the witness) sit in the same
// place toward two FRR ASBRs: a1 at cost 50, a2 at cost 10; a1–a2 costs
// 100. Both must pick the same exit for every external prefix.
const ospfSelection = `name: osel
protocol: ospf
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared}
  w1: {kind: frr}
  a1: {kind: frr}
  a2: {kind: frr}
links:
  - {a: a1, b: f1, metric: 50}
  - {a: a2, b: f1, metric: 10}
  - {a: a1, b: w1, metric: 50}
  - {a: a2, b: w1, metric: 10}
  - {a: a1, b: a2, metric: 100}
`

// redist is how an ASBR redistributes one prefix: metric type and metric;
// via is the kernel route's gateway ("" for a blackhole).
type redist struct {
	prefix string
	typ    int
	metric int
	via    string
}

// TestOSPFExternalSelectionWithFRR: RFC 2328 §16.4 against FRR 8.4.4's
// ospfd. The ASBRs redistribute kernel routes through a route-map that
// sets the metric type and metric per prefix. Distances from f1 (and w1):
// a1 50, a2 10.
//
//	198.51.100.0/24  a1 E1 100 (50+100 = 150), a2 E2 1        → a1: type 1 beats type 2
//	198.51.101.0/24  a1 E2 20 (X 50), a2 E2 50 (X 10)         → a1: type-2 metric first
//	198.51.102.0/24  a1 E2 20 (X 50), a2 E2 20 (X 10)         → a2: equal, distance decides
//	198.51.103.0/24  a1 E2 5 via a2's address on a1–a2       → a2: ospfd sets the forwarding
//	                 address (a nexthop on an OSPF interface); the a1–a2 /31 is reached
//	                 at min(50+100 via a1, 10+100 via a2) = 110 via a2
//
// The old selection (distance + metric for both types, and toward the
// ASBR whatever the forwarding address) picked a2, a2, a2, a1.
func TestOSPFExternalSelectionWithFRR(t *testing.T) {
	l := startLab(t, ospfSelection)
	f := &fabric{t: t, ctx: ctxT(t), l: l, proto: unix.RTPROT_OSPF}
	ctx := f.ctx
	poll(t, ctx, 40*time.Second, "Full", ospfAdjacencies(ctx, l, map[string]int{"f1": 2, "w1": 2, "a1": 3, "a2": 3}))

	fa := l.Links[4].AddrB.Addr().String() // a2 on a1–a2
	asbrs := map[string][]redist{
		"a1": {
			{"198.51.100.0/24", 1, 100, ""},
			{"198.51.101.0/24", 2, 20, ""},
			{"198.51.102.0/24", 2, 20, ""},
			{"198.51.103.0/24", 2, 5, fa},
		},
		"a2": {
			{"198.51.100.0/24", 2, 1, ""},
			{"198.51.101.0/24", 2, 50, ""},
			{"198.51.102.0/24", 2, 20, ""},
		},
	}
	for node, rs := range asbrs {
		cmds := []string{"configure terminal"}
		for i, r := range rs {
			route := []string{"ip", "route", "add", "blackhole", r.prefix}
			if r.via != "" {
				route = []string{"ip", "route", "add", r.prefix, "via", r.via}
			}
			if out, err := l.Exec(ctx, node, route...); err != nil {
				t.Fatalf("%s: %v: %s", node, err, out)
			}
			pl := fmt.Sprintf("SEL%d", i)
			cmds = append(cmds, fmt.Sprintf("ip prefix-list %s seq 5 permit %s", pl, r.prefix),
				fmt.Sprintf("route-map SEL permit %d", 10*(i+1)),
				"match ip address prefix-list "+pl,
				fmt.Sprintf("set metric-type type-%d", r.typ),
				fmt.Sprintf("set metric %d", r.metric),
				"exit")
		}
		cmds = append(cmds, "router ospf", "redistribute kernel route-map SEL", "exit")
		if out, err := l.Vtysh(ctx, node, cmds...); err != nil {
			t.Fatalf("%s: %v: %s", node, err, out)
		}
	}

	// What FRR originated, as fared reads it.
	poll(t, ctx, 30*time.Second, "the externals in f1's graph", func() error {
		g, err := faredOSPFGraph(ctx, l, "f1", "0.0.0.0")
		if err != nil {
			return err
		}
		want := map[string]string{}
		for node, rs := range asbrs {
			for _, r := range rs {
				want[r.prefix+" "+rid(l, node)] = fmt.Sprintf("type2=%v metric=%d fwd=%q", r.typ == 2, r.metric, r.via)
			}
		}
		got := map[string]string{}
		for _, p := range g.Prefixes {
			if p.External {
				got[p.Prefix+" "+p.Advertiser] = fmt.Sprintf("type2=%v metric=%d fwd=%q", p.Type2, p.Metric, p.Forward)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("externals %v, want %v", got, want)
		}
		return nil
	})

	f1 := f.ns("f1")
	wLabels := f.labels("w1")
	for _, c := range []struct{ prefix, exit string }{
		{"198.51.100.0/24", "a1"},
		{"198.51.101.0/24", "a1"},
		{"198.51.102.0/24", "a2"},
		{"198.51.103.0/24", "a2"},
	} {
		poll(t, ctx, 30*time.Second, "w1 (FRR) routes "+c.prefix+" via "+c.exit, func() error {
			hops, err := frrRoute(ctx, l, "w1", c.prefix)
			if err != nil {
				return err
			}
			var got []string
			for _, h := range hops {
				a, _ := netip.ParseAddr(h)
				got = append(got, wLabels[a])
			}
			if !slices.Equal(got, []string{c.exit}) {
				return fmt.Errorf("FRR's next hops %v (%v)", got, hops)
			}
			return nil
		})
		poll(t, ctx, 30*time.Second, "f1 (fared) routes "+c.prefix+" via "+c.exit, func() error {
			ms, err := f.kernelRoute(f1, "f1", c.prefix)
			if err != nil {
				return err
			}
			if len(ms) != 1 || ms[0].label != c.exit {
				return fmt.Errorf("kernel next hops %+v", ms)
			}
			return nil
		})
	}
}
