package fabric

import (
	"math/bits"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// Notifications. Every agent host is told about the host records that
// share a zone with it. What a switch keeps for that grows with (its
// hosts × the records they share a zone with), so it is kept small: a
// record is a 32-bit index into the peer table, and a host holds two bit
// sets over those indices — the peers it has been told are up (or has
// that queued), and the peers queued for it — plus the queue itself and
// at most Window messages in flight. A notification is built when it is
// sent, from the record's state then, so a queued one always says the
// latest (join with the current addresses, leave, unreachable).
//
// An unacknowledged notification is sent again after Retransmit, then
// after twice as long each time; after Attempts the switch gives up on
// the host: it drops what it holds for it, counts it (notify_gave_up),
// shows it (unresponsive), and answers its keepalives "unknown host", so
// a host that was only slow registers again and is told everything anew,
// while one that never acknowledges costs nothing more.

// Event is one notification sent to a host, as the event log keeps it.
type Event struct {
	Time   time.Time
	Type   l2.Event
	Host   string   // the peer the notification is about
	Zones  []string // the zones the two share
	To     string   // the host told
	ToPort string
	Peer   *record.Host // the peer's record as told
	Source l2.Source
}

// peerTable interns host records as small indices for the hosts' bit
// sets; an index is reused once no host refers to it.
type peerTable struct {
	idx  map[record.Key]int32
	ents []peerEntry
	free []int32
}

type peerEntry struct {
	key  record.Key
	rec  *record.Host // the record now; nil once withdrawn
	last *record.Host // the last record (what a withdrawn one said)
	refs int32        // bits set for it in hosts' told and queued sets
}

func newPeerTable() *peerTable { return &peerTable{idx: map[record.Key]int32{}} }

// get returns the index of k, creating it.
func (t *peerTable) get(k record.Key) int32 {
	if i, ok := t.idx[k]; ok {
		return i
	}
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
		t.ents[i] = peerEntry{key: k}
	} else {
		i = int32(len(t.ents))
		t.ents = append(t.ents, peerEntry{key: k})
	}
	t.idx[k] = i
	return i
}

// update records k's new state (r nil: withdrawn).
func (t *peerTable) update(k record.Key, r *record.Host) {
	i, ok := t.idx[k]
	if !ok {
		return
	}
	e := &t.ents[i]
	e.rec = r
	if r != nil {
		e.last = r
	}
	t.release(i, 0)
}

// release drops n references to i, and i itself once nothing refers to a
// withdrawn record.
func (t *peerTable) release(i int32, n int32) {
	e := &t.ents[i]
	e.refs -= n
	if e.refs == 0 && e.rec == nil {
		delete(t.idx, e.key)
		t.ents[i] = peerEntry{}
		t.free = append(t.free, i)
	}
}

// bitset is a set of peer indices.
type bitset []uint64

func (b bitset) has(i int32) bool { return int(i>>6) < len(b) && b[i>>6]&(1<<(i&63)) != 0 }

func (b *bitset) set(i int32) {
	for int(i>>6) >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i>>6] |= 1 << (i & 63)
}

func (b bitset) clear(i int32) {
	if int(i>>6) < len(b) {
		b[i>>6] &^= 1 << (i & 63)
	}
}

// each calls f for every member.
func (b bitset) each(f func(int32)) {
	for w, v := range b {
		for v != 0 {
			t := bits.TrailingZeros64(v)
			f(int32(w<<6 + t))
			v &= v - 1
		}
	}
}

// notes is one host's notification state.
type notes struct {
	told   bitset // peers told up, or whose join is queued
	queued bitset // peers in queue
	queue  []int32
	flight map[uint32]*pending // sent, unacknowledged
	mute   bool                // the switch gave up: it does not acknowledge
}

func newNotes() notes { return notes{flight: map[uint32]*pending{}} }

type pending struct {
	msg   l2.Message
	peer  int32
	next  time.Time // when it is sent again
	tries int
}

