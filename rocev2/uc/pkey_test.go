package uc

import (
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/rocev2"
)

// TestReceiverPKey: data whose BTH P_Key does not match the receiver's
// (IBTA matching) is dropped and counted per QP: no packet counted, no
// ACK; matching data is counted and acknowledged with the receiver's
// P_Key. (take is Run's per-packet step, without the sockets.)
func TestReceiverPKey(t *testing.T) {
	r := &Receiver{cfg: ReceiverConfig{AckEvery: 1, PKey: 0x8012}, qps: map[uint32]*rqp{0x21: {cfg: RecvQP{QP: 0x21, PeerQP: 0x11}, st: QPStats{QP: 0x21}}}}
	f := rocev2.Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2")}
	data := func(pkey uint16, psn uint32) *rocev2.Packet {
		return &rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: pkey, DestQP: 0x21, PSN: psn}, RETH: rocev2.RETH{Length: 64}, Payload: make([]byte, 64)}
	}
	now := time.Unix(1, 0)
	for _, k := range []uint16{rocev2.DefaultPKey, 0x8013, 0x8000} {
		if replies := r.take(&f, data(k, 1), 100, now); len(replies) != 0 {
			t.Fatalf("P_Key %#04x at a QP of 0x8012: replies %+v", k, replies)
		}
	}
	for i, k := range []uint16{0x8012, 0x0012} { // full, then limited member of the partition
		replies := r.take(&f, data(k, uint32(2+i)), 100, now)
		if len(replies) != 1 || replies[0].BTH.Opcode != rocev2.RCAcknowledge || replies[0].BTH.PKey != 0x8012 {
			t.Fatalf("P_Key %#04x: replies %+v, want one ACK with P_Key 0x8012", k, replies)
		}
	}
	if st := r.qps[0x21].st; st.BadPKey != 3 || st.Packets != 2 || st.ACKs != 2 {
		t.Fatalf("QP stats %+v: want 3 dropped for their P_Key, 2 taken", st)
	}
}
