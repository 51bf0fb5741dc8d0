package bfd

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/bfd/packet"
)

// pair drives two sessions against each other on a fake clock: every
// packet one sends reaches the other at once (unless cut), through the
// codec.
type pair struct {
	t        *testing.T
	now      time.Time
	a, b     *session
	cut      bool // a hears nothing from b
	events   []Event
	rejected []string // reasons check gave
}

func newPair(t *testing.T, pa, pb Params) *pair {
	now := time.Unix(1000, 0)
	k := Key{IfIndex: 2, Peer: netip.MustParseAddr("10.0.0.1")}
	return &pair{t: t, now: now, a: newSession(k, pa, 0xa, now), b: newSession(k, pb, 0xb, now)}
}

func (p *pair) deliver(to *session, c packet.Control) {
	b := c.AppendTo(nil)
	d, err := packet.Decode(b)
	if err != nil {
		p.t.Fatalf("sent an undecodable packet %v: %v", c, err)
	}
	if why, _ := to.check(d, b, p.now); why != "" {
		p.rejected = append(p.rejected, why)
		return
	}
	if ev := to.receive(d, p.now); ev != nil {
		p.events = append(p.events, *ev)
	}
}

// step advances the clock to the earlier due time and runs that session.
func (p *pair) step() {
	da, db := p.a.due(), p.b.due()
	next := da
	if db.Before(next) {
		next = db
	}
	if next.After(p.now) {
		p.now = next
	}
	for _, x := range []struct{ from, to *session }{{p.a, p.b}, {p.b, p.a}} {
		if x.from.due().After(p.now) {
			continue
		}
		for _, c := range p.run(x.from) {
			p.send(x.to, c)
			// A Final owed is sent before time moves on.
			if x.to.sendFinal {
				for _, f := range p.run(x.to) {
					p.send(x.from, f)
				}
			}
		}
	}
}

// run runs s at the current time, keeps its event and returns what it sends.
func (p *pair) run(s *session) []packet.Control {
	out, ev := s.run(p.now)
	if ev != nil {
		p.events = append(p.events, *ev)
	}
	return out
}

// send delivers c to the session to, unless the link is cut (a hears
// nothing from b).
func (p *pair) send(to *session, c packet.Control) {
	if to == p.a && p.cut {
		return
	}
	p.deliver(to, c)
}

func (p *pair) until(what string, cond func() bool) {
	for i := 0; i < 10000; i++ {
		if cond() {
			return
		}
		p.step()
	}
	p.t.Fatalf("never: %s (a %s, b %s)", what, p.a.state, p.b.state)
}

