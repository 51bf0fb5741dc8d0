package transport

import (
	"slices"
	"testing"
	"time"
)

// link simulates a sender and a receiver over a channel with a fixed
// one-way delay that drops the transmissions listed in drop (by
// transmission number, data and ACKs counted separately).
type link struct {
	t        *testing.T
	now      time.Time
	s        *Sender
	r        *Receiver
	delay    time.Duration
	dropData map[int]bool
	dropAck  map[int]bool
	dataN    int
	ackN     int
	inFlight []event
	sends    []int // packet indices in transmission order
	maxWin   int
}

type event struct {
	at   time.Time
	data bool
	i    int // data: packet; ack: cum; nack: cum
	trig int // nack: trigger (-1 for an ack)
}

func (l *link) run(limit time.Duration) {
	end := l.now.Add(limit)
	for !l.s.Done() && l.now.Before(end) {
		l.s.Poll(l.now, func(i int, _ bool) {
			l.sends = append(l.sends, i)
			if l.s.InFlight() > l.maxWin {
				l.maxWin = l.s.InFlight()
			}
			l.dataN++
			if !l.dropData[l.dataN] {
				l.inFlight = append(l.inFlight, event{at: l.now.Add(l.delay), data: true, i: i})
			}
		})
		// Deliver what is due.
		slices.SortStableFunc(l.inFlight, func(a, b event) int { return a.at.Compare(b.at) })
		for len(l.inFlight) > 0 && !l.inFlight[0].at.After(l.now) {
			ev := l.inFlight[0]
			l.inFlight = l.inFlight[1:]
			if ev.data {
				a := l.r.Receive(ev.i)
				switch {
				case a.NACK:
					l.ack(event{i: l.r.Cum(), trig: ev.i})
				case a.Dup || l.r.AckDue(1):
					l.ack(event{i: l.r.Cum(), trig: -1})
				}
				continue
			}
			if ev.trig >= 0 {
				l.s.NACK(ev.i, ev.trig, l.now)
			} else {
				l.s.AckUpTo(ev.i, l.now)
			}
		}
		l.now = l.now.Add(100 * time.Microsecond)
	}
}

func (l *link) ack(ev event) {
	l.ackN++
	if l.dropAck[l.ackN] {
		return
	}
	ev.at = l.now.Add(l.delay)
	l.inFlight = append(l.inFlight, ev)
}

func newLink(t *testing.T, n int, cfg Config) *link {
	s := NewSender(cfg, n)
	s.NACKIsAck = true
	return &link{t: t, now: time.Unix(0, 0), s: s, r: NewReceiver(n), delay: time.Millisecond, dropData: map[int]bool{}, dropAck: map[int]bool{}}
}

// TestSelectiveRetransmission: packet 3 of 20 is lost. The receiver keeps
// 4.. and NACKs; the sender retransmits 3, and only 3, long before any
// timeout (no go-back-N).
func TestSelectiveRetransmission(t *testing.T) {
	l := newLink(t, 20, Config{Window: 8, RTOLow: 50 * time.Millisecond, RTOHigh: 50 * time.Millisecond})
	l.dropData[4] = true // the 4th transmission: packet 3
	l.run(time.Second)
	st := l.s.Stats()
	if !l.s.Done() || !l.r.Complete() {
		t.Fatalf("not done: %+v", st)
	}
	if st.Retransmits != 1 || st.Timeouts != 0 || st.Recoveries != 1 {
		t.Fatalf("stats %+v, sends %v", st, l.sends)
	}
	count := map[int]int{}
	for _, i := range l.sends {
		count[i]++
	}
	for i := range 20 {
		if want := 1 + btoi(i == 3); count[i] != want {
			t.Fatalf("packet %d sent %d times: %v", i, count[i], l.sends)
		}
	}
	if l.now.Sub(time.Unix(0, 0)) > 20*time.Millisecond {
		t.Fatalf("took %v: the loss waited for a timeout", l.now.Sub(time.Unix(0, 0)))
	}
}

// TestWindowCap: never more than Window packets in flight.
func TestWindowCap(t *testing.T) {
	l := newLink(t, 200, Config{Window: 16})
	l.run(time.Second)
	if !l.s.Done() || l.maxWin > 16 {
		t.Fatalf("done %v, max in flight %d", l.s.Done(), l.maxWin)
	}
}

// TestTailLossRTOLow: the last of 2 packets is lost: no later packet can
// trigger a NACK; with one packet in flight the sender uses RTO_low.
func TestTailLossRTOLow(t *testing.T) {
	l := newLink(t, 2, Config{Window: 8, RTOLow: 5 * time.Millisecond, RTOHigh: 500 * time.Millisecond, NLow: 3})
	l.dropData[2] = true
	l.run(time.Second)
	st := l.s.Stats()
	elapsed := l.now.Sub(time.Unix(0, 0))
	if !l.s.Done() || st.Timeouts != 1 || st.Retransmits != 1 || elapsed > 20*time.Millisecond {
		t.Fatalf("done %v stats %+v after %v", l.s.Done(), st, elapsed)
	}
}

