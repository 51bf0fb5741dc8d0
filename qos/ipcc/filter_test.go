package ipcc

import (
	"net/netip"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/fared/fared/rocev2"
)

// TestCaptureFilter runs the capture filter in x/net/bpf's VM: RoCEv2
// packets pass whole; other UDP ports, other protocols and fragments do
// not.
func TestCaptureFilter(t *testing.T) {
	vm, err := bpf.NewVM(captureFilter())
	if err != nil {
		t.Fatal(err)
	}
	f := rocev2.Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1}
	p := rocev2.NewCNP(5)
	roce := f.Append(nil, &p)
	port := append([]byte(nil), roce...)
	port[23] = 53
	tcp := append([]byte(nil), roce...)
	tcp[9] = 6
	frag := append([]byte(nil), roce...)
	frag[7] = 8 // fragment offset 8
	for _, c := range []struct {
		name string
		b    []byte
		pass bool
	}{{"roce", roce, true}, {"other port", port, false}, {"tcp", tcp, false}, {"fragment", frag, false}} {
		n, err := vm.Run(c.b)
		if err != nil {
			t.Fatal(err)
		}
		// The kernel keeps min(n, length) bytes: 0 drops.
		if (n >= len(c.b)) != c.pass || (n != 0 && n < len(c.b)) {
			t.Errorf("%s: filter returned %d for %d bytes, want pass=%v", c.name, n, len(c.b), c.pass)
		}
	}
}
