package bfd

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/config"
)

// upPair starts two managers a and b on one in-memory link with one
// session each, both with params p, and waits until both are Up.
type upPair struct {
	net    *MemNet
	a, b   netip.Addr
	ma, mb *Manager
	ra, rb *recorder
	ca, cb *Client
	ctx    context.Context
}

func startPair(t *testing.T, pa, pb Params) *upPair {
	t.Helper()
	u := &upPair{net: NewMemNet(), a: netip.MustParseAddr("10.0.0.0"), b: netip.MustParseAddr("10.0.0.1"), ra: &recorder{}, rb: &recorder{}}
	u.ma, u.mb = New(Options{IO: u.net.IO(u.a, 7)}), New(Options{IO: u.net.IO(u.b, 7)})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	u.ctx = ctx
	go u.ma.Run(ctx)
	go u.mb.Run(ctx)
	u.ca, u.cb = u.ma.NewClient("isis", u.ra.notify), u.mb.NewClient("isis", u.rb.notify)
	u.ca.Set(Key{IfIndex: 7, Peer: u.b}, u.a, "eth0", pa)
	u.cb.Set(Key{IfIndex: 7, Peer: u.a}, u.b, "eth0", pb)
	return u
}

func (u *upPair) waitUp(t *testing.T) {
	t.Helper()
	waitFor(t, "both Up", func() bool {
		ea, _ := u.ra.last()
		eb, _ := u.rb.last()
		return ea.State == packet.Up && eb.State == packet.Up
	})
}

func (u *upPair) view(t *testing.T, m *Manager) (SessionView, map[string]uint64) {
	t.Helper()
	ss, ctr, err := m.Sessions(u.ctx)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %+v, %v", ss, err)
	}
	return ss[0], ctr
}

// waitSettled waits until a's session is Up with its Poll Sequence done
// (the remote discriminator learnt, the fast timers in force).
func (u *upPair) waitSettled(t *testing.T) SessionView {
	t.Helper()
	var v SessionView
	waitFor(t, "a settled", func() bool {
		v, _ = u.view(t, u.ma)
		return v.State == "Up" && v.RemoteState == "Up" && v.RemoteDisc != 0 && v.TxInterval == v.Interval
	})
	return v
}

// fast are the timers of the manager tests: a detection time of 500 ms
// rides out a loaded CI box (a spurious detection would fail the tests
// that check nothing moved).
var fast = Params{Interval: 100 * time.Millisecond, Multiplier: 5}

