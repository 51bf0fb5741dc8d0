// Package isis is fared's IS-IS speaker (ISO 10589, RFC 1195, 5303, 5305,
// 5308, 7794): circuits and adjacencies, LAN DIS election, the update process
// (LSP origination, flooding with SRM/SSN, CSNP/PSNP), and the translation of
// each level's database into an lsdb.Graph.
//
// One goroutine (Run) owns all protocol state. Socket readers only decode
// frames into events; timers are one ticker; readers of state (the control
// API) send a query that runs inside the loop and returns immutable copies.
package isis

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/lsdb"
)

// Protocol constants (ISO 10589 §7.3.21 and common practice).
const (
	maxAge             = 1200 * time.Second
	zeroAgeLifetime    = 60 * time.Second
	lspRetransmit      = 5 * time.Second
	tickInterval       = 100 * time.Millisecond
	minLSPTransmitGap  = 0
	maxLSPEntriesPSNP  = 60
	defaultLSPLifetime = 1200
)

// Options hold the hooks that differ between production and tests.
type Options struct {
	Logger *slog.Logger
	// OpenPort opens packet I/O for an interface; default OpenPacketPort.
	OpenPort func(ifi *net.Interface) (Port, error)
	// Interfaces looks interfaces up; default reads the kernel (net package
	// and /sys/class/net).
	Interfaces func(name string) (*IfaceInfo, error)
	// OnGraph is called from the instance goroutine with every new snapshot.
	OnGraph func(level int, g *lsdb.Graph)
	Now     func() time.Time
	// Repair, when set, hears of adjacencies going down and up at once
	// (local repair, bfd.go); the rib in production.
	Repair Repairer
	// BFD is the daemon's BFD speaker (daemon.Core.BFD); nil: no BFD.
	BFD *bfd.Manager
}

// IfaceInfo is what a circuit needs to know about its interface.
type IfaceInfo = netif.Info

// Instance is one IS-IS routing instance.
type Instance struct {
	cfg    *config.Config
	icfg   *Config
	log    *slog.Logger
	opt    Options
	sysID  packet.SystemID
	areas  [][]byte
	pbCode uint8

	// Base: the loop's module methods, the convergence gate, log-once,
	// the BFD sessions (internal/igp).
	*igp.Base
	lp    *loop.Loop   // events, queries, ticker: the instance goroutine
	guard *guard.Guard // every received PDU and loop duty recovers through it

	circuits []*circuit
	levels   [2]*level // [0] L1, [1] L2; nil when the level is off

	graphs [2]atomic.Pointer[lsdb.Graph]

	// Leaking between levels (L1L2 only): leaks[i] is what we advertise
	// into level i+1; leakDirty/lastLeak/leakRuns are indexed by the level
	// leaked from.
	leaks     [2][]leak
	leakDirty [2]bool
	lastLeak  [2]time.Time
	leakRuns  [2]uint64

	lspKey [2]string // per level, the key our LSPs were last signed with (auth.go)
	// lspKeyFallback: per level, LSPs are signed with an expired key.
	lspKeyFallback [2]config.KeyFallback

	// overloadSet is the overload bit set at run time (farectl isis
	// overload), nil when the configured value is in force.
	overloadSet *bool

	// floodLast: per circuit name, the last flooding decision taken for
	// it (floodview.go; farectl isis flooding).
	floodLast map[string]floodNote

	stopOnce sync.Once
	wg       sync.WaitGroup
	// stopping is closed when the instance stops: the circuits' bulk
	// forwarders then drop what the loop will never take.
	stopping chan struct{}
}

type rxEvent struct {
	c   *circuit
	src [6]byte
	pdu []byte
}

