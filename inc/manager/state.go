// Package manager is fared's INC aggregation manager: switches register
// their capabilities, clients join groups, heartbeat and leave; when a
// group is complete the manager computes its aggregation tree from the
// live LSDB (tree.go), allocates the tree id, the switches' QPs and slots,
// programs the switches and tells the clients; a dead client, a switch
// that goes away, a topology change (an SPF run) or repeated timeout
// reports dismantle or rebuild the tree (draft-liu-nfsv4-rocev2 §3.1).
//
// State is owned by one goroutine (Manager wraps it in internal/loop);
// State itself is plain and clock-driven, so tests drive it directly.
package manager

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/lsdb"
)

// Config is the manager's part of the inc section.
type Config struct {
	Heartbeat      time.Duration // interval clients are told to use
	DeadAfter      time.Duration // a client silent this long is dead
	Slots          int           // slots per tree (capped by the switches)
	Ordered        bool          // program trees to sum in rank order
	TimeoutReports int           // reports on one tree generation within ReportWindow before it is rebuilt elsewhere
	ReportWindow   time.Duration // how long a report counts
	ExcludeFor     time.Duration // how long a root blamed by timeout reports is avoided
	// Caps (docs/inc.md, "Control-plane trust"): what one credential and
	// everyone together may make the manager hold.
	MaxGroups         int // groups in total
	MaxGroupsPerToken int // groups one join token has clients in
	MaxGroupSize      int // ranks (clients) of one group
}

// DefaultConfig is used for unset fields.
var DefaultConfig = Config{Heartbeat: 300 * time.Millisecond, DeadAfter: 1500 * time.Millisecond, Slots: 256,
	TimeoutReports: 3, ReportWindow: 10 * time.Second, ExcludeFor: 30 * time.Second,
	MaxGroups: 1024, MaxGroupsPerToken: 32, MaxGroupSize: 1024}

// Group states.
const (
	StateWaiting     = "waiting"
	StateProgramming = "programming"
	StateReady       = "ready"
	StateNoTree      = "no-tree"
	StateDismantled  = "dismantled"
)

type swState struct {
	addr    netip.Addr
	key     string // addr.String(): the switch's id in plans
	reg     *protos.SwitchRegister
	alive   bool
	session uint64 // the live session's serial; a stale session's end is ignored
	version uint64
	sent    *protos.SwitchConfig // last config pushed
	applied uint64
	err     string
	status  *protos.SwitchStatus
	nextQP  uint32
}

type treeState struct {
	id      uint16
	plan    *Plan
	qp      map[string]uint32 // switch key → its QP for the tree
	need    map[string]uint64 // switch key → config version that carries the tree
	slots   int
	payload int
	topo    string
}

type group struct {
	name     string
	size     int
	key      uint32
	members  []*client // by rank
	state    string
	reason   string
	gen      uint64
	tree     *treeState
	created  time.Time
	rebuilds int
	timeouts int
	reports  []time.Time          // timeout reports on the current generation, last ReportWindow
	exclude  map[string]time.Time // switch key → until
}

type client struct {
	id       string
	token    string // the id of the token it joined with ("" without client-auth)
	g        *group
	rank     int
	addr     netip.Addr
	qpn      uint32
	host     string
	last     time.Time
	gen      uint64
	timeouts int
}

// State is the manager's state. It is not safe for concurrent use.
type State struct {
	cfg    Config
	now    func() time.Time
	log    *slog.Logger
	push   func(sw string, c *protos.SwitchConfig) // sends a config to a switch's session
	notify func()                                  // a group changed (GetTree waiters)

	graphs   []*lsdb.Graph
	graph    *lsdb.Graph
	switches map[string]*swState
	groups   map[string]*group
	clients  map[string]*client
	nextTree uint16
	serial   uint64
	// perToken counts, per token id, the clients it has in each group
	// (the per-token cap on groups).
	perToken map[string]map[string]int
	byQP     map[qpKey]*client // a QP of an address is one client's
	// Refusals counts and logs what the manager refused; shared with the
	// gRPC layer (it has its own lock).
	Refusals *Refusals
}

