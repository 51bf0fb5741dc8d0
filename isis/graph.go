package isis

import (
	"net/netip"
	"time"

	"github.com/fared/fared/spf"

	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/lsdb"
)

// Metric limits of the wide metrics (RFC 5305 §3 and §4, RFC 5308 §2).
const (
	// maxLinkMetric in TLV 22 advertises a link for other uses (TE) only:
	// it "MUST NOT be considered during the normal SPF computation".
	maxLinkMetric = 1<<24 - 1
	// maxPathMetric: a prefix of TLV 135 or 236 with a larger metric
	// "MUST NOT be considered during the normal SPF computation".
	maxPathMetric = spf.MaxPathMetric
)

// lspTopo is what one LSP contributes to the topology, extracted once when
// the LSP is stored: graph builds (one per burst of LSPs, each reading the
// whole database) walk these compact lists instead of decoded TLVs, and a
// received LSP keeps no decoded TLVs beside them.
type lspTopo struct {
	name     string // TLV 137, the last one
	hasName  bool
	routerID netip.Addr // TLV 134, the last one
	reduces  bool       // TLV 242 announces distributed flooding reduction (floodview.go)
	links    []topoLink
	prefixes []topoPrefix
}

// topoLink is one TLV 22 neighbour usable by SPF (24 bytes, against 40
// for the decoded neighbour plus 32 per sub-TLV).
type topoLink struct {
	nb            packet.NodeID
	flags         uint8 // topoHas*
	metric        uint32
	bw            float32
	local, remote [4]byte
}

const (
	topoHasBW = 1 << iota
	topoHasLocal
	topoHasRemote
)

// topoPrefix is one TLV 135, 236 or 237 (MT 2) prefix usable by SPF. Its sub-TLVs stay
// (slices of the raw PDU): the Path Bandwidth code point is config that a
// reload may change.
type topoPrefix struct {
	prefix   netip.Prefix // masked
	metric   uint32
	down     bool
	external bool
	subs     []packet.SubTLV
}

// topoOf extracts an LSP's contribution, with the rules the graph applies
// (RFC 5305 §3 and §4, RFC 5308 §2 maximum metrics; a pseudonode's links
// carry no bandwidth or addresses).
func topoOf(p *packet.LSP) *lspTopo {
	t := &lspTopo{}
	nl, np := 0, 0
	for _, x := range p.TLVs {
		switch v := x.(type) {
		case *packet.ExtISReach:
			nl += len(v.Neighbors)
		case *packet.ExtIPReach:
			np += len(v.Prefixes)
		case *packet.IPv6Reach:
			np += len(v.Prefixes)
		case *packet.MTIPv6Reach:
			np += len(v.Prefixes)
		}
	}
	if nl > 0 {
		t.links = make([]topoLink, 0, nl)
	}
	if np > 0 {
		t.prefixes = make([]topoPrefix, 0, np)
	}
	pseudo := p.ID.NodeID().Pseudo() != 0
	for _, x := range p.TLVs {
		switch v := x.(type) {
		case *packet.Hostname:
			t.name, t.hasName = v.Name, true
		case *packet.TERouterID:
			t.routerID = v.Addr
		case *packet.Unknown:
			t.reduces = t.reduces || (v.T == tlvRouterCapability && capReduces(v.Value))
		case *packet.ExtISReach:
			for _, nb := range v.Neighbors {
				if nb.Metric >= maxLinkMetric {
					continue // RFC 5305 §3: not for SPF; the two-way check then drops the pair
				}
				l := topoLink{nb: nb.ID, metric: nb.Metric}
				if !pseudo {
					if bw, ok := packet.MaxLinkBandwidth(nb.SubTLVs); ok {
						l.bw, l.flags = bw, l.flags|topoHasBW
					}
					if a, ok := packet.IPv4IfAddr(nb.SubTLVs); ok {
						l.local, l.flags = a.As4(), l.flags|topoHasLocal
					}
					if a, ok := packet.IPv4NbrAddr(nb.SubTLVs); ok {
						l.remote, l.flags = a.As4(), l.flags|topoHasRemote
					}
				}
				t.links = append(t.links, l)
			}
		case *packet.ExtIPReach:
			for _, x := range v.Prefixes {
				if x.Metric > maxPathMetric {
					continue // RFC 5305 §4: never installed
				}
				t.prefixes = append(t.prefixes, topoPrefix{prefix: x.Prefix.Masked(), metric: x.Metric, down: x.Down, subs: x.SubTLVs})
			}
		case *packet.IPv6Reach:
			t.addIPv6(v.Prefixes)
		case *packet.MTIPv6Reach:
			// MT 2's IPv6 prefixes (an MT router sends no TLV 236), read
			// onto the standard topology's links: right while MT 2 has the
			// links MT 0 has (mt.go).
			if v.MT.ID() == packet.MTIPv6Unicast {
				t.addIPv6(v.Prefixes)
			}
		}
	}
	return t
}