// recordChanged brings every agent host's view in line with one record's
// change (r nil: the record is gone).
func (s *Switch) recordChanged(k record.Key, r *record.Host) {
	old := s.records[k]
	if r == nil {
		delete(s.records, k)
	} else {
		s.records[k] = r
	}
	s.peers.update(k, r)
	if !s.ready {
		return
	}
	for _, l := range s.locals {
		if s.notified(l) {
			s.reconcile(l, k, old, r, s.ix)
		}
	}
}

// notified: l is an agent host that is told about its peers.
func (s *Switch) notified(l *local) bool {
	return l.source == l2.SourceAgent && l.rec != nil && !l.note.mute
}

// syncHost brings one host's view in line with every record (a new
// host, a new zone configuration: oldIx is the one it was told under).
func (s *Switch) syncHost(l *local) { s.syncHostFrom(l, s.ix) }

func (s *Switch) syncHostFrom(l *local, oldIx *zones.Index) {
	if !s.ready || !s.notified(l) {
		return
	}
	if oldIx == nil {
		oldIx = s.ix
	}
	for k, r := range s.records {
		s.reconcile(l, k, r, r, oldIx)
	}
	// Peers told up whose record is gone (cannot happen while every
	// change passes through recordChanged; kept as a repair).
	var gone []int32
	l.note.told.each(func(i int32) {
		if s.peers.ents[i].rec == nil {
			gone = append(gone, i)
		}
	})
	for _, i := range gone {
		l.note.told.clear(i)
		s.peers.ents[i].refs--
		s.enqueue(l, i)
		s.peers.release(i, 0)
	}
}

// reconcile decides whether host l must be told about record k, which
// was old (under zone index oldIx) and is now r: join when the peer is up
// and shares a zone and l was not told so (or was told something else);
// leave or unreachable when it no longer is.
func (s *Switch) reconcile(l *local, k record.Key, old, r *record.Host, oldIx *zones.Index) {
	var shared []string
	if r != nil && r.State == record.StateUp && r.Host.ID != l.host.ID {
		shared = s.ix.Share(l.host.ID, r.Host.ID)
	}
	i, known := s.peers.idx[k]
	was := known && l.note.told.has(i)
	if len(shared) > 0 {
		if was && old != nil && old.State == record.StateUp && sameJoin(old, r) &&
			slices.Equal(oldIx.Share(l.host.ID, old.Host.ID), shared) {
			return
		}
		if !was {
			i = s.peers.get(k)
			s.peers.ents[i].rec, s.peers.ents[i].last = r, r
			l.note.told.set(i)
			s.peers.ents[i].refs++
		}
		s.enqueue(l, i)
		return
	}
	if !was {
		return
	}
	l.note.told.clear(i)
	s.peers.ents[i].refs--
	s.enqueue(l, i)
	s.peers.release(i, 0)
}

// sameJoin: a join about b would tell what one about a told.
func sameJoin(a, b *record.Host) bool {
	if a == b {
		return true
	}
	return a.Switch == b.Switch && a.SwitchName == b.SwitchName && a.Port == b.Port && a.Source == b.Source &&
		a.Host.ID == b.Host.ID && a.Host.Role == b.Host.Role && a.Host.NQN == b.Host.NQN &&
		slices.Equal(a.Host.MAC, b.Host.MAC) && slices.Equal(a.Host.Addrs, b.Host.Addrs)
}

// enqueue sends host l what it must now hear about peer i, at once if
// its window allows, else after what is queued (once: a queued peer is
// told its state when its turn comes).
func (s *Switch) enqueue(l *local, i int32) {
	if l.note.queued.has(i) {
		return
	}
	if len(l.note.queue) == 0 && len(l.note.flight) < s.cfg.Window {
		s.sendPeer(l, i)
		return
	}
	l.note.queued.set(i)
	l.note.queue = append(l.note.queue, i)
	s.peers.ents[i].refs++
}

