package manager

import (
	"fmt"
	"math"
	"net/netip"
	"testing"

	"github.com/fared/fared/lsdb"
)

const gig10 = 1.25e9 // 10 Gb/s in bytes/s

// clos builds the lab's fabric: leaves l1..l4, spines s1, s2 (fared) and
// s3 (FRR), every leaf linked to every spine at bw bytes/s (per link
// overrides in bwOf), metric 10. Node N has loopback 10.255.0.N/32;
// leaf i advertises 10.1.i.0/24 (its hosts). Links in cut are absent.
func clos(bwOf map[string]float32, cut map[string]bool) *lsdb.Graph {
	return closAt("", bwOf, cut)
}

// closAt is clos as computed by router self ("" for none).
func closAt(self string, bwOf map[string]float32, cut map[string]bool) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 2, "")
	names := []string{"l1", "l2", "l3", "l4", "s1", "s2", "s3"}
	for i, n := range names {
		b.AddNode(lsdb.Node{ID: n, Name: n, RouterID: lo(i + 1)})
		b.AddPrefix(n, lsdb.Prefix{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 255, 0, byte(i + 1)}), 32)})
		if i < 4 {
			b.AddPrefix(n, lsdb.Prefix{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, byte(i + 1), 0}), 24), Metric: 10})
		}
	}
	for _, l := range names[:4] {
		for _, s := range names[4:] {
			if cut[l+s] {
				continue
			}
			bw := float32(gig10)
			if v, ok := bwOf[l+s]; ok {
				bw = v
			}
			b.AddLink(l, s, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
			b.AddLink(s, l, lsdb.Link{Metric: 10, MaxBW: bw, HasBW: true})
		}
	}
	return b.Build(self)
}

func lo(n int) netip.Addr { return netip.AddrFrom4([4]byte{10, 255, 0, byte(n)}) }

// fabricSwitches: every fared node registered (the FRR spine s3 is not).
func fabricSwitches(skip ...string) []SwitchInfo {
	var out []SwitchInfo
	for i, n := range []string{"l1", "l2", "l3", "l4", "s1", "s2"} {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == n
		}
		if !skipped {
			out = append(out, SwitchInfo{ID: n, Addr: lo(i + 1), MaxRanks: 64, FreeTrees: 4})
		}
	}
	return out
}

// eight: two hosts per leaf, rank r on leaf r/2+1.
func eight() []MemberInfo {
	var m []MemberInfo
	for r := range 8 {
		m = append(m, MemberInfo{Rank: r, Addr: netip.AddrFrom4([4]byte{10, 1, byte(r/2 + 1), byte(10 + r%2)})})
	}
	return m
}

func describe(p *Plan) string {
	s := fmt.Sprintf("root %s levels %d bottleneck %g:", p.Root, p.Levels, p.Bottleneck)
	for _, id := range sortedIDs(p.Nodes) {
		n := p.Nodes[id]
		s += fmt.Sprintf(" %s(parent %q#%d, %d children)", id, n.Parent, n.ParentIndex, len(n.Children))
	}
	return s
}

