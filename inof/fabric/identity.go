package fabric

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
)

// Host identity (docs/inof.md, "Identity"). A host's id is its own
// claim, so a switch binds it to where it first registered: the port and
// the host's MAC. A binding outlives the registration (the host reboots,
// its link flaps) until it expires (BindingHold after the host left), a
// port full of bindings needs the room, or an operator releases it. Each
// switch advertises its bindings (host records, state bound while the
// host is away), so every switch knows every binding of an id and refuses
// a claim that contradicts one:
//
//   - another MAC than the binding's, on any port of any switch;
//   - anything but a pinned claim (static binding or key) where the id is
//     pinned somewhere;
//   - on a static binding's switch, a port or MAC it does not list;
//   - for an id with a key here, anything not signed with it (fresh).
//
// The same MAC on another port or switch is the same host: a dual-homed
// host registers with one identity MAC on all its links (the agent does),
// within DualHomeWindow of the id's first binding; after that a new port
// is a conflict unless the claim is pinned (a MAC is easy to forge, a
// window narrows when forging it pays).
// Two bindings that contradict each other (two switches accepted claims
// at the same moment, before either knew the other) are settled the same
// way on every switch: pinned beats unpinned, then the older binding,
// then the lower switch and port; the loser's switch drops its own.

// Static pins an id to ports of this switch (and to a MAC, if given).
type Static struct {
	ID    string
	Ports []string
	MAC   net.HardwareAddr // nil: any
}

// AuthWindow is how far a signed request's counter (the host's clock)
// may be from the switch's clock.
const AuthWindow = 30 * time.Second

// bind is one binding on this switch: an id on one of its ports.
type bind struct {
	key     localKey
	mac     net.HardwareAddr // the host's identity MAC
	pinned  bool             // static or signed
	static  bool
	since   time.Time    // bound here since (the older of two contradicting bindings wins)
	left    time.Time    // zero while registered: when the host went
	rec     *record.Host // the last record advertised for it
	counter uint64       // last signed counter accepted here
}

// idState is everything a switch knows about one id: its bindings here
// and the records of it from other switches (every state).
type idState struct {
	binds  map[string]*bind // by port
	remote map[record.Key]*record.Host
}

func (s *Switch) idState(id string) *idState {
	st := s.ids[id]
	if st == nil {
		st = &idState{binds: map[string]*bind{}, remote: map[record.Key]*record.Host{}}
		s.ids[id] = st
	}
	return st
}

func (s *Switch) forgetID(id string) {
	if st := s.ids[id]; st != nil && len(st.binds) == 0 && len(st.remote) == 0 {
		delete(s.ids, id)
	}
}

// claim is one host's attempt to hold an id on a port.
type claim struct {
	port   string
	id     string
	mac    net.HardwareAddr // identity MAC
	src    net.HardwareAddr // the frame's source
	signed bool             // verified with the id's key
	source l2.Source
}

// refusal says why a claim was refused: a counter, and a reason for the
// log and the conflicts view ("" for a cap).
type refusal struct {
	counter string
	reason  string
	against string // the binding it contradicts: where, which MAC
}

// admit decides a claim and makes room for it; nil means accepted (the
// binding may not exist yet: bindTo creates it).
func (s *Switch) admit(c claim) *refusal {
	st := s.ids[c.id]
	var here *bind
	if st != nil {
		here = st.binds[c.port]
	}
	static := s.static[c.id]
	pinned := c.signed || static != nil
	if static != nil {
		if !slices.Contains(static.Ports, c.port) {
			return &refusal{"conflicts", "static binding: not one of its ports", fmt.Sprintf("%s on %s", c.id, strings.Join(static.Ports, ","))}
		}
		if static.MAC != nil && !bytes.Equal(static.MAC, c.mac) {
			return &refusal{"conflicts", "static binding: another MAC", "MAC " + static.MAC.String()}
		}
	}
	if l := s.locals[localKey{c.port, c.id}]; l != nil && !bytes.Equal(l.src, c.src) && !c.signed {
		return &refusal{"conflicts", "registered on this port from another MAC", "MAC " + l.src.String()}
	}
	if st != nil && !pinned {
		for port, b := range st.binds {
			if r := s.contradicts(c, b.pinned, b.mac); r != "" {
				return &refusal{"conflicts", r, fmt.Sprintf("%s:%s MAC %s", s.cfg.Name, port, b.mac)}
			}
		}
		for _, r := range st.remote {
			if why := s.contradicts(c, r.Pinned, r.Host.MAC); why != "" {
				return &refusal{"conflicts", why, fmt.Sprintf("%s(%s):%s MAC %s", r.SwitchName, r.Switch, r.Port, r.Host.MAC)}
			}
		}
	}
	if st != nil && !pinned && here == nil {
		if r := s.lateNewPort(st); r != nil {
			return r
		}
	}
	if s.locals[localKey{c.port, c.id}] == nil && len(s.locals) >= s.cfg.MaxHosts {
		return &refusal{counter: "refused"}
	}
	if here == nil && !s.room(c.port) {
		return &refusal{counter: "refused_port_cap"}
	}
	if pinned && st != nil {
		// A pinned claim overrides this switch's unpinned bindings of the
		// id that contradict it (a squatter that came first).
		for _, b := range s.sortedBinds(st) {
			if !b.pinned && b.key.port != c.port && !bytes.Equal(b.mac, c.mac) {
				s.noteConflict(conflictKey{b.key.port, c.id, b.mac.String()}, "conflicts", "displaced by a pinned claim", fmt.Sprintf("%s:%s", s.cfg.Name, c.port))
				s.drop(b, "displaced by a pinned claim")
			}
		}
	}
	return nil
}