// sendPeer builds and sends the notification about peer i as it stands.
func (s *Switch) sendPeer(l *local, i int32) {
	e := &s.peers.ents[i]
	peer := e.rec
	if peer == nil {
		peer = e.last
	}
	if peer == nil {
		return
	}
	var m l2.Message
	if l.note.told.has(i) {
		m = s.notifyMsg(l2.EventJoin, peer, s.ix.Share(l.host.ID, peer.Host.ID))
	} else {
		ev := l2.EventLeave
		switch {
		case e.rec == nil && (peer.State == record.StateUp || peer.State == record.StateUnreachable):
			// Withdrawn while up: its switch died, or the record was lost.
			ev = l2.EventUnreachable
		case e.rec != nil && e.rec.State == record.StateUnreachable:
			ev = l2.EventUnreachable
		}
		m = s.notifyMsg(ev, peer, s.ix.Share(l.host.ID, peer.Host.ID))
	}
	s.seq++
	if s.seq == 0 {
		s.seq = 1
	}
	m.Seq = s.seq
	p := &pending{msg: m, peer: i, next: s.now.Add(s.cfg.Retransmit)}
	l.note.flight[m.Seq] = p
	s.count("notifications")
	s.logEvent(l, m, peer)
	s.reply(l.key.port, l.src, &p.msg)
}

func (s *Switch) notifyMsg(ev l2.Event, r *record.Host, zones []string) l2.Message {
	src := l2.SourceBGP
	if r.Switch == s.cfg.RouterID {
		src = r.Source
	}
	// A peer's MAC is identity material (docs/inof.md, "Identity"):
	// hosts are not told it; they connect to the addresses.
	h := r.Host
	h.MAC = nil
	m := l2.Message{Type: l2.TypeNotify, Event: ev, Host: h, Switch: r.Switch, SwitchName: r.SwitchName,
		Port: r.Port, Source: src, Nonce: s.nonce}
	// The zones that fit one frame: a host in hundreds of zones is told
	// the first ones (sorted); the membership itself is not in doubt.
	for _, z := range zones {
		m.Zones = append(m.Zones, z)
		if m.Len() > l2.MaxLen {
			m.Zones = m.Zones[:len(m.Zones)-1]
			break
		}
	}
	return m
}

func (s *Switch) notifyAck(port string, src net.HardwareAddr, m *l2.Message) {
	l, _ := s.owner(port, src, m)
	if l == nil {
		return
	}
	if _, ok := l.note.flight[m.Seq]; !ok {
		return // a duplicate ack
	}
	delete(l.note.flight, m.Seq)
	s.count("notifications_acked")
	s.drain(l)
}

// drain sends queued notifications while the window allows.
func (s *Switch) drain(l *local) {
	for len(l.note.queue) > 0 && len(l.note.flight) < s.cfg.Window {
		i := l.note.queue[0]
		l.note.queue = l.note.queue[1:]
		l.note.queued.clear(i)
		s.sendPeer(l, i)
		s.peers.release(i, 1)
	}
	if len(l.note.queue) == 0 {
		l.note.queue = nil // let a long queue's array go
	}
}

// retransmit sends again what waited its turn, and gives up on a host
// that let a notification go unacknowledged Attempts times.
func (s *Switch) retransmit(l *local) {
	for _, p := range l.note.flight {
		if s.now.Before(p.next) {
			continue
		}
		if p.tries >= s.cfg.Attempts {
			s.giveUp(l)
			return
		}
		p.tries++
		p.next = s.now.Add(s.cfg.Retransmit << min(p.tries, 8))
		s.count("retransmissions")
		s.reply(l.key.port, l.src, &p.msg)
	}
}

// giveUp: the host does not acknowledge. What the switch held for it is
// dropped; its keepalives are answered "unknown host" until it registers
// again.
func (s *Switch) giveUp(l *local) {
	s.count("notify_gave_up")
	if s.lim.allow("mute:"+l.key.port+"/"+l.key.id, s.now) {
		s.log.Warn("inof: host does not acknowledge notifications; gave up, it must register again",
			"host", l.key.id, "port", l.key.port, "attempts", s.cfg.Attempts)
	}
	s.dropNotes(l)
	l.note.mute = true
}

