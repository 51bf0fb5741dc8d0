package bfd

import (
	"log/slog"
	"net/netip"

	"github.com/fared/fared/bfd/packet"
)

// Sessions is one client's set of BFD sessions, owned by the client's
// loop: every tick the client says which sessions it wants (one per
// adjacency, neighbour or BGP peer that BFD guards) and Sync asks the
// manager for the difference. IS-IS, OSPF and iNOF share it; only what a
// session guards differs.
type Sessions struct {
	log    *slog.Logger
	client *Client
	asked  map[Key]Want
	up     map[Key]bool // sessions Up (a Down only counts after Up)
}

// Want is a session a client needs: from which local address, on which
// interface, with which timers and key chain.
type Want struct {
	Local  netip.Addr
	Iface  string
	Params Params
}

// NewSessions starts a set on mgr for the client named name. post
// receives every session event; it runs on the manager's goroutine and
// must not block (post to the client's loop).
func NewSessions(mgr *Manager, name string, log *slog.Logger, post func(Event)) *Sessions {
	if log == nil {
		log = slog.Default()
	}
	return &Sessions{log: log, client: mgr.NewClient(name, post), asked: map[Key]Want{}, up: map[Key]bool{}}
}

// Sync makes the sessions match want: missing or changed ones are set
// (new timers go out by Poll/Final), unwanted ones removed.
func (s *Sessions) Sync(want map[Key]Want) {
	for k, w := range want {
		if old, ok := s.asked[k]; !ok || old != w {
			s.client.Set(k, w.Local, w.Iface, w.Params)
			s.asked[k] = w
		}
	}
	for k := range s.asked {
		if _, ok := want[k]; !ok {
			s.client.Remove(k)
			delete(s.asked, k)
			delete(s.up, k)
		}
	}
}

// Failed reports whether e is the failure of a session this set still
// wants: it went from Up to Down, and the peer did not say AdminDown (RFC
// 5882 §3.2: BFD was turned off there; the neighbour itself is fine, and
// that is logged). It records the Up and Down transitions.
func (s *Sessions) Failed(e Event) bool {
	if _, ok := s.asked[e.Key]; !ok {
		return false // a session no longer wanted
	}
	if e.State == packet.Up {
		s.up[e.Key] = true
		return false
	}
	if !s.up[e.Key] || e.State != packet.Down {
		return false
	}
	delete(s.up, e.Key)
	if e.Remote == packet.AdminDown {
		s.log.Info("BFD session administratively down at the peer; neighbour kept", "peer", e.Key.Peer, "ifindex", e.Key.IfIndex)
		return false
	}
	return true
}

// Up reports whether the session k is Up (as far as its events told).
func (s *Sessions) Up(k Key) bool { return s.up[k] }

// Close removes every session of the client.
func (s *Sessions) Close() { s.client.Close() }
