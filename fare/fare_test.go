package fare

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/lsdb/lsdbtest"
	"github.com/fared/fared/spf"
)

// Bandwidths in these tests are plain numbers ("100" = 100 units of bytes/s);
// the math does not care about the unit.

// withPB is the Path Bandwidth modifier when pb has one value (none: the
// prefix carries none).
func withPB(pb []float32) []func(*lsdb.Prefix) {
	if len(pb) == 0 {
		return nil
	}
	return []func(*lsdb.Prefix){lsdbtest.PathBW(pb[0])}
}

// lastGraph lets the helpers resolve neighbour ids.
var lastGraph *lsdb.Graph

func compute(g *lsdb.Graph, opt Options) Table {
	lastGraph = g
	r := spf.Run(g)
	return ComputeTable(r, spf.Routes(r), opt)
}

func nid(h NextHop) string { return lastGraph.Nodes[h.Neighbor].ID }

func route(t *testing.T, tb Table, p string) Route {
	t.Helper()
	for _, rt := range tb.Routes {
		if rt.Prefix.String() == p {
			return rt
		}
	}
	t.Fatalf("no route %s in %+v", p, tb.Routes)
	return Route{}
}

// weights maps neighbour id → summed weight (over its links).
func weights(rt Route) map[string]float64 {
	m := map[string]float64{}
	for _, h := range rt.NextHops {
		m[nid(h)] += h.Weight
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func wantWeights(t *testing.T, rt Route, want map[string]float64) {
	t.Helper()
	got := weights(rt)
	if len(got) != len(want) {
		t.Fatalf("%s: weights %v, want %v", rt.Prefix, got, want)
	}
	for k, v := range want {
		if !near(got[k], v) {
			t.Fatalf("%s: weights %v, want %v", rt.Prefix, got, want)
		}
	}
	sum := 0.0
	for _, h := range rt.NextHops {
		sum += h.Share
	}
	if len(rt.NextHops) > 0 && !near(sum, 1) {
		t.Fatalf("%s: shares sum to %v", rt.Prefix, sum)
	}
}

// figure1 is draft-xu-lsr-fare figure 1: spines S1..S4, leaves L1..L8, every
// leaf linked to every spine. L1 and L2 have unequal up/down bandwidths:
//
//	L1–S1 100  S1–L2  40
//	L1–S2 100  S2–L2 100
//	L1–S3  40  S3–L2 100
//	L1–S4 200  S4–L2 400
//
// all other leaf–spine links 100. Every leaf advertises 10.0.<n>.0/24.
func figure1(pb ...float32) *lsdbtest.Topo {
	tp := lsdbtest.New("S1", "S2", "S3", "S4", "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8")
	up := []float32{100, 100, 40, 200}
	dn := []float32{40, 100, 100, 400}
	spines := []string{"S1", "S2", "S3", "S4"}
	for i, s := range spines {
		tp.Cable("L1", s, 10, up[i]).Cable(s, "L2", 10, dn[i])
		for _, l := range []string{"L3", "L4", "L5", "L6", "L7", "L8"} {
			tp.Cable(l, s, 10, 100)
		}
	}
	tp.Prefix("L2", "10.0.2.0/24", 0, withPB(pb)...)
	tp.Prefix("L3", "10.0.3.0/24", 0)
	return tp
}

func TestFigure1ThreeStage(t *testing.T) {
	tb := compute(figure1().Build("L1"), Options{})
	rt := route(t, tb, "10.0.2.0/24")
	// w(Si) = min(up, down), no Path Bandwidth:
	//   S1 min(100,40)=40, S2 min(100,100)=100, S3 min(40,100)=40, S4 min(200,400)=200
	//   total 380: shares 40/380=0.10526, 100/380=0.26316, 40/380, 200/380=0.52632
	wantWeights(t, rt, map[string]float64{"S1": 40, "S2": 100, "S3": 40, "S4": 200})
	if rt.Mode != ModeWeighted || rt.HasPathBW || rt.PathBW != Unconstrained {
		t.Errorf("route %+v", rt)
	}
	for _, h := range rt.NextHops {
		switch nid(h) {
		case "S1":
			if h.NeighborBW != 100 || h.LinkBW != 100 || h.DownCap != 40 || !near(h.Share, 40.0/380) {
				t.Errorf("S1 hop %+v", h)
			}
		case "S4":
			if h.DownCap != 400 || !near(h.Share, 200.0/380) {
				t.Errorf("S4 hop %+v", h)
			}
		}
	}
	// L3 is behind 100 links everywhere: min(up, 100) = 100, 100, 40, min(200,100)=100.
	wantWeights(t, route(t, tb, "10.0.3.0/24"), map[string]float64{"S1": 100, "S2": 100, "S3": 40, "S4": 100})

	// 8-bit kernel weights of 40/100/40/200 (order S1..S4): scale 255/200 =
	// 1.275 → 51, 127.5→128, 51, 255; GCD 1. Shares 51/485=10.515% vs
	// 10.526%, 128/485=26.392% vs 26.316% (worst, 0.076 pp), 255/485=52.577% vs 52.632%.
	q, err := Quantize(rt.Weights(), Max8)
	if !reflect.DeepEqual(q, []uint32{51, 128, 51, 255}) || err < 0.07 || err > 0.08 {
		t.Errorf("quantised %v err %.4f", q, err)
	}

	// Path Bandwidth 80 caps every weight: 40, 80, 40, 80.
	tb = compute(figure1(80).Build("L1"), Options{})
	rt = route(t, tb, "10.0.2.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 40, "S2": 80, "S3": 40, "S4": 80})
	if !rt.HasPathBW || rt.PathBW != 80 || rt.NextHops[0].PathBW != 80 {
		t.Errorf("path bandwidth %+v", rt)
	}

	// ECMP-only: every next hop weight 1.
	tb = compute(figure1().Build("L1"), Options{ECMPOnly: true})
	rt = route(t, tb, "10.0.2.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 1, "S2": 1, "S3": 1, "S4": 1})
	if rt.Mode != ModeECMP {
		t.Errorf("mode %s", rt.Mode)
	}
}

func TestAnycast(t *testing.T) {
	// 10.9.0.0/24 from L2 and L3 at equal cost (20): per first hop,
	// w(N) = min(bw(L1,N), cap(N→L2) + cap(N→L3)):
	//   S1 min(100, 40+100)=100, S2 min(100, 100+100)=100,
	//   S3 min(40, 100+100)=40, S4 min(200, 400+100)=200.
	g := figure1().Prefix("L2", "10.9.0.0/24", 0).Prefix("L3", "10.9.0.0/24", 0).Build("L1")
	rt := route(t, compute(g, Options{}), "10.9.0.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 100, "S2": 100, "S3": 40, "S4": 200})
	if !reflect.DeepEqual(rt.AdvertiserIDs, []string{"L2", "L3"}) {
		t.Errorf("advertisers %v", rt.AdvertiserIDs)
	}
	for _, h := range rt.NextHops {
		if nid(h) == "S4" && h.DownCap != 500 {
			t.Errorf("S4 downstream %v, want 400+100", h.DownCap)
		}
	}
	// Unequal cost: L3's metric 5 loses (25 > 20): L2 alone, 40/100/40/200.
	g = figure1().Prefix("L2", "10.9.0.0/24", 0).Prefix("L3", "10.9.0.0/24", 5).Build("L1")
	rt = route(t, compute(g, Options{}), "10.9.0.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 40, "S2": 100, "S3": 40, "S4": 200})
	if !reflect.DeepEqual(rt.AdvertiserIDs, []string{"L2"}) || rt.Metric != 20 {
		t.Errorf("advertisers %v metric %d", rt.AdvertiserIDs, rt.Metric)
	}
}

// diamond: A=self, B and C first hops, D destination (prefix 10.0.0.0/24).
//
//	A–B two parallel links 30 and 50 (metric 10) plus one 1000 at metric 20
//	A–C 60; B–D two parallel links 40 and 40; C–D 100.
func diamond(cd float32, pb ...float32) *lsdbtest.Topo {
	return lsdbtest.New("A", "B", "C", "D").
		Cable("A", "B", 10, 30).Cable("A", "B", 10, 50).Cable("A", "B", 20, 1000).
		Cable("A", "C", 10, 60).
		Cable("B", "D", 10, 40).Cable("B", "D", 10, 40).
		Cable("C", "D", 10, cd).
		Prefix("D", "10.0.0.0/24", 0, withPB(pb)...)
}

func TestParallelLinks(t *testing.T) {
	// bw(A,B) = 30+50 = 80 (the metric-20 link is not on a shortest path),
	// cap(B→D) = 40+40 = 80 → w(B) = 80; w(C) = min(60, 100) = 60.
	// B's 80 is split over its links by bandwidth: 30 and 50.
	rt := route(t, compute(diamond(100).Build("A"), Options{}), "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 80, "C": 60})
	if len(rt.NextHops) != 3 {
		t.Fatalf("next hops %+v", rt.NextHops)
	}
	per := map[float64]float64{}
	for _, h := range rt.NextHops {
		per[h.LinkBW] = h.Weight
		if nid(h) == "B" && (h.NeighborBW != 80 || h.DownCap != 80) {
			t.Errorf("B hop %+v", h)
		}
	}
	if per[30] != 30 || per[50] != 50 || per[60] != 60 {
		t.Errorf("per-link weights %v", per)
	}
	// Path Bandwidth 50: w(B) = min(80, 80, 50) = 50, w(C) = min(60, 100, 50) = 50;
	// B's 50 split 30:50 → 18.75 and 31.25.
	rt = route(t, compute(diamond(100, 50).Build("A"), Options{}), "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 50, "C": 50})
	for _, h := range rt.NextHops {
		if h.LinkBW == 30 && !near(h.Weight, 18.75) {
			t.Errorf("split %+v", h)
		}
	}
}

func TestZeroAndBadBandwidths(t *testing.T) {
	nan := float32(math.NaN())
	pinf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	tests := []struct {
		name   string
		cd     float32   // C–D bandwidth (both directions; only C→D is on the DAG)
		pb     []float32 // D's Path Bandwidth
		mode   string
		want   map[string]float64
		unused int
		an     Anomalies
	}{
		// C–D 0: cap(C→D)=0 → C dropped; B keeps 80.
		{"zero link", 0, nil, ModeWeighted, map[string]float64{"B": 80}, 1, Anomalies{LinkZero: 1}},
		{"nan link", nan, nil, ModeWeighted, map[string]float64{"B": 80}, 1, Anomalies{LinkNaN: 1}},
		{"negative link", -5, nil, ModeWeighted, map[string]float64{"B": 80}, 1, Anomalies{LinkNegative: 1}},
		{"-inf link", ninf, nil, ModeWeighted, map[string]float64{"B": 80}, 1, Anomalies{LinkNegative: 1}},
		// +Inf → max float32: w(C) = min(60, 3.4e38) = 60.
		{"+inf link", pinf, nil, ModeWeighted, map[string]float64{"B": 80, "C": 60}, 0, Anomalies{LinkInf: 1}},
		// Path Bandwidth: +Inf → max float32 = no cap.
		{"+inf path", 100, []float32{pinf}, ModeWeighted, map[string]float64{"B": 80, "C": 60}, 0, Anomalies{PathInf: 1}},
		// NaN / negative / 0 Path Bandwidth → every weight 0 → equal weights
		// over all three of A's links (two to B, one to C).
		{"nan path", 100, []float32{nan}, ModeZeroCapacity, map[string]float64{"B": 2, "C": 1}, 0, Anomalies{PathNaN: 1, RoutesZeroCapacity: 1}},
		{"negative path", 100, []float32{-1}, ModeZeroCapacity, map[string]float64{"B": 2, "C": 1}, 0, Anomalies{PathNegative: 1, RoutesZeroCapacity: 1}},
		{"zero path", 100, []float32{0}, ModeZeroCapacity, map[string]float64{"B": 2, "C": 1}, 0, Anomalies{PathZero: 1, RoutesZeroCapacity: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := compute(diamond(tc.cd, tc.pb...).Build("A"), Options{})
			rt := route(t, tb, "10.0.0.0/24")
			if rt.Mode != tc.mode || len(rt.Unused) != tc.unused {
				t.Fatalf("mode %s unused %d: %+v", rt.Mode, len(rt.Unused), rt)
			}
			wantWeights(t, rt, tc.want)
			if tb.Anomalies != tc.an {
				t.Errorf("anomalies %+v, want %+v", tb.Anomalies, tc.an)
			}
			if _, err := json.Marshal(tb); err != nil {
				t.Errorf("json: %v", err)
			}
		})
	}
	// Every first hop unusable through zero links: B–D 0 and C–D 0.
	g := lsdbtest.New("A", "B", "C", "D").Cable("A", "B", 10, 10).Cable("A", "C", 10, 10).
		Cable("B", "D", 10, 0).Cable("C", "D", 10, 0).Prefix("D", "10.0.0.0/24", 0).Build("A")
	tb := compute(g, Options{})
	rt := route(t, tb, "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 1, "C": 1})
	if rt.Mode != ModeZeroCapacity || tb.Anomalies[LinkZero] != 2 {
		t.Errorf("mode %s anomalies %+v", rt.Mode, tb.Anomalies)
	}
}

func TestMissingBandwidth(t *testing.T) {
	// C→D without the sub-TLV: route falls back to equal weights over the
	// usable next hops (A's two links to B and the one to C).
	tp := lsdbtest.New("A", "B", "C", "D").
		Cable("A", "B", 10, 30).Cable("A", "B", 10, 50).Cable("A", "C", 10, 60).
		Cable("B", "D", 10, 40).
		Link("C", "D", lsdb.Link{Metric: 10}).Link("D", "C", lsdb.Link{Metric: 10}).
		Prefix("D", "10.0.0.0/24", 0)
	tb := compute(tp.Build("A"), Options{})
	rt := route(t, tb, "10.0.0.0/24")
	if rt.Mode != ModeMissingBW || tb.Anomalies[LinkMissing] != 1 || tb.Anomalies[RoutesMissingBW] != 1 {
		t.Fatalf("mode %s anomalies %+v", rt.Mode, tb.Anomalies)
	}
	wantWeights(t, rt, map[string]float64{"B": 2, "C": 1})

	// A known zero link still excludes its first hop in the fallback.
	tp = lsdbtest.New("A", "B", "C", "D").
		Cable("A", "B", 10, 30).Cable("A", "C", 10, 0).
		Link("B", "D", lsdb.Link{Metric: 10}).Link("D", "B", lsdb.Link{Metric: 10}).
		Cable("C", "D", 10, 10).Prefix("D", "10.0.0.0/24", 0)
	rt = route(t, compute(tp.Build("A"), Options{}), "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 1})

	// No bandwidth anywhere: pure ECMP.
	tp = lsdbtest.New("A", "B", "C", "D")
	for _, c := range [][2]string{{"A", "B"}, {"A", "C"}, {"B", "D"}, {"C", "D"}} {
		tp.Link(c[0], c[1], lsdb.Link{Metric: 10}).Link(c[1], c[0], lsdb.Link{Metric: 10})
	}
	tp.Prefix("D", "10.0.0.0/24", 0, lsdbtest.PathBW(1e9))
	rt = route(t, compute(tp.Build("A"), Options{}), "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 1, "C": 1})
	if rt.Mode != ModeMissingBW {
		t.Errorf("mode %s", rt.Mode)
	}
}

func TestOverloadedSpine(t *testing.T) {
	// Figure 1 with S4 overloaded: S4 carries no transit, so L2's prefix
	// goes over S1..S3 only (40/100/40); S4's own prefix is still reached.
	tp := figure1()
	tp.B.AddNode(lsdb.Node{ID: "S4", Overload: true})
	tp.Prefix("S4", "10.4.4.4/32", 0)
	tb := compute(tp.Build("L1"), Options{})
	wantWeights(t, route(t, tb, "10.0.2.0/24"), map[string]float64{"S1": 40, "S2": 100, "S3": 40})
	// Direct neighbour: cap(S4→S4) = ∞, w = bw(L1,S4) = 200.
	wantWeights(t, route(t, tb, "10.4.4.4/32"), map[string]float64{"S4": 200})
}

func TestPseudonode(t *testing.T) {
	// A, B, C on LAN P; A's LAN interface 100. B–D 30, C–D 80.
	// First hops of D: B and C, both over A's link to P:
	//   w(B) = min(bw(A,P)=100, cap(B→D)=30) = 30
	//   w(C) = min(100, 80) = 80
	tp := lsdbtest.New("A", "B", "C", "D").Node(lsdb.Node{ID: "P", Pseudo: true}).
		LAN("P", "A", 10, 100).LAN("P", "B", 10, 100).LAN("P", "C", 10, 100).
		Cable("B", "D", 10, 30).Cable("C", "D", 10, 80).
		Prefix("D", "10.0.0.0/24", 0)
	g := tp.Build("A")
	tb := compute(g, Options{})
	rt := route(t, tb, "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"B": 30, "C": 80})
	for _, h := range rt.NextHops {
		if l := g.Links[h.Link]; g.Nodes[l.To].ID != "P" || h.NeighborBW != 100 {
			t.Errorf("hop %+v uses link %+v", h, l)
		}
	}
	if tb.Anomalies != (Anomalies{}) {
		t.Errorf("pseudonode links counted as anomalies: %+v", tb.Anomalies)
	}

	// Transit LAN: X–Y 500; Y, B, C on LAN P (Y's LAN link 100); B–D 30, C–D 80.
	//   cap(P→D) = cap(B→D) + cap(C→D) = 30 + 80 = 110 (P→member links unconstrained)
	//   cap(Y→D) = min(bw(Y,P)=100, 110) = 100
	//   w(Y) = min(500, 100) = 100
	tp = lsdbtest.New("X", "Y", "B", "C", "D").Node(lsdb.Node{ID: "P", Pseudo: true}).
		Cable("X", "Y", 10, 500).LAN("P", "Y", 10, 100).LAN("P", "B", 10, 100).LAN("P", "C", 10, 100).
		Cable("B", "D", 10, 30).Cable("C", "D", 10, 80).
		Prefix("D", "10.0.0.0/24", 0)
	g = tp.Build("X")
	lastGraph = g
	r := spf.Run(g)
	rt = route(t, ComputeTable(r, spf.Routes(r), Options{}), "10.0.0.0/24")
	wantWeights(t, rt, map[string]float64{"Y": 100})
	if rt.NextHops[0].DownCap != 100 {
		t.Errorf("cap(Y→D) = %v", rt.NextHops[0].DownCap)
	}
	if got := Readvertise(0, false, r, g.Lookup("D")); got != 100 {
		t.Errorf("readvertise %v, want 100", got)
	}
}

// fiveStage: 2 pods × (2 leaves, 2 spines), 2 super-spines X1, X2 (both
// spines of a pod link to both super-spines: one plane).
//
//	pod 1: leaves A (self), B; spines S1, S2
//	pod 2: leaves D, E;        spines T1, T2
//	A–S1 100  A–S2 100
//	S1–X1 40  S1–X2 40   S2–X1 100  S2–X2 10
//	X1–T1 30  X1–T2 100  X2–T1 50   X2–T2 50
//	T1–D 100  T2–D 20    T1–E 100   T2–E 100
//	B–S1, B–S2 100
func fiveStage() *lsdbtest.Topo {
	tp := lsdbtest.New("A", "B", "S1", "S2", "X1", "X2", "T1", "T2", "D", "E")
	tp.Cable("A", "S1", 10, 100).Cable("A", "S2", 10, 100).
		Cable("B", "S1", 10, 100).Cable("B", "S2", 10, 100).
		Cable("S1", "X1", 10, 40).Cable("S1", "X2", 10, 40).
		Cable("S2", "X1", 10, 100).Cable("S2", "X2", 10, 10).
		Cable("X1", "T1", 10, 30).Cable("X1", "T2", 10, 100).
		Cable("X2", "T1", 10, 50).Cable("X2", "T2", 10, 50).
		Cable("T1", "D", 10, 100).Cable("T2", "D", 10, 20).
		Cable("T1", "E", 10, 100).Cable("T2", "E", 10, 100).
		Prefix("D", "10.2.1.0/24", 0).Prefix("E", "10.2.2.0/24", 0)
	return tp
}

func TestFiveStage(t *testing.T) {
	g := fiveStage().Build("A")
	lastGraph = g
	r := spf.Run(g)
	tb := ComputeTable(r, spf.Routes(r), Options{})
	// Toward D:
	//   cap(T1→D) = 100, cap(T2→D) = 20
	//   cap(X1→D) = min(30,100) + min(100,20) = 30 + 20 = 50
	//   cap(X2→D) = min(50,100) + min(50,20)  = 50 + 20 = 70
	//   cap(S1→D) = min(40,50) + min(40,70)   = 40 + 40 = 80
	//   cap(S2→D) = min(100,50) + min(10,70)  = 50 + 10 = 60
	//   w(S1) = min(100, 80) = 80, w(S2) = min(100, 60) = 60
	rt := route(t, tb, "10.2.1.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 80, "S2": 60})
	// Toward E (same class as D: same parents T1, T2; only T→E differ):
	//   cap(X1→E) = min(30,100) + min(100,100) = 130
	//   cap(X2→E) = min(50,100) + min(50,100)  = 100
	//   cap(S1→E) = min(40,130) + min(40,100)  = 80
	//   cap(S2→E) = min(100,130) + min(10,100) = 110
	//   w(S1) = min(100, 80) = 80, w(S2) = min(100, 110) = 100
	rt = route(t, tb, "10.2.2.0/24")
	wantWeights(t, rt, map[string]float64{"S1": 80, "S2": 100})
	for _, h := range rt.NextHops {
		if nid(h) == "S2" && h.DownCap != 110 {
			t.Errorf("cap(S2→E) = %v", h.DownCap)
		}
	}
	// Re-advertisement at A of D's prefix: cap(A→D) = min(100,80) + min(100,60)
	// = 140; with PB 120 → 120; without PB → 140; D unreachable → 0.
	d := g.Lookup("D")
	if got := Readvertise(120, true, r, d); got != 120 {
		t.Errorf("readvertise(120) = %v", got)
	}
	if got := Readvertise(0, false, r, d); got != 140 {
		t.Errorf("readvertise(absent) = %v", got)
	}
	if got := Readvertise(float32(math.NaN()), true, r, d); got != 0 {
		t.Errorf("readvertise(NaN) = %v", got)
	}
	if got := Readvertise(7, true, r, r.Self); got != 7 {
		t.Errorf("readvertise(self) = %v", got)
	}
	if got := Readvertise(0, false, r, r.Self); got != math.MaxFloat32 {
		t.Errorf("readvertise(self, absent) = %v", got)
	}
}

func TestJSONShape(t *testing.T) {
	g := figure1().Build("L1")
	rt := route(t, compute(g, Options{}), "10.0.2.0/24")
	b, err := json.Marshal(rt.View(g))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"prefix":"10.0.2.0/24"`, `"metric":20`, `"advertisers":[`, `"advertiser_ids":["L2"]`,
		`"mode":"weighted"`, `"next_hops":[`, `"neighbor_id":"S1"`, `"link":`, `"link_bandwidth":100`,
		`"neighbor_bandwidth":100`, `"downstream_capacity":40`, `"path_bandwidth":3.4028234663852886e+38`,
		`"weight":40`, `"share":`, `"has_path_bandwidth":false`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("json lacks %s: %s", k, b)
		}
	}
}
