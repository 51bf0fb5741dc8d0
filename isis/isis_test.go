package isis

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp/igptest"
)

func neighborsUp(m *memNode, want int) error {
	ns, err := m.in.Neighbors(context.Background())
	if err != nil {
		return err
	}
	up := 0
	for _, n := range ns {
		if n.State == "Up" {
			up++
		}
	}
	if up != want {
		return fmt.Errorf("%s: %d adjacencies up, want %d: %+v", m.in.cfg.Hostname, up, want, ns)
	}
	return nil
}

// dbDigest is the part of a database two synchronised routers agree on.
func dbDigest(m *memNode) (string, error) {
	v, err := m.in.Database(context.Background(), DatabaseQuery{})
	if err != nil {
		return "", err
	}
	var s []string
	for _, l := range v {
		if l.Lifetime == 0 {
			continue
		}
		s = append(s, fmt.Sprintf("%s/%d/%04x", l.LSPID, l.Seq, l.Checksum))
	}
	sort.Strings(s)
	return strings.Join(s, " "), nil
}

func sameDB(nodes ...*memNode) func() error {
	return func() error {
		first, err := dbDigest(nodes[0])
		if err != nil {
			return err
		}
		for _, n := range nodes[1:] {
			d, err := dbDigest(n)
			if err != nil {
				return err
			}
			if d != first {
				return fmt.Errorf("databases differ:\n %s\n %s", first, d)
			}
		}
		return nil
	}
}

func TestP2PAdjacencyAndSync(t *testing.T) {
	w := &wire{}
	r1 := startMem(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}})
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error {
		if err := neighborsUp(r1, 1); err != nil {
			return err
		}
		return neighborsUp(r2, 1)
	})
	igptest.Poll(t, 10*time.Second, "databases in sync", func() error {
		if err := sameDB(r1, r2)(); err != nil {
			return err
		}
		d, _ := dbDigest(r1)
		if strings.Count(d, "/") != 4 {
			return fmt.Errorf("want 2 LSPs, have %s", d)
		}
		return nil
	})
	igptest.Poll(t, 5*time.Second, "graph at r2", func() error {
		g := r2.in.Graph(2)
		if g == nil {
			return fmt.Errorf("no graph")
		}
		n1 := g.Lookup("0000.0000.0001.00")
		if n1 < 0 {
			return fmt.Errorf("r1 missing from %+v", daemon.WireTopology(g))
		}
		ls := g.LinksOf(n1)
		a := g.LinkAddrs(g.Nodes[n1].First)
		if len(ls) != 1 || !ls[0].HasBW || ls[0].MaxBW != 1.25e9 || a.Local.Addr() != netip.MustParseAddr("10.254.0.0") || a.Remote.Addr() != netip.MustParseAddr("10.254.0.1") {
			return fmt.Errorf("r1 links %+v %+v", ls, a)
		}
		found := false
		for _, p := range g.Prefixes {
			if p.Prefix == netip.MustParsePrefix("10.255.0.1/32") && g.Nodes[p.Node].ID == "0000.0000.0001.00" {
				found = p.HasPathBW && p.PathBW == math.MaxFloat32
			}
		}
		if !found {
			return fmt.Errorf("r1 loopback with max path bandwidth missing: %+v", daemon.WireTopology(g).Prefixes)
		}
		return nil
	})
}

