package transport

// Receiver is the IRN receiving half of a point-to-point flow of n
// packets: it keeps out-of-order packets (no go-back-N) and asks for a
// NACK on every out-of-order arrival.
type Receiver struct {
	got      []bool
	cum      int // first packet not received
	count    int
	sinceAck int
}

// NewReceiver returns a receiver of n packets.
func NewReceiver(n int) *Receiver { return &Receiver{got: make([]bool, n)} }

// Arrival is what one packet did to the receiver.
type Arrival struct {
	Fresh bool // first copy: deliver it
	NACK  bool // out of order (a first copy or not): send NACK(Cum, this packet)
	Dup   bool // already had it: re-ACK (or NACK) so the sender stops
}

// Receive records packet i.
func (r *Receiver) Receive(i int) Arrival {
	if i < 0 || i >= len(r.got) {
		return Arrival{}
	}
	if r.got[i] {
		// A copy of a packet above the cumulative ack is an out-of-order
		// arrival too: IRN NACKs every one, which tells a sender whose
		// earlier NACK was lost what is still missing.
		return Arrival{Dup: true, NACK: i > r.cum}
	}
	r.got[i] = true
	r.count++
	r.sinceAck++
	if i == r.cum {
		for r.cum < len(r.got) && r.got[r.cum] {
			r.cum++
		}
		return Arrival{Fresh: true}
	}
	return Arrival{Fresh: true, NACK: true}
}

// Cum is the cumulative ack: the first packet not yet received.
func (r *Receiver) Cum() int { return r.cum }

// Complete reports whether every packet arrived.
func (r *Receiver) Complete() bool { return r.count == len(r.got) }

// Has reports whether packet i arrived.
func (r *Receiver) Has(i int) bool { return i >= 0 && i < len(r.got) && r.got[i] }

// AckDue reports whether a cumulative ACK should go now: every every
// packets received in order, and at completion. Calling it resets the
// count when it says yes.
func (r *Receiver) AckDue(every int) bool {
	if r.sinceAck >= every || r.Complete() && r.sinceAck > 0 {
		r.sinceAck = 0
		return true
	}
	return false
}

// Pending reports whether packets arrived since the last ACK.
func (r *Receiver) Pending() bool { return r.sinceAck > 0 }

// Acked notes that an ACK was sent.
func (r *Receiver) Acked() { r.sinceAck = 0 }
