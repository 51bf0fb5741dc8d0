package bfd

import (
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/config"
)

// slowInterval is what a session that is not Up advertises and sends at:
// RFC 5880 §6.8.3 forbids a Desired Min TX below one second then. Going
// Up starts a Poll Sequence to the configured interval.
const slowInterval = time.Second

// Params are a session's settings: Interval is both our Desired Min TX
// and Required Min RX; Multiplier our Detect Mult; Auth the key chain of
// RFC 5880 §6.7 (nil: no authentication; auth.go).
type Params struct {
	Interval   time.Duration
	Multiplier int
	Auth       *config.Auth
}

// Key names a session: single-hop BFD has one per (interface, peer
// address) (RFC 5881 §3).
type Key struct {
	IfIndex int
	Peer    netip.Addr
}

// Event is a session's state change, as told to its clients.
type Event struct {
	Key    Key
	Old    packet.State
	State  packet.State
	Diag   packet.Diag  // why (our diagnostic)
	Remote packet.State // the peer's last state (AdminDown: BFD was turned off there)
	At     time.Time
}

func us(d time.Duration) uint32 { return uint32(d / time.Microsecond) }

func dur(us uint32) time.Duration { return time.Duration(us) * time.Microsecond }

// session is the state of RFC 5880 §6.8.1 and the timers of §6.8.2-6.8.4.
// It is a pure machine: methods take the time and return what to send;
// the manager does the I/O.
type session struct {
	key    Key
	params Params

	state       packet.State
	remoteState packet.State
	localDisc   uint32
	remoteDisc  uint32
	diag        packet.Diag

	remoteMinRx    uint32 // µs; its Required Min RX (1 until heard, §6.8.1)
	remoteDesiredX uint32 // µs; its Desired Min TX
	remoteMult     uint8

	// Advertised values and the ones in force: an interval change takes
	// effect only when the peer answered the Poll with a Final (§6.8.3):
	// a slower transmission and a shorter detection time wait for it.
	desiredTx, requiredRx uint32 // µs, advertised
	txInForce, rxInForce  uint32 // µs
	polling               bool
	sendFinal             bool

	nextTx time.Time
	// detectAt is a Detection Time after the last valid packet (zero:
	// none heard since): it takes an Init or Up session down, and in any
	// state forgets the remote discriminator (§6.8.1), so a peer that
	// restarted with a new one is heard again.
	detectAt time.Time

	auth authState // auth.go

	upSince time.Time
	stats   Stats
}

// Stats counts a session's traffic and transitions.
type Stats struct {
	Sent, Received  uint64
	Up, Down        uint64 // transitions to Up, and from Up to Down
	LastDown        time.Time
	LastDownDiag    packet.Diag
	LastRemoteState packet.State
	// Rejected counts packets that reached the session and were dropped:
	// another remote discriminator, or authentication (the manager's
	// counters say which).
	Rejected uint64
}

func newSession(k Key, p Params, disc uint32, now time.Time) *session {
	s := &session{key: k, params: p, state: packet.Down, remoteState: packet.Down, localDisc: disc, remoteMinRx: 1,
		auth: authState{xmitSeq: rand.Uint32()}} // §6.8.1: a random start
	s.setTimers(false)
	s.txInForce, s.rxInForce = s.desiredTx, s.requiredRx
	s.nextTx = now
	return s
}

// setTimers picks the advertised intervals for the state: the configured
// interval when Up, at least a second otherwise (§6.8.3). A change while
// Up starts a Poll Sequence; otherwise (Down, Init: nobody to poll yet,
// or the change is the slow-down on leaving Up) it is in force at once.
func (s *session) setTimers(poll bool) {
	iv := us(s.params.Interval)
	if s.state != packet.Up {
		iv = max(iv, us(slowInterval))
	}
	if iv == s.desiredTx && iv == s.requiredRx {
		return
	}
	s.desiredTx, s.requiredRx = iv, iv
	if poll {
		s.polling = true
		// A faster transmission may start now; a slower one only after
		// the Final. A longer detection time may start now; a shorter
		// one only after the Final.
		s.txInForce = min(s.txInForce, iv)
		s.rxInForce = max(s.rxInForce, iv)
	} else {
		s.polling = false
		s.txInForce, s.rxInForce = iv, iv
	}
}

// txInterval is §6.8.7's interval before jitter.
func (s *session) txInterval() time.Duration {
	return dur(max(s.txInForce, s.remoteMinRx))
}

// detectTime is §6.8.4's, asynchronous mode.
func (s *session) detectTime() time.Duration {
	return time.Duration(s.remoteMult) * dur(max(s.rxInForce, s.remoteDesiredX))
}

// jitter returns 75-100% of the interval (75-90% when the multiplier is
// 1), §6.8.7.
func (s *session) jitter(d time.Duration) time.Duration {
	lo, hi := 75, 100
	if s.params.Multiplier == 1 {
		hi = 90
	}
	return d * time.Duration(lo+rand.IntN(hi-lo+1)) / 100
}

