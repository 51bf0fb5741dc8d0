package packet

import (
	"errors"
	"testing"

	"github.com/fared/fared/rocev2"
)

// FuzzHeader: DecodeHeader never panics, its errors are typed, and an
// accepted header re-encodes to the same 16 bytes.
func FuzzHeader(f *testing.F) {
	h := Header{Collective: AllReduce, DType: FP16, Op: Max, Tree: 1, Slot: 2, Msg: 3, Rank: 4, Count: 5}
	f.Add(h.AppendTo(nil))
	f.Add([]byte{0x10, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			if KindOf(err) == 0 {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		out := h.AppendTo(nil)
		if string(out) != string(b[:HeaderLen]) {
			t.Fatalf("re-encoded % x from % x", out, b[:HeaderLen])
		}
	})
}

// FuzzParse: whole packets as the switch's raw socket hands them over.
func FuzzParse(f *testing.F) {
	d := Data{DestQP: 1, Hdr: Header{Collective: AllReduce, DType: FP32, Op: Sum, Count: 2}, Payload: make([]byte, 8)}
	f.Add(AppendINC(nil, &frame, rocev2.DefaultPKey, &d))
	f.Add(AppendNACK(nil, &frame, rocev2.DefaultPKey, 1, 2, 3))
	f.Add(AppendRing(nil, &frame, rocev2.DefaultPKey, 1, 2, 3, 4, []byte{5}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Parsed
		err := Parse(b, &p)
		var re *rocev2.DecodeError
		if err != nil && KindOf(err) == 0 && !errors.As(err, &re) {
			t.Fatalf("untyped %v", err)
		}
		if err == nil && p.Kind == KindINC && len(p.Payload) != p.Hdr.PayloadLen() {
			t.Fatalf("accepted payload %d for count %d", len(p.Payload), p.Hdr.Count)
		}
	})
}