func TestLANDISAndPseudonode(t *testing.T) {
	w := &wire{}
	var rs []*memNode
	for n := 1; n <= 3; n++ {
		rs = append(rs, startMem(t, n, []memIf{{name: "lan0", typ: "lan", w: w, addr: netip.MustParsePrefix(fmt.Sprintf("10.253.0.%d/24", n))}}))
	}
	igptest.Poll(t, 15*time.Second, "all adjacencies up", func() error {
		for _, r := range rs {
			if err := neighborsUp(r, 2); err != nil {
				return err
			}
		}
		return nil
	})
	// Equal priorities: the highest MAC (r3's 02:00:00:00:03:00) wins; its
	// LAN id is r3's system id with circuit id 1.
	igptest.Poll(t, 10*time.Second, "DIS agreed", func() error {
		for _, r := range rs {
			ifs, err := r.in.Interfaces(context.Background())
			if err != nil {
				return err
			}
			l := ifs[0].Levels[0]
			if l.LANID != "0000.0000.0003.01" || l.DIS != (r == rs[2]) {
				return fmt.Errorf("%s: %+v", r.in.cfg.Hostname, l)
			}
		}
		return nil
	})
	igptest.Poll(t, 10*time.Second, "pseudonode LSP and sync", func() error {
		if err := sameDB(rs...)(); err != nil {
			return err
		}
		v, err := rs[0].in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0003.01-00", Detail: true})
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return fmt.Errorf("pseudonode LSP missing")
		}
		s := fmt.Sprint(v[0].TLVs)
		for n := 1; n <= 3; n++ {
			if !strings.Contains(s, fmt.Sprintf("0000.0000.000%d.00", n)) {
				return fmt.Errorf("pseudonode LSP lacks r%d: %s", n, s)
			}
		}
		return nil
	})
}

// TestFragmentsAndRefresh: content larger than one LSP is spread over
// fragments that all reach the neighbour, and LSPs are refreshed with a
// higher sequence number before they age out.
func TestFragmentsAndRefresh(t *testing.T) {
	w := &wire{}
	extra := "  lsp-refresh: 1s\n  lsp-lifetime: 400s\n"
	var pfx strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&pfx, "    - {prefix: 10.%d.%d.0/24, path-bandwidth: 40G}\n", 100+i/256, i%256)
	}
	r1 := startMemExtra(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}}, extra, pfx.String())
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	// 300 prefixes × (9 bytes + 6 bytes of Path Bandwidth sub-TLV) do not
	// fit one 1492-byte LSP.
	var frags int
	igptest.Poll(t, 10*time.Second, "fragments at r2", func() error {
		v, err := r2.in.Database(context.Background(), DatabaseQuery{})
		if err != nil {
			return err
		}
		frags = 0
		for _, l := range v {
			if strings.HasPrefix(l.LSPID, "0000.0000.0001.00-") && l.Lifetime > 0 {
				frags++
			}
		}
		if frags < 3 {
			return fmt.Errorf("%d fragments of r1", frags)
		}
		g := r2.in.Graph(2)
		n := 0
		for _, p := range g.Prefixes {
			if g.Nodes[p.Node].ID == "0000.0000.0001.00" && p.HasPathBW && p.PathBW == 5e9 {
				n++
			}
		}
		if n != 300 {
			return fmt.Errorf("r2 sees %d of r1's 300 prefixes with path bandwidth", n)
		}
		return nil
	})
	// Repeated TLVs stay separate, in order, in the detailed view (FRR
	// 8.4.4's JSON keeps only the last one).
	v, err := r2.in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0001.00-01", Detail: true})
	if err != nil || len(v) != 1 {
		t.Fatalf("fragment 1: %v %v", v, err)
	}
	n135 := 0
	for _, tl := range v[0].TLVs {
		if fmt.Sprint(tl["type"]) == "135" {
			n135++
		}
	}
	if n135 < 2 {
		t.Fatalf("fragment 1 shows %d TLV 135 entries, want several", n135)
	}
	seq := func() uint32 {
		v, _ := r2.in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0001.00-00"})
		if len(v) != 1 {
			return 0
		}
		return v[0].Seq
	}
	s0 := seq()
	igptest.Poll(t, 10*time.Second, "refresh", func() error {
		if s := seq(); s < s0+2 {
			return fmt.Errorf("seq %d, want ≥ %d", s, s0+2)
		}
		return sameDB(r1, r2)()
	})
}