// packet builds the Control packet to send now.
func (s *session) packet(final bool) packet.Control {
	c := packet.Control{
		Diag: s.diag, State: s.state, DetectMult: uint8(s.params.Multiplier),
		MyDisc: s.localDisc, YourDisc: s.remoteDisc,
		DesiredMinTx: s.desiredTx, RequiredMinRx: s.requiredRx,
	}
	if final {
		c.Final = true // never with P (§6.8.7)
	} else {
		c.Poll = s.polling
	}
	return c
}

// timers returns when the session next needs the manager: a transmission
// or the end of the detection time.
func (s *session) due() time.Time {
	t := s.nextTx
	if s.sendFinal {
		return time.Time{} // now
	}
	if !s.detectAt.IsZero() && (t.IsZero() || s.detectAt.Before(t)) {
		t = s.detectAt
	}
	return t
}

// run does what is due at now: the detection timeout (§6.8.4) and the
// periodic transmission (§6.8.7). It returns the packets to send and
// the state change, if any.
func (s *session) run(now time.Time) (out []packet.Control, ev *Event) {
	if !s.detectAt.IsZero() && !now.Before(s.detectAt) {
		s.detectAt = time.Time{}
		s.remoteDisc = 0 // §6.8.1
		if s.state == packet.Init || s.state == packet.Up {
			ev = s.setState(packet.Down, packet.DiagDetectExpired, now)
		}
	}
	if s.sendFinal {
		s.sendFinal = false
		out = append(out, s.packet(true))
	}
	if !s.nextTx.IsZero() && !now.Before(s.nextTx) {
		if s.remoteMinRx != 0 { // 0: the peer wants no periodic packets
			out = append(out, s.packet(false))
		}
		s.nextTx = now.Add(s.jitter(s.txInterval()))
	}
	s.stats.Sent += uint64(len(out))
	return out, ev
}

// receive applies a valid Control packet (§6.8.6, after the checks
// packet.Decode made and the session lookup). It returns the state
// change, if any.
func (s *session) receive(c packet.Control, now time.Time) *Event {
	s.stats.Received++
	s.stats.LastRemoteState = c.State
	s.remoteDisc = c.MyDisc
	s.remoteState = c.State
	s.remoteDesiredX = c.DesiredMinTx
	s.remoteMult = c.DetectMult
	oldMinRx := s.remoteMinRx
	s.remoteMinRx = c.RequiredMinRx
	if c.Final && s.polling {
		s.polling = false
		s.txInForce, s.rxInForce = s.desiredTx, s.requiredRx
	}
	if s.remoteMinRx != oldMinRx && s.remoteMinRx != 0 {
		// The peer wants a different rate: the next packet obeys it.
		if next := now.Add(s.jitter(s.txInterval())); s.nextTx.IsZero() || next.Before(s.nextTx) {
			s.nextTx = next
		}
	}
	if c.Poll {
		s.sendFinal = true
	}
	var ev *Event
	if s.state != packet.AdminDown {
		switch {
		case c.State == packet.AdminDown:
			if s.state != packet.Down {
				ev = s.setState(packet.Down, packet.DiagNeighborDown, now)
			}
		case s.state == packet.Down:
			switch c.State {
			case packet.Down:
				ev = s.setState(packet.Init, packet.DiagNone, now)
			case packet.Init:
				ev = s.setState(packet.Up, packet.DiagNone, now)
			}
		case s.state == packet.Init:
			if c.State == packet.Init || c.State == packet.Up {
				ev = s.setState(packet.Up, packet.DiagNone, now)
			}
		case s.state == packet.Up:
			if c.State == packet.Down {
				ev = s.setState(packet.Down, packet.DiagNeighborDown, now)
			}
		}
	}
	// The detection timer restarts with every packet, in every state:
	// Down, it only ages the remote discriminator out.
	s.detectAt = now.Add(s.detectTime())
	return ev
}

// setState changes state: timers follow (slow when not Up, the
// configured ones through a Poll when Up), and a packet goes out at once
// so the peer's machine moves without waiting an interval.
func (s *session) setState(st packet.State, diag packet.Diag, now time.Time) *Event {
	ev := &Event{Key: s.key, Old: s.state, State: st, Diag: diag, Remote: s.remoteState, At: now}
	s.state = st
	if st != packet.Up {
		s.diag = diag
	} else {
		s.diag = packet.DiagNone
	}
	switch {
	case st == packet.Up:
		s.upSince = now
		s.stats.Up++
		s.setTimers(true)
	case ev.Old == packet.Up:
		s.stats.Down++
		s.stats.LastDown, s.stats.LastDownDiag = now, diag
		s.setTimers(false)
	}
	s.nextTx = now
	return ev
}

// reconfigure changes the configured timers (a session Up polls) and key
// chain (the next packet uses it).
func (s *session) reconfigure(p Params, now time.Time) {
	if p == s.params {
		return
	}
	timers := p.Interval != s.params.Interval || p.Multiplier != s.params.Multiplier
	s.params = p
	if timers {
		s.setTimers(s.state == packet.Up)
		s.nextTx = now
	}
}