// TestPlanCLOS: eight members on four leaves: a fared spine is the root,
// every leaf aggregates its two members, each leaf's flow has its own
// 10G link up and down: bottleneck 10G. The FRR spine is never used.
func TestPlanCLOS(t *testing.T) {
	g := clos(nil, nil)
	p, err := Compute(g, fabricSwitches(), eight(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "s1" || p.Levels != 2 || len(p.Nodes) != 5 || p.Bottleneck != gig10 {
		t.Fatalf("%s", describe(p))
	}
	for r, a := range p.Attach {
		leaf := fmt.Sprintf("l%d", r/2+1)
		if a.Switch != leaf || a.Index != r%2 || a.Leaf != leaf {
			t.Fatalf("rank %d attaches %+v", r, a)
		}
		if n := p.Nodes[leaf]; n.Parent != "s1" || n.ParentIndex != r/2 || n.Children[r%2].Member != r {
			t.Fatalf("leaf %s: %+v", leaf, n)
		}
	}
	if p.Links != 8 {
		t.Fatalf("%d links carry the tree, want 8 (4 up, 4 down)", p.Links)
	}
	// Load: with s1 busier, s2 takes the next group.
	sw := fabricSwitches()
	sw[4].Trees = 1
	if p, _ := Compute(g, sw, eight(), Options{}); p.Root != "s2" {
		t.Fatalf("with s1 loaded: %s", describe(p))
	}
	// Excluded (timeout reports): s2.
	if p, _ := Compute(g, fabricSwitches(), eight(), Options{Exclude: map[string]bool{"s1": true}}); p.Root != "s2" {
		t.Fatalf("s1 excluded: %s", describe(p))
	}
}

// TestPlanLinkDown: l1–s1 is down. Under s1, l1's partials would cross
// s2 or s3 and another leaf: the shared links halve the rate (see below);
// under s2 every leaf has its own link again: s2 wins on bandwidth.
func TestPlanLinkDown(t *testing.T) {
	g := clos(nil, map[string]bool{"l1s1": true})
	p, err := Compute(g, fabricSwitches(), eight(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "s2" || p.Bottleneck != gig10 {
		t.Fatalf("%s", describe(p))
	}
	// Only s1 left as a root: l1 reaches s1 over six equal paths (via s2
	// or s3, then l2, l3 or l4); FARE splits them evenly, so each of
	// lx→s1 (x=2..4) carries lx's own partial plus a sixth... times two
	// spines = 1/3 of l1's: share 4/3, bottleneck 10G × 3/4.
	p, err = Compute(g, fabricSwitches("s2"), eight(), Options{Roots: map[string]bool{"s1": true}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "s1" || math.Abs(p.Bottleneck-gig10*3/4) > 1 {
		t.Fatalf("%s", describe(p))
	}
}

// TestPlanOneLeaf: all members under l1: l1 itself is the root (single
// level, no fabric link at all: bottleneck unconstrained).
func TestPlanOneLeaf(t *testing.T) {
	m := []MemberInfo{{0, netip.MustParseAddr("10.1.1.10")}, {1, netip.MustParseAddr("10.1.1.11")}}
	p, err := Compute(clos(nil, nil), fabricSwitches(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "l1" || p.Levels != 1 || !math.IsInf(p.Bottleneck, 1) || len(p.Nodes) != 1 {
		t.Fatalf("%s", describe(p))
	}
}

// TestPlanNonINCLeaf: l2 runs no INC: its two members send to the root
// themselves, through l2, whose uplinks then carry two flows.
//
// Under a spine root, l2's one link to it carries both: 10G/2 = 5G.
// Under leaf l1 as root, every other leaf reaches l1 over the three
// spines (s3 as transit), a third of each flow per spine: a spine→l1 link
// carries l2's 2×1/3 plus l3's and l4's 1/3 each = 4/3, so 10G × 3/4 =
// 7.5G, and l2's uplinks 2/3 each. The bandwidth model prefers l1.
func TestPlanNonINCLeaf(t *testing.T) {
	p, err := Compute(clos(nil, nil), fabricSwitches("l2"), eight(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "l1" || p.Bottleneck != gig10*3/4 || p.Nodes["l2"] != nil || len(p.Nodes["l1"].Children) != 6 {
		t.Fatalf("%s", describe(p))
	}
	if a := p.Attach[2]; a.Switch != "l1" || a.Leaf != "l2" {
		t.Fatalf("rank 2 attaches %+v", a)
	}
	// With the leaves not allowed as roots, a spine: 5G.
	p, err = Compute(clos(nil, nil), fabricSwitches("l2"), eight(), Options{Roots: map[string]bool{"s1": true, "s2": true}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "s1" || p.Bottleneck != gig10/2 || len(p.Nodes["s1"].Children) != 5 { // l1, rank 2, rank 3, l3, l4
		t.Fatalf("%s", describe(p))
	}
}

// TestPlanBandwidth: a slow l3–s1 link (1G) makes s2 the better root.
func TestPlanBandwidth(t *testing.T) {
	p, err := Compute(clos(map[string]float32{"l3s1": 1.25e8}, nil), fabricSwitches(), eight(), Options{})
	if err != nil || p.Root != "s2" {
		t.Fatalf("%v %s", err, describe(p))
	}
}

// TestPlanErrors: nobody reachable, no switch, unknown member address.
func TestPlanErrors(t *testing.T) {
	g := clos(nil, nil)
	if _, err := Compute(g, nil, eight(), Options{}); err == nil {
		t.Error("no switches: planned")
	}
	if _, err := Compute(g, fabricSwitches(), []MemberInfo{{0, netip.MustParseAddr("192.0.2.1")}}, Options{}); err == nil {
		t.Error("member outside every prefix: planned")
	}
	full := fabricSwitches()
	for i := range full {
		full[i].FreeTrees = 0
	}
	if _, err := Compute(g, full, eight(), Options{}); err == nil {
		t.Error("switches without room: planned")
	}
	if _, err := Compute(nil, full, eight(), Options{}); err == nil {
		t.Error("no graph: planned")
	}
}
