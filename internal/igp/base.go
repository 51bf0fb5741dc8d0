package igp

import (
	"context"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
)

// Base is embedded (as *Base) by an IGP instance. It holds the instance's
// event loop and provides the module methods that only post to it; the
// instance's loop handler handles the events below.
type Base struct {
	lp    *loop.Loop
	log   *slog.Logger
	start time.Time

	// converged turns true (once) when every running interface has an
	// adjacency and the databases have been quiet for a second: the FIB
	// keeps what a previous run left until then (daemon.Converger).
	converged   atomic.Bool
	lastChange  time.Time
	lastChanges uint64

	logged map[string]bool // instance-wide log-once kinds

	// BFD sessions of the adjacencies (SyncBFD); nil until one is wanted.
	bfdMgr    *bfd.Manager
	bfdClient string
	bfdLog    *slog.Logger
	bfd       *bfd.Sessions
}

// NewBase returns the Base of an instance whose loop is lp and whose log
// is log. mgr is the daemon's BFD speaker (nil: none), client the
// module's name for its sessions, bfdLog the logger of the sessions.
func NewBase(lp *loop.Loop, log *slog.Logger, mgr *bfd.Manager, client string, bfdLog *slog.Logger) *Base {
	return &Base{lp: lp, log: log, logged: map[string]bool{}, bfdMgr: mgr, bfdClient: client, bfdLog: bfdLog}
}

// The events every instance's loop handles (with its own).
type (
	// NotifyEvent: an interface changed (netlink monitor); re-read it.
	NotifyEvent struct{ Name string }
	// ReconfigEvent: apply a checked configuration, report on Done.
	ReconfigEvent struct {
		Cfg  *config.Config
		Done chan<- daemon.Change
	}
	// BandwidthEvent: set (or with 0 clear) an interface's run-time
	// bandwidth override, answer on Done.
	BandwidthEvent struct {
		Iface string
		BW    config.Bandwidth
		Done  chan<- error
	}
	// BFDEvent: a session of the instance's changed state.
	BFDEvent struct{ Ev bfd.Event }
)

// Notify tells the instance that an interface changed (from the netlink
// monitor), so it re-reads it now instead of at the next poll.
func (b *Base) Notify(name string) {
	b.lp.TryPost(NotifyEvent{name}) // if the queue is full, the poll catches up
}

// LinkEvent is the daemon.LinkWatcher capability: re-read the interface
// now (the monitor saw it change) instead of at the next poll.
func (b *Base) LinkEvent(ev netif.Event) { b.Notify(ev.Name) }

// Query runs f inside the instance goroutine; f must copy what it returns.
func (b *Base) Query(ctx context.Context, f func()) error { return b.lp.Query(ctx, f) }

// AskReconfigure hands a checked configuration to the loop and waits for
// its report (the instance's Reconfigure).
func (b *Base) AskReconfigure(ctx context.Context, cfg *config.Config) (daemon.Change, error) {
	return loop.Ask(ctx, b.lp, func(r chan<- daemon.Change) any { return ReconfigEvent{Cfg: cfg, Done: r} })
}

// SetBandwidth overrides an interface's bandwidth at run time (bits/s); 0
// clears the override. An override survives reloads that leave the
// interface's configured bandwidth as it was.
func (b *Base) SetBandwidth(ctx context.Context, iface string, bw config.Bandwidth) error {
	err, aerr := loop.Ask(ctx, b.lp, func(r chan<- error) any { return BandwidthEvent{Iface: iface, BW: bw, Done: r} })
	if aerr != nil {
		return aerr
	}
	return err
}

// Converged reports whether the instance has finished its initial
// database synchronisation (daemon.Converger; see CheckConverged).
func (b *Base) Converged() bool { return b.converged.Load() }

// CheckConverged runs every tick until Converged: the databases' change
// counter (changes) must have stood still for a second, and adjacent
// report that every running, non-passive interface has an adjacency.
func (b *Base) CheckConverged(now time.Time, changes uint64, adjacent func() bool) {
	if b.converged.Load() {
		return
	}
	if changes != b.lastChanges || b.lastChange.IsZero() {
		b.lastChanges, b.lastChange = changes, now
		return
	}
	if now.Sub(b.lastChange) < time.Second || !adjacent() {
		return
	}
	b.converged.Store(true)
	b.log.Info("initial convergence reached", "after", now.Sub(b.start).Round(time.Millisecond))
}