func TestThreeWayAndPoll(t *testing.T) {
	fast := Params{Interval: 50 * time.Millisecond, Multiplier: 3}
	p := newPair(t, fast, fast)
	start := p.now
	p.until("both Up", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
	// RFC 5880 §6.2: a sends Down first; b goes Down>Init and says
	// Init; a goes Down>Up on it, and b Init>Up on a's Up.
	var seen []string
	for _, e := range p.events {
		seen = append(seen, e.Old.String()+">"+e.State.String())
	}
	if fmt.Sprint(seen) != "[Down>Init Down>Up Init>Up]" {
		t.Fatalf("transitions %v", seen)
	}
	if p.now.Sub(start) > 2*time.Second {
		t.Fatalf("took %v of session time to come up", p.now.Sub(start))
	}
	// Up: the configured interval is advertised with P until a Final.
	if !p.a.polling && p.a.txInForce != 50000 {
		t.Fatalf("a neither polls nor runs fast: %+v", p.a)
	}
	p.until("polls done", func() bool { return !p.a.polling && !p.b.polling })
	if p.a.txInForce != 50000 || p.a.rxInForce != 50000 || p.a.detectTime() != 150*time.Millisecond {
		t.Fatalf("a after poll: tx %d rx %d detect %v", p.a.txInForce, p.a.rxInForce, p.a.detectTime())
	}
	// Periodic packets now come every 37.5-50 ms.
	t0 := p.now
	sent := p.a.stats.Sent
	for p.now.Sub(t0) < time.Second {
		p.step()
	}
	if n := p.a.stats.Sent - sent; n < 20 || n > 28 {
		t.Fatalf("a sent %d packets in a second at 50 ms with jitter", n)
	}
}

func TestDetectionTimeExpires(t *testing.T) {
	fast := Params{Interval: 50 * time.Millisecond, Multiplier: 3}
	p := newPair(t, fast, fast)
	p.until("Up, timers fast", func() bool {
		return p.a.state == packet.Up && p.b.state == packet.Up && !p.a.polling && !p.b.polling
	})
	p.events = nil
	p.cut = true
	last := p.now // the last packet a heard
	p.until("a Down", func() bool { return p.a.state == packet.Down })
	e := p.events[0]
	if e.Old != packet.Up || e.State != packet.Down || e.Diag != packet.DiagDetectExpired {
		t.Fatalf("event %+v", e)
	}
	// Down exactly one detection time (3 x 50 ms) after the last packet.
	if got := e.At.Sub(last); got > 150*time.Millisecond {
		t.Fatalf("down %v after the last packet, detection time 150ms", got)
	}
	if p.a.remoteDisc != 0 {
		t.Fatalf("remote discriminator kept after detection timeout (RFC 5880 §6.8.1)")
	}
	// a, now Down with slow timers, tells b, which goes Down too (diag 3).
	p.cut = false
	p.until("b Down", func() bool { return p.b.state != packet.Up })
	if p.b.diag != packet.DiagNeighborDown {
		t.Fatalf("b diag %s", p.b.diag)
	}
	// And they come back.
	p.until("both Up again", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
}

func TestAdminDownFromPeer(t *testing.T) {
	par := Params{Interval: 100 * time.Millisecond, Multiplier: 3}
	p := newPair(t, par, par)
	p.until("Up", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
	p.b.state = packet.AdminDown
	p.until("a Down", func() bool { return p.a.state == packet.Down })
	if p.a.diag != packet.DiagNeighborDown {
		t.Fatalf("diag %s", p.a.diag)
	}
	// a stays Down while b says AdminDown.
	for range 20 {
		p.step()
	}
	if p.a.state != packet.Down {
		t.Fatalf("a %s while the peer is AdminDown", p.a.state)
	}
}

func TestSlowerPeerAndMultiplier(t *testing.T) {
	// The peer asks for 300 ms x 5: a sends no faster than 300 ms, and
	// detects with b's multiplier over b's interval.
	p := newPair(t, Params{Interval: 50 * time.Millisecond, Multiplier: 3}, Params{Interval: 300 * time.Millisecond, Multiplier: 5})
	p.until("Up, polls done", func() bool {
		return p.a.state == packet.Up && p.b.state == packet.Up && !p.a.polling && !p.b.polling
	})
	if p.a.txInterval() != 300*time.Millisecond || p.a.detectTime() != 1500*time.Millisecond {
		t.Fatalf("a: tx %v detect %v", p.a.txInterval(), p.a.detectTime())
	}
	if p.b.txInterval() != 300*time.Millisecond || p.b.detectTime() != 900*time.Millisecond {
		t.Fatalf("b: tx %v detect %v", p.b.txInterval(), p.b.detectTime())
	}
	// A reconfiguration while Up polls again; the slower rate waits for
	// the Final (§6.8.3).
	p.a.reconfigure(Params{Interval: 500 * time.Millisecond, Multiplier: 3}, p.now)
	if !p.a.polling || p.a.txInForce != 50000 || p.a.desiredTx != 500000 {
		t.Fatalf("before the Final: polling %v tx in force %d advertised %d", p.a.polling, p.a.txInForce, p.a.desiredTx)
	}
	p.until("poll done", func() bool { return !p.a.polling })
	if p.a.txInterval() != 500*time.Millisecond || p.b.detectTime() != 1500*time.Millisecond {
		t.Fatalf("after: a tx %v, b detect %v", p.a.txInterval(), p.b.detectTime())
	}
}
