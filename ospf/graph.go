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
	gb := &graphBuild{in: in, now: now, b: lsdb.NewBuilder(Key, 0, a.name),
		te: map[netip.Addr][]packet.TELink{}, ext: map[extKey]float32{}}
	gb.readOpaque(a)
	inter := map[prefixAdv]bool{}
	for _, e := range a.db {
		if !gb.live(e) {
			continue
		}
		switch e.lsa.Type {
		case packet.LSARouter:
			gb.addRouter(e)
		case packet.LSANetwork:
			gb.addNetwork(e)
		case packet.LSASummary:
			gb.addSummary(e, inter)
		}
	}
	gb.addExternals()
	a.interArea = inter
	gb.addAdjacencies(a)
	return gb.b.Build(in.rid.String())
}

// graphBuild is one buildGraph: the builder and what the opaque LSAs
// tell about the others' links (TE) and prefixes (Path Bandwidth).
type graphBuild struct {
	in  *Instance
	now time.Time
	b   *lsdb.Builder
	te  map[netip.Addr][]packet.TELink // by advertising router
	ext map[extKey]float32             // Path Bandwidth by advertiser, prefix, route type
}

func (gb *graphBuild) live(e *lsaEntry) bool { return e.age(gb.now) < MaxAge && e.lsa.Body != nil }

// readOpaque reads the area's TE and Extended Prefix LSAs and the AS
// scope's Extended Prefix LSAs.
func (gb *graphBuild) readOpaque(a *area) {
	for _, e := range a.db {
		if !gb.live(e) || e.lsa.Type != packet.LSAOpaqueArea {
			continue
		}
		o, ok := opaqueBody(e.lsa.Body)
		if !ok {
			continue
		}
		switch o.OpaqueType {
		case packet.OpaqueTE:
			if ls, err := packet.TELinks(o); err == nil {
				gb.te[e.lsa.AdvRouter] = append(gb.te[e.lsa.AdvRouter], ls...)
			}
		case packet.OpaqueExtPrefix:
			gb.addExt(e, o)
		}
	}
	for _, e := range gb.in.as.db {
		if gb.live(e) && e.lsa.Type == packet.LSAOpaqueAS {
			if o, ok := opaqueBody(e.lsa.Body); ok && o.OpaqueType == packet.OpaqueExtPrefix {
				gb.addExt(e, o)
			}
		}
	}
}

// addExt keeps the Path Bandwidth of each prefix of an Extended Prefix
// LSA (the first seen for a key).
func (gb *graphBuild) addExt(e *lsaEntry, o *packet.OpaqueLSA) {
	ps, err := packet.ExtPrefixes(o)
	if err != nil {
		return
	}
	for _, p := range ps {
		if pb, ok := packet.PathBandwidth(p.SubTLVs, gb.in.pbCode); ok {
			k := extKey{e.lsa.AdvRouter, p.Prefix.Masked(), p.RouteType}
			if _, dup := gb.ext[k]; !dup {
				gb.ext[k] = pb
			}
		}
	}
}

func (gb *graphBuild) pathBW(adv netip.Addr, p netip.Prefix, rt uint8) (float32, bool) {
	pb, ok := gb.ext[extKey{adv, p, rt}]
	return pb, ok
}

