package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/ospf"
)

// ospfClos3 is fare_test.go's clos3 over OSPFv2, all in area 0: draft-xu-
// lsr-fare figure 1 with 4 spines (s3, s4 FRR ospfd) and 4 leaves (l4
// FRR), unequal bandwidths and one parallel pair l2–s2. FRR spines
// advertise their Maximum Bandwidth in TE LSAs; fared leaves advertise
// theirs and the Path Bandwidth of their prefixes in Extended Prefix LSAs.
var ospfClos3 = strings.Replace(clos3, "name: clos\n", "name: oclos\nprotocol: ospf\n", 1)

// TestOSPFFARE3Stage: draft §4.1 over OSPFv2 with FRR spines: a fared
// leaf's kernel weights, read back over netlink, equal min(up, down, PB)
// per spine, with bandwidths learnt from fared's and FRR's TE LSAs and
// Path Bandwidth from fared's Extended Prefix LSAs.
func TestOSPFFARE3Stage(t *testing.T) {
	start := time.Now()
	l := startLab(t, ospfClos3)
	f := &fabric{t: t, ctx: ctxT(t), l: l, proto: unix.RTPROT_OSPF}
	l1 := f.ns("l1")
	l2 := f.ns("l2")

	// At l1 toward l2's 10.10.2.0/24 (no Path Bandwidth), w = min(up,
	// down) per spine, l2–s2 = 25G+25G summed per neighbour:
	//   s1 min(100,40)=40  s2 min(100,50)=50  s3 min(100,100)=100  s4 min(10,100)=10
	// (s3 and s4 are FRR: their downlinks' 100G come from FRR's TE LSAs.)
	l2Want := map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 10}
	f.waitRoute(l1, "l1", "10.10.2.0/24", l2Want, 60*time.Second)
	t.Logf("FIGURE ospf clos: weighted group for 10.10.2.0/24 in l1's kernel %v after lab start", time.Since(start).Round(time.Millisecond))

	t.Run("path bandwidth caps the weights", func(t *testing.T) {
		// l3 advertises 10.10.3.0/24 with Path Bandwidth 20G:
		//   s1 min(100,100,20)=20  s2 min(100,100,20)=20  s3 min(100,40,20)=20  s4 min(10,100,20)=10
		f.waitRoute(l1, "l1", "10.10.3.0/24", map[string]float64{"s1": 20, "s2": 20, "s3": 20, "s4": 10}, 20*time.Second)
		// l3's loopback has no Path Bandwidth: the s3 downlink (40G) shows.
		//   s1 min(100,100)=100  s2 100  s3 min(100,40)=40  s4 min(10,100)=10
		f.waitRoute(l1, "l1", l.Node("l3").Loopback.String()+"/32", map[string]float64{"s1": 100, "s2": 100, "s3": 40, "s4": 10}, 20*time.Second)
	})
	t.Run("parallel links summed per neighbour, split per link", func(t *testing.T) {
		// At l2 toward l1: s1 min(40,100)=40, s2 min(25+25,100)=50 split
		// 25/25 over the two links, s3 min(100,100)=100, s4 min(100,10)=10.
		f.waitRoute(l2, "l2", "10.10.1.0/24", map[string]float64{"s1": 40, "s2": 25, "s2#2": 25, "s3": 100, "s4": 10}, 20*time.Second)
	})
	t.Run("paths through FRR spines to an FRR leaf", func(t *testing.T) {
		// l4 (FRR) sends no Path Bandwidth; every downlink to l4 is 100G:
		//   s1 min(100,100)  s2 min(100,100)  s3 min(100,100)  s4 min(10,100)
		f.waitRoute(l1, "l1", l.Node("l4").Loopback.String()+"/32", map[string]float64{"s1": 100, "s2": 100, "s3": 100, "s4": 10}, 20*time.Second)
	})
	t.Run("FRR leaf gets four equal-cost routes", func(t *testing.T) {
		poll(t, f.ctx, 20*time.Second, "l4: 4 next hops to 10.10.1.0/24", func() error {
			hops, err := frrRoute(f.ctx, l, "l4", "10.10.1.0/24")
			if err != nil {
				return err
			}
			if len(hops) != 4 {
				return fmt.Errorf("next hops %v", hops)
			}
			return nil
		})
	})
	t.Run("bandwidth change by the API", func(t *testing.T) {
		// l1–s4 10G → 20G at l1 (farectl ospf bandwidth): l1's own TE
		// link changes, so l1's weights toward l2 become 40/50/100/20.
		t0 := time.Now()
		ospfSetBW(t, f, "l1", "s4", "20G")
		f.waitRoute(l1, "l1", "10.10.2.0/24", map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 20}, 20*time.Second)
		t.Logf("FIGURE ospf clos: local bandwidth change to new weights in the kernel %v", time.Since(t0).Round(time.Millisecond))
		// s1–l2 40G → 10G at s1 (a fared spine): the downstream
		// bandwidth is the one s1 advertises for its link to l2 (l2's own
		// TE LSA is the other direction), so l1 learns it from s1's TE
		// LSA: s1 min(100,10)=10.
		t0 = time.Now()
		ospfSetBW(t, f, "s1", "l2", "10G")
		f.waitRoute(l1, "l1", "10.10.2.0/24", map[string]float64{"s1": 10, "s2": 50, "s3": 100, "s4": 20}, 20*time.Second)
		t.Logf("FIGURE ospf clos: remote bandwidth change to new weights in l1's kernel %v", time.Since(t0).Round(time.Millisecond))
	})
}

