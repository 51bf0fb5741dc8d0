package isis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"

	"github.com/fared/fared/isis/packet"
)

// TestHelloMultiTopology: with multi-topology on, both hello kinds carry
// one TLV 229 of MT 0 and MT 2 with no O/A bits (RFC 5120 §7.1), the
// bytes FRR's "topology ipv6-unicast" hellos hold for those two (e5 04
// 0000 0002); without it, no TLV 229.
func TestHelloMultiTopology(t *testing.T) {
	for _, typ := range []string{"p2p", "lan"} {
		for _, on := range []bool{true, false} {
			var extra []string
			if on {
				extra = []string{"  multi-topology: true\n"}
			}
			c := helloCircuit(t, typ, 1500, extra...)
			var pdu packet.PDU = c.p2pHello()
			if typ == "lan" {
				pdu = c.lanHello(2)
			}
			p, err := packet.Decode(pdu.AppendTo(nil))
			if err != nil {
				t.Fatal(err)
			}
			var raw [][]byte
			for _, tv := range packet.TLVsOf(p) {
				if tv.Type() == packet.TLVMultiTopology {
					raw = append(raw, packet.TLVs{tv}.AppendTo(nil))
				}
			}
			var want [][]byte
			if on {
				want = [][]byte{{229, 4, 0, 0, 0, 2}}
			}
			if !reflect.DeepEqual(raw, want) {
				t.Errorf("%s, multi-topology %v: TLV 229 %x, want %x", typ, on, raw, want)
			}
		}
	}
}

// TestAdjacencyMTs: the adjacency records the topologies of the
// neighbour's TLV 229 (FRR's hello, frr_mt_p2p_iih.bin: MT 0, 2, 3); the
// ones it shares with us are MT 0 and 2 with multi-topology on, MT 0
// without. A hello without TLV 229 is a router of MT 0 only.
func TestAdjacencyMTs(t *testing.T) {
	raw, err := os.ReadFile("packet/testdata/frr_mt_p2p_iih.bin")
	if err != nil {
		t.Fatal(err)
	}
	p, err := packet.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := p.(*packet.P2PHello) // from 0000.0000.0007, 3-way Up naming 0000.0000.0006
	for _, on := range []bool{true, false} {
		extra := []string{""}
		if on {
			extra[0] = "  multi-topology: true\n"
		}
		in, err := New(testConfig(t, 6, "2", []memIf{{name: "e0", typ: "p2p"}}, extra...), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		c := in.circuits[0]
		c.running, c.mtu = true, 1500
		c.rxP2PHello(h, [6]byte{2, 0, 0, 0, 0, 7})
		a := c.p2p
		if a == nil {
			t.Fatalf("no adjacency from FRR's hello (counters %v)", c.counters)
		}
		if !reflect.DeepEqual(a.mts, []uint16{0, 2, 3}) {
			t.Errorf("neighbour's topologies %v, want [0 2 3]", a.mts)
		}
		want := []uint16{0}
		if on {
			want = []uint16{0, 2}
		}
		if got := in.sharedMTs(a); !reflect.DeepEqual(got, want) {
			t.Errorf("multi-topology %v: shared %v, want %v", on, got, want)
		}
	}
	if got := neighborMTs(packet.TLVs{&packet.AreaAddresses{}}); !reflect.DeepEqual(got, []uint16{0}) {
		t.Errorf("no TLV 229: %v, want [0]", got)
	}
	dup := packet.TLVs{&packet.MultiTopology{MTs: []packet.MTID{2 | 0x8000, 0}}, &packet.MultiTopology{MTs: []packet.MTID{2}}}
	if got := neighborMTs(dup); !reflect.DeepEqual(got, []uint16{0, 2}) {
		t.Errorf("repeated and flagged ids: %v, want [0 2]", got)
	}
}

// TestMultiTopologyLSPs: two routers with multi-topology on, in memory.
// r1's LSP carries TLV 229 (MT 0, MT 2) in fragment 0, TLV 22 and TLV
// 222 of MT 2 naming r2, and its IPv6 prefix in TLV 237 of MT 2 with its
// Path Bandwidth (config 5e9 bits/s: 6.25e8 bytes/s), no TLV 236; r2's graph has the prefix at r1 with that
// Path Bandwidth (read from TLV 237). With r2 in MT 0 only, r1's TLV 222
// names nobody.
func TestMultiTopologyLSPs(t *testing.T) {
	for _, r2MT := range []bool{true, false} {
		w := &wire{}
		r2Extra := ""
		if r2MT {
			r2Extra = "  multi-topology: true\n"
		}
		r1 := startMemExtra(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}},
			"  multi-topology: true\n", "    - {prefix: 2001:db8:ff::1/128, path-bandwidth: 5e9}\n")
		r2 := startMemExtra(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}}, r2Extra, "")
		igptest.Poll(t, 10*time.Second, "up", wantUp(r1, "0000.0000.0002@e0"))
		igptest.Poll(t, 10*time.Second, "r2 has r1's IPv6 prefix from TLV 237", func() error {
			g := r2.in.Graph(2)
			if g == nil {
				return errors.New("no graph")
			}
			for _, p := range g.Prefixes {
				if p.Prefix == netip.MustParsePrefix("2001:db8:ff::1/128") && g.Nodes[p.Node].ID == "0000.0000.0001.00" && p.HasPathBW && p.PathBW == 6.25e8 {
					return nil
				}
			}
			return fmt.Errorf("prefixes %+v", g.Prefixes)
		})
		var tlvs packet.TLVs
		_ = r1.in.Query(context.Background(), func() { tlvs = r1.in.ownTLVs(2) })
		frag0 := r1.in.fragment(tlvs)[0]
		if got := frag0.MultiTopologies(); !reflect.DeepEqual(got, []packet.MTID{0, 2}) {
			t.Errorf("TLV 229 in fragment 0: %v", got)
		}
		if n := tlvs.ExtISNeighbors(); len(n) != 1 || n[0].ID != packet.MakeNodeID(packet.SystemID{0, 0, 0, 0, 0, 2}, 0) {
			t.Errorf("TLV 22 %+v", n)
		}
		n2 := tlvs.MTISNeighbors(packet.MTIPv6Unicast)
		if r2MT && (len(n2) != 1 || n2[0].ID != packet.MakeNodeID(packet.SystemID{0, 0, 0, 0, 0, 2}, 0)) {
			t.Errorf("TLV 222 of MT 2: %+v", n2)
		}
		if !r2MT && len(n2) != 0 {
			t.Errorf("r2 in MT 0 only, yet TLV 222 of MT 2 names %+v", n2)
		}
		if p := tlvs.IPv6Prefixes(); len(p) != 0 {
			t.Errorf("TLV 236 with multi-topology: %+v", p)
		}
		p6 := tlvs.MTIPv6Prefixes(packet.MTIPv6Unicast)
		if len(p6) != 1 || p6[0].Prefix != netip.MustParsePrefix("2001:db8:ff::1/128") {
			t.Fatalf("TLV 237 of MT 2: %+v", p6)
		}
		if pb, ok := packet.PathBandwidth(p6[0].SubTLVs, packet.DefaultPathBandwidthSubTLV); !ok || pb != 6.25e8 {
			t.Errorf("Path Bandwidth in TLV 237: %v %v", pb, ok)
		}
	}
}
