package manager

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
)

// Clients and their groups: joining (capabilities, queue pairs),
// heartbeats, leaving, the tree a client is given, and its timeout
// reports.

// Join adds a client. who is the caller's verified credential: its token
// must cover the group, and the caps on groups (in total, per token) and
// on the group's size hold.
func (s *State) Join(r *protos.JoinRequest, who Caller) (*protos.JoinResponse, error) {
	if !who.Token.Covers(r.GetGroup()) {
		return nil, s.Refusals.Refuse(ReasonTokenScope, who.Peer, codes.PermissionDenied,
			"join %.64q: the token (%s) covers group %q only", r.GetGroup(), who.Token.ID, who.Token.Group)
	}
	addr, err := ValidateJoin(r)
	if err != nil {
		return nil, err
	}
	if int(r.Size) > s.cfg.MaxGroupSize {
		return nil, s.Refusals.Refuse(ReasonCapGroupSize, who.Peer, codes.ResourceExhausted,
			"join %s: a group of %d ranks is above this manager's max-group-size %d", r.Group, r.Size, s.cfg.MaxGroupSize)
	}
	g := s.groups[r.Group]
	if g != nil && g.state == StateDismantled {
		s.dropGroup(g)
		g = nil
	}
	if err := s.checkCaps(g, r.Group, who); err != nil {
		return nil, err
	}
	if g != nil && int(r.Size) != g.size {
		return nil, status.Errorf(codes.FailedPrecondition, "group %s has %d ranks, not %d", g.name, g.size, r.Size)
	}
	if g != nil && g.members[r.Rank] != nil {
		old := g.members[r.Rank]
		return nil, status.Errorf(codes.AlreadyExists, "group %s: rank %d is taken (%s)", g.name, r.Rank, old.addr)
	}
	if s.byQP[qpKey{addr, r.Qpn}] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "QP %d of %s is used by another client", r.Qpn, addr)
	}
	if g != nil && g.state != StateWaiting {
		return nil, status.Errorf(codes.FailedPrecondition, "group %s is %s", g.name, g.state)
	}
	if g == nil {
		g = &group{name: r.Group, size: int(r.Size), key: randomKey(), members: make([]*client, r.Size),
			state: StateWaiting, created: s.now(), exclude: map[string]time.Time{}}
		s.groups[g.name] = g
	}
	// Ids are random (128 bits): knowing one is the only way to act as
	// that client, besides a token for its group.
	c := &client{id: "c" + auth.RandomID(16), token: who.Token.ID, g: g, rank: int(r.Rank), addr: addr, qpn: r.Qpn, host: r.Host, last: s.now()}
	s.clients[c.id] = c
	s.byQP[qpKey{addr, c.qpn}] = c
	g.members[c.rank] = c
	s.account(c, +1)
	s.log.Info("inc client joined", "group", g.name, "rank", c.rank, "client", c.id, "address", addr, "qpn", c.qpn,
		"token", who.Token.ID, "subject", who.Token.Subject)
	if s.joined(g) == g.size {
		s.build(g, "all ranks joined")
	}
	s.changed()
	return &protos.JoinResponse{ClientId: c.id, HeartbeatMs: uint32(s.cfg.Heartbeat / time.Millisecond)}, nil
}

// checkCaps refuses a join that would make the manager hold a new group
// beyond its total, or give the caller's token a group beyond its share.
// g is the group joined (nil: it would be created).
func (s *State) checkCaps(g *group, name string, who Caller) error {
	if g == nil && len(s.groups) >= s.cfg.MaxGroups {
		return s.Refusals.Refuse(ReasonCapGroups, who.Peer, codes.ResourceExhausted,
			"join %s: the manager holds %d groups, its max-groups", name, len(s.groups))
	}
	mine := s.perToken[who.Token.ID]
	if _, in := mine[name]; !in && len(mine) >= s.cfg.MaxGroupsPerToken {
		return s.Refusals.Refuse(ReasonCapGroupsPerToken, who.Peer, codes.ResourceExhausted,
			"join %s: token %s has clients in %d groups, the manager's max-groups-per-token", name, who.Token.ID, len(mine))
	}
	return nil
}

