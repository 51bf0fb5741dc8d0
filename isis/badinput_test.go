package isis

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/isis/packet"
)

func counter(t *testing.T, m *memNode, name string) uint64 {
	t.Helper()
	ifs, err := m.in.Interfaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ifs[0].Counters[name]
}

// TestBadInput feeds each kind of bad PDU twice to r1 over its P2P link
// while the adjacency with r2 is Up. Each must be counted twice, logged
// once, and must neither panic nor disturb the adjacency or the database.
func TestBadInput(t *testing.T) {
	w := &wire{}
	logs := &igptest.LogBuf{}
	r1 := startMemLog(t, 1, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}}, slog.New(slog.NewTextHandler(logs, nil)))
	r2 := startMem(t, 2, []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.1/31")}})
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r1, 1) })
	igptest.Poll(t, 10*time.Second, "sync", sameDB(r1, r2))
	inj := w.port([6]byte{0x02, 0xee, 0, 0, 0, 1})

	r1sys := r1.in.SystemID()
	r2sys := r2.in.SystemID()
	hello := func(src packet.SystemID, ctype uint8, area string, mutate func([]byte)) []byte {
		a, _ := packet.ParseArea(area)
		h := &packet.P2PHello{Header: packet.Header{Type: packet.TypeP2PHello}, CircuitType: ctype, SourceID: src, HoldTime: 3, LocalCircuitID: 1,
			TLVs: packet.TLVs{&packet.AreaAddresses{Areas: [][]byte{a}}, &packet.ProtocolsSupported{NLPIDs: []uint8{0xcc}}, &packet.ThreeWay{State: 2}}}
		b := h.AppendTo(nil)
		if mutate != nil {
			mutate(b)
		}
		return b
	}
	lsp := func(lifetime uint16, sys packet.SystemID, tlvs packet.TLVs) []byte {
		l := &packet.LSP{Header: packet.Header{Type: packet.TypeL2LSP}, Lifetime: lifetime, ID: packet.MakeLSPID(sys, 0, 0), Seq: 7, Flags: 3, TLVs: tlvs}
		if lifetime == 0 {
			return l.AppendToKeepChecksum(nil)
		}
		return l.AppendTo(nil)
	}
	other := packet.SystemID{0, 0, 0, 0, 0, 0x99}
	good := lsp(1200, other, packet.TLVs{&packet.Hostname{Name: "x"}})

	cases := []struct {
		name    string
		pdu     []byte
		counter string
		log     string
	}{
		{"truncated PDU", good[:12], "rx_rejected_truncated", "kind=truncated"},
		{"TLV length past the end", func() []byte {
			b := append([]byte(nil), good...)
			b[27+1] = 200 // hostname TLV claims 200 bytes
			return b
		}(), "rx_rejected_tlv_overflow", "kind=tlv_overflow"},
		{"bad LSP checksum", func() []byte {
			b := append([]byte(nil), good...)
			b[len(b)-1] ^= 0xff
			return b
		}(), "rx_rejected_bad_checksum", "kind=bad_checksum"},
		// r1 runs L2 only, so a level-1-only hello from another area has
		// neither a common level nor a common area.
		{"wrong area", hello(other, 1, "49.0002", nil), "rx_rejected_level_mismatch", "kind=level_mismatch"},
		{"wrong max area addresses", hello(other, 2, "49.0001", func(b []byte) { b[7] = 5 }), "rx_rejected_max_area", "kind=max_area"},
		{"IIH with our own system id", hello(r1sys, 2, "49.0001", nil), "rx_rejected_own_system_id", "kind=own_system_id"},
		{"purge of an unknown LSP", lsp(0, other, nil), "rx_purge_unknown", "kind=purge_unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := counter(t, r1, tc.counter)
			inj.Send(MACAllISs, tc.pdu)
			inj.Send(MACAllISs, tc.pdu)
			igptest.Poll(t, 5*time.Second, "counted twice", func() error {
				if got := counter(t, r1, tc.counter) - before; got != 2 {
					return fmt.Errorf("%s: +%d, want +2", tc.counter, got)
				}
				return nil
			})
			if n := logs.Count(tc.log); n != 1 {
				t.Errorf("%q logged %d times, want once", tc.log, n)
			}
			if err := neighborsUp(r1, 1); err != nil {
				t.Fatal(err)
			}
			ns, _ := r1.in.Neighbors(context.Background())
			if ns[0].SystemID != r2sys.String() {
				t.Fatalf("adjacency replaced: %+v", ns)
			}
		})
	}
	// Nothing bad was stored, and the two routers still agree.
	if v, _ := r1.in.Database(context.Background(), DatabaseQuery{LSPID: packet.MakeLSPID(other, 0, 0).String()}); len(v) != 0 {
		t.Fatalf("bad LSP stored: %+v", v)
	}
	igptest.Poll(t, 5*time.Second, "sync after bad input", sameDB(r1, r2))
	_ = binary.BigEndian
}

func TestWrongAreaLevel1(t *testing.T) {
	w := &wire{}
	r1 := startMemLevel(t, 1, "1", []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.MustParsePrefix("10.254.0.0/31")}})
	inj := w.port([6]byte{0x02, 0xee, 0, 0, 0, 1})
	a, _ := packet.ParseArea("49.0002")
	h := &packet.P2PHello{Header: packet.Header{Type: packet.TypeP2PHello}, CircuitType: 1, SourceID: packet.SystemID{0, 0, 0, 0, 0, 0x42}, HoldTime: 3, LocalCircuitID: 1,
		TLVs: packet.TLVs{&packet.AreaAddresses{Areas: [][]byte{a}}, &packet.ProtocolsSupported{NLPIDs: []uint8{0xcc}}, &packet.ThreeWay{State: 2}}}
	igptest.Poll(t, 5*time.Second, "running", func() error {
		ifs, _ := r1.in.Interfaces(context.Background())
		if ifs[0].State != "up" {
			return fmt.Errorf("down")
		}
		return nil
	})
	inj.Send(MACAllISs, h.AppendTo(nil))
	igptest.Poll(t, 5*time.Second, "area mismatch counted", func() error {
		if n := counter(t, r1, "rx_rejected_area_mismatch"); n != 1 {
			return fmt.Errorf("rx_rejected_area_mismatch=%d", n)
		}
		return nil
	})
	if ns, _ := r1.in.Neighbors(context.Background()); len(ns) != 0 {
		t.Fatalf("adjacency created across areas at L1: %+v", ns)
	}
}
