package isis

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/lsdb"
)

// refBuildGraph is buildGraph as it was before LSPs kept their topology in
// compact form: it walks every fragment's TLVs, decoded afresh from the
// raw PDU. TestBuildGraphMatchesReference holds the two together.
func (in *Instance) refBuildGraph(lv *level, now time.Time) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", lv.n, "")
	type frag struct {
		id   packet.LSPID
		e    *lspEntry
		tlvs packet.TLVs
	}
	decode := func(e *lspEntry) packet.TLVs {
		d, err := packet.Decode(e.raw)
		if err != nil {
			panic(err)
		}
		return d.(*packet.LSP).TLVs
	}
	zero := map[packet.NodeID]*lspEntry{}
	var frags []frag
	for id, e := range lv.db {
		if e.remaining(now) == 0 {
			continue
		}
		if id.Fragment() == 0 {
			zero[id.NodeID()] = e
		}
		frags = append(frags, frag{id, e, decode(e)})
	}
	slices.SortFunc(frags, func(a, b frag) int { return bytes.Compare(a.id[:], b.id[:]) })
	for _, f := range frags {
		if f.id.Fragment() != 0 {
			continue
		}
		nid, e := f.id.NodeID(), f.e
		n := lsdb.Node{ID: nid.String(), Pseudo: nid.Pseudo() != 0, Overload: e.lsp.Overload(), Attached: e.lsp.Attached()}
		for _, t := range f.tlvs {
			switch v := t.(type) {
			case *packet.Hostname:
				n.Name = v.Name
			case *packet.TERouterID:
				n.RouterID = v.Addr
			}
		}
		b.AddNode(n)
	}
	for _, f := range frags {
		nid := f.id.NodeID()
		if zero[nid] == nil {
			continue
		}
		from := nid.String()
		pseudo := nid.Pseudo() != 0
		for _, t := range f.tlvs {
			switch v := t.(type) {
			case *packet.ExtISReach:
				for _, nb := range v.Neighbors {
					if nb.Metric >= maxLinkMetric {
						continue
					}
					l := lsdb.Link{Metric: nb.Metric}
					var a lsdb.LinkAddrs
					if !pseudo {
						if bw, ok := packet.MaxLinkBandwidth(nb.SubTLVs); ok {
							l.MaxBW, l.HasBW = bw, true
						}
						local, _ := packet.IPv4IfAddr(nb.SubTLVs)
						remote, _ := packet.IPv4NbrAddr(nb.SubTLVs)
						a = lsdb.LinkAddrs{Local: lsdb.AddrOf(local), Remote: lsdb.AddrOf(remote)}
					}
					b.AddLinkAddrs(from, nb.ID.String(), l, a)
				}
			case *packet.ExtIPReach:
				for _, p := range v.Prefixes {
					if p.Metric > maxPathMetric {
						continue
					}
					lp := lsdb.Prefix{Prefix: p.Prefix.Masked(), Metric: p.Metric, Down: p.Down}
					lp.PathBW, lp.HasPathBW = packet.PathBandwidth(p.SubTLVs, in.pbCode)
					b.AddPrefix(from, lp)
				}
			case *packet.IPv6Reach:
				for _, p := range v.Prefixes {
					if p.Metric > maxPathMetric {
						continue
					}
					lp := lsdb.Prefix{Prefix: p.Prefix.Masked(), Metric: p.Metric, Down: p.Down, External: p.External}
					lp.PathBW, lp.HasPathBW = packet.PathBandwidth(p.SubTLVs, in.pbCode)
					b.AddPrefix(from, lp)
				}
			}
		}
	}
	return b.Build(packet.MakeNodeID(in.sysID, 0).String())
}

