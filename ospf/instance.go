// Package ospf is fared's OSPFv2 speaker (RFC 2328) with opaque LSAs (RFC
// 5250) carrying Traffic Engineering Maximum Bandwidth (RFC 3630) and the
// Extended Prefix LSA (RFC 7684) with the FARE Path Bandwidth sub-TLV
// (draft-xu-lsr-fare): interface and neighbour state machines, DR/BDR
// election, database exchange, reliable flooding, aging, origination
// (Router, Network, Summary, AS-External, TE and Extended Prefix LSAs),
// area border routing, and the translation of each area's database into an
// lsdb.Graph.
//
// One goroutine (Run) owns all protocol state. Socket readers only copy
// packets into events; timers are one ticker; readers of state (the control
// API) send a query that runs inside the loop and returns immutable copies.
package ospf

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/igp"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf/packet"
)

// Protocol constants that ospf/packet does not define (the architectural
// ones, MaxAge, sequence numbers, LSA types, come from there).
const (
	infTransDelay = 1
	tickInterval  = 100 * time.Millisecond
	agingInterval = time.Second
	ipHeaderLen   = 20
	allSPFRouters = "224.0.0.5"
	allDRouters   = "224.0.0.6"
	optE          = 0x02 // external routing capability
	optO          = 0x40 // opaque LSAs (RFC 5250)
)

// MaxAge is RFC 2328's MaxAge in seconds (packet.MaxAge).
const MaxAge = packet.MaxAge

// Multicast destinations.
var (
	AllSPFRouters = netip.MustParseAddr(allSPFRouters)
	AllDRouters   = netip.MustParseAddr(allDRouters)
)

// Options hold the hooks that differ between production and tests.
type Options struct {
	Logger *slog.Logger
	// OpenPort opens packet I/O for an interface; default OpenRawPort.
	OpenPort func(ifi *net.Interface, addr netip.Addr) (Port, error)
	// Interfaces looks interfaces up; default KernelInterface.
	Interfaces func(name string) (*IfaceInfo, error)
	// OnGraph is called from the instance goroutine with every new
	// snapshot of an area (area id as a dotted quad).
	OnGraph func(area string, g *lsdb.Graph)
	Now     func() time.Time
	// Repair, when set, hears at once of neighbours falling below and
	// reaching 2-Way (local repair, bfd.go); the rib in production.
	Repair Repairer
	// BFD is the daemon's BFD speaker (daemon.Core.BFD); nil: no BFD.
	BFD *bfd.Manager
}

// IfaceInfo is what an interface needs to know about its link.
type IfaceInfo = netif.Info

// Instance is one OSPFv2 routing instance.
type Instance struct {
	cfg    *config.Config
	ocfg   *Config
	log    *slog.Logger
	opt    Options
	rid    netip.Addr
	pbCode uint16

	// Base: the loop's module methods, the convergence gate, log-once,
	// the BFD sessions (internal/igp).
	*igp.Base
	lp    *loop.Loop   // events, queries, ticker: the instance goroutine
	guard *guard.Guard // every received packet and loop duty recovers through it

	ifaces []*iface
	areas  []*area // config order of first appearance
	as     *area   // AS-scope database (types 5 and 11)

	graphs sync.Map // area name -> *atomic.Pointer[lsdb.Graph]

	// Opaque ids of Extended Prefix LSAs, stable for the life of the
	// instance.
	pfxIDs    map[netip.Prefix]uint32
	nextPfxID uint32

	lastAging time.Time

	// formerRIDs are router ids we used within MaxAge (a reload changed
	// it): LSAs they advertise are ours to flush. lastRID is the one
	// before the last change.
	formerRIDs map[netip.Addr]time.Time
	lastRID    netip.Addr

	stopOnce sync.Once
	wg       sync.WaitGroup

	// rxFault, set only by tests, runs first for every received packet:
	// it stands in for a bug that the recovery in receive must contain.
	rxFault func(pkt []byte)
}

