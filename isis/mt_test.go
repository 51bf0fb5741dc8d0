package isis

import (
	"io"
	"log/slog"
	"os"
	"reflect"
	"testing"

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