// NewState returns an empty manager state. push delivers switch configs,
// notify is called after any group change.
func NewState(cfg Config, now func() time.Time, log *slog.Logger, push func(string, *protos.SwitchConfig), notify func()) *State {
	d := DefaultConfig
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = d.Heartbeat
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = d.DeadAfter
	}
	if cfg.Slots <= 0 {
		cfg.Slots = d.Slots
	}
	if cfg.TimeoutReports <= 0 {
		cfg.TimeoutReports = d.TimeoutReports
	}
	if cfg.ExcludeFor <= 0 {
		cfg.ExcludeFor = d.ExcludeFor
	}
	if cfg.ReportWindow <= 0 {
		cfg.ReportWindow = d.ReportWindow
	}
	if cfg.MaxGroups <= 0 {
		cfg.MaxGroups = d.MaxGroups
	}
	if cfg.MaxGroupsPerToken <= 0 {
		cfg.MaxGroupsPerToken = d.MaxGroupsPerToken
	}
	if cfg.MaxGroupSize <= 0 || cfg.MaxGroupSize > MaxGroupSize {
		cfg.MaxGroupSize = min(d.MaxGroupSize, MaxGroupSize)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &State{cfg: cfg, now: now, log: log, push: push, notify: notify,
		switches: map[string]*swState{}, groups: map[string]*group{}, clients: map[string]*client{},
		perToken: map[string]map[string]int{}, byQP: map[qpKey]*client{}, Refusals: NewRefusals(log)}
}

// SetConfig applies a reloaded configuration (new values apply to the next
// trees).
func (s *State) SetConfig(cfg Config) {
	n := NewState(cfg, s.now, nil, nil, nil)
	s.cfg = n.cfg
}

// ---- clients ----

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
	return &protos.HeartbeatResponse{State: stateProto(c.g.state), Generation: c.g.gen}, nil
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

// Tick expires clients that stopped heartbeating and root exclusions.
func (s *State) Tick() {
	now := s.now()
	for _, c := range s.clients {
		if now.Sub(c.last) > s.cfg.DeadAfter {
			s.log.Warn("inc client dead", "group", c.g.name, "rank", c.rank, "client", c.id, "silent", now.Sub(c.last))
			s.removeClient(c, fmt.Sprintf("rank %d (%s) missed its heartbeats for %v", c.rank, c.addr, now.Sub(c.last).Round(time.Millisecond)))
		}
	}
	for _, g := range s.groups {
		for k, until := range g.exclude {
			if now.After(until) {
				delete(g.exclude, k)
			}
		}
	}
}

// ---- switches ----

// SwitchUp registers a switch (a new session). It returns the session
// serial the caller passes to SwitchStatus and SwitchDown.
func (s *State) SwitchUp(r *protos.SwitchRegister) (uint64, error) {
	addr, err := ValidateRegister(r)
	if err != nil {
		return 0, err
	}
	key := addr.String()
	sw := s.switches[key]
	if sw == nil {
		sw = &swState{addr: addr, key: key, nextQP: 0x100}
		s.switches[key] = sw
	}
	s.serial++
	sw.reg, sw.alive, sw.session, sw.sent, sw.applied, sw.err = r, true, s.serial, nil, 0, ""
	s.log.Info("inc switch registered", "switch", r.NodeId, "address", key, "slots", r.MaxSlots, "ranks", r.MaxRanks, "trees", r.MaxTrees)
	s.pushAll()
	s.retry("switch " + r.NodeId + " registered")
	return sw.session, nil
}

// SwitchStatus records a switch's report.
func (s *State) SwitchStatus(key string, session uint64, st *protos.SwitchStatus) {
	sw := s.switches[key]
	if sw == nil || sw.session != session {
		return
	}
	sw.status = st
	sw.applied = st.GetAppliedVersion()
	if st.GetError() != "" && st.GetError() != sw.err {
		s.log.Warn("inc switch refused its config", "switch", sw.reg.NodeId, "error", st.GetError())
	}
	sw.err = st.GetError()
	for _, g := range s.groups {
		s.checkReady(g)
	}
}