// addIPv6 adds the IPv6 prefixes of a TLV 236, or of a TLV 237 of MT 2,
// but those RFC 5308 §2 says never to install.
func (t *lspTopo) addIPv6(ps []packet.IPv6Prefix) {
	for _, x := range ps {
		if x.Metric > maxPathMetric {
			continue
		}
		t.prefixes = append(t.prefixes, topoPrefix{prefix: x.Prefix.Masked(), metric: x.Metric, down: x.Down, external: x.External, subs: x.SubTLVs})
	}
}

// topology returns the entry's contribution, extracting it on first use.
func (e *lspEntry) topology() *lspTopo {
	if e.topo == nil {
		e.topo = topoOf(e.lsp)
	}
	return e.topo
}

// strip extracts the topology and drops the decoded TLVs of a received
// LSP (raw keeps them; tlvs decodes them again for a detailed view). The
// decoded neighbours of a large database weigh several times the raw PDUs.
func (e *lspEntry) strip() {
	e.topology()
	h := *e.lsp
	h.TLVs = nil
	e.lsp, e.stripped = &h, true
}

// tlvs returns the entry's TLVs, decoding the raw PDU of a stripped one.
func (e *lspEntry) tlvs() packet.TLVs {
	if !e.stripped {
		return e.lsp.TLVs
	}
	d, err := packet.Decode(e.raw)
	if err != nil {
		return nil // it decoded when it was stored; raw is not changed but for its lifetime
	}
	if l, ok := d.(*packet.LSP); ok {
		return l.TLVs
	}
	return nil
}

// nodeKey packs a node id into a map key that hashes fast.
func nodeKey(n packet.NodeID) uint64 {
	var k uint64
	for _, c := range n {
		k = k<<8 | uint64(c)
	}
	return k
}

