package aggregator

import (
	"testing"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

// BenchmarkHandle: one packet into an 8-rank root (parse excluded), per
// data type, 1 KB payloads. Throughput is payload bytes aggregated.
func BenchmarkHandle(b *testing.B) {
	for _, dt := range []packet.DType{packet.FP16, packet.FP32, packet.FP64} {
		b.Run(dt.String(), func(b *testing.B) {
			s := New(DefaultLimits)
			if err := s.SetTrees([]TreeConfig{flat(8, 256, false)}); err != nil {
				b.Fatal(err)
			}
			n := 1024 / dt.Size()
			var ps [8]packet.Parsed
			for r := range 8 {
				f := rocev2.Frame{Src: host(r), Dst: swAddr, ID: 1}
				ip := packet.AppendINC(nil, &f, &packet.Data{DestQP: 7, Hdr: hdr(dt, packet.Sum, 0, 256, r, n), Payload: make([]byte, 1024)})
				if err := packet.Parse(ip, &ps[r]); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(1024)
			m := uint32(0)
			i := 0
			for b.Loop() {
				p := &ps[i]
				p.Hdr.Msg, p.Hdr.Slot = m, uint16(m%256)
				if _, err := s.Handle(p); err != nil {
					b.Fatal(err)
				}
				if i++; i == 8 {
					i = 0
					m++
				}
			}
		})
	}
}