// SwitchDown ends a session: the switch is gone, and its trees are rebuilt.
func (s *State) SwitchDown(key string, session uint64) {
	sw := s.switches[key]
	if sw == nil || sw.session != session || !sw.alive {
		return
	}
	sw.alive = false
	s.log.Warn("inc switch lost", "switch", sw.reg.NodeId, "address", key)
	for _, g := range s.groups {
		if g.tree != nil && g.tree.plan.Nodes[key] != nil {
			s.build(g, "switch "+sw.reg.NodeId+" lost")
		}
	}
	s.changed()
}

// ---- topology ----

// SetGraphs takes the rib's topologies and re-examines every tree.
func (s *State) SetGraphs(gs []*lsdb.Graph) {
	s.graphs = gs
	s.graph = s.pickGraph()
	for _, g := range s.groups {
		switch g.state {
		case StateProgramming, StateReady:
			s.reexamine(g)
		case StateNoTree:
			s.build(g, "topology changed")
		}
	}
}

// pickGraph chooses the topology that places the most registered switches
// (IS-IS L2 before L1 at a tie, by the rib's order).
func (s *State) pickGraph() *lsdb.Graph {
	var best *lsdb.Graph
	bestN := -1
	for _, g := range s.graphs {
		n := 0
		for _, sw := range s.switches {
			if attachNode(g, sw.addr) >= 0 {
				n++
			}
		}
		if n > bestN || n == bestN && g.Protocol == "isis" && g.Level == 2 && best.Level != 2 {
			best, bestN = g, n
		}
	}
	return best
}

// reexamine rebuilds g's tree when the topology makes its current shape
// worse than the best one, or impossible.
func (s *State) reexamine(g *group) {
	t := g.tree
	sws := s.switchInfos(g)
	cur, err := Compute(s.graph, sws, s.members(g), Options{Exclude: s.excluded(g), Roots: map[string]bool{t.plan.Root: true}})
	if err != nil {
		s.build(g, "topology changed: "+err.Error())
		return
	}
	best, err := Compute(s.graph, sws, s.members(g), Options{Exclude: s.excluded(g)})
	if err != nil {
		s.build(g, "topology changed: "+err.Error())
		return
	}
	switch {
	case best.Bottleneck > cur.Bottleneck*(1+1e-9):
		s.build(g, fmt.Sprintf("topology changed: root %s offers %s, the tree now has %s", best.Root, bw(best.Bottleneck), bw(cur.Bottleneck)))
	case shape(cur) != shape(t.plan):
		s.log.Info("inc tree shape changed", "group", g.name, "was", shape(t.plan), "now", shape(cur))
		s.build(g, "topology changed: the tree's shape changed")
	default:
		t.plan.Bottleneck = cur.Bottleneck
	}
}

func bw(v float64) string {
	if math.IsInf(v, 1) {
		return "unconstrained"
	}
	return fmt.Sprintf("%.3g Gb/s", v*8/1e9)
}

// shape is a canonical description of a plan's structure.
func shape(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root=%s", p.Root)
	for _, id := range sortedIDs(p.Nodes) {
		n := p.Nodes[id]
		fmt.Fprintf(&b, ";%s<%s#%d:", id, n.Parent, n.ParentIndex)
		for _, c := range n.Children {
			fmt.Fprintf(&b, "%d/%s,", c.Member, c.Switch)
		}
	}
	return b.String()
}

func (s *State) members(g *group) []MemberInfo {
	m := make([]MemberInfo, len(g.members))
	for i, c := range g.members {
		m[i] = MemberInfo{Rank: i, Addr: c.addr}
	}
	return m
}

func (s *State) excluded(g *group) map[string]bool {
	ex := map[string]bool{}
	for k := range g.exclude {
		ex[k] = true
	}
	return ex
}

// trees counts the trees of each switch, leaving out group skip's.
func (s *State) trees(skip *group) map[string]int {
	n := map[string]int{}
	for _, g := range s.groups {
		if g == skip || g.tree == nil {
			continue
		}
		for k := range g.tree.plan.Nodes {
			n[k]++
		}
	}
	return n
}

