package ospf

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/fared/fared/ospf/packet"
)

// benchFabric is one area of a two-tier fabric as buildGraph reads it:
// every leaf linked to every spine (Router LSAs with p2p and stub links),
// a TE Link LSA per link end with its bandwidth, and an Extended Prefix
// LSA with Path Bandwidth for each leaf's prefix. Self is leaf 1.
func benchFabric(spines, leaves int) *selDB {
	d := newSelDB()
	d.in.pbCode = 32770
	a := d.area("0.0.0.0")
	rid := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", 200+i/65536, i/256%256, i%256) }
	leaf := func(i int) int { return i + 1 }           // router 1..leaves (leaf 1 is Self's 10.200.0.1)
	spine := func(i int) int { return leaves + i + 1 } // after the leaves
	d.in.rid = netip.MustParseAddr(rid(leaf(0)))
	links := map[int][]packet.RouterLink{}
	te := map[int][]packet.TELink{}
	n := 0
	for s := range spines {
		for l := range leaves {
			n++
			la, sa := netip.AddrFrom4([4]byte{172, byte(n >> 14), byte(n >> 6), byte(n<<2) | 1}), netip.AddrFrom4([4]byte{172, byte(n >> 14), byte(n >> 6), byte(n<<2) | 2})
			li, si := leaf(l), spine(s)
			links[li] = append(links[li], packet.RouterLink{ID: netip.MustParseAddr(rid(si)), Data: la, Type: linkP2P, Metric: 10})
			links[si] = append(links[si], packet.RouterLink{ID: netip.MustParseAddr(rid(li)), Data: sa, Type: linkP2P, Metric: 10})
			te[li] = append(te[li], packet.TELink{LinkType: 1, LinkID: netip.MustParseAddr(rid(si)), Local: []netip.Addr{la}, Remote: []netip.Addr{sa}, MaxBW: 5e9, HasMaxBW: true})
			te[si] = append(te[si], packet.TELink{LinkType: 1, LinkID: netip.MustParseAddr(rid(li)), Local: []netip.Addr{sa}, Remote: []netip.Addr{la}, MaxBW: 5e9, HasMaxBW: true})
		}
	}
	for r := 1; r <= leaves+spines; r++ {
		id := rid(r)
		ls := links[r]
		if r <= leaves {
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 100, byte(r >> 8), byte(r)}), 32)
			ls = append(ls, stubLink(p.String(), 0))
			tlv := packet.ExtPrefixTLV(packet.ExtPrefix{RouteType: routeIntra, Prefix: p, SubTLVs: []packet.TLV{packet.PathBandwidthTLV(32770, 1e9)}})
			d.add(a, packet.LSAOpaqueArea, opaqueID(packet.OpaqueExtPrefix, 1).String(), id, &packet.OpaqueLSA{OpaqueType: packet.OpaqueExtPrefix, OpaqueID: 1, TLVs: []packet.TLV{tlv}})
		}
		d.router("0.0.0.0", id, 0, ls...)
		for i, t := range te[r] {
			oid := uint32(i + 1)
			d.add(a, packet.LSAOpaqueArea, opaqueID(packet.OpaqueTE, oid).String(), id, &packet.OpaqueLSA{OpaqueType: packet.OpaqueTE, OpaqueID: oid, TLVs: []packet.TLV{packet.TELinkTLV(t)}})
		}
	}
	return d
}

func benchBuildGraph(b *testing.B, spines, leaves int) {
	d := benchFabric(spines, leaves)
	a := d.area("0.0.0.0")
	if g := d.in.buildGraph(a, d.now); len(g.Nodes) != spines+leaves || len(g.Links) != 2*spines*leaves {
		b.Fatalf("%d nodes, %d links", len(g.Nodes), len(g.Links))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d.in.buildGraph(a, d.now)
	}
}

func BenchmarkBuildGraph8x32(b *testing.B)   { benchBuildGraph(b, 8, 32) }
func BenchmarkBuildGraph16x128(b *testing.B) { benchBuildGraph(b, 16, 128) }