// TestRTOHigh: with many packets in flight a lost ACK train is covered by
// RTO_high, not RTO_low; the timer restarts when the cumulative ack
// moves.
func TestRTOHigh(t *testing.T) {
	s := NewSender(Config{Window: 32, RTOLow: time.Millisecond, RTOHigh: 30 * time.Millisecond, NLow: 3}, 10)
	now := time.Unix(0, 0)
	s.Poll(now, func(int, bool) {})
	if s.InFlight() != 10 {
		t.Fatal(s.InFlight())
	}
	if d := s.NextDeadline().Sub(now); d != 30*time.Millisecond {
		t.Fatalf("deadline with 10 in flight: %v, want RTO_high", d)
	}
	t1 := now.Add(5 * time.Millisecond)
	s.AckUpTo(8, t1)
	if d := s.NextDeadline().Sub(t1); d != time.Millisecond {
		t.Fatalf("deadline with 2 in flight: %v after the ack, want RTO_low", d)
	}
}

// TestReportAfterN: a packet that does not get through is reported once
// after ReportAfter timeouts, and retransmitted on (with exponential
// back-off) until it does.
func TestReportAfterN(t *testing.T) {
	l := newLink(t, 1, Config{Window: 4, RTOLow: 5 * time.Millisecond, RTOHigh: 5 * time.Millisecond, ReportAfter: 3})
	for i := 1; i <= 10; i++ {
		l.dropData[i] = true
	}
	var reports []int
	l.s.OnReport = func(i, n int) { reports = append(reports, n) }
	l.run(10 * time.Second)
	if !l.s.Done() || !slices.Equal(reports, []int{3}) || l.s.Stats().Retransmits != 10 {
		t.Fatalf("done %v reports %v stats %+v", l.s.Done(), reports, l.s.Stats())
	}
}

// TestRandomLoss: 5% loss of data and ACKs, many seeds: always complete,
// and retransmissions stay close to the losses (selective).
func TestRandomLoss(t *testing.T) {
	var retx, timeouts, lostAll int
	defer func() {
		t.Logf("20 seeds: %d data packets lost, %d retransmissions, %d timeouts", lostAll, retx, timeouts)
	}()
	for seed := 1; seed <= 20; seed++ {
		l := newLink(t, 500, Config{Window: 32, RTOLow: 3 * time.Millisecond, RTOHigh: 10 * time.Millisecond})
		x := uint32(seed * 2654435761)
		rnd := func() bool { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x%100 < 5 }
		for i := 1; i < 2000; i++ {
			l.dropData[i] = rnd()
			l.dropAck[i] = rnd()
		}
		l.run(10 * time.Second)
		st := l.s.Stats()
		if !l.s.Done() || !l.r.Complete() {
			t.Fatalf("seed %d: incomplete %+v", seed, st)
		}
		lost := 0
		for i := 1; i <= st.Sent; i++ {
			if l.dropData[i] {
				lost++
			}
		}
		retx, timeouts, lostAll = retx+st.Retransmits, timeouts+st.Timeouts, lostAll+lost
		if st.Retransmits > 3*lost+10 {
			t.Fatalf("seed %d: %d retransmissions for %d lost packets", seed, st.Retransmits, lost)
		}
	}
}

// TestINCNACK: for INC a NACK's cumulative part only says the switch has
// the packets (the results acknowledge): nothing is acked by it, the hole
// below the trigger is retransmitted once.
func TestINCNACK(t *testing.T) {
	s := NewSender(Config{Window: 8, RTOLow: time.Second, RTOHigh: time.Second}, 6)
	now := time.Unix(0, 0)
	s.Poll(now, func(int, bool) {})
	s.NACK(2, 4, now) // switch has 0, 1 and 4; 2 and 3 missing
	var re []int
	s.Poll(now, func(i int, retx bool) { re = append(re, i) })
	if !slices.Equal(re, []int{2, 3}) || s.Done() || s.InFlight() != 6 {
		t.Fatalf("retransmitted %v, in flight %d", re, s.InFlight())
	}
	s.NACK(2, 5, now) // more NACKs of the same episode: no second retransmission
	re = nil
	s.Poll(now, func(i int, retx bool) { re = append(re, i) })
	if len(re) != 0 {
		t.Fatalf("retransmitted again %v", re)
	}
	for i := range 6 {
		s.Ack(i, now)
	}
	if !s.Done() {
		t.Fatal("not done after all results")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
