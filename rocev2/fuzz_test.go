package rocev2

import (
	"net/netip"
	"reflect"
	"testing"
)

func seedCorpus(f *testing.F, ipLevel bool) {
	fr := Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1}
	fr6 := Frame{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2")}
	for _, p := range []Packet{
		NewCNP(5),
		{BTH: BTH{Opcode: UCWriteOnlyImm, DestQP: 1}, Payload: []byte("abc")},
		{BTH: BTH{Opcode: RCAcknowledge, DestQP: 1}, AETH: AETH{Syndrome: SyndromeNAK}},
		{BTH: BTH{Opcode: UDSendOnlyImm, DestQP: 1}, Payload: []byte("x")},
		{BTH: BTH{Opcode: ServiceRC | OpCompareSwap}, AtomicETH: AtomicETH{VA: 8, Compare: 1}},
	} {
		if ipLevel {
			f.Add(fr.Append(nil, &p))
			f.Add(fr6.Append(nil, &p))
		} else {
			f.Add(p.AppendTo(nil))
		}
	}
}

// FuzzDecode: Decode never panics; what it accepts re-encodes to a packet
// that decodes to the same values.
func FuzzDecode(f *testing.F) {
	seedCorpus(f, false)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if KindOf(err) == 0 {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		q, err := Decode(p.AppendTo(nil))
		if err != nil {
			t.Fatalf("re-encoded packet: %v", err)
		}
		q.ICRC = p.ICRC
		if len(q.Payload) == 0 && len(p.Payload) == 0 {
			q.Payload = p.Payload
		}
		p.BTH.PadCount = q.BTH.PadCount // AppendTo picks the minimal pad
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip\n got %+v\nwant %+v", q, p)
		}
	})
}

// FuzzDecodeIP: DecodeIP (framing, codec and ICRC) never panics and only
// returns typed errors.
func FuzzDecodeIP(f *testing.F) {
	seedCorpus(f, true)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := DecodeIP(b)
		if err != nil && KindOf(err) == 0 {
			t.Fatalf("untyped error %v", err)
		}
	})
}
