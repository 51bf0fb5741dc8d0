package isis

import (
	"bytes"
	"net/netip"
	"slices"
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

// buildGraph turns one level's database into an lsdb snapshot. A node's
// LSPs count only while its fragment 0 is live (ISO 10589 §7.2.5).
func (in *Instance) buildGraph(lv *level, now time.Time) *lsdb.Graph {
	b := lsdb.NewBuilder("isis", lv.n, "")
	type frag struct {
		id packet.LSPID
		e  *lspEntry
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
		frags = append(frags, frag{id, e})
	}
	// The same database must give the same node and link order: the rib
	// compares a new graph with the last computed one by index, and only
	// an identical topology lets it skip Dijkstra (spf.TopologyDiff) when
	// just a bandwidth or prefix changed. Map order would defeat that.
	slices.SortFunc(frags, func(a, b frag) int { return bytes.Compare(a.id[:], b.id[:]) })
	for _, f := range frags {
		if f.id.Fragment() != 0 {
			continue
		}
		nid, e := f.id.NodeID(), f.e
		n := lsdb.Node{ID: nid.String(), Pseudo: nid.Pseudo() != 0, Overload: e.lsp.Overload(), Attached: e.lsp.Attached()}
		for _, t := range e.lsp.TLVs {
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
		for _, t := range f.e.lsp.TLVs {
			switch v := t.(type) {
			case *packet.ExtISReach:
				for _, nb := range v.Neighbors {
					if nb.Metric >= maxLinkMetric {
						continue // RFC 5305 §3: not for SPF; the two-way check then drops the pair
					}
					l := lsdb.Link{Metric: nb.Metric}
					if !pseudo {
						if bw, ok := packet.MaxLinkBandwidth(nb.SubTLVs); ok {
							l.MaxBW, l.HasBW = bw, true
						}
						l.LocalAddr, _ = packet.IPv4IfAddr(nb.SubTLVs)
						l.RemoteAddr, _ = packet.IPv4NbrAddr(nb.SubTLVs)
					}
					b.AddLink(from, nb.ID.String(), l)
				}
			case *packet.ExtIPReach:
				for _, p := range v.Prefixes {
					if p.Metric > maxPathMetric {
						continue // RFC 5305 §4: never installed
					}
					lp := lsdb.Prefix{Prefix: p.Prefix.Masked(), Metric: p.Metric, Down: p.Down}
					lp.PathBW, lp.HasPathBW = packet.PathBandwidth(p.SubTLVs, in.pbCode)
					b.AddPrefix(from, lp)
				}
			case *packet.IPv6Reach:
				for _, p := range v.Prefixes {
					if p.Metric > maxPathMetric {
						continue // RFC 5308 §2: never installed
					}
					lp := lsdb.Prefix{Prefix: p.Prefix.Masked(), Metric: p.Metric, Down: p.Down, External: p.External}
					lp.PathBW, lp.HasPathBW = packet.PathBandwidth(p.SubTLVs, in.pbCode)
					b.AddPrefix(from, lp)
				}
			}
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
			nid, e := f.id.NodeID(), f.e
			if nid.Pseudo() == 0 && nid.SystemID() != in.sysID && e.lsp.Attached() {
				b.AddPrefix(nid.String(), lsdb.Prefix{Prefix: netip.PrefixFrom(netip.IPv4Unspecified(), 0)})
				if in.ipv6() {
					b.AddPrefix(nid.String(), lsdb.Prefix{Prefix: netip.PrefixFrom(netip.IPv6Unspecified(), 0)})
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
	return b.Build(packet.MakeNodeID(in.sysID, 0).String())
}