func (s *State) switchInfos(g *group) []SwitchInfo {
	used := s.trees(g)
	var out []SwitchInfo
	for _, k := range sortedIDs(s.switches) {
		sw := s.switches[k]
		if !sw.alive {
			continue
		}
		out = append(out, SwitchInfo{ID: k, Addr: sw.addr, MaxRanks: int(sw.reg.MaxRanks),
			FreeTrees: int(sw.reg.MaxTrees) - used[k], Trees: used[k]})
	}
	return out
}

// retry gives groups without a tree another chance.
func (s *State) retry(why string) {
	if s.graph == nil {
		s.graph = s.pickGraph()
	}
	for _, g := range s.groups {
		if g.state == StateNoTree {
			s.build(g, why)
		}
	}
}

// build computes and programs g's tree (replacing any current one).
func (s *State) build(g *group, why string) {
	if s.joined(g) < g.size || g.state == StateDismantled {
		return
	}
	if s.graph == nil {
		s.graph = s.pickGraph()
	}
	old := g.tree
	plan, err := Compute(s.graph, s.switchInfos(g), s.members(g), Options{Exclude: s.excluded(g)})
	var id uint16
	if err == nil {
		id, err = s.treeID()
	}
	if err != nil {
		if g.state == StateNoTree && g.reason == err.Error() {
			return
		}
		s.log.Warn("inc group has no tree", "group", g.name, "why", why, "error", err)
		g.tree, g.state, g.reason = nil, StateNoTree, err.Error()
		g.gen++
		if old != nil {
			s.pushAll()
		}
		s.changed()
		return
	}
	t := &treeState{id: id, plan: plan, qp: map[string]uint32{}, need: map[string]uint64{},
		slots: s.cfg.Slots, payload: math.MaxInt32, topo: topoName(s.graph)}
	for key := range plan.Nodes {
		sw := s.switches[key]
		t.qp[key] = s.allocQP(sw)
		t.slots = min(t.slots, int(sw.reg.MaxSlots))
		t.payload = min(t.payload, int(sw.reg.MaxPayload))
	}
	if old != nil {
		g.rebuilds++
	}
	g.tree, g.state, g.reason, g.reports = t, StateProgramming, why, nil
	g.gen++
	s.log.Info("inc tree built", "group", g.name, "tree", t.id, "root", plan.Root, "levels", plan.Levels,
		"bottleneck", bw(plan.Bottleneck), "generation", g.gen, "why", why)
	s.pushAll()
	s.checkReady(g)
	s.changed()
}

func topoName(g *lsdb.Graph) string {
	if g.Protocol == "ospf" {
		return "ospf area " + g.Area
	}
	return fmt.Sprintf("%s L%d", g.Protocol, g.Level)
}

// errNoTreeID: every 16-bit tree id is held by a group's tree.
var errNoTreeID = errors.New("no free tree id: all 65535 are in use")

// treeID allocates the next free tree id after the last one given (ids
// are not reused at once, so a late packet of a dismantled tree does not
// land in its successor). It looks at each id at most once.
func (s *State) treeID() (uint16, error) {
	used := map[uint16]bool{}
	for _, g := range s.groups {
		if g.tree != nil {
			used[g.tree.id] = true
		}
	}
	for range 1 << 16 {
		s.nextTree++
		if s.nextTree != 0 && !used[s.nextTree] {
			return s.nextTree, nil
		}
	}
	return 0, errNoTreeID
}

func (s *State) allocQP(sw *swState) uint32 {
	used := map[uint32]bool{}
	for _, g := range s.groups {
		if g.tree != nil {
			if qp, ok := g.tree.qp[sw.key]; ok {
				used[qp] = true
			}
		}
	}
	for {
		sw.nextQP++
		if sw.nextQP > 0xFFFFFF {
			sw.nextQP = 0x100
		}
		if !used[sw.nextQP] {
			return sw.nextQP
		}
	}
}