// The attack of issue 25 row 5: a host on the link sends one packet from
// the peer's address, TTL 255, State Down, Your Discriminator 0 and a My
// Discriminator of its own. RFC 5880 §6.8.6 selects the session by
// interface and source; before the check it took the Up session (and the
// adjacency it guards) down. Now the session learnt the peer's
// discriminator and drops the packet, counted.
func TestSpoofedDownIgnored(t *testing.T) {
	u := startPair(t, fast, fast)
	u.waitUp(t)
	v := u.waitSettled(t)
	_, n0 := u.ra.last()
	downs0 := v.Stats.Down
	for i, spoof := range []packet.Control{
		// Your Discriminator 0: found by (interface, source).
		{State: packet.Down, Diag: packet.DiagDetectExpired, DetectMult: 3, MyDisc: v.RemoteDisc ^ 0x5a5a, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
		// Your Discriminator sniffed off the link, My Discriminator not.
		{State: packet.Down, DetectMult: 3, MyDisc: 0x1234, YourDisc: v.LocalDisc, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
		// AdminDown likewise.
		{State: packet.AdminDown, DetectMult: 3, MyDisc: 0x4321, DesiredMinTx: 1e6, RequiredMinRx: 1e6},
	} {
		u.net.Send(u.b, u.a, spoof.AppendTo(nil))
		waitFor(t, "spoof counted or acted on", func() bool {
			_, ctr := u.view(t, u.ma)
			_, n := u.ra.last()
			return ctr["rx_rejected_my_disc_mismatch"] == uint64(i+1) || n != n0
		})
		if e, n := u.ra.last(); n != n0 {
			t.Fatalf("spoof %d (%v) moved a's session: %+v", i, spoof, e)
		}
	}
	sv, _ := u.view(t, u.ma)
	if _, n := u.ra.last(); n != n0 || sv.State != "Up" || sv.Stats.Down != downs0 || sv.Stats.Rejected != 3 {
		t.Fatalf("a's session moved on spoofed packets: %d events (had %d), %+v", n, n0, sv)
	}
}

// A peer that restarts comes back with a new discriminator: its packets
// are dropped while the old one is known, and heard once a Detection
// Time without the old peer has passed (§6.8.1). Driven on the session
// machine with explicit times.
func TestNewRemoteDiscriminatorAfterDetectionTime(t *testing.T) {
	p := newPair(t, fast, fast)
	p.until("Up", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
	p.until("polls done", func() bool { return !p.a.polling && !p.b.polling })
	if p.a.remoteDisc != 0xb {
		t.Fatalf("a learnt %#x", p.a.remoteDisc)
	}
	// b restarts: a new session with discriminator 0xc, and nothing more
	// from the old one.
	p.b = newSession(p.b.key, fast, 0xc, p.now)
	restart := p.now
	p.events = nil
	var down *Event
	p.until("a Down by detection", func() bool {
		for i, e := range p.events {
			if e.Key == p.a.key && e.Old == packet.Up && e.State == packet.Down {
				down = &p.events[i]
				return true
			}
		}
		return false
	})
	// Only the detection time takes a down: the new b's Down packets
	// (another discriminator) were dropped meanwhile.
	if down.Diag != packet.DiagDetectExpired || down.At.Sub(restart) > 5*fast.Interval {
		t.Fatalf("a went down by %+v, %v after the restart", down, down.At.Sub(restart))
	}
	if len(p.rejected) == 0 || p.rejected[0] != rejDisc {
		t.Fatalf("a rejected %v", p.rejected)
	}
	p.until("Up with the new b", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
	if p.a.remoteDisc != 0xc {
		t.Fatalf("a learnt %#x, want the new 0xc", p.a.remoteDisc)
	}
}

// A Down session (the peer said AdminDown) still forgets the peer's
// discriminator a Detection Time after its last packet, so a peer that
// then restarts is not locked out.
func TestDiscriminatorAgesOutWhileDown(t *testing.T) {
	p := newPair(t, fast, fast)
	p.until("Up", func() bool { return p.a.state == packet.Up && p.b.state == packet.Up })
	p.b.state = packet.AdminDown
	p.until("a Down", func() bool { return p.a.state == packet.Down })
	p.cut = true // b says nothing more
	p.until("remote discriminator forgotten", func() bool { return p.a.remoteDisc == 0 })
}

func chain(keys ...config.AuthKey) *config.Auth { return &config.Auth{Keys: keys} }

func key(id uint16, alg, secret string) config.AuthKey {
	return config.AuthKey{ID: id, Algorithm: alg, Secret: config.Secret(secret)}
}

func withAuth(p Params, a *config.Auth) Params { p.Auth = a; return p }

// Every RFC 5880 type comes Up between two managers with the same chain,
// and every packet sent carries the section.
func TestAuthUp(t *testing.T) {
	for _, alg := range packet.AuthTypeNames() {
		t.Run(alg, func(t *testing.T) {
			a := chain(key(3, alg, "sixteen-byte-key"))
			u := startPair(t, withAuth(fast, a), withAuth(fast, a))
			var mu sync.Mutex
			var sent []packet.Control
			u.net.Tap(u.b, func(b []byte) {
				c, err := packet.Decode(b)
				if err != nil {
					t.Errorf("b sent %x: %v", b, err)
				}
				mu.Lock()
				sent = append(sent, c)
				mu.Unlock()
			})
			u.waitUp(t)
			v := u.waitSettled(t)
			if v.Auth.String() != alg || v.AuthKeyID != 3 || v.AuthExpired {
				t.Fatalf("view %+v", v)
			}
			_, ctr := u.view(t, u.ma)
			for k, n := range ctr {
				if n > 0 && k != "rx_no_session" {
					t.Errorf("counter %s = %d", k, n)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			var last uint32
			for i, c := range sent {
				if c.Auth.Type.String() != alg || c.Auth.KeyID != 3 {
					t.Fatalf("packet %d: %v", i, c)
				}
				if c.Auth.Type.Meticulous() && i > 0 && c.Auth.Seq != last+1 {
					t.Fatalf("meticulous: packet %d has sequence %d after %d", i, c.Auth.Seq, last)
				}
				last = c.Auth.Seq
			}
		})
	}
}

// What must not come Up, and the counter that says why.
func TestAuthRefused(t *testing.T) {
	sha := chain(key(1, "meticulous-keyed-sha1", "right"))
	for _, tc := range []struct {
		name    string
		a, b    *config.Auth
		counter string
	}{
		{"wrong secret", sha, chain(key(1, "meticulous-keyed-sha1", "wrong")), "rx_rejected_auth_digest"},
		{"unknown key id", sha, chain(key(2, "meticulous-keyed-sha1", "right")), "rx_rejected_auth_key_id"},
		{"other type", sha, chain(key(1, "keyed-sha1", "right")), "rx_rejected_auth_type_mismatch"},
		{"peer without authentication", sha, nil, "rx_rejected_auth_type_mismatch"},
		{"peer with, we without", nil, sha, "rx_rejected_auth_type_mismatch"},
		{"wrong password", chain(key(1, "simple", "right")), chain(key(1, "simple", "wrong")), "rx_rejected_auth_digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := startPair(t, withAuth(fast, tc.a), withAuth(fast, tc.b))
			waitFor(t, tc.counter, func() bool {
				_, ctr := u.view(t, u.ma)
				return ctr[tc.counter] >= 2
			})
			if _, n := u.ra.last(); n != 0 {
				t.Fatalf("a's session moved: %d events", n)
			}
			if v, _ := u.view(t, u.ma); v.State != "Down" || v.Stats.Rejected < 2 {
				t.Fatalf("a: %+v", v)
			}
		})
	}
}

// Replays: a packet of the peer's, read off the link, sent again. With a
// meticulous type every replay is refused; with a keyed type the one
// that was current is accepted (RFC 5880's known weakness of keyed
// types: their sequence number moves about once a second), older ones
// not.
func TestAuthReplay(t *testing.T) {
	a := chain(key(1, "meticulous-keyed-sha1", "k"))
	u := startPair(t, withAuth(fast, a), withAuth(fast, a))
	var mu sync.Mutex
	var heard [][]byte
	u.net.Tap(u.b, func(b []byte) { mu.Lock(); heard = append(heard, b); mu.Unlock() })
	u.waitUp(t)
	v0 := u.waitSettled(t)
	mu.Lock()
	old := heard[len(heard)-1]
	mu.Unlock()
	for i := 1; i <= 3; i++ {
		u.net.Send(u.b, u.a, old)
		waitFor(t, "replay counted", func() bool {
			_, ctr := u.view(t, u.ma)
			return ctr["rx_rejected_auth_seq"] == uint64(i)
		})
	}
	if v, _ := u.view(t, u.ma); v.State != "Up" || v.Stats.Down != v0.Stats.Down {
		t.Fatalf("a after replays: %+v", v)
	}
}

// The sequence window of §6.7.3 on the session alone: keyed accepts
// [last, last+3×mult], meticulous (last, last+3×mult], circular; it is
// forgotten after twice the Detection Time.
func TestSequenceWindow(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newSession(Key{}, fast, 1, now)
	s.remoteMult, s.rxInForce, s.remoteDesiredX = 3, 20000, 20000 // detection time 60 ms
	c := packet.Control{DetectMult: 3}
	for _, tc := range []struct {
		typ  packet.AuthType
		last uint32
		seq  uint32
		ok   bool
	}{
		{packet.AuthKeyedSHA1, 10, 10, true},
		{packet.AuthKeyedSHA1, 10, 19, true},
		{packet.AuthKeyedSHA1, 10, 20, false},
		{packet.AuthKeyedSHA1, 10, 9, false},
		{packet.AuthMeticulousSHA1, 10, 10, false},
		{packet.AuthMeticulousSHA1, 10, 11, true},
		{packet.AuthMeticulousSHA1, 10, 19, true},
		{packet.AuthMeticulousSHA1, 0xfffffffe, 3, true}, // wraps
		{packet.AuthMeticulousSHA1, 0xfffffffe, 8, false},
	} {
		s.auth = authState{rcvSeq: tc.last, rcvKnown: true, rcvAt: now}
		c.Auth.Seq = tc.seq
		if got := s.seqOK(c, tc.typ, now.Add(10*time.Millisecond)); got != tc.ok {
			t.Errorf("%s last %d seq %d: %v", tc.typ, tc.last, tc.seq, got)
		}
	}
	s.auth = authState{rcvSeq: 10, rcvKnown: true, rcvAt: now}
	c.Auth.Seq = 5
	if !s.seqOK(c, packet.AuthMeticulousSHA1, now.Add(120*time.Millisecond)) || s.auth.rcvKnown {
		t.Error("the last sequence number survived twice the Detection Time")
	}
}

// Keys roll within a chain without the session going down: key 1 sends
// until T, key 2 from T, both accepted throughout.
func TestAuthRollover(t *testing.T) {
	at := time.Now().Add(500 * time.Millisecond)
	mk := func() *config.Auth {
		k1, k2 := key(1, "keyed-md5", "old"), key(2, "meticulous-keyed-sha1", "new")
		k1.SendUntil, k2.SendFrom = at, at
		return chain(k1, k2)
	}
	u := startPair(t, withAuth(fast, mk()), withAuth(fast, mk()))
	u.waitUp(t)
	waitFor(t, "key 2 in use both ways", func() bool {
		va, _ := u.view(t, u.ma)
		vb, _ := u.view(t, u.mb)
		return va.AuthKeyID == 2 && vb.AuthKeyID == 2 && time.Now().After(at.Add(100*time.Millisecond))
	})
	for _, m := range []*Manager{u.ma, u.mb} {
		v, ctr := u.view(t, m)
		if v.Stats.Down != 0 || v.State != "Up" || v.Stats.Rejected != 0 {
			t.Fatalf("rollover: %+v %v", v, ctr)
		}
	}
}

// Every send key expired: the session keeps sending with the last one and
// accepting it (no outage), counts it, and says so in its view.
func TestAuthExpiredKeyKeepsSession(t *testing.T) {
	until := time.Now().Add(300 * time.Millisecond)
	mk := func() *config.Auth {
		k := key(4, "meticulous-keyed-sha1", "s")
		k.SendUntil, k.AcceptUntil = until, until
		return chain(k)
	}
	u := startPair(t, withAuth(fast, mk()), withAuth(fast, mk()))
	u.waitUp(t)
	waitFor(t, "sending with the expired key", func() bool {
		v, ctr := u.view(t, u.ma)
		return v.AuthExpired && ctr["tx_auth_expired_key"] > 10 && ctr["rx_auth_expired_key"] > 10
	})
	v, ctr := u.view(t, u.ma)
	if v.State != "Up" || v.Stats.Down != 0 || v.AuthKeyID != 4 || v.Stats.Rejected != 0 {
		t.Fatalf("expired key: %+v %v", v, ctr)
	}
	// A new key (a reload) ends it.
	fresh := chain(key(5, "meticulous-keyed-sha1", "t"))
	u.ca.Set(Key{IfIndex: 7, Peer: u.b}, u.a, "eth0", withAuth(fast, fresh))
	u.cb.Set(Key{IfIndex: 7, Peer: u.a}, u.b, "eth0", withAuth(fast, fresh))
	waitFor(t, "new key in force", func() bool {
		v, _ := u.view(t, u.ma)
		return !v.AuthExpired && v.AuthKeyID == 5
	})
}

// Clients share a session and its key chain: the first client's chain is
// used when they differ (and that is counted); a client without a chain
// does not turn authentication off.
func TestSharedSessionAuth(t *testing.T) {
	a := chain(key(1, "keyed-sha1", "a"))
	u := startPair(t, withAuth(fast, a), withAuth(fast, a))
	bgp := u.ma.NewClient("inof", func(Event) {})
	bgp.Set(Key{IfIndex: 7, Peer: u.b}, u.a, "eth0", Params{Interval: 200 * time.Millisecond, Multiplier: 7})
	other := u.ma.NewClient("ospf", func(Event) {})
	other.Set(Key{IfIndex: 7, Peer: u.b}, u.a, "eth0", withAuth(fast, chain(key(9, "keyed-sha1", "x"))))
	u.waitUp(t)
	waitFor(t, "three clients", func() bool {
		v, _ := u.view(t, u.ma)
		return len(v.Clients) == 3
	})
	v, ctr := u.view(t, u.ma)
	if v.AuthKeyID != 1 || v.Clients[0] != "inof" || v.Clients[1] != "isis" || v.Clients[2] != "ospf" || ctr["auth_conflicts"] == 0 {
		t.Fatalf("shared: %+v %v", v, ctr)
	}
	if v.Interval != fast.Interval || v.Multiplier != fast.Multiplier {
		t.Fatalf("timers %v x %d, want the fastest", v.Interval, v.Multiplier)
	}
}

// A session re-created to the same peer (its adjacency flapped) carries
// its authentication sequence number on: a peer that learnt the old one
// accepts the new session's packets at once.
func TestAuthSeqCarriesOver(t *testing.T) {
	a := chain(key(1, "meticulous-keyed-sha1", "k"))
	u := startPair(t, withAuth(fast, a), withAuth(fast, a))
	var mu sync.Mutex
	var seqs []uint32
	u.net.Tap(u.a, func(b []byte) {
		if c, err := packet.Decode(b); err == nil {
			mu.Lock()
			seqs = append(seqs, c.Auth.Seq)
			mu.Unlock()
		}
	})
	u.waitUp(t)
	k := Key{IfIndex: 7, Peer: u.b}
	u.ca.Remove(k)
	waitFor(t, "removed", func() bool { ss, _, _ := u.ma.Sessions(u.ctx); return len(ss) == 0 })
	u.ca.Set(k, u.a, "eth0", withAuth(fast, a))
	waitFor(t, "a second session sent", func() bool {
		ss, _, _ := u.ma.Sessions(u.ctx)
		return len(ss) == 1 && ss[0].Stats.Sent > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("sequence went %d -> %d across the new session (packet %d)", seqs[i-1], seqs[i], i)
		}
	}
}