// lateNewPort refuses an unpinned claim of a bound id on a port new to
// the binding once DualHomeWindow has passed since the id's first binding
// (here or on any switch), or returns nil.
func (s *Switch) lateNewPort(st *idState) *refusal {
	if s.cfg.DualHomeWindow < 0 {
		return nil
	}
	var first time.Time
	var where string
	for port, b := range st.binds {
		if first.IsZero() || b.since.Before(first) {
			first, where = b.since, fmt.Sprintf("%s:%s MAC %s", s.cfg.Name, port, b.mac)
		}
	}
	for _, r := range st.remote {
		if r.Since.IsZero() {
			continue
		}
		if first.IsZero() || r.Since.Before(first) {
			first, where = r.Since, fmt.Sprintf("%s(%s):%s MAC %s", r.SwitchName, r.Switch, r.Port, r.Host.MAC)
		}
	}
	if first.IsZero() || s.now.Sub(first) <= s.cfg.DualHomeWindow {
		return nil
	}
	return &refusal{"conflicts", fmt.Sprintf("a new port for an id bound since %s (after dual-home-window %v: needs a key, a static binding or a release)",
		first.UTC().Format(time.RFC3339), s.cfg.DualHomeWindow), where}
}

// contradicts says why an unpinned claim cannot coexist with a binding
// (pinned, of MAC mac), or "".
func (s *Switch) contradicts(c claim, pinned bool, mac net.HardwareAddr) string {
	switch {
	case pinned:
		return "the id is pinned (static binding or key) elsewhere"
	case mac != nil && !bytes.Equal(mac, c.mac):
		return "the id is bound to another MAC"
	}
	return ""
}

// room makes room for a new binding on port: under the cap, or by
// dropping the port's oldest binding whose host is away (and that is not
// static). A port only ever evicts its own bindings.
func (s *Switch) room(port string) bool {
	n := 0
	var oldest *bind
	for _, b := range s.portBinds[port] {
		if b.static {
			continue
		}
		n++
		if !b.left.IsZero() && (oldest == nil || b.left.Before(oldest.left)) {
			oldest = b
		}
	}
	if n < s.cfg.MaxHostsPerPort {
		return true
	}
	if oldest == nil {
		return false
	}
	s.count("bindings_evicted")
	s.drop(oldest, "evicted: the port is full")
	return true
}

// bindTo creates or refreshes the binding of an accepted claim.
func (s *Switch) bindTo(c claim) *bind {
	st := s.idState(c.id)
	b := st.binds[c.port]
	if b == nil {
		b = &bind{key: localKey{c.port, c.id}, since: s.now.Truncate(time.Millisecond)}
		st.binds[c.port] = b
		s.portBinds[c.port] = append(s.portBinds[c.port], b)
		s.count("bindings")
	}
	b.mac = slices.Clone(c.mac)
	b.static = s.static[c.id] != nil
	b.pinned = c.signed || b.static
	b.left = time.Time{}
	return b
}

