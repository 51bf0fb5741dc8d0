package rib

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/lsdb"
)

// discard is an Installer that writes nothing: the benchmarks measure the
// rib's own work (fib has its own benchmarks and bench/ceiling).
type discard struct{}

func (discard) Sync([]fib.Route) (fib.Stats, error) { return fib.Stats{}, nil }
func (discard) Capabilities() fib.Capabilities {
	return fib.Capabilities{NexthopObjects: true, Weight16: true}
}

// daemonGraph is f's graph as an IS-IS instance submits it: every link
// with its interface addresses (one /31 per cable) and Self's
// adjacencies, one per cable, on interfaces e0, e1, ...
func daemonGraph(f *closgen.Fabric) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", 2, "")
	for _, n := range f.Nodes {
		b.AddNode(lsdb.Node{ID: n.Name, Name: n.Name})
		for _, p := range n.Prefixes {
			b.AddPrefix(n.Name, p)
		}
	}
	addr := func(i, k int) netip.Addr {
		x := uint32(i)*2 + uint32(k)
		return netip.AddrFrom4([4]byte{100, byte(x >> 16), byte(x >> 8), byte(x)})
	}
	circuit := 0
	for i, c := range f.Cables {
		x, y := f.Nodes[c.A].Name, f.Nodes[c.B].Name
		b.AddLinkAddrs(x, y, lsdb.Link{Metric: c.Metric, MaxBW: c.BW, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(addr(i, 0)), Remote: lsdb.AddrOf(addr(i, 1))})
		b.AddLinkAddrs(y, x, lsdb.Link{Metric: c.Metric, MaxBW: c.BW, HasBW: true}, lsdb.LinkAddrs{Local: lsdb.AddrOf(addr(i, 1)), Remote: lsdb.AddrOf(addr(i, 0))})
		if c.A == f.Self || c.B == f.Self {
			local, nbr, node := addr(i, 0), addr(i, 1), y
			if c.B == f.Self {
				local, nbr, node = addr(i, 1), addr(i, 0), x
			}
			b.AddAdjacency(lsdb.Adjacency{Node: node, IfIndex: 10 + circuit, IfName: fmt.Sprintf("e%d", circuit),
				Local: []netip.Prefix{netip.PrefixFrom(local, 31)}, NbrAddrs: []netip.Addr{nbr}})
			circuit++
		}
	}
	return b.Build(f.Nodes[f.Self].Name)
}

var (
	bench3 = closgen.ThreeStage{Spines: 64, Leaves: 512, Seed: 42}
	bench5 = closgen.FiveStage{Pods: 64, Leaves: 64, Spines: 16, Super: 64, Seed: 42}
)

// benchCompute measures one full computation as the daemon's SPF log
// times it (spf, fare, route building, next-hop resolution, the snapshot,
// the route diff), without the kernel write.
func benchCompute(b *testing.B, g *lsdb.Graph) {
	m := New(Config{FIB: discard{}, Log: nil})
	m.synced = true
	k := topoKey(g)
	m.levels[k] = &levelState{g: g}
	m.compute(nil, []string{"bench"})
	if n := len(m.Snapshot().Routes); n < len(g.Prefixes)-1 {
		b.Fatalf("%d routes", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ls := m.levels[k]
		ls.done, ls.result = nil, nil // a full run each time
		m.compute(nil, []string{"bench"})
	}
}

func BenchmarkCompute3Stage(b *testing.B) { benchCompute(b, daemonGraph(bench3.Fabric())) }
func BenchmarkCompute5Stage(b *testing.B) { benchCompute(b, daemonGraph(bench5.Fabric())) }
