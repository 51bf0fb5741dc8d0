package packet

import (
	"net/netip"
	"sort"
	"testing"

	"github.com/fared/fared/internal/igp/goldencap"
)

func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }
func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// goldenFiles are the packets testdata/capture.sh captured from FRR 8.4.4.
func goldenFiles(t testing.TB) map[string][]byte { return goldencap.Files(t, "testdata/frr_*.bin") }

func sortedNames(m map[string][]byte) []string {
	var ns []string
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// goldenLSAs are all LSAs of the golden LSUs, in file and wire order.
func goldenLSAs(t testing.TB) []LSA {
	t.Helper()
	g := goldenFiles(t)
	var out []LSA
	for _, n := range sortedNames(g) {
		p, err := Decode(g[n])
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if u, ok := p.(*LSU); ok {
			out = append(out, u.LSAs...)
		}
	}
	return out
}

func hdr(t uint8, id, adv string) LSAHeader {
	return LSAHeader{Age: 1, Options: OptE, Type: t, ID: ip(id), AdvRouter: ip(adv), Seq: InitialSequenceNumber}
}

func opaqueHdr(adv string) LSAHeader {
	return LSAHeader{Age: 1, Options: OptE | OptO, Type: LSAOpaqueArea, AdvRouter: ip(adv), Seq: InitialSequenceNumber + 4}
}

// sampleLSAs are the LSAs a fared router originates, one of each kind.
func sampleLSAs() map[string]LSA {
	teLink := TELink{
		LinkType: TELinkP2P, LinkID: ip("10.255.0.2"),
		Local: []netip.Addr{ip("10.0.12.1")}, Remote: []netip.Addr{ip("10.0.12.2")},
		MaxBW: 1.25e10, HasMaxBW: true,
		SubTLVs: []TLV{FloatTLV(TESubMaxRsvBW, 1.25e10), {Type: TESubTEMetric, Value: []byte{0, 0, 0, 10}}},
	}
	lanLink := TELink{LinkType: TELinkMultiAccess, LinkID: ip("10.0.13.3"), Local: []netip.Addr{ip("10.0.13.1"), ip("10.0.14.1")}, MaxBW: 5e9, HasMaxBW: true}
	return map[string]LSA{
		"router": NewLSA(hdr(LSARouter, "10.255.0.1", "10.255.0.1"), &RouterLSA{Flags: RouterFlagB | RouterFlagE, Links: []RouterLink{
			{ID: ip("10.255.0.2"), Data: ip("10.0.12.1"), Type: LinkP2P, Metric: 10},
			{ID: ip("10.0.12.0"), Data: ip("255.255.255.0"), Type: LinkStub, Metric: 10},
			{ID: ip("10.0.13.3"), Data: ip("10.0.13.1"), Type: LinkTransit, Metric: 100},
			{ID: ip("10.255.0.1"), Data: ip("255.255.255.255"), Type: LinkStub, Metric: 0},
			{ID: ip("10.255.0.9"), Data: ip("0.0.0.7"), Type: LinkVirtual, Metric: 5, TOS: []TOSMetric{{TOS: 2, Metric: 7}}},
		}}),
		"network": NewLSA(hdr(LSANetwork, "10.0.13.3", "10.255.0.3"), &NetworkLSA{Mask: ip("255.255.255.0"),
			Routers: []netip.Addr{ip("10.255.0.3"), ip("10.255.0.1")}}),
		"summary": NewLSA(hdr(LSASummary, "10.1.0.0", "10.255.0.1"), &SummaryLSA{Mask: ip("255.255.0.0"), Metric: 20}),
		"asbr_summary": NewLSA(hdr(LSAASBRSummary, "10.255.0.2", "10.255.0.1"),
			&SummaryLSA{Mask: ip("0.0.0.0"), Metric: LSInfinity}),
		"external": NewLSA(hdr(LSAExternal, "192.0.2.0", "10.255.0.2"), &ExternalLSA{Mask: ip("255.255.255.0"), EBit: true,
			Metric: 20, Forward: ip("0.0.0.0"), Tag: 0x1234}),
		"nssa": NewLSA(hdr(LSANSSA, "198.51.100.0", "10.255.0.2"), &ExternalLSA{Mask: ip("255.255.255.128"),
			Metric: 7, Forward: ip("10.0.12.2"), TOS: []byte{0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}),
		"te_router": NewLSA(opaqueHdr("10.255.0.1"), &OpaqueLSA{OpaqueType: OpaqueTE, OpaqueID: 0,
			TLVs: []TLV{TERouterTLV(ip("10.255.0.1"))}}),
		"te_link": NewLSA(opaqueHdr("10.255.0.1"), &OpaqueLSA{OpaqueType: OpaqueTE, OpaqueID: 1,
			TLVs: []TLV{TELinkTLV(teLink)}}),
		"te_frr_style": NewLSA(opaqueHdr("10.255.0.1"), &OpaqueLSA{OpaqueType: OpaqueTE, OpaqueID: 2,
			TLVs: []TLV{TERouterTLV(ip("10.255.0.1")), TELinkTLV(lanLink)}}),
		"ext_prefix": NewLSA(opaqueHdr("10.255.0.1"), &OpaqueLSA{OpaqueType: OpaqueExtPrefix, OpaqueID: 1, TLVs: []TLV{
			ExtPrefixTLV(ExtPrefix{RouteType: ExtPrefixRouteIntra, Flags: ExtPrefixFlagN, Prefix: pfx("10.255.0.1/32"),
				SubTLVs: []TLV{{Type: ExtPrefixSubPrefixSID, Value: []byte{0, 0, 0, 0, 0, 0, 0, 1}},
					PathBandwidthTLV(DefaultPathBandwidthSubTLV, 3.4028235e38)}}),
			ExtPrefixTLV(ExtPrefix{RouteType: ExtPrefixRouteInter, Flags: ExtPrefixFlagA, Prefix: pfx("10.20.0.0/16"),
				SubTLVs: []TLV{PathBandwidthTLV(DefaultPathBandwidthSubTLV, 2.5e9)}}),
			ExtPrefixTLV(ExtPrefix{RouteType: ExtPrefixRouteExternal, Prefix: pfx("0.0.0.0/0")}),
		}}),
		"opaque_unknown_tlvs": NewLSA(LSAHeader{Type: LSAOpaqueLink, AdvRouter: ip("10.255.0.1"), Seq: 5},
			&OpaqueLSA{OpaqueType: 200, OpaqueID: 0xabcdef, TLVs: []TLV{{Type: 9, Value: []byte{1, 2, 3}}, {Type: 65535}}}),
	}
}

func sampleHeader(t uint8) Header {
	return Header{Version: 2, Type: t, RouterID: ip("10.255.0.1"), AreaID: ip("0.0.0.0")}
}

// samplePackets are packets like the ones fared sends.
func samplePackets() map[string]Packet {
	lsas := sampleLSAs()
	var all []LSA
	var hdrs []LSAHeader
	for _, n := range []string{"router", "network", "summary", "asbr_summary", "external", "nssa", "te_router", "te_link", "te_frr_style", "ext_prefix", "opaque_unknown_tlvs"} {
		all = append(all, lsas[n])
		hdrs = append(hdrs, lsas[n].LSAHeader)
	}
	return map[string]Packet{
		"hello": &Hello{Header: sampleHeader(TypeHello), Mask: ip("255.255.255.0"), HelloInterval: 1, Options: OptE | OptO,
			Priority: 1, DeadInterval: 4, DR: ip("10.0.13.3"), BDR: ip("10.0.13.1"),
			Neighbors: []netip.Addr{ip("10.255.0.3"), ip("10.255.0.4")}},
		"hello_alone": &Hello{Header: sampleHeader(TypeHello), Mask: ip("0.0.0.0"), HelloInterval: 10, Options: OptE,
			DeadInterval: 40, DR: ip("0.0.0.0"), BDR: ip("0.0.0.0")},
		"dbd_init": &DBD{Header: sampleHeader(TypeDBD), MTU: 1500, Options: OptE | OptO, Flags: DBDFlagI | DBDFlagM | DBDFlagMS, Seq: 0x28b5b4e2},
		"dbd":      &DBD{Header: sampleHeader(TypeDBD), MTU: 9000, Options: OptE | OptO, Flags: DBDFlagM, Seq: 7, LSAs: hdrs},
		"lsr": &LSR{Header: sampleHeader(TypeLSR), Requests: []LSRequest{
			{Type: LSARouter, ID: ip("10.255.0.2"), AdvRouter: ip("10.255.0.2")},
			{Type: LSAOpaqueArea, ID: ip("7.0.0.1"), AdvRouter: ip("10.255.0.2")}}},
		"lsu":       &LSU{Header: sampleHeader(TypeLSU), LSAs: all},
		"lsu_empty": &LSU{Header: sampleHeader(TypeLSU)},
		"lsack":     &LSAck{Header: sampleHeader(TypeLSAck), LSAs: hdrs},
	}
}

// benchLSU is a large realistic LSU: n router LSAs of links links each, one
// FRR-style TE LSA per link of the first router, and n Extended Prefix LSAs
// with Path Bandwidth.
func benchLSU(n, links int) *LSU {
	u := &LSU{Header: sampleHeader(TypeLSU)}
	for r := range n {
		rid := netip.AddrFrom4([4]byte{10, 255, byte(r >> 8), byte(r)})
		rl := &RouterLSA{Flags: RouterFlagE}
		for l := range links {
			rl.Links = append(rl.Links, RouterLink{ID: netip.AddrFrom4([4]byte{10, 254, byte(l), 1}),
				Data: netip.AddrFrom4([4]byte{10, byte(r), byte(l), 1}), Type: LinkP2P, Metric: 10})
		}
		h := LSAHeader{Age: 1, Options: OptE, Type: LSARouter, ID: rid, AdvRouter: rid, Seq: InitialSequenceNumber}
		u.LSAs = append(u.LSAs, NewLSA(h, rl))
	}
	rid := ip("10.255.0.0")
	for l := range links {
		link := TELink{LinkType: TELinkP2P, LinkID: netip.AddrFrom4([4]byte{10, 254, byte(l), 1}),
			Local: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(l), 1})}, Remote: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(l), 2})},
			MaxBW: 5e10, HasMaxBW: true, SubTLVs: []TLV{FloatTLV(TESubMaxRsvBW, 5e10), FloatTLV(TESubUnrsvBW, 5e10)}}
		link.SubTLVs[1].Value = append(link.SubTLVs[1].Value, make([]byte, 28)...)
		o := &OpaqueLSA{OpaqueType: OpaqueTE, OpaqueID: uint32(l + 1), TLVs: []TLV{TERouterTLV(rid), TELinkTLV(link)}}
		u.LSAs = append(u.LSAs, NewLSA(LSAHeader{Age: 1, Options: OptE | OptO, Type: LSAOpaqueArea, AdvRouter: rid, Seq: 1}, o))
	}
	for r := range n {
		rid := netip.AddrFrom4([4]byte{10, 255, byte(r >> 8), byte(r)})
		o := &OpaqueLSA{OpaqueType: OpaqueExtPrefix, OpaqueID: 1, TLVs: []TLV{ExtPrefixTLV(ExtPrefix{
			RouteType: ExtPrefixRouteIntra, Flags: ExtPrefixFlagN, Prefix: netip.PrefixFrom(rid, 32),
			SubTLVs: []TLV{PathBandwidthTLV(DefaultPathBandwidthSubTLV, 1e11)}})}}
		u.LSAs = append(u.LSAs, NewLSA(LSAHeader{Age: 1, Options: OptE | OptO, Type: LSAOpaqueArea, AdvRouter: rid, Seq: 1}, o))
	}
	return u
}
