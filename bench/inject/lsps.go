// Package inject plays the edge of a synthetic fabric towards one router
// under test (RUT): it forms IS-IS point-to-point adjacencies with the RUT
// over veths, one per cable of the RUT's node (playing the node at the far
// end of each), floods the LSPs of every other node of the fabric, and can
// change one cable's bandwidth and re-flood the LSPs that changed.
//
// The RUT takes the place of the fabric's Self node: its system id is
// SystemID(Self), so the injected LSPs that list Self as a neighbour pass
// the two-way check against the RUT's own LSP.
//
// Identities and addresses (node i is Fabric.Nodes[i], cable c is
// Fabric.Cables[c]):
//
//	system id of node i     0000.xxxx.xxxx with xxxxxxxx = i+1
//	router id of node i     172.16.0.0/12 + i+1 (TLV 132 and 134)
//	cable c                 100.64.0.0/10 + 2c as a /31: end A even, end B odd
//	hostname                the node's name (TLV 137)
//	area                    49.0001, level 2 only
package inject

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/isis/packet"
)

// Defaults of the LSPs the injector builds.
const (
	// DefaultLSPMTU leaves room on a 1500-byte veth for the 802.2 header
	// (3 bytes) and matches fared's and FRR's default LSP MTU (1492/1497).
	DefaultLSPMTU = 1492
	// DefaultLifetime is the largest lifetime: a benchmark never has to
	// refresh. Retransmissions carry the remaining lifetime.
	DefaultLifetime = 65535
	// PathBWSubTLV is fared's default FARE Path Bandwidth codepoint.
	PathBWSubTLV = packet.DefaultPathBandwidthSubTLV
	// DefaultArea is the area of every node, "49.0001".
	DefaultArea = "49.0001"
)

var (
	cableBase  = netip.MustParseAddr("100.64.0.0")
	routerBase = netip.MustParseAddr("172.16.0.0")
)

// SystemID returns the system id of node i.
func SystemID(i int) packet.SystemID {
	v := uint32(i + 1)
	return packet.SystemID{0, 0, byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// RouterID returns the router id (and TLV 132 address) of node i.
func RouterID(i int) netip.Addr { return addOffset(routerBase, i+1) }

// CableAddrs returns the /31 addresses of cable c: end A, then end B.
func CableAddrs(c int) (a, b netip.Prefix) {
	return netip.PrefixFrom(addOffset(cableBase, 2*c), 31), netip.PrefixFrom(addOffset(cableBase, 2*c+1), 31)
}

// EndAddr returns node n's address on cable c, and the far end's.
func EndAddr(f *closgen.Fabric, c, n int) (local, remote netip.Prefix) {
	a, b := CableAddrs(c)
	if f.Cables[c].A == n {
		return a, b
	}
	return b, a
}

func addOffset(a netip.Addr, off int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Limits checks that the fabric fits the addressing plan.
func Limits(f *closgen.Fabric) error {
	if len(f.Cables) > 1<<21 {
		return fmt.Errorf("%d cables: more than 100.64.0.0/10 holds", len(f.Cables))
	}
	if len(f.Nodes) >= 1<<20 {
		return fmt.Errorf("%d nodes: more than 172.16.0.0/12 holds", len(f.Nodes))
	}
	return nil
}

// NodeTLVs returns the TLVs of node n's LSP, in the order a router sends
// them: area, protocols, hostname, router id, interface address, then
// neighbours (one TLV 22 entry per cable, with the interface and neighbour
// addresses and the Maximum Link Bandwidth) and prefixes (with the FARE
// Path Bandwidth sub-TLV). Large TLVs are split with the packet Pack
// helpers (a neighbour with its three sub-TLVs takes 29 bytes: 8 per TLV).
func NodeTLVs(f *closgen.Fabric, n int, area []byte) packet.TLVs {
	node := &f.Nodes[n]
	tlvs := packet.TLVs{
		&packet.AreaAddresses{Areas: [][]byte{area}},
		&packet.ProtocolsSupported{NLPIDs: []uint8{packet.NLPIDIPv4}},
		&packet.Hostname{Name: node.Name},
		&packet.TERouterID{Addr: RouterID(n)},
		&packet.IPv4Addresses{Addrs: []netip.Addr{RouterID(n)}},
	}
	var nbrs []packet.ExtISNeighbor
	for c := range f.Cables {
		cb := &f.Cables[c]
		var peer int
		switch n {
		case cb.A:
			peer = cb.B
		case cb.B:
			peer = cb.A
		default:
			continue
		}
		local, remote := EndAddr(f, c, n)
		nbrs = append(nbrs, packet.ExtISNeighbor{
			ID:     packet.MakeNodeID(SystemID(peer), 0),
			Metric: cb.Metric,
			SubTLVs: []packet.SubTLV{
				packet.AddrSubTLV(packet.SubIPv4IfAddr, local.Addr()),
				packet.AddrSubTLV(packet.SubIPv4NbrAddr, remote.Addr()),
				packet.FloatSubTLV(packet.SubMaxLinkBW, cb.BW),
			},
		})
	}
	tlvs = append(tlvs, packet.PackExtISReach(nbrs)...)
	var ps []packet.ExtIPPrefix
	for _, p := range node.Prefixes {
		e := packet.ExtIPPrefix{Metric: p.Metric, Prefix: p.Prefix, Down: p.Down}
		if p.HasPathBW {
			e.SubTLVs = []packet.SubTLV{packet.FloatSubTLV(PathBWSubTLV, p.PathBW)}
		}
		ps = append(ps, e)
	}
	tlvs = append(tlvs, packet.PackExtIPReach(ps)...)
	return tlvs
}

// Fragment is one LSP fragment: its id and its TLV body (the bytes after
// the 27-byte header), which decides whether a regenerated fragment
// changed.
type Fragment struct {
	ID   packet.LSPID
	Body []byte
	TLVs packet.TLVs
}

// NodeFragments splits node n's TLVs into LSP fragments of at most mtu
// bytes (the PDU, header included).
func NodeFragments(f *closgen.Fabric, n int, area []byte, mtu int) ([]Fragment, error) {
	frags := packet.SplitFragments(NodeTLVs(f, n, area), mtu)
	if len(frags) > 256 {
		return nil, fmt.Errorf("node %s needs %d LSP fragments, more than 256", f.Nodes[n].Name, len(frags))
	}
	out := make([]Fragment, len(frags))
	for i, t := range frags {
		out[i] = Fragment{ID: packet.MakeLSPID(SystemID(n), 0, uint8(i)), Body: t.AppendTo(nil), TLVs: t}
	}
	return out, nil
}

// EncodeLSP builds a level-2 LSP PDU with a fresh checksum.
func EncodeLSP(fr Fragment, seq uint32, lifetime uint16) []byte {
	p := &packet.LSP{
		Header:   packet.Header{Type: packet.TypeL2LSP},
		Lifetime: lifetime,
		ID:       fr.ID,
		Seq:      seq,
		Flags:    3, // L2 IS, no ATT, no overload
		TLVs:     fr.TLVs,
	}
	return p.AppendTo(nil)
}

// sameBody reports whether two fragments carry the same TLVs.
func sameBody(a, b Fragment) bool { return a.ID == b.ID && bytes.Equal(a.Body, b.Body) }
