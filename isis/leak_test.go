package isis

import (
	"net/netip"
	"testing"

	"github.com/fared/fared/lsdb"
)

const gbit = 1e9 / 8 // bytes/s per Gbit/s

type tlink struct {
	a, b string
	gbps float32
}

type tpfx struct {
	node, prefix string
	metric       uint32
	pbGbps       float32 // 0: no Path Bandwidth sub-TLV
	down         bool
}

// graph builds a two-way graph with metric-10 links; R is Self.
func graph(links []tlink, pfx []tpfx) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 1, "")
	nodes := map[string]bool{"R": true}
	for _, l := range links {
		nodes[l.a], nodes[l.b] = true, true
	}
	for n := range nodes {
		b.AddNode(lsdb.Node{ID: n, Name: n})
	}
	for _, l := range links {
		b.AddLink(l.a, l.b, lsdb.Link{Metric: 10, MaxBW: l.gbps * gbit, HasBW: true})
		b.AddLink(l.b, l.a, lsdb.Link{Metric: 10, MaxBW: l.gbps * gbit, HasBW: true})
	}
	for _, p := range pfx {
		lp := lsdb.Prefix{Prefix: netip.MustParsePrefix(p.prefix), Metric: p.metric, Down: p.down}
		if p.pbGbps > 0 {
			lp.PathBW, lp.HasPathBW = p.pbGbps*gbit, true
		}
		b.AddPrefix(p.node, lp)
	}
	return b.Build("R")
}

// TestLeakMath: the re-advertised Path Bandwidth of draft-xu-lsr-fare §4.2,
// computed by hand for each case.
func TestLeakMath(t *testing.T) {
	in := &Instance{icfg: &Config{Level: 3, LeakL2ToL1: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	cases := []struct {
		name   string
		from   int
		links  []tlink
		pfx    []tpfx
		want   map[string]float32 // prefix → PB' in Gbit/s; absent = not leaked
		metric map[string]uint32
	}{
		{
			// L1→L2: min(link toward the originating leaf, original PB).
			name: "L1 to L2, one advertiser", from: 1,
			links: []tlink{{"R", "D", 40}},
			pfx:   []tpfx{{"D", "10.1.0.0/24", 0, 0, false}, {"D", "10.2.0.0/24", 5, 20, false}},
			want:  map[string]float32{"10.1.0.0/24": 40, "10.2.0.0/24": 20},
			// metric = distance 10 + prefix metric
			metric: map[string]uint32{"10.1.0.0/24": 10, "10.2.0.0/24": 15},
		},
		{
			// L2→L1: min(PB 80, total of all paths toward A):
			// via SS1 min(100, 40) = 40, via SS2 min(10, 100) = 10 → 50.
			name: "L2 to L1, two paths toward the advertiser", from: 2,
			links:  []tlink{{"R", "SS1", 100}, {"R", "SS2", 10}, {"SS1", "A", 40}, {"SS2", "A", 100}},
			pfx:    []tpfx{{"A", "10.3.0.0/24", 10, 80, false}},
			want:   map[string]float32{"10.3.0.0/24": 50},
			metric: map[string]uint32{"10.3.0.0/24": 30},
		},
		{
			// Anycast: D1 and D2 advertise the same prefix with PB 30 each.
			// Σ PB = 60, Σ cap(R→D) = 40 + 10 = 50, egress 40 + 10 = 50 → 50.
			name: "anycast, two advertisers", from: 1,
			links: []tlink{{"R", "D1", 40}, {"R", "D2", 10}},
			pfx:   []tpfx{{"D1", "10.4.0.0/24", 0, 30, false}, {"D2", "10.4.0.0/24", 0, 30, false}},
			want:  map[string]float32{"10.4.0.0/24": 50},
		},
		{
			// Anycast behind one shared link: cap(R→D1) = cap(R→D2) = 40,
			// Σ = 80, but R's own link toward both is 40 → 40.
			name: "anycast behind one link", from: 1,
			links: []tlink{{"R", "S", 40}, {"S", "D1", 100}, {"S", "D2", 100}},
			pfx:   []tpfx{{"D1", "10.5.0.0/24", 0, 0, false}, {"D2", "10.5.0.0/24", 0, 0, false}},
			want:  map[string]float32{"10.5.0.0/24": 40},
		},
		{
			// RFC 5302: a prefix with the up/down bit set in L1 (leaked
			// from L2 by another L1L2 router) never goes back to L2.
			name: "down prefix not re-leaked to L2", from: 1,
			links: []tlink{{"R", "S2", 100}},
			pfx:   []tpfx{{"S2", "10.6.0.0/24", 20, 10, true}},
			want:  map[string]float32{},
		},
		{
			// L2→L1 only what the prefix list covers (10.0.0.0/8 here).
			name: "L2 to L1 filtered", from: 2,
			links: []tlink{{"R", "A", 100}},
			pfx:   []tpfx{{"A", "10.7.0.0/24", 0, 0, false}, {"A", "192.0.2.0/24", 0, 0, false}},
			want:  map[string]float32{"10.7.0.0/24": 100},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := in.computeLeaks(graph(tc.links, tc.pfx), tc.from)
			got := map[string]float32{}
			for _, l := range ls {
				got[l.Prefix.String()] = l.PathBW / gbit
				if l.Down != (tc.from == 2) {
					t.Errorf("%s: down=%v leaking from L%d", l.Prefix, l.Down, tc.from)
				}
				if m, ok := tc.metric[l.Prefix.String()]; ok && l.Metric != m {
					t.Errorf("%s: metric %d, want %d", l.Prefix, l.Metric, m)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("leaked %v, want %v", got, tc.want)
			}
			for p, w := range tc.want {
				if g, ok := got[p]; !ok || g < w*0.9999 || g > w*1.0001 {
					t.Errorf("%s: PB' %v Gbit/s, want %v", p, got[p], w)
				}
			}
		})
	}
}
