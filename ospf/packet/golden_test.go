package packet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
)

// TestGoldenRoundTrip: every packet captured from FRR 8.4.4
// (testdata/capture.sh) decodes and re-encodes to the identical bytes, and
// so does each LSA, from Raw and from its decoded body alone.
func TestGoldenRoundTrip(t *testing.T) {
	wantType := map[string]uint8{
		"frr_hello.bin": TypeHello, "frr_hello_bcast.bin": TypeHello, "frr_dbd.bin": TypeDBD, "frr_dbd_init.bin": TypeDBD,
		"frr_lsr.bin": TypeLSR, "frr_lsack.bin": TypeLSAck,
		"frr_lsu_router.bin": TypeLSU, "frr_lsu_te.bin": TypeLSU, "frr_lsu_extprefix.bin": TypeLSU, "frr_lsu_network.bin": TypeLSU,
		"frr_lsu_summary.bin": TypeLSU, "frr_lsu_asbr_summary.bin": TypeLSU, "frr_lsu_external.bin": TypeLSU,
	}
	g := goldenFiles(t)
	for name := range wantType {
		if _, ok := g[name]; !ok {
			t.Errorf("golden %s missing", name)
		}
	}
	for _, name := range sortedNames(g) {
		raw := g[name]
		t.Run(name, func(t *testing.T) {
			p, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			h := p.PacketHeader()
			if wt, ok := wantType[name]; ok && h.Type != wt {
				t.Errorf("type %d, want %d", h.Type, wt)
			}
			if h.Version != 2 || int(h.Length) != len(raw) || h.AuType != 0 {
				t.Errorf("header %+v", *h)
			}
			if got := p.AppendTo(nil); !bytes.Equal(got, raw) {
				t.Errorf("re-encoding differs\n got %x\nwant %x", got, raw)
			}
			// Our packet checksum agrees with FRR's.
			if c := PacketChecksum(raw); c != h.Checksum {
				t.Errorf("PacketChecksum %#04x, FRR sent %#04x", c, h.Checksum)
			}
			// Link-layer padding past the packet length is ignored.
			if _, err := Decode(append(append([]byte{}, raw...), 0, 0, 0, 0)); err != nil {
				t.Errorf("with trailing padding: %v", err)
			}
			u, ok := p.(*LSU)
			if !ok {
				return
			}
			if len(u.LSAs) == 0 {
				t.Fatal("LSU without LSAs")
			}
			for i, l := range u.LSAs {
				if !LSAChecksumOK(l.Raw) {
					t.Errorf("LSA %d: FRR's checksum %#04x does not verify", i, l.Checksum)
				}
				if c := LSAChecksum(l.Raw); c != l.Checksum {
					t.Errorf("LSA %d: LSAChecksum %#04x, FRR %#04x", i, c, l.Checksum)
				}
				if l.Body == nil {
					t.Errorf("LSA %d (type %d) not decoded", i, l.Type)
				}
				l2, n, err := DecodeLSA(l.Raw)
				if err != nil || n != len(l.Raw) || !reflect.DeepEqual(l2, l) {
					t.Errorf("LSA %d: DecodeLSA: %v, %d bytes, equal %v", i, err, n, reflect.DeepEqual(l2, l))
				}
				// Canonical encoding from the body alone is FRR's encoding.
				fromBody := l
				fromBody.Raw = nil
				if got := fromBody.AppendTo(nil); !bytes.Equal(got, l.Raw) {
					t.Errorf("LSA %d (type %d): encoding the body differs\n got %x\nwant %x", i, l.Type, got, l.Raw)
				}
				if got := NewLSA(l.LSAHeader, l.Body); !bytes.Equal(got.Raw, l.Raw) || got.LSAHeader != l.LSAHeader {
					t.Errorf("LSA %d: NewLSA differs", i)
				}
				if _, err := json.Marshal(Describe(&l, DefaultPathBandwidthSubTLV)); err != nil {
					t.Errorf("LSA %d: Describe: %v", i, err)
				}
			}
		})
	}
}