// New validates what can be checked before the loop runs and returns an
// instance ready for Run.
func New(cfg *config.Config, opt Options) (*Instance, error) {
	if Section(cfg) == nil {
		return nil, fmt.Errorf("isis: no isis section in %s", cfg.File)
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.OpenPort == nil {
		opt.OpenPort = OpenPacketPort
	}
	if opt.Interfaces == nil {
		opt.Interfaces = KernelInterface
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	in := &Instance{
		cfg:      cfg,
		icfg:     Section(cfg),
		log:      opt.Logger.With("proto", "isis"),
		opt:      opt,
		sysID:    packet.SystemID(cfg.SystemID),
		areas:    Section(cfg).Areas,
		pbCode:   Section(cfg).PathBandwidthSubTLV,
		lp:       loop.New(1024),
		stopping: make(chan struct{}),
	}
	in.Base = igp.NewBase(in.lp, in.log, opt.BFD, Key, opt.Logger)
	in.guard = guard.New("isis", in.log)
	in.lp.Guard(in.guard)
	for l := 1; l <= 2; l++ {
		if in.levelEnabled(l) {
			in.levels[l-1] = newLevel(l)
		}
	}
	for i, ic := range Section(cfg).Interfaces {
		in.circuits = append(in.circuits, newCircuit(in, i, ic))
	}
	return in, nil
}

func (in *Instance) levelEnabled(l int) bool { return in.icfg.Level&l != 0 }

// isType is the IS type field of our LSPs: 1 for L1-only, 3 otherwise.
func (in *Instance) isType() uint8 {
	if in.icfg.Level == 1 {
		return 1
	}
	return 3
}

// SystemID returns the instance's system id.
func (in *Instance) SystemID() packet.SystemID { return in.sysID }

// Graph returns the latest snapshot of a level (nil before the first).
func (in *Instance) Graph(level int) *lsdb.Graph {
	if level < 1 || level > 2 {
		return nil
	}
	return in.graphs[level-1].Load()
}

// Run is the instance goroutine. It returns when ctx is done.
func (in *Instance) Run(ctx context.Context) error {
	return in.RunLoop(ctx, tickInterval, in.opt.Now, igp.Handlers{
		Start: func(now time.Time) {
			for _, c := range in.circuits {
				c.refresh(now)
			}
		},
		Stop: in.shutdown,
		Refresh: func(name string) {
			if c := in.circuit(name); c != nil {
				c.refresh(in.opt.Now())
			}
		},
		Reconfigure: in.reconfigure, SetBandwidth: in.setBandwidth, Clear: in.clearAdjacencies, BFD: in.onBFD,
		Other: in.handle, Tick: in.tick, Settle: in.settle,
	})
}

// handle handles the instance's own events.
func (in *Instance) handle(ev any) {
	switch e := ev.(type) {
	case rxEvent:
		in.receiveGuarded(e.c, e.src, e.pdu)
	case overloadEvent:
		e.done <- in.setOverload(e.on)
	}
}

// receiveGuarded processes one received PDU and contains any panic in it
// (internal/guard): a bug then costs that PDU (counted as the circuit's
// rx_panics and fared_panics_total{module="isis"}, logged once per
// interface with the stack and the PDU's head), not the instance and the
// fabric node. State the PDU half-changed stays as it is; timers repair
// what matters (hold timers, CSNPs, refresh).
func (in *Instance) receiveGuarded(c *circuit, src [6]byte, b []byte) {
	defer in.guard.Recover(c.rxSite, b, func(any) { c.count("rx_panics") })
	in.receive(c, src, b)
}

// tick runs every timer-driven duty: circuit state, hellos, adjacency hold
// expiry, DIS duties, LSP aging and refresh, SRM/SSN transmission.
func (in *Instance) tick(now time.Time) {
	for _, c := range in.circuits {
		c.tick(now)
	}
	in.authTick(now)
	in.bfdTick(now)
	for _, lv := range in.levels {
		if lv != nil {
			in.ageLevel(lv, now)
		}
	}
	for _, c := range in.circuits {
		c.flood(now)
	}
	in.checkConverged(now)
}

// checkConverged: the databases quiet for a second, and every running,
// non-passive circuit has an Up adjacency at one of its levels.
func (in *Instance) checkConverged(now time.Time) {
	var changes uint64
	for _, lv := range in.levels {
		if lv != nil {
			changes += lv.changes
		}
	}
	in.CheckConverged(now, changes, func() bool {
		for _, c := range in.circuits {
			if !c.running || c.cfg.Passive {
				continue
			}
			up := false
			for l := 1; l <= 2; l++ {
				up = up || (c.levelOn(l) && c.hasUpAdj(l))
			}
			if !up {
				return false
			}
		}
		return true
	})
}

// settle does the work that events leave pending: LSP (re)generation subject
// to the minimum generation interval, and graph snapshots.
func (in *Instance) settle(now time.Time) {
	for _, lv := range in.levels {
		if lv == nil || !lv.graphDirty {
			continue
		}
		// A large database arriving in a flood dirties the graph at every
		// burst of PDUs: building it each time (15 ms for 6,000 nodes)
		// would leave the loop little time for the PDUs themselves. A
		// build follows the previous one by at least buildSpacing times
		// what that one took; a later settle (the next burst, or the
		// tick) builds the newest database. Small graphs, and the first
		// change after a quiet spell, are built at once.
		start := time.Now() // the cost is real time, whatever the instance's clock
		if lv.buildCost >= minSpacedBuild && start.Sub(lv.lastBuild) < buildSpacing*lv.buildCost {
			continue
		}
		lv.graphDirty = false
		g := in.buildGraph(lv, now)
		lv.lastBuild = time.Now()
		lv.buildCost = lv.lastBuild.Sub(start)
		in.graphs[lv.n-1].Store(g)
		in.markLeak(lv.n)
		if in.opt.OnGraph != nil {
			in.opt.OnGraph(lv.n, g)
		}
	}
	in.settleLeaks(now)
	for _, lv := range in.levels {
		if lv != nil && lv.regen && !now.Before(lv.lastGen.Add(in.icfg.LSPGenInterval)) {
			in.originate(lv, now)
		}
	}
	for _, c := range in.circuits {
		c.flood(now)
	}
}

func (in *Instance) shutdown() {
	close(in.stopping)
	in.CloseBFD()
	for _, c := range in.circuits {
		c.close()
	}
	in.wg.Wait()
}

// scheduleRegen asks for a new origination of our LSPs at level lv.
func (in *Instance) scheduleRegen(lv *level) {
	lv.regen = true
}

// scheduleAll asks for origination at every level (interface or adjacency
// changes affect all of them).
func (in *Instance) scheduleAll() {
	for _, lv := range in.levels {
		if lv != nil {
			in.scheduleRegen(lv)
		}
	}
}