// LogOnce logs an instance-wide condition the first time it is seen.
func (b *Base) LogOnce(kind, msg string, args ...any) {
	if b.logged[kind] {
		return
	}
	b.logged[kind] = true
	b.log.Warn(msg, append([]any{"kind", kind, "note", "logged once"}, args...)...)
}

// SyncBFD makes the instance's BFD sessions those of want (one per
// adjacency whose interface turns BFD on), opening the sessions on first
// use; a session's state changes come to the loop as BFDEvents. Without a
// BFD speaker it says so once (adjacencies run without BFD).
func (b *Base) SyncBFD(want map[bfd.Key]bfd.Want) {
	if b.bfd == nil {
		if len(want) == 0 {
			return
		}
		if b.bfdMgr == nil {
			b.LogOnce("bfd_no_manager", "BFD is configured but this instance has no BFD speaker: adjacencies run without it")
			return
		}
		b.bfd = bfd.NewSessions(b.bfdMgr, b.bfdClient, b.bfdLog, func(ev bfd.Event) { b.lp.PostNoWait(BFDEvent{ev}) })
	}
	b.bfd.Sync(want)
}

// BFDFailed reports whether a session event takes its adjacency down:
// Up to Down, unless the peer said AdminDown (RFC 5882 §3.2: BFD was
// turned off there, the neighbour itself is fine).
func (b *Base) BFDFailed(e bfd.Event) bool { return b.bfd != nil && b.bfd.Failed(e) }

// CloseBFD removes the instance's sessions (the peers hear AdminDown
// unless another client still uses a session).
func (b *Base) CloseBFD() {
	if b.bfd != nil {
		b.bfd.Close()
		b.bfd = nil
	}
}

// BFDWants collects the sessions an instance's adjacencies want, for
// SyncBFD.
type BFDWants map[bfd.Key]bfd.Want

// Iface adds the sessions of one interface, one per peer that peers passes
// to add (with the session's source address), when the interface is
// active (running, not passive) and its effective bfd setting (its own
// over the section's) turns BFD on.
func (w BFDWants) Iface(section, own *config.BFD, active bool, ifIndex int, name string, peers func(add func(peer, local netip.Addr))) {
	b := config.EffectiveBFD(section, own)
	if b == nil || !active {
		return
	}
	peers(func(peer, local netip.Addr) {
		w[bfd.Key{IfIndex: ifIndex, Peer: peer}] = bfd.Want{Local: local, Iface: name, Params: BFDParams(b)}
	})
}

// BFDParams are the session parameters of a bfd setting.
func BFDParams(c *config.BFD) bfd.Params {
	return bfd.Params{Interval: c.Interval, Multiplier: c.Multiplier, Auth: c.Authentication}
}

// Repairer is the rib's local-repair hook (rib.Manager): an adjacency
// that goes down takes its neighbour out of the kernel's nexthop groups
// at once, before the database and SPF catch up (docs/bfd.md).
type Repairer interface {
	NeighborDown(ifindex int, gws ...netip.Addr)
	NeighborUp(ifindex int, gws ...netip.Addr)
}

// Module is what an IGP instance is to the daemon: a module that hears of
// links, gates the FIB's start-up hold and exports metrics.
type Module interface {
	daemon.Module
	daemon.LinkWatcher
	daemon.Converger
	daemon.Collector
}

// Spec is an IGP's entry in fared's module table: named and configured by
// its config section key (the module runs while the section is present),
// described to the core by routing, built by build.
func Spec[M Module](key string, routing *daemon.Routing, build func(core *daemon.Core, cfg *config.Config) (M, error)) daemon.Spec {
	return daemon.Spec{
		Name:       key,
		Configured: func(c *config.Config) bool { return c.Sections[key] != nil },
		Routing:    routing,
		New: func(core *daemon.Core, cfg *config.Config) (daemon.Module, error) {
			m, err := build(core, cfg)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
	}
}

// Collect runs build inside the instance goroutine (Query) and returns
// what it built, or build's error. When the query itself fails (ctx ended
// first) the loop may still be running build: nothing of it is read.
func Collect[T any](ctx context.Context, b *Base, build func() (T, error)) (T, error) {
	var out T
	var berr error
	if err := b.Query(ctx, func() { out, berr = build() }); err != nil {
		var zero T
		return zero, err
	}
	if berr != nil {
		var zero T
		return zero, berr
	}
	return out, nil
}