// drop ends a binding: its host (if registered) leaves, its record is
// withdrawn.
func (s *Switch) drop(b *bind, why string) {
	st := s.ids[b.key.id]
	if st == nil || st.binds[b.key.port] != b {
		return
	}
	delete(st.binds, b.key.port)
	s.portBinds[b.key.port] = slices.DeleteFunc(s.portBinds[b.key.port], func(x *bind) bool { return x == b })
	if len(s.portBinds[b.key.port]) == 0 {
		delete(s.portBinds, b.key.port)
	}
	s.log.Info("inof: binding dropped", "host", b.key.id, "port", b.key.port, "mac", b.mac.String(), "why", why)
	if l := s.locals[b.key]; l != nil {
		s.depart(l, record.StateLeft)
	} else if b.rec != nil {
		k := b.rec.Key()
		if _, tomb := s.tombs[k]; !tomb {
			s.queueDel(k)
			s.recordChanged(k, nil)
		}
	}
	s.forgetID(b.key.id)
}

// boundRecord is what a binding whose host is away advertises.
func (s *Switch) boundRecord(b *bind) *record.Host {
	r := &record.Host{Switch: s.cfg.RouterID, SwitchName: s.cfg.Name, Port: b.key.port, Source: l2.SourceAgent,
		Host: l2.Host{ID: b.key.id, Role: l2.RoleTarget}}
	if b.rec != nil {
		c := *b.rec
		r = &c
	}
	r.State, r.Pinned, r.Since, r.Zones = record.StateBound, b.pinned, b.since, nil
	r.Host.MAC = slices.Clone(b.mac)
	return r
}

// advertiseBound (re)advertises an absent binding.
func (s *Switch) advertiseBound(b *bind) {
	r := s.boundRecord(b)
	if b.rec != nil && b.rec.State == record.StateBound && string(record.AppendTo(nil, b.rec)) == string(record.AppendTo(nil, r)) {
		return
	}
	b.rec = r
	s.queueAdd(r)
	s.recordChanged(r.Key(), r)
}

// remoteHost keeps the index of other switches' records of an id, and
// settles a contradiction with a binding of ours.
func (s *Switch) remoteHost(k record.Key, r *record.Host) {
	if r == nil {
		old := s.records[k]
		if old == nil {
			return
		}
		if st := s.ids[old.Host.ID]; st != nil {
			delete(st.remote, k)
			s.forgetID(old.Host.ID)
		}
		return
	}
	if old := s.records[k]; old != nil && old.Host.ID != r.Host.ID {
		s.remoteHost(k, nil) // cannot happen: the key hashes the id
	}
	st := s.idState(r.Host.ID)
	st.remote[k] = r
	for _, b := range s.sortedBinds(st) {
		if conflicting(b.pinned, b.mac, r.Pinned, r.Host.MAC) && s.beats(r, b) {
			where := fmt.Sprintf("%s(%s):%s MAC %s", r.SwitchName, r.Switch, r.Port, r.Host.MAC)
			s.noteConflict(conflictKey{b.key.port, b.key.id, b.mac.String()}, "conflicts", "lost to an older or pinned binding", where)
			s.drop(b, "lost to "+where)
		}
	}
}

func conflicting(p1 bool, m1 net.HardwareAddr, p2 bool, m2 net.HardwareAddr) bool {
	if p1 && p2 {
		return false
	}
	if p1 != p2 {
		return true
	}
	return m1 != nil && m2 != nil && !bytes.Equal(m1, m2)
}

// beats: the remote binding r wins over ours (b): pinned first, then the
// older, then the lower switch — the same answer on every switch.
func (s *Switch) beats(r *record.Host, b *bind) bool {
	if r.Pinned != b.pinned {
		return r.Pinned
	}
	if rs, bs := r.Since.UnixMilli(), b.since.UnixMilli(); rs != bs {
		return rs < bs
	}
	return r.Switch.Less(s.cfg.RouterID)
}

func (s *Switch) sortedBinds(st *idState) []*bind {
	out := make([]*bind, 0, len(st.binds))
	for _, b := range st.binds {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *bind) int { return strings.Compare(a.key.port, b.key.port) })
	return out
}

// verify checks a request of a host that has a key here: signed by one
// of its keys, counter within AuthWindow of our clock and above the last
// accepted on the port. It reports whether the id has keys, and whether
// the request passed.
func (s *Switch) verify(port string, m *l2.Message) (keyed, ok bool) {
	keys := s.cfg.Keys[m.Host.ID]
	if len(keys) == 0 {
		return false, false
	}
	if m.Auth == nil {
		return true, false
	}
	var key *l2.Key
	for i := range keys {
		if keys[i].ID == m.Auth.KeyID {
			key = &keys[i]
		}
	}
	if key == nil || !m.Verify(*key) {
		return true, false
	}
	now := uint64(s.now.UnixMilli())
	c, w := m.Auth.Counter, uint64(AuthWindow/time.Millisecond)
	if c+w < now || c > now+w {
		return true, false
	}
	if b := s.bindAt(port, m.Host.ID); b != nil && c <= b.counter {
		return true, false // a replay
	}
	return true, true
}