// dropNotes forgets a host's notification state.
func (s *Switch) dropNotes(l *local) {
	n := &l.note
	n.told.each(func(i int32) { s.peers.release(i, 1) })
	for _, i := range n.queue {
		s.peers.release(i, 1)
	}
	*n = notes{flight: map[uint32]*pending{}, mute: n.mute}
}

func (s *Switch) logEvent(l *local, m l2.Message, peer *record.Host) {
	e := Event{Time: s.now, Type: m.Event, Host: m.Host.ID, Zones: slices.Clone(m.Zones), To: l.host.ID, ToPort: l.key.port,
		Peer: peer, Source: m.Source}
	if len(s.events) < s.cfg.Events {
		s.events = append(s.events, e)
		return
	}
	s.events[s.evStart] = e
	s.evStart = (s.evStart + 1) % len(s.events)
}

// Events returns the event log, oldest first.
func (s *Switch) Events() []Event {
	out := make([]Event, 0, len(s.events))
	out = append(out, s.events[s.evStart:]...)
	return append(out, s.events[:s.evStart]...)
}

// HostView is one host as the API shows it.
type HostView struct {
	Record  record.Host
	Source  l2.Source // agent, lldp (on this switch) or bgp
	Zones   []string  // as this switch computes them
	Expires time.Duration
	// Unresponsive: a host of this switch that stopped acknowledging
	// notifications (the switch gave up on it).
	Unresponsive bool
}

// Hosts returns the hosts that are up: ours and the fabric's.
func (s *Switch) Hosts() []HostView {
	var out []HostView
	for _, r := range s.records {
		if r.State != record.StateUp {
			continue
		}
		v := HostView{Record: *r, Source: l2.SourceBGP, Zones: s.zonesOf(r.Host.ID)}
		if r.Switch == s.cfg.RouterID {
			v.Source = r.Source
			if l := s.locals[localKey{r.Port, r.Host.ID}]; l != nil {
				v.Expires = l.expires.Sub(s.now)
				v.Unresponsive = l.note.mute
			}
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b HostView) int {
		if a.Record.Host.ID != b.Record.Host.ID {
			if a.Record.Host.ID < b.Record.Host.ID {
				return -1
			}
			return 1
		}
		if c := a.Record.Switch.Compare(b.Record.Switch); c != 0 {
			return c
		}
		if a.Record.Port < b.Record.Port {
			return -1
		}
		return 1
	})
	return out
}

// Counters returns a copy of the counters.
func (s *Switch) Counters() map[string]uint64 {
	m := make(map[string]uint64, len(s.counters))
	for k, v := range s.counters {
		m[k] = v
	}
	return m
}

// Status is the switch's summary.
type Status struct {
	Locals, Records int
	ZoneFrom        netip.Addr
	ZoneStamp       uint64
	ZonesReady      bool
	Zones           int
	Pending         int // notifications unacknowledged or queued
	Unresponsive    int // hosts the switch gave up notifying
	Bindings        int
	Ports           map[string]PortStats
}

// Status returns the summary.
func (s *Switch) Status() Status {
	st := Status{Locals: len(s.locals), ZoneFrom: s.zoneFrom, ZoneStamp: s.zoneStamp, ZonesReady: s.ready,
		Ports: map[string]PortStats{}}
	for _, r := range s.records {
		if r.State == record.StateUp {
			st.Records++
		}
	}
	if s.ix != nil {
		st.Zones = len(s.ix.Config().Zones)
	}
	for _, l := range s.locals {
		st.Pending += len(l.note.flight) + len(l.note.queue)
		if l.note.mute {
			st.Unresponsive++
		}
	}
	for _, idst := range s.ids {
		st.Bindings += len(idst.binds)
	}
	for p, ps := range s.ports {
		st.Ports[p] = *ps
	}
	return st
}
