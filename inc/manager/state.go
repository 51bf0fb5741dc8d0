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
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/setting"
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
	stats    taskStats // what its heartbeats report
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
	setting.Fill(&cfg, d)
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

func (s *State) changed() {
	if s.notify != nil {
		s.notify()
	}
}
