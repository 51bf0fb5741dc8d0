package packet

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/fared/fared/internal/igp/goldencap"
)

func sys(n byte) SystemID { return SystemID{0, 0, 0, 0, 0, n} }

func mustArea(t testing.TB, s string) []byte {
	t.Helper()
	a, err := ParseArea(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }
func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func l2(t uint8) Header         { return Header{Type: t} }
func pbSub(v float32) SubTLV    { return FloatSubTLV(DefaultPathBandwidthSubTLV, v) }
func teSubs(i int) []SubTLV {
	return []SubTLV{
		AddrSubTLV(SubIPv4IfAddr, netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1})),
		AddrSubTLV(SubIPv4NbrAddr, netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 2})),
		FloatSubTLV(SubMaxLinkBW, 1.25e10),
	}
}

// samplePDUs are PDUs like the ones fared originates, built with pointer
// TLVs as Decode returns them so decoded values compare equal.
func samplePDUs(t testing.TB) map[string]PDU {
	area := mustArea(t, "49.0001")
	lan := &LANHello{
		Header: l2(TypeL2LANHello), CircuitType: CircuitL2, SourceID: sys(1), HoldTime: 9, Priority: 64,
		LANID: MakeNodeID(sys(2), 3),
		TLVs: TLVs{
			&AreaAddresses{Areas: [][]byte{area}},
			&ISNeighbors{SNPAs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}},
			&ProtocolsSupported{NLPIDs: []uint8{NLPIDIPv4, NLPIDIPv6}},
			&IPv4Addresses{Addrs: []netip.Addr{ip("10.0.0.1")}},
			&IPv6Addresses{Addrs: []netip.Addr{ip("fe80::1")}},
			&Hostname{Name: "leaf1"},
		},
	}
	lan.TLVs = append(lan.TLVs, PaddingTLVs(1497-LANHelloHeaderLen-lan.TLVs.Len())...)
	p2p := &P2PHello{
		Header: Header{Type: TypeP2PHello, MaxAreaAddrs: 3, IDLen: 6}, CircuitType: CircuitL1L2, SourceID: sys(1), HoldTime: 30, LocalCircuitID: 7,
		TLVs: TLVs{
			&AreaAddresses{Areas: [][]byte{area, mustArea(t, "49.0002")}},
			&ProtocolsSupported{NLPIDs: []uint8{NLPIDIPv4}},
			&IPv4Addresses{Addrs: []netip.Addr{ip("10.0.12.1")}},
			&IPv6Addresses{Addrs: []netip.Addr{ip("fe80::2")}},
			&Hostname{Name: "spine1"},
			&ThreeWay{State: ThreeWayUp, HasExtCircuit: true, ExtCircuitID: 5, HasNeighbor: true, NeighborID: sys(2), NeighborExtCircuitID: 9},
			&Padding{Len: 100},
		},
	}
	lsp := &LSP{
		Header: l2(TypeL2LSP), Lifetime: 1200, ID: MakeLSPID(sys(1), 0, 0), Seq: 42, Flags: 0x03,
		TLVs: TLVs{
			&AreaAddresses{Areas: [][]byte{area}},
			&ProtocolsSupported{NLPIDs: []uint8{NLPIDIPv4, NLPIDIPv6}},
			&IPv4Addresses{Addrs: []netip.Addr{ip("10.255.0.1")}},
			&TERouterID{Addr: ip("10.255.0.1")},
			&Hostname{Name: "leaf1"},
			&ExtISReach{Neighbors: []ExtISNeighbor{
				{ID: MakeNodeID(sys(2), 0), Metric: 10, SubTLVs: teSubs(1)},
				{ID: MakeNodeID(sys(3), 0), Metric: 0xfffffe, SubTLVs: teSubs(2)},
				{ID: MakeNodeID(sys(4), 1), Metric: 10},
			}},
			&ExtIPReach{Prefixes: []ExtIPPrefix{
				{Metric: 0, Prefix: pfx("10.10.1.0/24"), SubTLVs: []SubTLV{pbSub(3.4028235e38)}},
				{Metric: 10, Down: true, Prefix: pfx("10.255.0.1/32")},
				{Metric: 1, Prefix: pfx("0.0.0.0/0"), SubTLVs: []SubTLV{pbSub(1e9), {Type: 250, Value: []byte{1, 2, 3}}}},
				{Metric: 7, Prefix: netip.PrefixFrom(ip("10.1.2.0"), 20)},    // host bits kept
				{Metric: 8, Prefix: pfx("10.9.0.0/16"), SubTLVs: []SubTLV{}}, // S bit, empty block
			}},
			&IPv6Reach{Prefixes: []IPv6Prefix{
				{Metric: 0, Prefix: pfx("2001:db8:1::/64"), SubTLVs: []SubTLV{pbSub(2.5e9)}},
				{Metric: 10, Down: true, External: true, Prefix: pfx("2001:db8:ff::1/128")},
				{Metric: 10, Prefix: pfx("::/0")},
				{Metric: 3, Prefix: pfx("2001:db8:80::/41")},
			}},
			&IPv6Addresses{Addrs: []netip.Addr{ip("2001:db8:ff::1")}},
			&Unknown{T: 242, Value: []byte{0x0a, 0xff, 0, 1, 0}},
			&Unknown{T: 251, Value: []byte{}},
		},
	}
	csnp := &CSNP{
		Header: l2(TypeL2CSNP), SourceID: MakeNodeID(sys(1), 0),
		Start: LSPID{}, End: LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		TLVs: TLVs(PackLSPEntries([]LSPEntry{
			{Lifetime: 1199, ID: MakeLSPID(sys(1), 0, 0), Seq: 3, Checksum: 0x1234},
			{Lifetime: 0, ID: MakeLSPID(sys(2), 0, 1), Seq: 9, Checksum: 0},
		})),
	}
	psnp := &PSNP{
		Header: Header{Type: TypeL1PSNP}, SourceID: MakeNodeID(sys(2), 0),
		TLVs: TLVs{&LSPEntries{Entries: []LSPEntry{{Lifetime: 1000, ID: MakeLSPID(sys(1), 0, 0), Seq: 3, Checksum: 0xabcd}}}},
	}
	purge := &LSP{Header: Header{Type: TypeL1LSP}, Lifetime: 0, ID: MakeLSPID(sys(9), 0, 3), Seq: 77, Checksum: 0, Flags: 0x01}
	return map[string]PDU{"lan_iih": lan, "p2p_iih": p2p, "lsp": lsp, "csnp": csnp, "psnp": psnp, "purge": purge, "mt_lsp": sampleMTLSP()}
}