// buildGraph turns one level's database into an lsdb snapshot. A node's
// LSPs count only while its fragment 0 is live (ISO 10589 §7.2.5).
func (in *Instance) buildGraph(lv *level, now time.Time) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", lv.n, "")
	// The same database must give the same node and link order: the rib
	// compares a new graph with the last computed one by index, and only
	// an identical topology lets it skip Dijkstra (spf.TopologyDiff) when
	// just a bandwidth or prefix changed. Map order would defeat that:
	// fragments are read in LSP-id order.
	type frag struct {
		id packet.LSPID
		t  *lspTopo
	}
	ids := lv.sortedIDs()
	frags := make([]frag, 0, len(ids))
	nl, np := 0, 0
	// Nodes first, each from its live fragment 0, in id order; they get
	// indices 0, 1, ... in that order. node maps a node id to its index;
	// neighbours without a database entry get theirs as links name them.
	node := make(map[uint64]int32, len(ids))
	live := make(map[uint64]bool, len(ids)) // fragment 0 live
	for _, id := range ids {
		e := lv.db[id]
		if e.remaining(now) == 0 {
			continue
		}
		t := e.topology()
		frags = append(frags, frag{id, t})
		nl += len(t.links)
		np += len(t.prefixes)
		if id.Fragment() != 0 {
			continue
		}
		nid := id.NodeID()
		n := lsdb.Node{ID: nid.String(), Pseudo: nid.Pseudo() != 0, Overload: e.lsp.Overload(), Attached: e.lsp.Attached(),
			Name: t.name, RouterID: t.routerID}
		node[nodeKey(nid)] = b.AddNode(n)
		live[nodeKey(nid)] = true
	}
	b.Grow(nl, np)
	index := func(nid packet.NodeID) int32 {
		k := nodeKey(nid)
		i, ok := node[k]
		if !ok {
			i = b.Node(nid.String())
			node[k] = i
		}
		return i
	}
	for _, f := range frags {
		nid := nodeKey(f.id.NodeID())
		if !live[nid] {
			continue
		}
		from := node[nid]
		for i := range f.t.links {
			tl := &f.t.links[i]
			l := lsdb.Link{Metric: tl.metric}
			if tl.flags&topoHasBW != 0 {
				l.MaxBW, l.HasBW = tl.bw, true
			}
			var a lsdb.LinkAddrs
			if tl.flags&topoHasLocal != 0 {
				a.Local = tl.local
			}
			if tl.flags&topoHasRemote != 0 {
				a.Remote = tl.remote
			}
			b.AddLinkIndex(from, index(tl.nb), l, a)
		}
		for i := range f.t.prefixes {
			tp := &f.t.prefixes[i]
			lp := lsdb.Prefix{Prefix: tp.prefix, Metric: tp.metric, Down: tp.down, External: tp.external}
			lp.PathBW, lp.HasPathBW = packet.PathBandwidth(tp.subs, in.pbCode)
			b.AddPrefixIndex(from, lp)
		}
	}
	if lv.n == 1 && in.icfg.Level == 1 {
		// An L1-only router routes everything it does not know toward the
		// nearest attached L1L2 routers (ISO 10589 §7.2.9.1): a default
		// route "advertised" by each of them, weighted by capacity like
		// any other prefix.
		for _, f := range frags {
			if f.id.Fragment() != 0 {
				continue
			}
			nid := f.id.NodeID()
			if nid.Pseudo() == 0 && nid.SystemID() != in.sysID && lv.db[f.id].lsp.Attached() {
				b.AddPrefixIndex(node[nodeKey(nid)], lsdb.Prefix{Prefix: netip.PrefixFrom(netip.IPv4Unspecified(), 0)})
				if in.ipv6() {
					b.AddPrefixIndex(node[nodeKey(nid)], lsdb.Prefix{Prefix: netip.PrefixFrom(netip.IPv6Unspecified(), 0)})
				}
			}
		}
	}
	for _, c := range in.circuits {
		var adjs []*adjacency
		if c.isP2P() {
			if a := c.p2p; a != nil && a.state == AdjUp && a.usesLevel(lv.n) {
				adjs = append(adjs, a)
			}
		} else if ll := c.lan[lv.n-1]; ll != nil {
			for _, a := range ll.adjs {
				if a.state == AdjUp {
					adjs = append(adjs, a)
				}
			}
		}
		for _, a := range adjs {
			la := lsdb.Adjacency{Node: packet.MakeNodeID(a.sysID, 0).String(), IfIndex: c.ifi.Index, IfName: c.name}
			la.Local = append(append(la.Local, c.addrs4...), c.addrs6...)
			la.NbrAddrs = append(append(la.NbrAddrs, a.addrs4...), a.addrs6...)
			b.AddAdjacency(la)
		}
	}
	// Links were added grouped by their node, in node order: the graph
	// takes the builder's list over.
	return b.Finish(packet.MakeNodeID(in.sysID, 0).String())
}
