package ospf

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

func ifCounter(t *testing.T, m *memNode, iface, name string) uint64 {
	t.Helper()
	ifs, err := m.in.Interfaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Name == iface {
			return i.Counters[name]
		}
	}
	t.Fatalf("no interface %s", iface)
	return 0
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// TestBadInput feeds each kind of bad packet twice to r1 over its P2P link
// with r2 (posing as r2 where the packet must come from a neighbour) while
// the adjacency is Full. Each must be counted twice, logged once, and must
// neither panic nor disturb the adjacency or the database. An LSA of an
// unknown type is not bad: it is stored and flooded unchanged to r3.
func TestBadInput(t *testing.T) {
	w1, w2 := &wire{}, &wire{}
	logs := &igptest.LogBuf{}
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.0/31")}, {name: "e1", typ: "p2p", w: w2, addr: pfx("10.254.0.2/31")}}
	r1 := startMemCfg(t, parse(t, testYAML(1, ifs1, "")), ifs1, slog.New(slog.NewTextHandler(logs, nil)))
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w1, addr: pfx("10.254.0.1/31")}})
	r3 := startMem(t, 3, []memIf{{name: "e0", typ: "p2p", w: w2, addr: pfx("10.254.0.3/31")}})
	igptest.Poll(t, 10*time.Second, "r1 Full with both", fullCount(r1, 2))
	igptest.Poll(t, 10*time.Second, "sync", sameDBn(17, r1, r2, r3))
	// The injector speaks as r2 from r2's address.
	inj := w1.port(addr("10.254.0.1"))
	hdr := func(area string) packet.Header {
		return packet.Header{Version: 2, RouterID: addr("10.255.0.2"), AreaID: addr(area)}
	}
	hello := func(hi uint16, dead uint32) []byte {
		h := &packet.Hello{Header: hdr("0.0.0.0"), Mask: addr("0.0.0.0"), HelloInterval: hi, Options: optE, DeadInterval: dead,
			DR: addr("0.0.0.0"), BDR: addr("0.0.0.0"), Neighbors: []netip.Addr{addr("10.255.0.1")}}
		return h.AppendTo(nil)
	}
	lsu := func(l packet.LSA) []byte {
		u := &packet.LSU{Header: hdr("0.0.0.0"), LSAs: []packet.LSA{l}}
		return u.AppendTo(nil)
	}
	good := packet.NewLSA(packet.LSAHeader{Type: packet.LSAOpaqueArea, AdvRouter: addr("10.255.0.99"), Seq: packet.InitialSequenceNumber, Options: optE | optO},
		packet.OpaqueLSA{OpaqueType: 200, OpaqueID: 5, TLVs: []packet.TLV{{Type: 1, Value: []byte{1, 2, 3, 4}}}})
	badCk := good
	badCk.Raw = append([]byte(nil), good.Raw...)
	badCk.Raw[len(badCk.Raw)-1] ^= 0xff

	cases := []struct {
		name    string
		pkt     []byte
		counter string
		log     string
	}{
		{"bad packet checksum", func() []byte {
			b := hello(1, 3)
			b[12] ^= 0xff
			return b
		}(), "rx_rejected_bad_checksum", "kind=bad_checksum"},
		{"bad length", func() []byte {
			b := hello(1, 3)
			binary.BigEndian.PutUint16(b[2:4], uint16(len(b)+40))
			return b
		}(), "rx_rejected_bad_length", "kind=bad_length"},
		{"truncated", hello(1, 3)[:20], "rx_rejected_truncated", "kind=truncated"},
		{"wrong area", func() []byte {
			h := &packet.Hello{Header: hdr("0.0.0.7"), Mask: addr("0.0.0.0"), HelloInterval: 1, Options: optE, DeadInterval: 3, DR: addr("0.0.0.0"), BDR: addr("0.0.0.0")}
			return h.AppendTo(nil)
		}(), "rx_rejected_area_mismatch", "kind=area_mismatch"},
		{"hello interval mismatch", hello(10, 3), "rx_rejected_hello_interval_mismatch", "kind=hello_interval_mismatch"},
		{"dead interval mismatch", hello(1, 40), "rx_rejected_dead_interval_mismatch", "kind=dead_interval_mismatch"},
		{"bad LSA checksum", lsu(badCk), "rx_rejected_bad_lsa_checksum", "kind=bad_lsa_checksum"},
		{"unknown neighbour", func() []byte {
			u := &packet.LSAck{Header: packet.Header{Version: 2, RouterID: addr("10.255.0.77"), AreaID: addr("0.0.0.0")}}
			return u.AppendTo(nil)
		}(), "rx_rejected_unknown_neighbor", "kind=unknown_neighbor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ifCounter(t, r1, "e0", tc.counter)
			inj.Send(AllSPFRouters, tc.pkt)
			inj.Send(AllSPFRouters, tc.pkt)
			igptest.Poll(t, 5*time.Second, "counted twice", func() error {
				if got := ifCounter(t, r1, "e0", tc.counter) - before; got != 2 {
					return fmt.Errorf("%s: +%d, want +2", tc.counter, got)
				}
				return nil
			})
			if n := logs.Count(tc.log); n != 1 {
				t.Errorf("%q logged %d times, want once", tc.log, n)
			}
			if err := fullCount(r1, 2)(); err != nil {
				t.Fatal(err)
			}
		})
	}

	// An unknown opaque type and an unknown LSA type: stored, flooded
	// byte-identical to r3, not an error.
	unknownType := func() packet.LSA {
		raw := append([]byte(nil), good.Raw...)
		raw[3] = 13 // LS type 13: unassigned
		binary.BigEndian.PutUint16(raw[16:18], 0)
		binary.BigEndian.PutUint16(raw[16:18], packet.LSAChecksum(raw))
		l, _, err := packet.DecodeLSA(raw)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}()
	for _, l := range []packet.LSA{good, unknownType} {
		inj.Send(AllSPFRouters, lsu(l))
		igptest.Poll(t, 5*time.Second, "flooded to r3", func() error {
			v, _ := r3.in.Database(context.Background(), DatabaseQuery{Type: fmt.Sprint(l.Type), Detail: true})
			for _, e := range v {
				if e.AdvRouter == "10.255.0.99" {
					want := fmt.Sprintf("%x", l.Raw[2:]) // the age differs
					if e.Raw[4:] != want {
						return fmt.Errorf("r3 holds %s, want ..%s", e.Raw, want)
					}
					return nil
				}
			}
			return fmt.Errorf("type %d not at r3", l.Type)
		})
	}
	if n := ifCounter(t, r1, "e0", "rx_unknown_lsa_type"); n != 1 {
		t.Errorf("rx_unknown_lsa_type = %d", n)
	}
	if err := fullCount(r1, 2)(); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 5*time.Second, "r1 and r3 agree", sameDB(r1, r3))
}

// TestMTUMismatch: a DBD announcing an MTU larger than ours is counted and
// refused: no adjacency forms on our side.
func TestMTUMismatch(t *testing.T) {
	w := &wire{}
	logs := &igptest.LogBuf{}
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.0/31")}}
	r1 := startMemCfg(t, parse(t, testYAML(1, ifs1, "")), ifs1, slog.New(slog.NewTextHandler(logs, nil)))
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx("10.254.0.1/31"), mtu: 9000}})
	igptest.Poll(t, 10*time.Second, "MTU mismatch counted", func() error {
		if n := ifCounter(t, r1, "e0", "rx_rejected_mtu_mismatch"); n < 2 {
			return fmt.Errorf("rx_rejected_mtu_mismatch=%d", n)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	if err := fullCount(r1, 0)(); err != nil {
		t.Fatal(err)
	}
	if err := fullCount(r2, 0)(); err != nil {
		t.Fatal(err)
	}
	if n := logs.Count("kind=mtu_mismatch"); n != 1 {
		t.Errorf("mtu_mismatch logged %d times", n)
	}
}