// pushAll sends every live switch whose tree set changed its new set.
func (s *State) pushAll() {
	want := map[string][]*protos.SwitchTree{}
	for _, name := range sortedIDs(s.groups) {
		g := s.groups[name]
		if g.tree == nil {
			continue
		}
		for key, st := range s.switchTrees(g) {
			want[key] = append(want[key], st)
		}
	}
	for _, key := range sortedIDs(s.switches) {
		sw := s.switches[key]
		if !sw.alive {
			continue
		}
		c := &protos.SwitchConfig{Trees: want[key]}
		if sw.sent != nil {
			c.Version = sw.sent.Version
			if proto.Equal(c, sw.sent) {
				continue
			}
		}
		sw.version++
		c.Version = sw.version
		sw.sent = c
		for _, g := range s.groups {
			if g.tree != nil && g.tree.plan.Nodes[key] != nil {
				g.tree.need[key] = sw.version
			}
		}
		if s.push != nil {
			s.push(key, c)
		}
	}
}

// switchTrees is the configuration of g's tree on each of its switches.
func (s *State) switchTrees(g *group) map[string]*protos.SwitchTree {
	t := g.tree
	out := map[string]*protos.SwitchTree{}
	for key, n := range t.plan.Nodes {
		st := &protos.SwitchTree{TreeId: uint32(t.id), Qpn: t.qp[key], Rkey: g.key, Slots: uint32(t.slots),
			Root: n.Parent == "", Ordered: s.cfg.Ordered}
		if n.Parent != "" {
			st.Parent = &protos.Peer{Address: n.Parent, Qpn: t.qp[n.Parent]}
			st.ParentRank = uint32(n.ParentIndex)
		}
		for _, ch := range n.Children {
			if ch.Member >= 0 {
				m := g.members[ch.Member]
				st.Children = append(st.Children, &protos.Child{Address: m.addr.String(), Qpn: m.qpn, Client: true})
			} else {
				st.Children = append(st.Children, &protos.Child{Address: ch.Switch, Qpn: t.qp[ch.Switch]})
			}
		}
		out[key] = st
	}
	return out
}

// checkReady makes a programming group ready once every switch of its
// tree applied a config that carries it; a switch that refuses it is
// avoided as root and the tree rebuilt.
func (s *State) checkReady(g *group) {
	if g.state != StateProgramming || g.tree == nil {
		return
	}
	for _, key := range sortedIDs(g.tree.need) {
		sw := s.switches[key]
		if v := g.tree.need[key]; sw.sent != nil && sw.sent.Version == v && sw.err != "" && sw.applied < v {
			g.exclude[key] = s.now().Add(s.cfg.ExcludeFor)
			s.build(g, fmt.Sprintf("switch %s refused the tree: %s", sw.reg.NodeId, sw.err))
			return
		}
	}
	for key, v := range g.tree.need {
		if s.switches[key].applied < v {
			return
		}
	}
	g.state = StateReady
	s.log.Info("inc tree ready", "group", g.name, "tree", g.tree.id, "generation", g.gen)
	s.changed()
}

func (s *State) changed() {
	if s.notify != nil {
		s.notify()
	}
}

func stateProto(st string) protos.GroupState {
	switch st {
	case StateWaiting, StateProgramming:
		return protos.GroupState_GROUP_STATE_WAITING
	case StateReady:
		return protos.GroupState_GROUP_STATE_READY
	case StateNoTree:
		return protos.GroupState_GROUP_STATE_NO_TREE
	case StateDismantled:
		return protos.GroupState_GROUP_STATE_DISMANTLED
	}
	return protos.GroupState_GROUP_STATE_UNSPECIFIED
}

// ---- views ----

func (s *State) name(key string) string {
	if sw := s.switches[key]; sw != nil && sw.reg != nil {
		return sw.reg.NodeId
	}
	return key
}

// Groups is GET /v1/inc/groups.
func (s *State) Groups() []wire.INCGroup {
	out := []wire.INCGroup{}
	for _, name := range sortedIDs(s.groups) {
		g := s.groups[name]
		v := wire.INCGroup{Name: g.name, Size: g.size, Joined: s.joined(g), State: g.state, Reason: g.reason,
			Generation: g.gen, Created: g.created, Rebuilds: g.rebuilds, Timeouts: g.timeouts}
		if g.tree != nil {
			v.TreeID, v.Root = g.tree.id, s.name(g.tree.plan.Root)
		}
		out = append(out, v)
	}
	return out
}