// sampleMTLSP is an LSP of a router in MT 0 and MT 2 (RFC 5120) as fared
// originates it with multi-topology on, plus a TLV 235 of MT 3 and flags
// and reserved bits a router may set.
func sampleMTLSP() *LSP {
	return &LSP{
		Header: l2(TypeL2LSP), Lifetime: 1200, ID: MakeLSPID(sys(1), 0, 0), Seq: 5, Flags: 0x03,
		TLVs: TLVs{
			&MultiTopology{MTs: []MTID{MakeMTID(MTIPv4Unicast), MakeMTID(MTIPv6Unicast) | 0x8000, MakeMTID(3) | 0x4000 | 0x1000}},
			&ExtISReach{Neighbors: []ExtISNeighbor{{ID: MakeNodeID(sys(2), 0), Metric: 10, SubTLVs: teSubs(1)}}},
			&MTISReach{MT: MakeMTID(MTIPv6Unicast), Neighbors: []ExtISNeighbor{
				{ID: MakeNodeID(sys(2), 0), Metric: 10, SubTLVs: []SubTLV{FloatSubTLV(SubMaxLinkBW, 1.25e9)}},
				{ID: MakeNodeID(sys(4), 1), Metric: 20},
			}},
			&MTIPReach{MT: MakeMTID(3), Prefixes: []ExtIPPrefix{
				{Metric: 0, Prefix: pfx("10.10.1.0/24"), SubTLVs: []SubTLV{pbSub(2.5e9)}},
				{Metric: 10, Down: true, Prefix: pfx("10.255.0.1/32")},
				{Metric: 8, Prefix: pfx("10.9.0.0/16"), SubTLVs: []SubTLV{}},
			}},
			&MTIPv6Reach{MT: MakeMTID(MTIPv6Unicast), Prefixes: []IPv6Prefix{
				{Metric: 0, Prefix: pfx("2001:db8:1::/64"), SubTLVs: []SubTLV{pbSub(5e9)}},
				{Metric: 10, Down: true, External: true, Prefix: pfx("2001:db8:ff::1/128")},
			}},
		},
	}
}

// encode re-encodes exactly: LSPs with their own checksum.
func encode(p PDU) []byte {
	if l, ok := p.(*LSP); ok {
		return l.AppendToKeepChecksum(nil)
	}
	return p.AppendTo(nil)
}

// goldenFiles are the PDUs testdata/capture.sh captured from FRR.
func goldenFiles(t testing.TB) map[string][]byte { return goldencap.Files(t, "testdata/frr_*.bin") }

// benchLSP builds an LSP of nNbr TE neighbours and nPfx prefixes with
// Path Bandwidth, as a leaf or spine of a CLOS fabric originates.
func benchLSP(nNbr, nPfx int) *LSP {
	ns := make([]ExtISNeighbor, nNbr)
	for i := range ns {
		ns[i] = ExtISNeighbor{ID: MakeNodeID(SystemID{0, 0, 0, 0, byte(i >> 8), byte(i)}, 0), Metric: 10, SubTLVs: teSubs(i)}
	}
	ps := make([]ExtIPPrefix, nPfx)
	for i := range ps {
		ps[i] = ExtIPPrefix{Metric: 0, Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 20, byte(i), 0}), 24), SubTLVs: []SubTLV{pbSub(float32(i+1) * 1.25e9)}}
	}
	tl := TLVs{
		&AreaAddresses{Areas: [][]byte{{0x49, 0, 1}}},
		&ProtocolsSupported{NLPIDs: []uint8{NLPIDIPv4}},
		&Hostname{Name: fmt.Sprintf("leaf%03d", nNbr)},
		&TERouterID{Addr: ip("10.255.0.1")},
	}
	tl = append(tl, PackExtISReach(ns)...)
	tl = append(tl, PackExtIPReach(ps)...)
	return &LSP{Header: l2(TypeL2LSP), Lifetime: 1200, ID: MakeLSPID(sys(1), 0, 0), Seq: 1, Flags: 3, TLVs: tl}
}