// teMatch finds the Maximum Bandwidth (and remote address) of a router
// link in its advertiser's TE Link TLVs.
func (gb *graphBuild) teMatch(adv netip.Addr, ltype uint8, linkID, local netip.Addr) (packet.TELink, bool) {
	var fallback *packet.TELink
	n := 0
	ts := gb.te[adv]
	for i := range ts {
		t := &ts[i]
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

// addRouter adds a Router LSA: the router, its links (with their TE
// bandwidths) and its stub prefixes.
func (gb *graphBuild) addRouter(e *lsaEntry) {
	rl, ok := routerBody(e.lsa.Body)
	if !ok {
		return
	}
	adv := e.lsa.AdvRouter
	from := adv.String()
	gb.b.AddNode(lsdb.Node{ID: from, RouterID: adv})
	for _, l := range rl.Links {
		switch l.Type {
		case linkP2P:
			ll, a := lsdb.Link{Metric: uint32(l.Metric)}, lsdb.LinkAddrs{Local: lsdb.AddrOf(l.Data)}
			if t, ok := gb.teMatch(adv, 1, l.ID, l.Data); ok {
				ll.MaxBW, ll.HasBW = t.MaxBW, t.HasMaxBW
				if len(t.Remote) > 0 {
					a.Remote = lsdb.AddrOf(t.Remote[0])
				}
			}
			gb.b.AddLinkAddrs(from, l.ID.String(), ll, a)
		case linkTransit:
			ll, a := lsdb.Link{Metric: uint32(l.Metric)}, lsdb.LinkAddrs{Local: lsdb.AddrOf(l.Data)}
			if t, ok := gb.teMatch(adv, 2, l.ID, l.Data); ok {
				ll.MaxBW, ll.HasBW = t.MaxBW, t.HasMaxBW
			}
			gb.b.AddLinkAddrs(from, pseudoID(l.ID), ll, a)
		case linkStub:
			bits := maskBits(l.Data)
			if bits < 0 {
				continue
			}
			p := netip.PrefixFrom(l.ID, bits).Masked()
			lp := lsdb.Prefix{Prefix: p, Metric: uint32(l.Metric)}
			lp.PathBW, lp.HasPathBW = gb.pathBW(adv, p, routeIntra)
			gb.b.AddPrefix(from, lp)
		}
	}
}

// addNetwork adds a Network LSA: the network vertex, its links to its
// routers, and its subnet.
func (gb *graphBuild) addNetwork(e *lsaEntry) {
	nl, ok := networkBody(e.lsa.Body)
	if !ok {
		return
	}
	id := pseudoID(e.lsa.ID)
	gb.b.AddNode(lsdb.Node{ID: id, Pseudo: true})
	bits := maskBits(nl.Mask)
	p := netip.PrefixFrom(e.lsa.ID, max(bits, 0)).Masked()
	pb, hasPB := gb.pathBW(e.lsa.AdvRouter, p, routeIntra)
	for _, r := range nl.Routers {
		gb.b.AddLink(id, r.String(), lsdb.Link{})
	}
	if bits >= 0 {
		// RFC 2328 §16.1: the transit network's subnet is reached at the
		// network vertex's distance, min over its routers of
		// dist(router) + the router's cost onto the network; the
		// network's own links are metric 0.
		gb.b.AddPrefix(id, lsdb.Prefix{Prefix: p, PathBW: pb, HasPathBW: hasPB})
		if slices.Contains(nl.Routers, gb.in.rid) {
			// Ours too: the subnet is directly connected (a prefix Self
			// advertises is local to spf.Routes).
			gb.b.AddPrefix(gb.in.rid.String(), lsdb.Prefix{Prefix: p})
		}
	}
}

// addSummary adds a Summary LSA's inter-area prefix (not ours), noting
// it in inter.
func (gb *graphBuild) addSummary(e *lsaEntry, inter map[prefixAdv]bool) {
	adv := e.lsa.AdvRouter
	s, ok := summaryBody(e.lsa.Body)
	if !ok || adv == gb.in.rid {
		return
	}
	bits := maskBits(s.Mask)
	if bits < 0 || s.Metric >= packet.LSInfinity {
		return
	}
	from := adv.String()
	p := netip.PrefixFrom(e.lsa.ID, bits).Masked()
	lp := lsdb.Prefix{Prefix: p, Metric: s.Metric, Inter: true}
	lp.PathBW, lp.HasPathBW = gb.pathBW(adv, p, routeInter)
	gb.b.AddPrefix(from, lp)
	inter[prefixAdv{p, from}] = true
}

// addExternals adds the AS-External LSAs' prefixes to their ASBRs.
func (gb *graphBuild) addExternals() {
	for _, e := range gb.in.as.db {
		if !gb.live(e) || e.lsa.Type != packet.LSAExternal {
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
		lp.PathBW, lp.HasPathBW = gb.pathBW(e.lsa.AdvRouter, p, routeExternal)
		// Present only where the ASBR has a Router LSA (no type-4 routing).
		gb.b.AddPrefix(e.lsa.AdvRouter.String(), lp)
	}
}

// addAdjacencies adds Self's adjacencies in the area: every neighbour at
// least 2-Way (DROthers on a LAN are next hops to each other without
// being adjacent), Full on a p2p interface.
func (gb *graphBuild) addAdjacencies(a *area) {
	for _, ifc := range gb.in.ifaces {
		if ifc.area != a || !ifc.running {
			continue
		}
		for _, n := range ifc.sortedNbrs() {
			if n.state < Nbr2Way || (ifc.isP2P() && n.state != NbrFull) {
				continue
			}
			gb.b.AddAdjacency(lsdb.Adjacency{Node: n.rid.String(), IfIndex: ifc.ifi.Index, IfName: ifc.name,
				Local: slices.Clone(ifc.addrs), NbrAddrs: []netip.Addr{n.addr}})
		}
	}
}