// ospfSetBW overrides the bandwidth of node's interface toward peer
// through the API (farectl ospf bandwidth).
func ospfSetBW(t *testing.T, f *fabric, node, peer, bw string) {
	t.Helper()
	if out, err := f.l.Farectl(f.ctx, node, "ospf", "bandwidth", ifaceToward(f.l, node, peer), bw); err != nil {
		t.Fatalf("%s: %v: %s", node, err, out)
	}
}

// ospfClos5 is clos5_test.go's fabric over OSPFv2: 3 pods as non-backbone
// areas 0.0.0.1..3 (leaves in the pod area, fared spines as ABRs with
// their super-spine links in area 0), and 2 planes of super-spines in
// area 0 (x2 and y2 FRR); spine k of every pod connects to plane k, so the
// backbone has two partitions, one per plane, as in draft figure 2. Pod
// B's leaf is FRR.
const ospfClos5 = `name: oclos5
protocol: ospf
defaults: {hello-interval: 1s}
nodes:
  a-s1: {kind: fared, area: 1}
  a-s2: {kind: fared, area: 1}
  a-l1: {kind: fared, area: 1, prefixes: [10.1.1.0/24]}
  b-s1: {kind: fared, area: 2}
  b-s2: {kind: fared, area: 2}
  b-l1: {kind: frr, area: 2}
  c-s1: {kind: fared, area: 3}
  c-s2: {kind: fared, area: 3}
  c-l1: {kind: fared, area: 3}
  x1: {kind: fared, area: 0}
  x2: {kind: frr, area: 0}
  y1: {kind: fared, area: 0}
  y2: {kind: frr, area: 0}
links:
  - {a: a-l1, b: a-s1, bandwidth: 100G}
  - {a: a-l1, b: a-s2, bandwidth: 40G}
  - {a: b-l1, b: b-s1, bandwidth: 100G}
  - {a: b-l1, b: b-s2, bandwidth: 100G}
  - {a: c-l1, b: c-s1, bandwidth: 100G}
  - {a: c-l1, b: c-s2, bandwidth: 100G}
  - {a: a-s1, b: x1, bandwidth: 100G, area: 0}
  - {a: a-s1, b: x2, bandwidth: 100G, area: 0}
  - {a: b-s1, b: x1, bandwidth: 100G, area: 0}
  - {a: b-s1, b: x2, bandwidth: 100G, area: 0}
  - {a: c-s1, b: x1, bandwidth: 40G, area: 0}
  - {a: c-s1, b: x2, bandwidth: 100G, area: 0}
  - {a: a-s2, b: y1, bandwidth: 100G, area: 0}
  - {a: a-s2, b: y2, bandwidth: 100G, area: 0}
  - {a: b-s2, b: y1, bandwidth: 100G, area: 0}
  - {a: b-s2, b: y2, bandwidth: 100G, area: 0}
  - {a: c-s2, b: y1, bandwidth: 100G, area: 0}
  - {a: c-s2, b: y2, bandwidth: 100G, area: 0}
`