func (s *Switch) bindAt(port, id string) *bind {
	if st := s.ids[id]; st != nil {
		return st.binds[port]
	}
	return nil
}

// authFailed counts and logs (once a second per port) a request of a
// keyed host that did not verify.
func (s *Switch) authFailed(port string, m *l2.Message) {
	s.count("auth_failures")
	s.portStat(port).AuthFailures++
	why := "unsigned"
	if m.Auth != nil {
		why = fmt.Sprintf("key %d, counter %d: bad digest, unknown key, stale or replayed", m.Auth.KeyID, m.Auth.Counter)
	}
	s.noteConflict(conflictKey{port, m.Host.ID, ""}, "", "authentication failed ("+why+")", "")
}

// foreign counts a request about a registration sent from another MAC
// than the registration's (a shared port).
func (s *Switch) foreign(port string, src net.HardwareAddr, m *l2.Message) {
	s.count("foreign_mac")
	s.portStat(port).Foreign++
	if s.lim.allow("foreign:"+port, s.now) {
		s.log.Warn("inof: request about a registration from another MAC, refused", "port", port, "host", m.Host.ID,
			"type", m.Type, "src", src.String())
	}
}

// conflictKey is one refused claimant: where, which id, which MAC.
type conflictKey struct {
	port, id, mac string
}

// Conflict is one refused claim, as `farectl inof hosts conflicts` shows
// it: the first and last time, how often.
type Conflict struct {
	Port, ID, MAC string
	Reason        string
	Against       string // the binding it contradicts
	First, Last   time.Time
	Count         uint64
}

// noteConflict records a refused claim, counted under counter ("": the
// caller counted it); the first of a kind is logged. The view keeps the
// Conflicts most recent kinds.
func (s *Switch) noteConflict(k conflictKey, counter, reason, against string) {
	if counter != "" {
		s.count(counter)
		s.portStat(k.port).Conflicts++
	}
	c := s.conflicts[k]
	if c == nil {
		if len(s.conflicts) >= s.cfg.Conflicts {
			var old *Conflict
			var ok conflictKey
			for kk, cc := range s.conflicts {
				if old == nil || cc.Last.Before(old.Last) {
					old, ok = cc, kk
				}
			}
			delete(s.conflicts, ok)
		}
		c = &Conflict{Port: k.port, ID: k.id, MAC: k.mac, First: s.now}
		s.conflicts[k] = c
		if s.lim.allow("conflict:"+k.port, s.now) {
			s.log.Warn("inof: claim of a host id refused", "host", k.id, "port", k.port, "mac", k.mac, "reason", reason, "bound", against)
		}
	}
	c.Reason, c.Against, c.Last = reason, against, s.now
	c.Count++
}

// Conflicts returns the refused claims, most recent first.
func (s *Switch) Conflicts() []Conflict {
	out := make([]Conflict, 0, len(s.conflicts))
	for _, c := range s.conflicts {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.ID+a.Port+a.MAC, b.ID+b.Port+b.MAC)
	})
	return out
}

// PortStats counts what a port's hosts were refused.
type PortStats struct {
	Refused      uint64 // registrations over the port's cap
	Conflicts    uint64 // claims that contradicted a binding
	Foreign      uint64 // requests about a registration from another MAC
	AuthFailures uint64
}

func (s *Switch) portStat(port string) *PortStats {
	p := s.ports[port]
	if p == nil {
		p = &PortStats{}
		s.ports[port] = p
	}
	return p
}

// BindingView is one binding as the API shows it.
type BindingView struct {
	ID, Port string
	MAC      net.HardwareAddr
	Pinned   bool
	Static   bool
	Live     bool // the host is registered
	Since    time.Time
	Left     time.Time // when the host went (zero while registered)
	Expires  time.Duration
}

