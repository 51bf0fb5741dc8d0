package ospf

import (
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf/packet"
)

// Body accessors: Decode gives pointers, NewLSA keeps what we passed.
func routerBody(b packet.LSABody) (*packet.RouterLSA, bool) {
	switch v := b.(type) {
	case *packet.RouterLSA:
		return v, v != nil
	case packet.RouterLSA:
		return &v, true
	}
	return nil, false
}

func networkBody(b packet.LSABody) (*packet.NetworkLSA, bool) {
	switch v := b.(type) {
	case *packet.NetworkLSA:
		return v, v != nil
	case packet.NetworkLSA:
		return &v, true
	}
	return nil, false
}

func summaryBody(b packet.LSABody) (*packet.SummaryLSA, bool) {
	switch v := b.(type) {
	case *packet.SummaryLSA:
		return v, v != nil
	case packet.SummaryLSA:
		return &v, true
	}
	return nil, false
}

func externalBody(b packet.LSABody) (*packet.ExternalLSA, bool) {
	switch v := b.(type) {
	case *packet.ExternalLSA:
		return v, v != nil
	case packet.ExternalLSA:
		return &v, true
	}
	return nil, false
}

func opaqueBody(b packet.LSABody) (*packet.OpaqueLSA, bool) {
	switch v := b.(type) {
	case *packet.OpaqueLSA:
		return v, v != nil
	case packet.OpaqueLSA:
		return &v, true
	}
	return nil, false
}

// extKey finds the Path Bandwidth of one prefix of one advertiser.
type extKey struct {
	adv       netip.Addr
	prefix    netip.Prefix
	routeType uint8
}

// pseudoID is the graph id of the network vertex of a Network LSA.
func pseudoID(id netip.Addr) string { return "net:" + id.String() }