// randomLSDB fills lv with the LSPs of n routers: hostnames (none, one,
// two), TE router ids, pseudonodes, second fragments (some without a
// fragment 0), neighbours that have no LSP, maximum metrics, sub-TLVs
// present, missing or of the wrong length, IPv4 and IPv6 prefixes with
// and without Path Bandwidth, expired and purged entries. Most entries are
// stored as received LSPs are (stripped), the rest with their TLVs.
func randomLSDB(rng *rand.Rand, in *Instance, lv *level, n int, now time.Time) {
	sys := func(i int) packet.SystemID { return packet.SystemID{0, 0, 0, 0, byte(i >> 8), byte(i)} }
	addr := func() []byte { return []byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))} }
	subs := func() []packet.SubTLV {
		var s []packet.SubTLV
		if rng.IntN(5) > 0 {
			s = append(s, packet.FloatSubTLV(packet.SubMaxLinkBW, float32(rng.IntN(4))*1.25e9))
		}
		if rng.IntN(4) > 0 {
			s = append(s, packet.SubTLV{Type: packet.SubIPv4IfAddr, Value: addr()})
		}
		if rng.IntN(4) > 0 {
			s = append(s, packet.SubTLV{Type: packet.SubIPv4NbrAddr, Value: addr()})
		}
		if rng.IntN(10) == 0 {
			s = append(s, packet.FloatSubTLV(packet.SubMaxLinkBW, 9e9)) // a second one: the first counts
		}
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		return s
	}
	metric := func(max uint32) uint32 {
		switch rng.IntN(12) {
		case 0:
			return max
		case 1:
			return max + 1
		}
		return uint32(1 + rng.IntN(20))
	}
	put := func(id packet.LSPID, flags uint8, tlvs packet.TLVs) {
		p := &packet.LSP{Header: packet.Header{Type: lspType(lv.n)}, Lifetime: 1200, ID: id, Seq: 1, Flags: flags, TLVs: tlvs}
		raw := p.AppendTo(nil)
		d, err := packet.Decode(raw)
		if err != nil {
			panic(err)
		}
		e := &lspEntry{raw: raw, lsp: d.(*packet.LSP), rcvd: now, expires: now.Add(1200 * time.Second), received: true}
		switch rng.IntN(10) {
		case 0:
			e.expires = now.Add(-time.Second)
		case 1:
			e.purged = now
		}
		if rng.IntN(4) > 0 {
			e.strip()
		}
		lv.put(id, e)
	}
	for i := 1; i <= n; i++ {
		for frag := uint8(0); frag < 2; frag++ {
			if frag == 1 && rng.IntN(3) > 0 || frag == 0 && i > 1 && rng.IntN(15) == 0 {
				continue
			}
			var tlvs packet.TLVs
			if frag == 0 {
				for range rng.IntN(3) {
					tlvs = append(tlvs, &packet.Hostname{Name: string(rune('a'+rng.IntN(26))) + "r"})
				}
				if rng.IntN(2) == 0 {
					tlvs = append(tlvs, &packet.TERouterID{Addr: netip.AddrFrom4([4]byte{10, 255, byte(i >> 8), byte(i)})})
				}
			}
			// Ring neighbours (mostly two-way), a random one, a pseudonode.
			var nbs []packet.ExtISNeighbor
			for _, d := range []int{-2, -1, 1, 2, 1} {
				if j := i + d; j >= 1 && j <= n && rng.IntN(5) > 0 {
					nbs = append(nbs, packet.ExtISNeighbor{ID: packet.MakeNodeID(sys(j), 0), Metric: metric(maxLinkMetric), SubTLVs: subs()})
				}
			}
			if rng.IntN(3) == 0 {
				nb := packet.MakeNodeID(sys(1+rng.IntN(n+3)), 0)
				if rng.IntN(3) == 0 {
					nb = packet.MakeNodeID(sys(1+rng.IntN(n)), 1)
				}
				nbs = append(nbs, packet.ExtISNeighbor{ID: nb, Metric: metric(maxLinkMetric), SubTLVs: subs()})
			}
			if len(nbs) > 0 {
				tlvs = append(tlvs, &packet.ExtISReach{Neighbors: nbs})
			}
			var v4 []packet.ExtIPPrefix
			var v6 []packet.IPv6Prefix
			for range rng.IntN(3) {
				p := packet.ExtIPPrefix{Metric: metric(maxPathMetric), Down: rng.IntN(5) == 0,
					Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(rng.IntN(3)), byte(i), 0}), 24)}
				if rng.IntN(2) == 0 {
					p.SubTLVs = []packet.SubTLV{packet.FloatSubTLV(in.pbCode, float32(rng.IntN(3))*1e9)}
				}
				v4 = append(v4, p)
			}
			if rng.IntN(3) == 0 {
				a := [16]byte{0xfd, 0, 0, byte(i)}
				v6 = append(v6, packet.IPv6Prefix{Metric: metric(maxPathMetric), External: rng.IntN(2) == 0, Prefix: netip.PrefixFrom(netip.AddrFrom16(a), 64)})
			}
			if len(v4) > 0 {
				tlvs = append(tlvs, &packet.ExtIPReach{Prefixes: v4})
			}
			if len(v6) > 0 {
				tlvs = append(tlvs, &packet.IPv6Reach{Prefixes: v6})
			}
			rng.Shuffle(len(tlvs), func(a, b int) { tlvs[a], tlvs[b] = tlvs[b], tlvs[a] })
			put(packet.MakeLSPID(sys(i), 0, frag), uint8(rng.IntN(16)), tlvs)
		}
		if rng.IntN(6) == 0 { // a pseudonode with a few members
			var nbs []packet.ExtISNeighbor
			for range 1 + rng.IntN(4) {
				nbs = append(nbs, packet.ExtISNeighbor{ID: packet.MakeNodeID(sys(1+rng.IntN(n)), 0), SubTLVs: subs()})
			}
			put(packet.MakeLSPID(sys(i), 1, 0), 0, packet.TLVs{&packet.ExtISReach{Neighbors: nbs}})
		}
	}
}

// TestBuildGraphMatchesReference: graphs built from the compact topology
// equal those the TLV-walking reference builds, on random databases (and
// hostnames equal those of the TLVs).
func TestBuildGraphMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Unix(1e9, 0)
	links, prefixes, stripped := 0, 0, 0
	for round := range 60 {
		in, lv := offlineInstance(t, 1)
		randomLSDB(rng, in, lv, 2+rng.IntN(40), now)
		got, want := in.buildGraph(lv, now), in.refBuildGraph(lv, now)
		links, prefixes = links+len(want.Links), prefixes+len(want.Prefixes)
		for _, e := range lv.db {
			if e.stripped {
				stripped++
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: graphs differ\ngot  %+v\nwant %+v", round, daemon.WireTopology(got), daemon.WireTopology(want))
		}
		names := map[packet.SystemID]string{}
		for id, e := range lv.db {
			if id.Pseudo() != 0 || id.Fragment() != 0 || e.remaining(now) == 0 {
				continue
			}
			for _, x := range e.tlvs() {
				if h, ok := x.(*packet.Hostname); ok {
					names[id.SystemID()] = h.Name
				}
			}
		}
		if h := in.hostnames(now); !reflect.DeepEqual(h, names) {
			t.Fatalf("round %d: hostnames %v, want %v", round, h, names)
		}
	}
	if links < 1000 || prefixes < 500 || stripped < 500 {
		t.Fatalf("the databases were too thin to tell: %d links, %d prefixes, %d stripped entries", links, prefixes, stripped)
	}
}
