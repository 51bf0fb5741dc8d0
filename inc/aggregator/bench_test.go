package aggregator

import (
	"net/netip"
	"testing"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

// BenchmarkHandle: one packet into an 8-rank root (parse excluded), per
// data type, 1 KB payloads, every per-packet check on (key, source,
// ingress: each rank behind its own interface). Throughput is payload
// bytes aggregated.
func BenchmarkHandle(b *testing.B) {
	for _, dt := range []packet.DType{packet.FP16, packet.FP32, packet.FP64} {
		b.Run(dt.String(), func(b *testing.B) {
			s, ps := eightRanks(b, dt, true)
			handleRounds(b, s, ps)
		})
	}
}

// BenchmarkHandleForged: the cost of refusing a forged packet (wrong key;
// right key from the wrong interface), which a flooding host makes the
// switch pay per packet. It must not allocate.
func BenchmarkHandleForged(b *testing.B) {
	s := New(DefaultLimits)
	if err := s.SetTrees([]TreeConfig{flat(8, 256, false)}); err != nil {
		b.Fatal(err)
	}
	s.SetIngress(map[netip.Addr][]int{host(0): {1}})
	for _, c := range []struct {
		name    string
		rkey    uint32
		ifindex int
	}{{"rkey", 0xBAD, 1}, {"ingress", testKey, 9}} {
		b.Run(c.name, func(b *testing.B) {
			f := rocev2.Frame{Src: host(0), Dst: swAddr, ID: 1}
			ip := packet.AppendINC(nil, &f, rocev2.DefaultPKey, &packet.Data{DestQP: 7, RKey: c.rkey, Hdr: hdr(packet.FP32, packet.Sum, 0, 256, 0, 256), Payload: make([]byte, 1024)})
			var p packet.Parsed
			if err := packet.Parse(ip, &p); err != nil {
				b.Fatal(err)
			}
			p.IfIndex = c.ifindex
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Handle(&p); err == nil {
					b.Fatal("forged packet taken")
				}
			}
		})
	}
}

// BenchmarkHandleIngress: the ingress check's share of Handle, off and on
// in turn in one process (fp32, 8 ranks, 1 KB payloads).
func BenchmarkHandleIngress(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			s, ps := eightRanks(b, packet.FP32, on)
			handleRounds(b, s, ps)
		})
	}
}

// eightRanks is an 8-rank root and one parsed 1 KB packet of dt from each
// rank, rank r behind interface r+1; ingress turns the check of that on.
func eightRanks(b *testing.B, dt packet.DType, ingress bool) (*Switch, *[8]packet.Parsed) {
	s := New(DefaultLimits)
	if err := s.SetTrees([]TreeConfig{flat(8, 256, false)}); err != nil {
		b.Fatal(err)
	}
	if ingress {
		in := map[netip.Addr][]int{}
		for r := range 8 {
			in[host(r)] = []int{r + 1}
		}
		s.SetIngress(in)
	}
	n := 1024 / dt.Size()
	var ps [8]packet.Parsed
	for r := range 8 {
		f := rocev2.Frame{Src: host(r), Dst: swAddr, ID: 1}
		ip := packet.AppendINC(nil, &f, rocev2.DefaultPKey, &packet.Data{DestQP: 7, RKey: testKey, Hdr: hdr(dt, packet.Sum, 0, 256, r, n), Payload: make([]byte, 1024)})
		if err := packet.Parse(ip, &ps[r]); err != nil {
			b.Fatal(err)
		}
		ps[r].IfIndex = r + 1
	}
	return s, &ps
}

// handleRounds hands s the 8 packets in turn, each round of 8 a new
// message in the next slot. Throughput is payload bytes aggregated.
func handleRounds(b *testing.B, s *Switch, ps *[8]packet.Parsed) {
	b.SetBytes(1024)
	m, i := uint32(0), 0
	for b.Loop() {
		p := &ps[i]
		p.Hdr.Msg, p.Hdr.Slot = m, uint16(m%256)
		if _, err := s.Handle(p); err != nil {
			b.Fatal(err)
		}
		if i++; i == 8 {
			i, m = 0, m+1
		}
	}
}