// buildGraph turns one area's database (and the AS-scope externals) into
// an lsdb snapshot.
func (in *Instance) buildGraph(a *area, now time.Time) *lsdb.Graph {
	b := lsdb.NewBuilder("ospf", 0, a.name)
	te := map[netip.Addr][]packet.TELink{}
	ext := map[extKey]float32{}
	addExt := func(e *lsaEntry, o *packet.OpaqueLSA) {
		ps, err := packet.ExtPrefixes(o)
		if err != nil {
			return
		}
		for _, p := range ps {
			if pb, ok := packet.PathBandwidth(p.SubTLVs, in.pbCode); ok {
				k := extKey{e.lsa.AdvRouter, p.Prefix.Masked(), p.RouteType}
				if _, dup := ext[k]; !dup {
					ext[k] = pb
				}
			}
		}
	}
	live := func(e *lsaEntry) bool { return e.age(now) < MaxAge && e.lsa.Body != nil }
	for _, e := range a.db {
		if !live(e) || e.lsa.Type != packet.LSAOpaqueArea {
			continue
		}
		o, ok := opaqueBody(e.lsa.Body)
		if !ok {
			continue
		}
		switch o.OpaqueType {
		case packet.OpaqueTE:
			if ls, err := packet.TELinks(o); err == nil {
				te[e.lsa.AdvRouter] = append(te[e.lsa.AdvRouter], ls...)
			}
		case packet.OpaqueExtPrefix:
			addExt(e, o)
		}
	}
	for _, e := range in.as.db {
		if live(e) && e.lsa.Type == packet.LSAOpaqueAS {
			if o, ok := opaqueBody(e.lsa.Body); ok && o.OpaqueType == packet.OpaqueExtPrefix {
				addExt(e, o)
			}
		}
	}
	pathBW := func(adv netip.Addr, p netip.Prefix, rt uint8) (float32, bool) {
		pb, ok := ext[extKey{adv, p, rt}]
		return pb, ok
	}
	// teMatch finds the Maximum Bandwidth (and remote address) of a router
	// link in its advertiser's TE Link TLVs.
	teMatch := func(adv netip.Addr, ltype uint8, linkID, local netip.Addr) (packet.TELink, bool) {
		var fallback *packet.TELink
		n := 0
		for i := range te[adv] {
			t := &te[adv][i]
			if t.LinkType != ltype || t.LinkID != linkID {
				continue
			}
			if len(t.Local) > 0 && slices.Contains(t.Local, local) {
				return *t, true
			}
			if len(t.Local) == 0 {
				fallback = t
				n++
			}
		}
		if n == 1 {
			return *fallback, true
		}
		return packet.TELink{}, false
	}
	inter := map[prefixAdv]bool{}
	for _, e := range a.db {
		if !live(e) {
			continue
		}
		adv := e.lsa.AdvRouter
		from := adv.String()
		switch e.lsa.Type {
		case packet.LSARouter:
			rl, ok := routerBody(e.lsa.Body)
			if !ok {
				continue
			}
			b.AddNode(lsdb.Node{ID: from, RouterID: adv})
			for _, l := range rl.Links {
				switch l.Type {
				case linkP2P:
					ll, a := lsdb.Link{Metric: uint32(l.Metric)}, lsdb.LinkAddrs{Local: lsdb.AddrOf(l.Data)}
					if t, ok := teMatch(adv, 1, l.ID, l.Data); ok {
						ll.MaxBW, ll.HasBW = t.MaxBW, t.HasMaxBW
						if len(t.Remote) > 0 {
							a.Remote = lsdb.AddrOf(t.Remote[0])
						}
					}
					b.AddLinkAddrs(from, l.ID.String(), ll, a)
				case linkTransit:
					ll, a := lsdb.Link{Metric: uint32(l.Metric)}, lsdb.LinkAddrs{Local: lsdb.AddrOf(l.Data)}
					if t, ok := teMatch(adv, 2, l.ID, l.Data); ok {
						ll.MaxBW, ll.HasBW = t.MaxBW, t.HasMaxBW
					}
					b.AddLinkAddrs(from, pseudoID(l.ID), ll, a)
				case linkStub:
					bits := maskBits(l.Data)
					if bits < 0 {
						continue
					}
					p := netip.PrefixFrom(l.ID, bits).Masked()
					lp := lsdb.Prefix{Prefix: p, Metric: uint32(l.Metric)}
					lp.PathBW, lp.HasPathBW = pathBW(adv, p, routeIntra)
					b.AddPrefix(from, lp)
				}
			}
		case packet.LSANetwork:
			nl, ok := networkBody(e.lsa.Body)
			if !ok {
				continue
			}
			id := pseudoID(e.lsa.ID)
			b.AddNode(lsdb.Node{ID: id, Pseudo: true})
			bits := maskBits(nl.Mask)
			p := netip.PrefixFrom(e.lsa.ID, max(bits, 0)).Masked()
			pb, hasPB := pathBW(adv, p, routeIntra)
			for _, r := range nl.Routers {
				b.AddLink(id, r.String(), lsdb.Link{})
			}
			if bits >= 0 {
				// RFC 2328 §16.1: the transit network's subnet is
				// reached at the network vertex's distance, min over its
				// routers of dist(router) + the router's cost onto the
				// network; the network's own links are metric 0.
				b.AddPrefix(id, lsdb.Prefix{Prefix: p, PathBW: pb, HasPathBW: hasPB})
				if slices.Contains(nl.Routers, in.rid) {
					// Ours too: the subnet is directly connected (a
					// prefix Self advertises is local to spf.Routes).
					b.AddPrefix(in.rid.String(), lsdb.Prefix{Prefix: p})
				}
			}
		case packet.LSASummary:
			s, ok := summaryBody(e.lsa.Body)
			if !ok || adv == in.rid {
				continue
			}
			bits := maskBits(s.Mask)
			if bits < 0 || s.Metric >= packet.LSInfinity {
				continue
			}
			p := netip.PrefixFrom(e.lsa.ID, bits).Masked()
			lp := lsdb.Prefix{Prefix: p, Metric: s.Metric, Inter: true}
			lp.PathBW, lp.HasPathBW = pathBW(adv, p, routeInter)
			b.AddPrefix(from, lp)
			inter[prefixAdv{p, from}] = true
		}
	}
	for _, e := range in.as.db {
		if !live(e) || e.lsa.Type != packet.LSAExternal {
			continue
		}
		x, ok := externalBody(e.lsa.Body)
		if !ok {
			continue
		}
		bits := maskBits(x.Mask)
		if bits < 0 || x.Metric >= packet.LSInfinity {
			continue
		}
		p := netip.PrefixFrom(e.lsa.ID, bits).Masked()
		lp := lsdb.Prefix{Prefix: p, Metric: x.Metric, External: true, Type2: x.EBit}
		if f := x.Forward; f.Is4() && !f.IsUnspecified() {
			lp.Forward = f // RFC 2328 §16.4(3): route toward it, not the ASBR
		}
		lp.PathBW, lp.HasPathBW = pathBW(e.lsa.AdvRouter, p, routeExternal)
		// Present only where the ASBR has a Router LSA (no type-4 routing).
		b.AddPrefix(e.lsa.AdvRouter.String(), lp)
	}
	a.interArea = inter
	// Self's adjacencies: every neighbour at least 2-Way (DROthers on a LAN
	// are next hops to each other without being adjacent).
	for _, ifc := range in.ifaces {
		if ifc.area != a || !ifc.running {
			continue
		}
		for _, n := range ifc.sortedNbrs() {
			if n.state < Nbr2Way || (ifc.isP2P() && n.state != NbrFull) {
				continue
			}
			b.AddAdjacency(lsdb.Adjacency{Node: n.rid.String(), IfIndex: ifc.ifi.Index, IfName: ifc.name,
				Local: slices.Clone(ifc.addrs), NbrAddrs: []netip.Addr{n.addr}})
		}
	}
	return b.Build(in.rid.String())
}
