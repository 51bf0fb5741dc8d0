package rawsock

import (
	"net/netip"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/fared/fared/rocev2"
)

// TestFilter runs the kernel filter in x/net/bpf's VM on real packets: UDP
// 4791 to a listed QP passes whole, anything else is dropped.
func TestFilter(t *testing.T) {
	f := rocev2.Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1}
	pkt := func(qp uint32, becn bool) []byte {
		p := rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnlyImm, DestQP: qp, BECN: becn, FECN: becn}, Payload: make([]byte, 64)}
		return f.Append(nil, &p)
	}
	other := pkt(5, false)
	other[23] = 53 // UDP port 4863
	for _, c := range []struct {
		name string
		qps  []uint32
		ip   []byte
		pass bool
	}{
		{"any QP", nil, pkt(5, false), true},
		{"other port", nil, other, false},
		{"listed QP", []uint32{1, 5, 9}, pkt(5, false), true},
		{"last listed QP", []uint32{1, 5, 9}, pkt(9, false), true},
		{"first listed QP, ECN bits set", []uint32{1, 5, 9}, pkt(1, true), true},
		{"unlisted QP", []uint32{1, 5, 9}, pkt(7, false), false},
		{"listed QP, other port", []uint32{5}, other, false},
		{"one QP", []uint32{0xABCDEF}, pkt(0xABCDEF, false), true},
	} {
		vm, err := bpf.NewVM(filter(c.qps))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n, err := vm.Run(c.ip)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pass := n > 0; pass != c.pass {
			t.Errorf("%s: filter returned %d, want pass=%v", c.name, n, c.pass)
		}
		if c.pass && n < len(c.ip) {
			t.Errorf("%s: filter keeps %d of %d bytes", c.name, n, len(c.ip))
		}
	}
}
