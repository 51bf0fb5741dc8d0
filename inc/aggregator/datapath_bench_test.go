package aggregator_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/internal/testns"
)

// BenchmarkDataPath is the switch's whole data path as fared runs it, on
// real sockets: 8 ranks in one namespace send their contribution to
// message m (1 KB of fp32) over a veth to the switch's namespace, where
// an endpoint receives them (raw socket, parse, ICRC), the aggregator
// adds them up, and the 8 results go back over the veth to a receiver
// that waits for all of them. One op is one message: 8 packets in, 8 out.
// openSwitchEndpoint and checkIngress (datapath_checks_test.go) are what
// the per-packet checks add; the rest is the same before and after them.
func BenchmarkDataPath(b *testing.B) {
	hosts, sw := testns.New(b, "dph"), testns.New(b, "dps")
	hosts.IP("link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", sw.Name)
	for r := range 8 {
		hosts.IP("addr", "add", fmt.Sprintf("10.77.0.%d/24", 11+r), "dev", "va")
	}
	sw.IP("addr", "add", "10.77.0.1/24", "dev", "vb")
	hosts.IP("link", "set", "va", "up")
	sw.IP("link", "set", "vb", "up")
	swAddr := netip.MustParseAddr("10.77.0.1")
	rank := func(r int) netip.Addr { return netip.AddrFrom4([4]byte{10, 77, 0, byte(11 + r)}) }
	const key, qp = 0x5EC12E7, 0x101

	cfg := aggregator.TreeConfig{ID: 1, QP: qp, RKey: key, Slots: 256, Root: true}
	for r := range 8 {
		cfg.Children = append(cfg.Children, aggregator.Child{Peer: aggregator.Peer{Addr: rank(r), QP: uint32(0x200 + r)}, Client: true})
	}
	agg := aggregator.New(aggregator.DefaultLimits)
	if err := agg.SetTrees([]aggregator.TreeConfig{cfg}); err != nil {
		b.Fatal(err)
	}
	var swEP *transport.Endpoint
	var err error
	sw.Do(func() {
		if swEP, err = openSwitchEndpoint(swAddr, qp); err == nil {
			err = checkIngress(agg)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer swEP.Close()
	senders := make([]*transport.Endpoint, 8)
	hosts.Do(func() {
		for r := range 8 {
			if senders[r], err = transport.Open(rank(r), []uint32{uint32(0x200 + r)}); err != nil {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range senders {
		defer s.Close()
	}
	payload := make([]byte, 1024)
	b.SetBytes(8 * 1024) // payload aggregated per op
	m := uint32(0)
	for b.Loop() {
		for r, s := range senders {
			d := packet.Data{DestQP: qp, PSN: m, RKey: key, Hdr: packet.Header{Collective: packet.AllReduce, DType: packet.FP32,
				Op: packet.Sum, Tree: 1, Slot: uint16(m % 256), Msg: m, Rank: uint16(r), Count: 256}, Payload: payload}
			if err := s.SendINC(swAddr, &d); err != nil {
				b.Fatal(err)
			}
		}
		for got := 0; got < 8; {
			p, err := swEP.Recv(time.Now().Add(5 * time.Second))
			if err != nil {
				b.Fatalf("switch: message %d: %v", m, err)
			}
			for p != nil {
				outs, err := agg.Handle(p)
				if err != nil {
					b.Fatalf("switch: %v", err)
				}
				for i := range outs {
					swEP.SendINC(outs[i].To.Addr, &outs[i].Data)
				}
				got++
				p = swEP.TryRecv()
			}
		}
		for r, s := range senders {
			p, err := s.Recv(time.Now().Add(5 * time.Second))
			if err != nil || !p.Hdr.IsResult() || p.Hdr.Msg != m {
				b.Fatalf("rank %d: message %d: %v", r, m, err)
			}
		}
		m++
	}
}