// Bindings returns this switch's bindings, by id and port.
func (s *Switch) Bindings() []BindingView {
	var out []BindingView
	for _, st := range s.ids {
		for _, b := range st.binds {
			v := BindingView{ID: b.key.id, Port: b.key.port, MAC: b.mac, Pinned: b.pinned, Static: b.static,
				Live: s.locals[b.key] != nil, Since: b.since, Left: b.left}
			if !b.left.IsZero() && !b.static && s.cfg.BindingHold > 0 {
				v.Expires = b.left.Add(s.cfg.BindingHold).Sub(s.now)
			}
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b BindingView) int {
		if a.ID != b.ID {
			return strings.Compare(a.ID, b.ID)
		}
		return strings.Compare(a.Port, b.Port)
	})
	return out
}

// ErrNoBinding: Release of an id this switch holds no binding of.
type ErrNoBinding struct {
	ID        string
	Elsewhere []string // where other switches bind it
}

func (e *ErrNoBinding) Error() string {
	if len(e.Elsewhere) > 0 {
		return fmt.Sprintf("no binding of %q on this switch; it is bound at %s (release it there)", e.ID, strings.Join(e.Elsewhere, ", "))
	}
	return fmt.Sprintf("no binding of %q on this switch", e.ID)
}

// ErrStatic: Release of a binding the configuration makes.
type ErrStatic struct{ ID string }

func (e *ErrStatic) Error() string {
	return fmt.Sprintf("%q is bound by the configuration (bindings:); change it there", e.ID)
}

// Release drops every binding of id on this switch (an operator's word
// that the host changed: a replaced NIC). A registered host is
// deregistered; it registers again at its next attempt. It returns the
// ports released.
func (s *Switch) Release(id string) ([]string, error) {
	st := s.ids[id]
	if st == nil || len(st.binds) == 0 {
		e := &ErrNoBinding{ID: id}
		if st != nil {
			for _, r := range st.remote {
				e.Elsewhere = append(e.Elsewhere, fmt.Sprintf("%s(%s):%s", r.SwitchName, r.Switch, r.Port))
			}
			slices.Sort(e.Elsewhere)
		}
		return nil, e
	}
	if s.static[id] != nil {
		return nil, &ErrStatic{ID: id}
	}
	var ports []string
	for _, b := range s.sortedBinds(st) {
		ports = append(ports, b.key.port)
		s.count("released")
		s.drop(b, "released by the operator")
	}
	for k := range s.conflicts {
		if k.id == id {
			delete(s.conflicts, k)
		}
	}
	return ports, nil
}

// expireBindings drops bindings whose host has been away BindingHold.
func (s *Switch) expireBindings() {
	if s.cfg.BindingHold <= 0 {
		return
	}
	var gone []*bind
	for _, st := range s.ids {
		for _, b := range st.binds {
			if !b.static && !b.left.IsZero() && s.now.Sub(b.left) > s.cfg.BindingHold {
				gone = append(gone, b)
			}
		}
	}
	for _, b := range gone {
		s.count("bindings_expired")
		s.drop(b, "expired")
	}
}

// setStatic installs the configured static bindings: each is a binding
// (pinned) on each of its ports, advertised as bound until the host
// registers; a binding of the id elsewhere on this switch is dropped.
func (s *Switch) setStatic(list []Static) {
	next := map[string]*Static{}
	for i := range list {
		next[list[i].ID] = &list[i]
	}
	for id := range s.static {
		if next[id] != nil {
			continue
		}
		if st := s.ids[id]; st != nil {
			for _, b := range s.sortedBinds(st) {
				b.static, b.pinned = false, false
				if s.locals[b.key] == nil {
					s.drop(b, "static binding removed")
				} else if l := s.locals[b.key]; l != nil {
					l.pinned = false
					s.advertise(l)
				}
			}
		}
	}
	s.static = next
	ids := slices.Sorted(maps.Keys(next))
	for _, id := range ids {
		sb := next[id]
		st := s.idState(id)
		for _, b := range s.sortedBinds(st) {
			if !slices.Contains(sb.Ports, b.key.port) || sb.MAC != nil && !bytes.Equal(sb.MAC, b.mac) {
				s.drop(b, "not allowed by the static binding")
			}
		}
		for _, p := range sb.Ports {
			b := st.binds[p]
			if b == nil {
				b = &bind{key: localKey{p, id}, since: s.now.Truncate(time.Millisecond), left: s.now, mac: slices.Clone(sb.MAC)}
				st.binds[p] = b
				s.portBinds[p] = append(s.portBinds[p], b)
			}
			b.static, b.pinned = true, true
			if l := s.locals[b.key]; l != nil {
				l.pinned = true
				s.advertise(l)
			} else {
				s.advertiseBound(b)
			}
		}
	}
}
