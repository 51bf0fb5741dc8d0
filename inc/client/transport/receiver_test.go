package transport

import "testing"

// TestReceiverNACKsEveryOutOfOrderArrival: IRN's receiver NACKs each
// out-of-order arrival, a second copy of one included; a copy of a
// packet below the cumulative ack is re-ACKed instead.
func TestReceiverNACKsEveryOutOfOrderArrival(t *testing.T) {
	r := NewReceiver(5)
	steps := []struct {
		i    int
		want Arrival
		cum  int
	}{
		{0, Arrival{Fresh: true}, 1},
		{2, Arrival{Fresh: true, NACK: true}, 1},
		{2, Arrival{Dup: true, NACK: true}, 1}, // out of order again: NACK again
		{3, Arrival{Fresh: true, NACK: true}, 1},
		{1, Arrival{Fresh: true}, 4},
		{0, Arrival{Dup: true}, 4}, // below the cumulative ack: re-ACK
		{2, Arrival{Dup: true}, 4},
	}
	for k, s := range steps {
		if got := r.Receive(s.i); got != s.want || r.Cum() != s.cum {
			t.Fatalf("step %d (packet %d): %+v cum %d, want %+v cum %d", k, s.i, got, r.Cum(), s.want, s.cum)
		}
	}
}
