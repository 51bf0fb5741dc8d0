package fabric

import (
	"net/netip"
	"slices"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
)

// Event is one notification sent to a host, as the event log keeps it.
type Event struct {
	Time   time.Time
	Type   l2.Event
	Host   string   // the peer the notification is about
	Zones  []string // the zones the two share (shared before, for a leave)
	To     string   // the host told
	ToPort string
	Peer   *record.Host // the peer's record as told
	Source l2.Source
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
	if !s.ready {
		return
	}
	for _, l := range s.locals {
		if l.source == l2.SourceAgent && l.rec != nil {
			s.reconcile(l, k, old, r)
		}
	}
}

// syncHost brings one host's view in line with every record.
func (s *Switch) syncHost(l *local) {
	if !s.ready {
		return
	}
	for k, r := range s.records {
		s.reconcile(l, k, nil, r)
	}
	for k := range l.told {
		if s.records[k] == nil {
			s.reconcile(l, k, nil, nil)
		}
	}
}

// reconcile decides what host l must be told about record k: join when
// the peer is up and shares a zone (again, when what l was told changed),
// leave or unreachable when it no longer is.
func (s *Switch) reconcile(l *local, k record.Key, old, r *record.Host) {
	var shared []string
	if r != nil && r.State == record.StateUp && r.Host.ID != l.host.ID {
		shared = s.ix.Share(l.host.ID, r.Host.ID)
	}
	t, was := l.told[k]
	if len(shared) > 0 {
		m := s.notifyMsg(l2.EventJoin, r, shared)
		d := string(m.AppendTo(nil))
		if was && t.digest == d {
			return
		}
		l.told[k] = told{digest: d, zones: shared}
		s.notify(l, k, m, r)
		return
	}
	if !was {
		return
	}
	delete(l.told, k)
	ev, peer := l2.EventLeave, r
	switch {
	case r == nil:
		// Withdrawn while up: its switch died, or the record was lost.
		ev, peer = l2.EventUnreachable, old
	case r.State == record.StateUnreachable:
		ev = l2.EventUnreachable
	}
	if peer == nil {
		peer = t.last
	}
	s.notify(l, k, s.notifyMsg(ev, peer, t.zones), peer)
}

func (s *Switch) notifyMsg(ev l2.Event, r *record.Host, zones []string) l2.Message {
	src := l2.SourceBGP
	if r.Switch == s.cfg.RouterID {
		src = r.Source
	}
	m := l2.Message{Type: l2.TypeNotify, Event: ev, Host: r.Host, Switch: r.Switch, SwitchName: r.SwitchName,
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

// notify queues a notification to l, sending it at once if the window
// allows; a queued notification about the same record is replaced.
func (s *Switch) notify(l *local, k record.Key, m l2.Message, peer *record.Host) {
	if t, ok := l.told[k]; ok {
		t.last = peer
		l.told[k] = t
	}
	s.logEvent(l, m, peer)
	for _, p := range l.queue {
		if p.rec == k {
			p.msg = m
			return
		}
	}
	p := &pending{msg: m, rec: k}
	if len(l.flight) < s.cfg.Window {
		s.send(l, p)
		return
	}
	l.queue = append(l.queue, p)
}

func (s *Switch) send(l *local, p *pending) {
	if p.msg.Seq == 0 {
		s.seq++
		if s.seq == 0 {
			s.seq = 1
		}
		p.msg.Seq = s.seq
		l.flight[p.msg.Seq] = p
		s.count("notifications")
	} else {
		s.count("retransmissions")
	}
	p.sent = s.now
	s.reply(l.key.port, l.mac, &p.msg)
}

func (s *Switch) notifyAck(port string, m *l2.Message) {
	l := s.locals[localKey{port, m.Host.ID}]
	if l == nil {
		return
	}
	if _, ok := l.flight[m.Seq]; !ok {
		return // a duplicate ack
	}
	delete(l.flight, m.Seq)
	s.count("notifications_acked")
	for len(l.queue) > 0 && len(l.flight) < s.cfg.Window {
		p := l.queue[0]
		l.queue = l.queue[1:]
		s.send(l, p)
	}
}

func (s *Switch) retransmit(l *local) {
	for _, p := range l.flight {
		if s.now.Sub(p.sent) >= s.cfg.Retransmit {
			s.send(l, p)
		}
	}
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
}

// Status returns the summary.
func (s *Switch) Status() Status {
	st := Status{Locals: len(s.locals), ZoneFrom: s.zoneFrom, ZoneStamp: s.zoneStamp, ZonesReady: s.ready}
	for _, r := range s.records {
		if r.State == record.StateUp {
			st.Records++
		}
	}
	if s.ix != nil {
		st.Zones = len(s.ix.Config().Zones)
	}
	for _, l := range s.locals {
		st.Pending += len(l.flight) + len(l.queue)
	}
	return st
}
