package sidebyside

import (
	"fmt"
	"net/netip"

	"github.com/fared/fared/bench/inject"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/internal/kernwatch"
)

// Expected computes, independently of the spf package, the next-hop set
// every prefix must have in the RUT's kernel. All generated links share one
// metric, so shortest paths are hop counts: a neighbour N of Self is a
// first hop towards node D when 1 + hops(N, D) = hops(Self, D) (breadth
// first search from each neighbour). Each first hop contributes one next
// hop per cable between Self and N: the injector's address on that circuit.
func Expected(f *closgen.Fabric, circuits []inject.Circuit) (map[netip.Prefix]kernwatch.Hops, error) {
	for i, c := range f.Cables {
		if c.Metric != f.Cables[0].Metric {
			return nil, fmt.Errorf("cable %d has metric %d, not %d: the hop-count oracle needs one metric", i, c.Metric, f.Cables[0].Metric)
		}
	}
	adj := make([][]int, len(f.Nodes))
	for _, c := range f.Cables {
		adj[c.A] = append(adj[c.A], c.B)
		adj[c.B] = append(adj[c.B], c.A)
	}
	bfs := func(src int) []int {
		d := make([]int, len(f.Nodes))
		for i := range d {
			d[i] = -1
		}
		d[src] = 0
		q := []int{src}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for _, y := range adj[x] {
				if d[y] < 0 {
					d[y] = d[x] + 1
					q = append(q, y)
				}
			}
		}
		return d
	}
	self := bfs(f.Self)
	byNode := map[int][]inject.Circuit{}
	var nbrs []int
	for _, c := range circuits {
		if byNode[c.Node] == nil {
			nbrs = append(nbrs, c.Node)
		}
		byNode[c.Node] = append(byNode[c.Node], c)
	}
	dist := map[int][]int{}
	for _, n := range nbrs {
		dist[n] = bfs(n)
	}
	want := map[netip.Prefix]kernwatch.Hops{}
	for d := range f.Nodes {
		if d == f.Self || self[d] < 0 || len(f.Nodes[d].Prefixes) == 0 {
			continue
		}
		var hops kernwatch.Hops
		for _, n := range nbrs {
			if dist[n][d] >= 0 && 1+dist[n][d] == self[d] {
				for _, c := range byNode[n] {
					hops = append(hops, kernwatch.Hop{Gateway: c.Addr.Addr(), Dev: c.Iface})
				}
			}
		}
		hops = kernwatch.Sort(hops)
		for _, p := range f.Nodes[d].Prefixes {
			want[p.Prefix] = hops
		}
	}
	return want, nil
}