// forget removes c from the client indexes.
func (s *State) forget(c *client) {
	delete(s.clients, c.id)
	delete(s.byQP, qpKey{c.addr, c.qpn})
	s.account(c, -1)
}

type qpKey struct {
	addr netip.Addr
	qpn  uint32
}

// account adds (d = +1) or removes (-1) c in its token's per-group count.
func (s *State) account(c *client, d int) {
	m := s.perToken[c.token]
	if m == nil {
		m = map[string]int{}
		s.perToken[c.token] = m
	}
	m[c.g.name] += d
	if m[c.g.name] <= 0 {
		delete(m, c.g.name)
	}
	if len(m) == 0 {
		delete(s.perToken, c.token)
	}
}

// randomKey is a group's R_Key: from crypto/rand, so that no one can
// predict it from another group's or the clock.
func randomKey() uint32 {
	var b [4]byte
	if _, err := cryptorand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return binary.BigEndian.Uint32(b[:])
}

func (s *State) joined(g *group) int {
	n := 0
	for _, c := range g.members {
		if c != nil {
			n++
		}
	}
	return n
}

// client returns the client id names, if who's token covers its group: a
// client acts only on its own id and group.
func (s *State) client(id string, who Caller) (*client, error) {
	c := s.clients[id]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "no client %q (its group was dismantled, or it never joined)", id)
	}
	if !who.Token.Covers(c.g.name) {
		return nil, s.Refusals.Refuse(ReasonTokenScope, who.Peer, codes.PermissionDenied,
			"client %s is not in a group the token (%s, group %q) covers", id, who.Token.ID, who.Token.Group)
	}
	return c, nil
}

// Heartbeat records a client's heartbeat.
func (s *State) Heartbeat(r *protos.HeartbeatRequest, who Caller) (*protos.HeartbeatResponse, error) {
	c, err := s.client(r.GetClientId(), who)
	if err != nil {
		return nil, err
	}
	c.last, c.gen = s.now(), r.GetGeneration()
	if st := r.GetStats(); st != nil {
		c.stats.merge(st)
	}
	return &protos.HeartbeatResponse{State: stateProto(c.g.state), Generation: c.g.gen}, nil
}

// taskStats are a client's reported totals (the draft's per-client task
// statistics): fixed size, one per registered client, gone with it. A
// client reports them for itself only: they come with its heartbeat,
// which names its own id and is refused for a group its token does not
// cover.
type taskStats struct{ bytes, operations, failed, retransmissions, timeouts uint64 }

// merge takes a report. The totals only grow, so a heartbeat that arrives
// after a newer one (a retried call) cannot move them back.
func (t *taskStats) merge(r *protos.ClientStats) {
	t.bytes = max(t.bytes, r.GetBytes())
	t.operations = max(t.operations, r.GetOperations())
	t.failed = max(t.failed, r.GetFailedOperations())
	t.retransmissions = max(t.retransmissions, r.GetRetransmissions())
	t.timeouts = max(t.timeouts, r.GetTimeouts())
}

// Leave removes a client; a group that loses a member is dismantled.
func (s *State) Leave(r *protos.LeaveRequest, who Caller) error {
	c, err := s.client(r.GetClientId(), who)
	if err != nil {
		return err
	}
	s.removeClient(c, fmt.Sprintf("rank %d left", c.rank))
	return nil
}

func (s *State) removeClient(c *client, why string) {
	g := c.g
	s.forget(c)
	g.members[c.rank] = nil
	// A group still gathering its ranks just has one less; a complete one
	// is dismantled (the draft's conditions: a client leaves, or fails its
	// heartbeats).
	if g.state != StateDismantled && g.state != StateWaiting {
		s.dismantle(g, why)
	}
	if s.joined(g) == 0 {
		delete(s.groups, g.name)
	}
	s.changed()
}

// dropGroup forgets a dismantled group and its remaining clients.
func (s *State) dropGroup(g *group) {
	for _, c := range g.members {
		if c != nil {
			s.forget(c)
		}
	}
	delete(s.groups, g.name)
}