// TestOSPFFARE5Stage: Path Bandwidth re-advertisement by OSPF ABRs in both
// directions (pod area → area 0 and area 0 → the other pods, in the
// inter-area Extended Prefix LSAs next to their Summary LSAs), and a
// far-pod leaf weighting its spines by it (draft §4.2), following
// bandwidth changes.
func TestOSPFFARE5Stage(t *testing.T) {
	start := time.Now()
	l := startLab(t, ospfClos5)
	f := &fabric{t: t, ctx: ctxT(t), l: l, proto: unix.RTPROT_OSPF}
	cl1 := f.ns("c-l1")
	const pA = "10.1.1.0/24" // a-l1's prefix, no Path Bandwidth (sent as "max")

	// By hand, PB' = min(PB, Σ_N min(bw(R,N), cap(N→D))) at ABR R:
	//  pod A → area 0 at a-s1 (D = a-l1): min(max, 100G link) = 100G
	//                 at a-s2:            min(max,  40G link) =  40G
	//  area 0 → pod C at c-s1 (plane 1, D = a-s1 over x1 and x2):
	//        min(100G, min(40,100) + min(100,100) = 140G) = 100G
	//                 at c-s2 (plane 2, D = a-s2 over y1 and y2, y2 FRR):
	//        min(40G, min(100,100) + min(100,100) = 200G) = 40G
	//  c-l1 in pod C: min(uplink, re-advertised PB) per spine:
	//        c-s1 min(100,100) = 100, c-s2 min(100,40) = 40.
	f.waitRoute(cl1, "c-l1", pA, map[string]float64{"c-s1": 100, "c-s2": 40}, 60*time.Second)
	t.Logf("FIGURE ospf clos5: far-pod weights in c-l1's kernel %v after lab start", time.Since(start).Round(time.Millisecond))
	checkSummary(t, f, "a-s1", pA, "0.0.0.0", 100, 100)
	checkSummary(t, f, "a-s2", pA, "0.0.0.0", 40, 40)
	checkSummary(t, f, "c-s1", pA, "0.0.0.3", 100, 140)
	checkSummary(t, f, "c-s2", pA, "0.0.0.3", 40, 200)

	t.Run("what the ABRs flood is what the others read", func(t *testing.T) {
		// c-s2's inter-area Extended Prefix LSA for pA (route type 3,
		// A flag) carries 40G, as pod C's leaf decodes it; FRR's y2 in
		// area 0 holds a-s2's Summary LSA for pA.
		poll(t, f.ctx, 20*time.Second, "c-l1's graph: pA from c-s1 at 100G, from c-s2 at 40G", func() error {
			g, err := faredOSPFGraph(f.ctx, l, "c-l1", "0.0.0.3")
			if err != nil {
				return err
			}
			got := map[string]float64{}
			for _, p := range g.Prefixes {
				if p.Prefix == pA && p.PathBW != nil {
					got[p.Advertiser] = gbps(*p.PathBW)
				}
			}
			want := map[string]float64{rid(l, "c-s1"): 100, rid(l, "c-s2"): 40}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("path bandwidths by advertiser %v, want %v", got, want)
			}
			return nil
		})
		poll(t, f.ctx, 20*time.Second, "y2 (FRR) holds a-s2's Summary LSA for pA", func() error {
			db, err := frrOSPFDB(f.ctx, l, "y2")
			if err != nil {
				return err
			}
			if _, ok := db["0.0.0.0/3/10.1.1.0/"+rid(l, "a-s2")]; !ok {
				return fmt.Errorf("no Summary LSA 10.1.1.0 from a-s2 in y2's database")
			}
			return nil
		})
		// The LSA itself, decoded by farectl ospf database --detail.
		for node, want := range map[string]struct {
			area string
			gbps float64
		}{"a-s2": {"0", 40}, "c-s2": {"3", 40}, "c-s1": {"3", 100}} {
			var v []ospf.LSAView
			if err := l.FarectlJSON(f.ctx, node, &v, "ospf", "database", "opaque-area", "--area", want.area, "--detail"); err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, e := range v {
				if !e.Own {
					continue
				}
				if x, ok := findExtPrefix(e.Detail["body"], pA); ok {
					found = append(found, fmt.Sprintf("route type %v, path bandwidth %vG", x["route_type"], gbps(pathBWOf(x))))
				}
			}
			if w := fmt.Sprintf("route type 3, path bandwidth %vG", want.gbps); len(found) != 1 || found[0] != w {
				t.Errorf("%s: Extended Prefix LSAs for %s into area %s: %v, want [%s]", node, pA, want.area, found, w)
			}
		}
	})
	// bwChange sets node's bandwidth toward peer to bw and logs how long
	// until c-l1's kernel weighs pA's next hops as want.
	bwChange := func(t *testing.T, node, peer, bw string, want map[string]float64, figure string) {
		t0 := time.Now()
		ospfSetBW(t, f, node, peer, bw)
		f.waitRoute(cl1, "c-l1", pA, want, 20*time.Second)
		t.Logf("FIGURE ospf clos5: %s in c-l1's kernel %v", figure, time.Since(t0).Round(time.Millisecond))
	}
	t.Run("re-advertisement follows a leaf–spine change in the origin pod", func(t *testing.T) {
		// a-s2–a-l1 40G → 10G at a-s2: a-s2 summarises min(max, 10) =
		// 10G into area 0; c-s2 re-advertises min(10, 200) = 10G into pod
		// C; c-l1: c-s1 100, c-s2 min(100,10) = 10.
		bwChange(t, "a-s2", "a-l1", "10G", map[string]float64{"c-s1": 100, "c-s2": 10}, "origin-pod bandwidth change (a-s2) to far-pod weights")
		checkSummary(t, f, "a-s2", pA, "0.0.0.0", 10, 10)
		checkSummary(t, f, "c-s2", pA, "0.0.0.3", 10, 200)
	})
	t.Run("re-advertisement follows a spine–super-spine change in the far pod", func(t *testing.T) {
		// c-s1–x2 100G → 20G at c-s1: cap(c-s1→a-s1) = min(40,100) +
		// min(20,100) = 60G, so c-s1 re-advertises min(100, 60) = 60G;
		// c-l1: c-s1 min(100,60) = 60, c-s2 10.
		bwChange(t, "c-s1", "x2", "20G", map[string]float64{"c-s1": 60, "c-s2": 10}, "far-pod ABR bandwidth change (c-s1) to weights")
		checkSummary(t, f, "c-s1", pA, "0.0.0.3", 60, 60)
	})
}

