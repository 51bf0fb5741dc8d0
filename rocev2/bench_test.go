package rocev2

import (
	"net/netip"
	"testing"
)

func benchPacket(n int) (Frame, Packet) {
	f := Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1, SrcPort: 4000}
	return f, Packet{BTH: BTH{Opcode: UCWriteOnlyImm, PKey: 0xFFFF, DestQP: 7, PSN: 1}, RETH: RETH{Length: uint32(n)}, Payload: make([]byte, n)}
}

func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		b.Run(sizeName(n), func(b *testing.B) {
			f, p := benchPacket(n)
			buf := make([]byte, 0, 8192)
			b.SetBytes(int64(n))
			for b.Loop() {
				buf = f.Append(buf[:0], &p)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		b.Run(sizeName(n), func(b *testing.B) {
			f, p := benchPacket(n)
			ip := f.Append(nil, &p)
			var q Packet
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := q.DecodeFrom(ip[28:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeIP is the receive path: framing, codec and ICRC check.
func BenchmarkDecodeIP(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		b.Run(sizeName(n), func(b *testing.B) {
			f, p := benchPacket(n)
			ip := f.Append(nil, &p)
			var q Packet
			var g Frame
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := DecodeIPInto(ip, &g, &q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1024 {
		return string(rune('0'+n/1024)) + "KB"
	}
	return "small"
}
