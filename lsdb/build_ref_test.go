package lsdb

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"sort"
	"testing"
)

// refBuild is the original Build (map of pairs, reflection sort), kept as
// the reference for Build's semantics.
func (b *Builder) refBuild(self string) *Graph {
	n := len(b.nodes)
	present := make([]bool, n)
	for i := range b.nodes {
		present[i] = b.nodes[i].First == 0
	}
	type pair struct{ a, b int32 }
	back := make(map[pair]struct{}, len(b.links))
	for _, l := range b.links {
		back[pair{l.From, l.To}] = struct{}{}
	}
	type withAddrs struct {
		l Link
		a LinkAddrs
	}
	kept := make([]withAddrs, 0, len(b.links))
	for i, l := range b.links {
		if !present[l.From] || !present[l.To] || l.From == l.To {
			continue
		}
		if _, ok := back[pair{l.To, l.From}]; !ok {
			continue
		}
		var a LinkAddrs
		if b.addrs != nil {
			a = b.addrs[i]
		}
		kept = append(kept, withAddrs{l, a})
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].l.From < kept[j].l.From })
	links := make([]Link, len(kept))
	var addrs []LinkAddrs
	if b.addrs != nil && len(kept) > 0 {
		addrs = make([]LinkAddrs, len(kept))
	}
	for i, k := range kept {
		links[i] = k.l
		if addrs != nil {
			addrs[i] = k.a
		}
	}
	nodes := make([]Node, 0, n)
	remap := make([]int32, n)
	for i := range b.nodes {
		if !present[i] {
			remap[i] = -1
			continue
		}
		remap[i] = int32(len(nodes))
		nodes = append(nodes, b.nodes[i])
	}
	g := &Graph{Protocol: b.protocol, Level: b.level, Area: b.area, Self: -1, index: make(map[string]int32, len(nodes))}
	for i := range links {
		links[i].From, links[i].To = remap[links[i].From], remap[links[i].To]
	}
	for i := range nodes {
		nodes[i].First, nodes[i].Count = 0, 0
	}
	for i := len(links) - 1; i >= 0; i-- {
		nd := &nodes[links[i].From]
		nd.First = int32(i)
		nd.Count++
	}
	for i := range nodes {
		g.index[nodes[i].ID] = int32(i)
	}
	prefixes := make([]Prefix, 0, len(b.prefixes))
	for _, p := range b.prefixes {
		if r := remap[p.Node]; r >= 0 {
			p.Node = r
			prefixes = append(prefixes, p)
		}
	}
	sort.SliceStable(prefixes, func(i, j int) bool {
		if c := prefixes[i].Prefix.Addr().Compare(prefixes[j].Prefix.Addr()); c != 0 {
			return c < 0
		}
		if prefixes[i].Prefix.Bits() != prefixes[j].Prefix.Bits() {
			return prefixes[i].Prefix.Bits() < prefixes[j].Prefix.Bits()
		}
		return prefixes[i].Node < prefixes[j].Node
	})
	g.Nodes, g.Links, g.Addrs, g.Prefixes, g.Adjacencies = nodes, links, addrs, prefixes, b.adjs
	if self != "" {
		g.Self = g.Lookup(self)
	}
	return g
}

// TestBuildMatchesReference compares Build with the reference on random
// databases: one-way and parallel links, loops, nodes without an entry,
// unsorted and duplicate prefixes (v4 and v6), adjacencies.
func TestBuildMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := 0; iter < 500; iter++ {
		withAddrs := iter%3 != 0 // some graphs have addresses from the first link, some later, some none
		nn := 1 + rng.IntN(30)
		id := func() string { return fmt.Sprintf("N%d", rng.IntN(nn+nn/3+1)) }
		b := NewBuilder("isis", 2, "")
		for i := 0; i < nn; i++ {
			if rng.IntN(5) != 0 {
				b.AddNode(Node{ID: fmt.Sprintf("N%d", rng.IntN(nn)), Name: fmt.Sprint("n", i), Pseudo: rng.IntN(6) == 0})
			} else {
				b.Node(id())
			}
		}
		for i, nl := 0, rng.IntN(8*nn); i < nl; i++ {
			x, y := id(), id()
			l := Link{Metric: uint32(rng.IntN(4)), MaxBW: float32(rng.IntN(5)), HasBW: rng.IntN(3) != 0}
			a := LinkAddrs{Local: Addr4{10, 0, byte(i >> 8), byte(i)}}
			if withAddrs {
				b.AddLinkAddrs(x, y, l, a)
			} else {
				b.AddLink(x, y, l)
			}
			if rng.IntN(2) == 0 {
				l.MaxBW++
				b.AddLinkAddrs(y, x, l, a)
			}
		}
		for i, np := 0, rng.IntN(3*nn); i < np; i++ {
			var a netip.Addr
			if rng.IntN(4) == 0 {
				a = netip.AddrFrom16([16]byte{0x20, 0x01, 15: byte(rng.IntN(4))})
			} else {
				a = netip.AddrFrom4([4]byte{10, byte(rng.IntN(3)), byte(rng.IntN(3)), 0})
			}
			b.AddPrefix(id(), Prefix{Prefix: netip.PrefixFrom(a, 16+rng.IntN(3)), Metric: uint32(i)})
		}
		if rng.IntN(2) == 0 {
			b.AddAdjacency(Adjacency{Node: id(), IfIndex: 3})
		}
		self := ""
		if rng.IntN(4) != 0 {
			self = id()
		}
		want := b.refBuild(self)
		for k := 0; k < 2; k++ { // twice: Build leaves the Builder as it was
			got := b.Build(self)
			if got.Addrs != nil && len(got.Addrs) != len(got.Links) {
				t.Fatalf("iter %d: %d addrs for %d links", iter, len(got.Addrs), len(got.Links))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("iter %d: Build differs from the reference:\n%+v\n%+v", iter, got, want)
			}
		}
	}
}