// checkSummary waits until ABR node originates into area `area` a Summary LSA
// for prefix whose Path Bandwidth is pb and whose capacity toward the
// advertiser is capacity (Gbit/s).
func checkSummary(t *testing.T, f *fabric, node, prefix, area string, pb, capacity float64) {
	t.Helper()
	poll(t, f.ctx, 20*time.Second, fmt.Sprintf("%s summarises %s into %s at %vG", node, prefix, area, pb), func() error {
		var v []ospf.SummaryView
		if err := f.l.FarectlJSON(f.ctx, node, &v, "ospf", "summaries"); err != nil {
			return err
		}
		for _, s := range v {
			if s.Prefix != prefix || s.Area != area {
				continue
			}
			gotPB, gotCap := float64(s.PathBW)*8/1e9, float64(s.Capacity)*8/1e9
			if math.Abs(gotPB-pb) > pb*1e-4 || math.Abs(gotCap-capacity) > capacity*1e-4 {
				return fmt.Errorf("path bandwidth %vG, capacity %vG (%+v)", gotPB, gotCap, s)
			}
			return nil
		}
		return fmt.Errorf("not summarised")
	})
}

// findExtPrefix finds, in a decoded LSA body (ospf/packet.Describe), the
// Extended Prefix TLV of prefix.
func findExtPrefix(v any, prefix string) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if x["prefix"] == prefix {
			return x, true
		}
		for _, c := range x {
			if m, ok := findExtPrefix(c, prefix); ok {
				return m, true
			}
		}
	case []any:
		for _, c := range x {
			if m, ok := findExtPrefix(c, prefix); ok {
				return m, true
			}
		}
	}
	return nil, false
}

// pathBWOf returns the Path Bandwidth sub-TLV of a decoded Extended Prefix
// TLV in bytes/s (-1 if absent).
func pathBWOf(tlv map[string]any) float64 {
	subs, _ := tlv["sub_tlvs"].([]any)
	for _, s := range subs {
		if m, ok := s.(map[string]any); ok && m["name"] == "path_bandwidth" {
			if f, ok := m["bytes_per_sec"].(float64); ok {
				return f
			}
		}
	}
	return -1
}

// gbps turns bytes/s into Gbit/s rounded to 4 significant digits (the
// wire carries float32: 100G is 12499999744 bytes/s).
func gbps(bytesPerSec float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(bytesPerSec*8/1e9, 'g', 4, 64), 64)
	return v
}