func decodeGolden(t *testing.T, name string) Packet {
	t.Helper()
	raw, ok := goldenFiles(t)[name]
	if !ok {
		t.Fatalf("%s missing", name)
	}
	p, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The values below were read by hand from the hex of the committed
// captures (xxd testdata/frr_*.bin); re-running capture.sh changes
// sequence numbers, checksums and which packets are picked, so update them
// then. Addresses are those capture.sh configures: r1 10.255.0.1 (ABR),
// r2 10.255.0.2 (ASBR, area 0, p2p 10.0.12.0/24), r3 10.255.0.3 (area 1,
// broadcast 10.0.13.0/24).
func TestGoldenHello(t *testing.T) {
	h := decodeGolden(t, "frr_hello.bin").(*Hello)
	want := &Hello{
		Header: Header{Version: 2, Type: TypeHello, Length: 48, RouterID: ip("10.255.0.2"), AreaID: ip("0.0.0.0"), Checksum: 0xe6c6},
		// FRR sends the interface mask on a point-to-point network too.
		Mask: ip("255.255.255.0"), HelloInterval: 1, Options: OptE, Priority: 1, DeadInterval: 4,
		DR: ip("0.0.0.0"), BDR: ip("0.0.0.0"), Neighbors: []netip.Addr{ip("10.255.0.1")},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("p2p hello\n got %+v\nwant %+v", h, want)
	}
	b := decodeGolden(t, "frr_hello_bcast.bin").(*Hello)
	if b.AreaID != ip("0.0.0.1") || b.RouterID != ip("10.255.0.3") || b.DR != ip("10.0.13.3") || b.BDR != ip("10.0.13.1") ||
		len(b.Neighbors) != 1 || b.Neighbors[0] != ip("10.255.0.1") || b.Priority != 1 {
		t.Errorf("broadcast hello %+v", b)
	}
}

func TestGoldenDBDLSRAck(t *testing.T) {
	d := decodeGolden(t, "frr_dbd.bin").(*DBD)
	if d.MTU != 1500 || d.Options != OptE|OptO || d.Flags != 0 || d.Seq != 0x28b5b4e2 || len(d.LSAs) != 4 {
		t.Errorf("DBD %+v", d)
	}
	if d.LSAs[0] != (LSAHeader{Age: 0, Options: OptE, Type: LSARouter, ID: ip("10.255.0.1"), AdvRouter: ip("10.255.0.1"),
		Seq: -0x7ffffffd, Checksum: 0x4dcb, Length: 36}) {
		t.Errorf("DBD LSA 0 %+v", d.LSAs[0])
	}
	if k := d.LSAs[3].Key(); k != (LSAKey{Type: LSAExternal, ID: ip("192.0.2.0"), AdvRouter: ip("10.255.0.2")}) {
		t.Errorf("DBD LSA 3 key %+v", k)
	}
	i := decodeGolden(t, "frr_dbd_init.bin").(*DBD)
	if i.Flags != DBDFlagI|DBDFlagM|DBDFlagMS || i.MTU != 1500 || len(i.LSAs) != 0 || i.LSAs != nil {
		t.Errorf("init DBD %+v", i)
	}
	r := decodeGolden(t, "frr_lsr.bin").(*LSR)
	want := []LSRequest{
		{Type: 1, ID: ip("10.255.0.1"), AdvRouter: ip("10.255.0.1")},
		{Type: 3, ID: ip("10.0.12.0"), AdvRouter: ip("10.255.0.1")},
		{Type: 3, ID: ip("10.255.0.1"), AdvRouter: ip("10.255.0.1")},
		{Type: 5, ID: ip("192.0.2.0"), AdvRouter: ip("10.255.0.2")},
	}
	if !reflect.DeepEqual(r.Requests, want) {
		t.Errorf("LSR %+v", r.Requests)
	}
	a := decodeGolden(t, "frr_lsack.bin").(*LSAck)
	if len(a.LSAs) != 5 || a.LSAs[0].Type != LSARouter || a.LSAs[0].ID != ip("10.255.0.3") || a.LSAs[0].Checksum != 0xe9f1 {
		t.Errorf("LSAck %+v", a.LSAs)
	}
}

func lsasOf(t *testing.T, name string) []LSA {
	return decodeGolden(t, name).(*LSU).LSAs
}

func TestGoldenRouterNetwork(t *testing.T) {
	ls := lsasOf(t, "frr_lsu_router.bin")
	if len(ls) != 1 {
		t.Fatalf("%d LSAs", len(ls))
	}
	r := ls[0]
	if r.LSAHeader != (LSAHeader{Age: 6, Options: OptE, Type: LSARouter, ID: ip("10.255.0.3"), AdvRouter: ip("10.255.0.3"),
		Seq: -0x7ffffffc, Checksum: 0xe9f1, Length: 48}) {
		t.Errorf("header %+v", r.LSAHeader)
	}
	want := &RouterLSA{Links: []RouterLink{
		{ID: ip("10.0.13.3"), Data: ip("10.0.13.3"), Type: LinkTransit, Metric: 10},
		{ID: ip("10.255.0.3"), Data: ip("255.255.255.255"), Type: LinkStub, Metric: 0},
	}}
	if !reflect.DeepEqual(r.Body, want) {
		t.Errorf("router body %+v", r.Body)
	}
	// FRR 8.4.4 sent two instances of r3's router LSA (seq 3 and 4) in the
	// same LSU, then the network LSA.
	ls = lsasOf(t, "frr_lsu_network.bin")
	if len(ls) != 3 || ls[0].Key() != ls[1].Key() || ls[1].Compare(ls[0].LSAHeader) != 1 || ls[2].Type != LSANetwork {
		t.Fatalf("network LSU %+v", ls)
	}
	n := ls[2]
	if n.ID != ip("10.0.13.3") || !reflect.DeepEqual(n.Body, &NetworkLSA{Mask: ip("255.255.255.0"),
		Routers: []netip.Addr{ip("10.255.0.1"), ip("10.255.0.3")}}) {
		t.Errorf("network LSA %+v %+v", n.LSAHeader, n.Body)
	}
}

func TestGoldenSummaryExternal(t *testing.T) {
	ls := lsasOf(t, "frr_lsu_summary.bin")
	if len(ls) != 1 || ls[0].Type != LSASummary || !reflect.DeepEqual(ls[0].Body, &SummaryLSA{Mask: ip("255.255.255.255"), Metric: 10}) {
		t.Errorf("summary %+v", ls)
	}
	if p, ok := LSAPrefix(ls[0].ID, ls[0].Body.(*SummaryLSA).Mask); !ok || p != pfx("10.255.0.3/32") {
		t.Errorf("summary prefix %v", p)
	}
	ls = lsasOf(t, "frr_lsu_asbr_summary.bin")
	if len(ls) != 2 || ls[1].Type != LSAASBRSummary || ls[1].ID != ip("10.255.0.2") ||
		!reflect.DeepEqual(ls[1].Body, &SummaryLSA{Mask: ip("0.0.0.0"), Metric: 10}) {
		t.Errorf("ASBR summary %+v", ls)
	}
	var ext *LSA
	for i, l := range lsasOf(t, "frr_lsu_external.bin") {
		if l.Type == LSAExternal {
			ext = &lsasOf(t, "frr_lsu_external.bin")[i]
		}
	}
	if ext == nil {
		t.Fatal("no external LSA")
	}
	// redistribute connected: E2, metric 20, no forwarding address, tag 0.
	if ext.ID != ip("192.0.2.0") || ext.AdvRouter != ip("10.255.0.2") || ext.Checksum != 0x658a ||
		!reflect.DeepEqual(ext.Body, &ExternalLSA{Mask: ip("255.255.255.0"), EBit: true, Metric: 20, Forward: ip("0.0.0.0")}) {
		t.Errorf("external %+v %+v", ext.LSAHeader, ext.Body)
	}
}

// opaqueOf returns the opaque LSAs of a golden LSU by opaque type.
func opaqueOf(t *testing.T, name string) map[uint8]*LSA {
	out := map[uint8]*LSA{}
	ls := lsasOf(t, name)
	for i := range ls {
		if o, ok := ls[i].Body.(*OpaqueLSA); ok {
			out[o.OpaqueType] = &ls[i]
		}
	}
	return out
}

func TestGoldenTE(t *testing.T) {
	// r1's bundle on the broadcast link (area 1): TE, Extended Link, RI.
	op := opaqueOf(t, "frr_lsu_te.bin")
	te := op[OpaqueTE]
	if te == nil || te.ID != ip("1.0.0.2") || te.Options != OptE|OptO || te.Checksum != 0x1efb || te.Length != 108 {
		t.Fatalf("TE LSA %+v", te)
	}
	o := te.Body.(*OpaqueLSA)
	if o.OpaqueID != 2 || len(o.TLVs) != 2 {
		t.Fatalf("TE body %+v", o)
	}
	if a, ok := TERouterAddress(o); !ok || a != ip("10.255.0.1") {
		t.Errorf("router address %v %v", a, ok)
	}
	links, err := TELinks(o)
	if err != nil || len(links) != 1 {
		t.Fatalf("links %+v %v", links, err)
	}
	l := links[0]
	// Multi-access link: Link ID is the DR's address, no remote address.
	if l.LinkType != TELinkMultiAccess || l.LinkID != ip("10.0.13.3") || !reflect.DeepEqual(l.Local, []netip.Addr{ip("10.0.13.1")}) ||
		l.Remote != nil || !l.HasMaxBW || l.MaxBW != 1.25e9 {
		t.Errorf("link %+v", l)
	}
	if len(l.SubTLVs) != 2 || l.SubTLVs[0].Type != TESubMaxRsvBW || l.SubTLVs[1].Type != TESubUnrsvBW || len(l.SubTLVs[1].Value) != 32 {
		t.Errorf("other sub-TLVs %+v", l.SubTLVs)
	}
	// The builder reproduces FRR's Link TLV byte for byte.
	if got := TELinkTLV(l); !reflect.DeepEqual(got, o.TLVs[1]) {
		t.Errorf("TELinkTLV\n got %x\nwant %x", got.Value, o.TLVs[1].Value)
	}
	if got := TERouterTLV(ip("10.255.0.1")); !reflect.DeepEqual(got, o.TLVs[0]) {
		t.Errorf("TERouterTLV %+v", got)
	}

	// r2's bundle on the p2p link (area 0).
	op = opaqueOf(t, "frr_lsu_extprefix.bin")
	links, err = TELinks(op[OpaqueTE].Body.(*OpaqueLSA))
	if err != nil || len(links) != 1 || links[0].LinkType != TELinkP2P || links[0].LinkID != ip("10.255.0.1") ||
		links[0].Local[0] != ip("10.0.12.2") || links[0].Remote[0] != ip("10.0.12.1") || links[0].MaxBW != 1.25e9 {
		t.Errorf("p2p TE links %+v %v", links, err)
	}
}

func TestGoldenExtPrefix(t *testing.T) {
	op := opaqueOf(t, "frr_lsu_extprefix.bin")
	for _, ot := range []uint8{OpaqueTE, OpaqueRouterInfo, OpaqueExtPrefix, OpaqueExtLink} {
		if op[ot] == nil {
			t.Errorf("no opaque type %d LSA in FRR's bundle", ot)
		}
	}
	ep := op[OpaqueExtPrefix]
	if ep.ID != ip("7.0.0.1") || ep.AdvRouter != ip("10.255.0.2") || ep.Checksum != 0x1053 || ep.Length != 44 {
		t.Errorf("ext prefix header %+v", ep.LSAHeader)
	}
	ps, err := ExtPrefixes(ep.Body.(*OpaqueLSA))
	if err != nil || len(ps) != 1 {
		t.Fatalf("%+v %v", ps, err)
	}
	// segment-routing prefix 10.255.0.2/32 index 2: intra-area, N flag,
	// Prefix SID sub-TLV (flags 0, MT 0, algorithm 0, index 2).
	want := ExtPrefix{RouteType: ExtPrefixRouteIntra, Flags: ExtPrefixFlagN, Prefix: pfx("10.255.0.2/32"),
		SubTLVs: []TLV{{Type: ExtPrefixSubPrefixSID, Value: []byte{0, 0, 0, 0, 0, 0, 0, 2}}}}
	if !reflect.DeepEqual(ps[0], want) {
		t.Errorf("ext prefix %+v", ps[0])
	}
	if got := ExtPrefixTLV(ps[0]); !reflect.DeepEqual(got, ep.Body.(*OpaqueLSA).TLVs[0]) {
		t.Errorf("ExtPrefixTLV %x", got.Value)
	}
	if _, ok := PathBandwidth(ps[0].SubTLVs, DefaultPathBandwidthSubTLV); ok {
		t.Error("FRR sent no Path Bandwidth")
	}
	// Extended Link: FRR 8.4.4 puts its remote interface address in
	// sub-TLV 32768 (experimental range of the Extended Link registry).
	el := op[OpaqueExtLink].Body.(*OpaqueLSA)
	d := Describe(op[OpaqueExtLink], DefaultPathBandwidthSubTLV)
	js, _ := json.Marshal(d)
	if len(el.TLVs) != 1 || !bytes.Contains(js, []byte(`"adj_sid"`)) || !bytes.Contains(js, []byte(`"type":32768`)) {
		t.Errorf("ext link %s", js)
	}
	js, _ = json.Marshal(Describe(op[OpaqueRouterInfo], DefaultPathBandwidthSubTLV))
	for _, s := range []string{`"sr_algorithm"`, `"range_size":8000`, `"label":16000`, `"sr_local_block"`, `"traffic_engineering":true`} {
		if !bytes.Contains(js, []byte(s)) {
			t.Errorf("RI description lacks %s: %s", s, js)
		}
	}
}

// TestChecksumKnownAnswers: our checksums against the values FRR computed.
func TestChecksumKnownAnswers(t *testing.T) {
	pk := map[string]uint16{"frr_hello.bin": 0xe6c6, "frr_hello_bcast.bin": 0xb8c0, "frr_dbd.bin": 0x0f8f, "frr_lsr.bin": 0xd8a3,
		"frr_lsack.bin": 0x4357, "frr_lsu_te.bin": 0x5e80, "frr_lsu_extprefix.bin": 0x544c}
	g := goldenFiles(t)
	for n, want := range pk {
		b := append([]byte{}, g[n]...)
		binary.BigEndian.PutUint16(b[12:], 0xdead)
		if got := PacketChecksum(b); got != want {
			t.Errorf("%s: packet checksum %#04x, want %#04x", n, got, want)
		}
	}
	lk := map[string][]uint16{ // LSA checksums in wire order
		"frr_lsu_te.bin":        {0x1efb, 0x8205, 0x1a92},
		"frr_lsu_extprefix.bin": {0x09f0, 0x29c8, 0x1053, 0x1497},
		"frr_lsu_external.bin":  {0x4bcc, 0x68c9, 0x7ec8, 0x658a},
		"frr_lsu_network.bin":   {0x9a5e, 0xe9f1, 0xcd4d},
	}
	for n, want := range lk {
		ls := lsasOf(t, n)
		if len(ls) != len(want) {
			t.Fatalf("%s: %d LSAs", n, len(ls))
		}
		for i, l := range ls {
			raw := append([]byte{}, l.Raw...)
			binary.BigEndian.PutUint16(raw[16:], 0)
			if got := LSAChecksum(raw); got != want[i] {
				t.Errorf("%s LSA %d: checksum %#04x, want %#04x", n, i, got, want[i])
			}
			// Aging does not touch the checksum.
			SetLSAAge(raw, MaxAge)
			binary.BigEndian.PutUint16(raw[16:], want[i])
			if !LSAChecksumOK(raw) || LSAAge(raw) != MaxAge {
				t.Errorf("%s LSA %d: aged LSA does not verify", n, i)
			}
			raw[len(raw)-1] ^= 1
			if LSAChecksumOK(raw) {
				t.Errorf("%s LSA %d: corrupted LSA verifies", n, i)
			}
		}
	}
}