// Trees is GET /v1/inc/trees.
func (s *State) Trees() []wire.INCTree {
	out := []wire.INCTree{}
	for _, name := range sortedIDs(s.groups) {
		g := s.groups[name]
		t := g.tree
		if t == nil {
			continue
		}
		v := wire.INCTree{Group: g.name, TreeID: t.id, Generation: g.gen, Root: s.name(t.plan.Root), RootAddr: t.plan.Root,
			Levels: t.plan.Levels, Members: g.size, Ready: g.state == StateReady, Topology: t.topo, Switches: []wire.INCTreeSwitch{}}
		if !math.IsInf(t.plan.Bottleneck, 1) {
			b := t.plan.Bottleneck
			v.Bottleneck = &b
		}
		for _, key := range sortedIDs(t.plan.Nodes) {
			n := t.plan.Nodes[key]
			ts := wire.INCTreeSwitch{Switch: s.name(key), Address: key, Role: "leaf", QP: t.qp[key], Children: []string{},
				Applied: s.switches[key].applied >= t.need[key]}
			if n.Parent == "" {
				ts.Role = "root"
			} else {
				ts.Parent = s.name(n.Parent)
			}
			for _, c := range n.Children {
				if c.Member >= 0 {
					ts.Children = append(ts.Children, fmt.Sprintf("rank %d", c.Member))
				} else {
					ts.Children = append(ts.Children, s.name(c.Switch))
				}
			}
			v.Switches = append(v.Switches, ts)
		}
		for k := range g.exclude {
			v.Excluded = append(v.Excluded, s.name(k))
		}
		slices.Sort(v.Excluded)
		out = append(out, v)
	}
	return out
}

// Clients is GET /v1/inc/clients.
func (s *State) Clients() []wire.INCClient {
	out := []wire.INCClient{}
	now := s.now()
	for _, id := range sortedIDs(s.clients) {
		c := s.clients[id]
		v := wire.INCClient{ID: c.id, Group: c.g.name, Rank: c.rank, Address: c.addr.String(), QP: c.qpn, Host: c.host,
			LastSeenAgo: now.Sub(c.last).Seconds(), Generation: c.gen, Timeouts: c.timeouts}
		if t := c.g.tree; t != nil {
			v.Attach = s.name(t.plan.Attach[c.rank].Switch)
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b wire.INCClient) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		return a.Rank - b.Rank
	})
	return out
}

// security fills the state's part of GET /v1/inc/security.
func (s *State) security(v *wire.INCSecurity) {
	v.MaxGroups, v.MaxGroupsPerToken, v.MaxGroupSize = s.cfg.MaxGroups, s.cfg.MaxGroupsPerToken, s.cfg.MaxGroupSize
	v.Groups = len(s.groups)
	v.Tokens = []wire.INCTokenUse{}
	for _, id := range sortedIDs(s.perToken) {
		u := wire.INCTokenUse{Token: id, Groups: len(s.perToken[id])}
		for _, n := range s.perToken[id] {
			u.Clients += n
		}
		v.Tokens = append(v.Tokens, u)
	}
}

// Switches is GET /v1/inc/switches.
func (s *State) Switches() []wire.INCRegisteredSwitch {
	out := []wire.INCRegisteredSwitch{}
	used := s.trees(nil)
	for _, key := range sortedIDs(s.switches) {
		sw := s.switches[key]
		v := wire.INCRegisteredSwitch{ID: sw.reg.NodeId, Address: key, Alive: sw.alive, MaxTrees: int(sw.reg.MaxTrees),
			MaxSlots: int(sw.reg.MaxSlots), MaxRanks: int(sw.reg.MaxRanks), MaxPayload: int(sw.reg.MaxPayload),
			Trees: used[key], Version: sw.version, Applied: sw.applied, Error: sw.err,
			InTopology: s.graph != nil && attachNode(s.graph, sw.addr) >= 0}
		out = append(out, v)
	}
	return out
}