type rxEvent struct {
	ifc      *iface
	src, dst netip.Addr
	pkt      []byte
}

// New validates what can be checked before the loop runs and returns an
// instance ready for Run.
func New(cfg *config.Config, opt Options) (*Instance, error) {
	if Section(cfg) == nil {
		return nil, fmt.Errorf("ospf: no ospf section in %s", cfg.File)
	}
	rid := RouterID(cfg)
	if !rid.IsValid() || !rid.Is4() {
		return nil, fmt.Errorf("ospf: no router id")
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.OpenPort == nil {
		opt.OpenPort = OpenRawPort
	}
	if opt.Interfaces == nil {
		opt.Interfaces = KernelInterface
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	in := &Instance{
		cfg:    cfg,
		ocfg:   Section(cfg),
		log:    opt.Logger.With("proto", "ospf"),
		opt:    opt,
		rid:    rid,
		pbCode: Section(cfg).PathBandwidthSubTLV,
		lp:     loop.New(4096),
		pfxIDs: map[netip.Prefix]uint32{},
	}
	in.Base = igp.NewBase(in.lp, in.log, opt.BFD, Key, opt.Logger)
	in.guard = guard.New("ospf", in.log)
	in.lp.Guard(in.guard)
	in.as = newArea(in, 0, true)
	for _, a := range Section(cfg).Areas() {
		in.areas = append(in.areas, newArea(in, a, false))
	}
	for _, p := range Section(cfg).Prefixes {
		if !p.External && in.area(p.Area) == nil {
			// A prefix in an area without interfaces still needs a Router
			// LSA to hang on; config refuses this, tests may not.
			in.areas = append(in.areas, newArea(in, p.Area, false))
		}
	}
	for i, ic := range Section(cfg).Interfaces {
		in.ifaces = append(in.ifaces, newIface(in, i, ic))
	}
	return in, nil
}

// RouterID returns the instance's router id.
func (in *Instance) RouterID() netip.Addr { return in.rid }

func (in *Instance) area(id uint32) *area {
	for _, a := range in.areas {
		if a.id == id {
			return a
		}
	}
	return nil
}

// isABR: attached to more than one area (RFC 2328 §3.3), counting areas
// with at least one running interface.
func (in *Instance) isABR() bool {
	n := 0
	for _, a := range in.areas {
		for _, ifc := range in.ifaces {
			if ifc.area == a && ifc.running {
				n++
				break
			}
		}
	}
	return n > 1
}

// isASBR: we originate AS-External LSAs.
func (in *Instance) isASBR() bool {
	for _, p := range in.ocfg.Prefixes {
		if p.External {
			return true
		}
	}
	return false
}

// Graph returns the latest snapshot of an area (dotted quad), or nil.
func (in *Instance) Graph(area string) *lsdb.Graph {
	if v, ok := in.graphs.Load(area); ok {
		return v.(*atomic.Pointer[lsdb.Graph]).Load()
	}
	return nil
}

// LSDB returns the latest graph of every area, in area order.
func (in *Instance) LSDB() []*lsdb.Graph {
	var out []*lsdb.Graph
	in.graphs.Range(func(_, v any) bool {
		if g := v.(*atomic.Pointer[lsdb.Graph]).Load(); g != nil {
			out = append(out, g)
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, _ := config.ParseArea(out[i].Area)
		b, _ := config.ParseArea(out[j].Area)
		return a < b
	})
	return out
}

// Run is the instance goroutine. It returns when ctx is done.
func (in *Instance) Run(ctx context.Context) error {
	return in.RunLoop(ctx, tickInterval, in.opt.Now, igp.Handlers{
		Start: func(now time.Time) {
			for _, ifc := range in.ifaces {
				ifc.refresh(now)
			}
		},
		Stop: in.shutdown,
		Refresh: func(name string) {
			if ifc := in.iface(name); ifc != nil {
				ifc.refresh(in.opt.Now())
			}
		},
		Reconfigure: in.reconfigure, SetBandwidth: in.setBandwidth, Clear: in.clearNeighbors, BFD: in.onBFD,
		Other: func(ev any) {
			if e, ok := ev.(rxEvent); ok {
				in.receive(e.ifc, e.src, e.dst, e.pkt)
			}
		},
		Tick: in.tick, Settle: in.settle,
	})
}

// tick runs the timer-driven duties: interface polling, hellos, wait and
// inactivity timers, DBD/LSR/LSU retransmission, delayed acks, aging.
func (in *Instance) tick(now time.Time) {
	for _, ifc := range in.ifaces {
		ifc.tick(now)
	}
	in.bfdTick(now)
	if now.Sub(in.lastAging) >= agingInterval {
		in.lastAging = now
		for _, a := range in.allDBs() {
			in.age(a, now)
		}
	}
	in.checkConverged(now)
}

// allDBs returns every database: the areas, the AS scope and the links.
func (in *Instance) allDBs() []*area {
	out := append([]*area{}, in.areas...)
	for _, ifc := range in.ifaces {
		out = append(out, ifc.linkDB)
	}
	return append(out, in.as)
}

// checkConverged: the databases quiet for a second, and every running,
// non-passive interface has a Full neighbour.
func (in *Instance) checkConverged(now time.Time) {
	var changes uint64
	for _, a := range in.allDBs() {
		changes += a.changes
	}
	in.CheckConverged(now, changes, func() bool {
		for _, ifc := range in.ifaces {
			if !ifc.running || ifc.cfg.Passive {
				continue
			}
			if !ifc.hasFull() {
				return false
			}
		}
		return true
	})
}

// settle does the work events leave pending: origination (subject to the
// generation interval), ABR summaries, graph snapshots, flooding.
func (in *Instance) settle(now time.Time) {
	for _, a := range in.areas {
		if a.regen && !now.Before(a.lastGen.Add(in.ocfg.LSAGenInterval)) {
			in.originate(a, now)
		}
	}
	if in.as.regen && !now.Before(in.as.lastGen.Add(in.ocfg.LSAGenInterval)) {
		in.originateAS(now)
	}
	for _, a := range in.allDBs() {
		in.finishWraps(a, now)
	}
	graphs := false
	for _, a := range in.areas {
		if a.graphDirty {
			a.graphDirty = false
			a.graph = in.buildGraph(a, now)
			in.publish(a)
			graphs = true
		}
	}
	if in.as.graphDirty {
		// Externals live in every area's graph.
		in.as.graphDirty = false
		for _, a := range in.areas {
			a.graph = in.buildGraph(a, now)
			in.publish(a)
		}
		graphs = true
	}
	if graphs {
		in.scheduleSummaries()
	}
	for _, ifc := range in.ifaces {
		ifc.flush(now)
	}
}

func (in *Instance) publish(a *area) {
	v, _ := in.graphs.LoadOrStore(a.name, &atomic.Pointer[lsdb.Graph]{})
	v.(*atomic.Pointer[lsdb.Graph]).Store(a.graph)
	if in.opt.OnGraph != nil {
		in.opt.OnGraph(a.name, a.graph)
	}
}

func (in *Instance) shutdown() {
	in.CloseBFD()
	for _, ifc := range in.ifaces {
		ifc.close()
	}
	in.wg.Wait()
}

// scheduleRegen asks for a new origination of our LSAs in an area.
func (in *Instance) scheduleRegen(a *area) {
	if a != nil {
		a.regen = true
	}
}

// scheduleAll asks for origination everywhere (interface changes affect
// the Router LSA of their area, the ABR's summaries in every area, and the
// B/E bits).
func (in *Instance) scheduleAll() {
	for _, a := range in.areas {
		a.regen = true
	}
	in.as.regen = true
}