func (s *State) dismantle(g *group, why string) {
	s.log.Info("inc group dismantled", "group", g.name, "reason", why)
	g.state, g.reason = StateDismantled, why
	g.gen++
	if g.tree != nil {
		g.tree = nil
		s.pushAll()
	}
	s.changed()
}

// Assignment is what GetTree answers for a client.
func (s *State) Assignment(id string, who Caller) (*protos.TreeAssignment, error) {
	c, err := s.client(id, who)
	if err != nil {
		return nil, err
	}
	return s.assignment(c), nil
}

func (s *State) assignment(c *client) *protos.TreeAssignment {
	g := c.g
	a := &protos.TreeAssignment{State: stateProto(g.state), Generation: g.gen, Reason: g.reason, GroupKey: g.key,
		Rank: uint32(c.rank), Size: uint32(g.size)}
	for _, m := range g.members {
		if m != nil {
			a.Members = append(a.Members, &protos.Member{Rank: uint32(m.rank), Address: m.addr.String(), Qpn: m.qpn})
		}
	}
	if t := g.tree; t != nil && g.state == StateReady {
		at := t.plan.Attach[c.rank]
		a.TreeId = uint32(t.id)
		a.SwitchAddress = at.Switch
		a.SwitchQpn = t.qp[at.Switch]
		a.ChildIndex = uint32(at.Index)
		a.Slots = uint32(t.slots)
		a.MaxPayload = uint32(t.payload)
		if b := t.plan.Bottleneck; !math.IsInf(b, 1) {
			a.BottleneckBps = uint64(b * 8)
		}
	}
	return a
}

// Settled reports whether GetTree can answer: the group is ready with a
// generation above after, or will not get a tree without a change.
func Settled(a *protos.TreeAssignment, after uint64) bool {
	switch a.State {
	case protos.GroupState_GROUP_STATE_READY:
		return a.Generation > after
	case protos.GroupState_GROUP_STATE_NO_TREE, protos.GroupState_GROUP_STATE_DISMANTLED:
		return true
	}
	return false
}

// ReportTimeouts acts on a client's "N timeouts" report: a report on the
// current tree reprograms its switches (a switch may have lost its
// state); TimeoutReports of them within ReportWindow rebuild the tree
// without its root.
func (s *State) ReportTimeouts(r *protos.TimeoutReport, who Caller) (*protos.TimeoutReply, error) {
	if err := ValidateReport(r); err != nil {
		return nil, err
	}
	c, err := s.client(r.ClientId, who)
	if err != nil {
		return nil, err
	}
	g := c.g
	c.timeouts++
	g.timeouts++
	var action string
	switch {
	case g.tree == nil || uint32(g.tree.id) != r.TreeId || g.gen != r.Generation:
		action = fmt.Sprintf("none: the group is at generation %d (%s)", g.gen, g.state)
	default:
		now := s.now()
		recent := g.reports[:0]
		for _, at := range g.reports {
			if now.Sub(at) < s.cfg.ReportWindow {
				recent = append(recent, at)
			}
		}
		g.reports = append(recent, now)
		s.log.Warn("inc timeout report", "group", g.name, "rank", c.rank, "tree", r.TreeId, "message", r.MessageId, "timeouts", r.Timeouts, "reports", len(g.reports))
		if len(g.reports) >= s.cfg.TimeoutReports {
			root := g.tree.plan.Root
			g.exclude[root] = s.now().Add(s.cfg.ExcludeFor)
			s.build(g, fmt.Sprintf("%d timeout reports in %v", len(g.reports), s.cfg.ReportWindow))
			action = fmt.Sprintf("rebuilt without root %s: generation %d (%s)", root, g.gen, g.state)
		} else {
			for key := range g.tree.plan.Nodes {
				if sw := s.switches[key]; sw != nil && sw.alive {
					sw.sent = nil // force a resend
				}
			}
			s.pushAll()
			action = "reprogrammed the tree's switches"
		}
	}
	s.changed()
	return &protos.TimeoutReply{Action: action, Current: s.assignment(c)}, nil
}
