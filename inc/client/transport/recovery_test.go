package transport

import (
	"slices"
	"testing"
	"time"
)

// The sender's state machine on a timeout, driven by hand: no link, the
// test says what the receiver reported and when.

const testRTO = 10 * time.Millisecond

// sendAll polls s at now and returns what it sent, retransmissions
// marked by the second result.
func sendAll(s *Sender, now time.Time) (sent, retx []int) {
	s.Poll(now, func(i int, r bool) {
		if r {
			retx = append(retx, i)
		} else {
			sent = append(sent, i)
		}
	})
	return sent, retx
}

// TestTimeoutEntersRecoveryResendsCumOnly: 8 packets out, nothing heard
// back. At the RTO the sender enters loss recovery and resends packet 0
// (the cumulative ack) and nothing else: the receiver's state marks no
// other packet lost. Before, each of the 8 expired and was resent.
func TestTimeoutEntersRecoveryResendsCumOnly(t *testing.T) {
	s := NewSender(Config{Window: 8, RTOLow: testRTO, RTOHigh: testRTO}, 8)
	t0 := time.Unix(0, 0)
	if sent, _ := sendAll(s, t0); len(sent) != 8 {
		t.Fatalf("sent %v", sent)
	}
	if _, retx := sendAll(s, t0.Add(testRTO-time.Microsecond)); len(retx) != 0 || s.InRecovery() {
		t.Fatalf("before the RTO: resent %v, recovery %v", retx, s.InRecovery())
	}
	_, retx := sendAll(s, t0.Add(testRTO))
	st := s.Stats()
	if !slices.Equal(retx, []int{0}) || !s.InRecovery() || st.Timeouts != 1 || st.Recoveries != 1 || st.Retransmits != 1 {
		t.Fatalf("at the RTO: resent %v, recovery %v, %+v", retx, s.InRecovery(), st)
	}
	// The timer restarted at the timeout, doubled (back-off): nothing
	// more until then.
	if _, retx := sendAll(s, t0.Add(testRTO+2*testRTO-time.Microsecond)); len(retx) != 0 {
		t.Fatalf("resent %v before the backed-off RTO", retx)
	}
}

// TestTimeoutResendsCumFirstThenLost: INC (a NACK only says what the
// switch has). 8 messages out; a NACK (cum 3, trigger 5) says the switch
// has 0, 1, 2 and 5. 3 and 4 are resent at once, and lost again. At the
// RTO the sender resends, in this order, 0 (the cumulative ack: no
// result yet) and the packets the receiver's state marks lost, 3 and 4;
// not 1 and 2 (the switch has them), not 5, not 6 and 7 (nothing says
// they are lost).
func TestTimeoutResendsCumFirstThenLost(t *testing.T) {
	s := NewSender(Config{Window: 8, RTOLow: testRTO, RTOHigh: testRTO}, 8)
	t0 := time.Unix(0, 0)
	sendAll(s, t0)
	t1 := t0.Add(time.Millisecond)
	s.NACK(3, 5, t1)
	if _, retx := sendAll(s, t1); !slices.Equal(retx, []int{3, 4}) || !s.InRecovery() {
		t.Fatalf("after the NACK: resent %v, recovery %v", retx, s.InRecovery())
	}
	var order []int
	s.Poll(t0.Add(testRTO+time.Millisecond), func(i int, r bool) { order = append(order, i) })
	st := s.Stats()
	if !slices.Equal(order, []int{0, 3, 4}) || st.Timeouts != 1 || st.Recoveries != 2 {
		t.Fatalf("at the RTO: sent %v (want 0, 3, 4), %+v", order, st)
	}
}

// TestTimeoutSparesYoungRetransmission: a packet the NACK had resent
// less than an RTO before the timeout is not resent again by it (its
// retransmission may still be on its way); the cumulative-ack packet is.
func TestTimeoutSparesYoungRetransmission(t *testing.T) {
	s := NewSender(Config{Window: 8, RTOLow: testRTO, RTOHigh: testRTO}, 8)
	t0 := time.Unix(0, 0)
	sendAll(s, t0)
	t1 := t0.Add(testRTO - time.Millisecond) // the hole is resent 1 ms before the RTO
	s.NACK(3, 5, t1)
	sendAll(s, t1)
	_, retx := sendAll(s, t0.Add(testRTO))
	if !slices.Equal(retx, []int{0}) {
		t.Fatalf("at the RTO: resent %v, want only 0", retx)
	}
}

// TestSlowSteadyReceiverNoTimeout: a receiver that acknowledges one
// packet every 0.9 RTO, in order, is slow but alive: the timer restarts
// with every cumulative ack and never fires, though every packet waits
// far longer than an RTO for its ack.
func TestSlowSteadyReceiverNoTimeout(t *testing.T) {
	s := NewSender(Config{Window: 8, RTOLow: testRTO, RTOHigh: testRTO}, 8)
	now := time.Unix(0, 0)
	sendAll(s, now)
	for i := range 8 {
		now = now.Add(testRTO * 9 / 10)
		if _, retx := sendAll(s, now); len(retx) != 0 {
			t.Fatalf("resent %v before the ack of %d", retx, i)
		}
		s.Ack(i, now)
	}
	if st := s.Stats(); !s.Done() || st.Timeouts != 0 || st.Retransmits != 0 {
		t.Fatalf("done %v, %+v", s.Done(), st)
	}
}

// TestPartialAckAfterTimeout: the whole window of 4 is lost. The timeout
// resends 0; its ack moves the cumulative ack to 1, which has been out
// longer than an RTO: it is resent at once (not after another RTO), and
// so on, one per round trip.
func TestPartialAckAfterTimeout(t *testing.T) {
	s := NewSender(Config{Window: 4, RTOLow: testRTO, RTOHigh: testRTO}, 4)
	t0 := time.Unix(0, 0)
	sendAll(s, t0)
	now := t0.Add(testRTO)
	for i := range 4 {
		_, retx := sendAll(s, now)
		if !slices.Equal(retx, []int{i}) {
			t.Fatalf("round %d: resent %v", i, retx)
		}
		now = now.Add(time.Millisecond) // one round trip
		s.Ack(i, now)
	}
	if st := s.Stats(); !s.Done() || st.Timeouts != 1 || st.Retransmits != 4 {
		t.Fatalf("done %v, %+v", s.Done(), st)
	}
}

// TestReportAfterTimeoutsOfCum: the reports count timeouts of the
// lowest unacknowledged packet; the others of the window, never resent
// by a timeout, are not reported.
func TestReportAfterTimeoutsOfCum(t *testing.T) {
	s := NewSender(Config{Window: 4, RTOLow: testRTO, RTOHigh: testRTO, ReportAfter: 3}, 4)
	var reports [][2]int
	s.OnReport = func(i, n int) { reports = append(reports, [2]int{i, n}) }
	now := time.Unix(0, 0)
	sendAll(s, now)
	for range 5 {
		now = s.NextDeadline()
		sendAll(s, now)
	}
	if !slices.Equal(reports, [][2]int{{0, 3}}) || s.Stats().Timeouts != 5 {
		t.Fatalf("reports %v, %+v", reports, s.Stats())
	}
}
