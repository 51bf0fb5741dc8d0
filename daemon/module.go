// Package daemon puts fared together: a small core (the kernel FIB, the
// rib, the link monitor, BFD and the control API) and the modules that
// run on it (the routing protocols and the policy modules). docs/architecture.md draws the
// picture; this file is the contract a module signs.
package daemon

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/api"
	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/rib"
)

// Spec is a module kind: one entry of the module table (cmd/fared's
// modules.go). Adding a module is one package plus one Spec there.
type Spec struct {
	// Name is the module's config key, its API prefix (/v1/<name>/), its
	// farectl noun and its log attribute.
	Name string
	// Configured reports whether a config runs the module (its section is
	// present). A module whose section appears or disappears on reload is
	// started or stopped.
	Configured func(cfg *config.Config) bool
	// New builds the module from a validated config. It may check what
	// only the running system can tell (interfaces, sockets) and fail;
	// it must not start goroutines: Run does.
	New func(core *Core, cfg *config.Config) (Module, error)
	// Routing is set by a routing protocol: what the core needs of it
	// before any instance runs (Routing). nil for every other module.
	Routing *Routing
}

// Routing describes a routing protocol to the core. The module submits
// its topologies to Core.RIB with lsdb graphs whose Protocol is the
// module's Name; its config section registers with a Distance and
// implements config.RoutingSection and config.InterfaceLister. The core
// then gives the rib the protocol's settings (distance, ecmp-only, SPF
// back-off: config.Config.Routing(Name)) and Select, at start and on
// every reload; drops its topologies when the module stops; and lists
// it in /v1/spf/log's delays.
type Routing struct {
	// KernelProto is the kernel route protocol (RTPROT_*) of fared's
	// routes and nexthops when this is the first routing protocol of the
	// module table that the config runs (one FIB holds all of fared's
	// routes, under one protocol number).
	KernelProto uint8
	// Select is the protocol's part of the rib's merge of topologies:
	// which of its routes take part, and how they rank against each other
	// before the metric (rib.Selection). nil: every route, by metric.
	Select rib.Selection
}

// Why a module's Run context ends, as context.Cause(ctx) tells: the
// daemon stops (its sessions die with the process, as in a restart:
// neighbours may keep state for a graceful restart), or its section was
// removed by a reload (withdraw cleanly: it is not coming back).
var (
	ErrShutdown = errors.New("fared is stopping")
	ErrRemoved  = errors.New("the module's section was removed")
)

// Module is one running protocol or policy module.
//
// Every method but Run is called from the daemon's goroutines, never
// concurrently with itself; a module that keeps its state in its own
// goroutine (internal/loop) hands the work to it.
type Module interface {
	// Run runs the module until ctx ends; context.Cause(ctx) is
	// ErrShutdown or ErrRemoved. An error stops the daemon: the other
	// modules are stopped in order, and fared exits non-zero.
	Run(ctx context.Context) error
	// Check is the first phase of a reload: validate cfg, the whole new
	// configuration, against the running module, changing nothing. An
	// error rejects the reload of every module, with its reason.
	Check(cfg *config.Config) error
	// Reconfigure is the second phase: apply cfg, which every module's
	// Check accepted. It reports what changed and what it could not apply
	// live (and left as it was).
	Reconfigure(ctx context.Context, cfg *config.Config) (Change, error)
	// Routes adds the module's API routes (below /v1/<name>/).
	Routes(r *api.Router)
}

// Change is what one module did with a reload.
type Change struct {
	Changed  []string // applied, in words: "interface eth1: metric 10 -> 20"
	Warnings []string // not applied (and why)
}

// Optional capabilities: a module implements those it needs.
type (
	// LinkWatcher receives every link and address change of the
	// namespace (the netlink monitor), after the FIB has dropped the next
	// hops of a link that went down. LinkEvent must not block: post the
	// event to the module's loop.
	LinkWatcher interface{ LinkEvent(ev netif.Event) }
	// Converger gates the FIB's start-up hold: the kernel keeps what a
	// previous run installed until every Converger reports true (or the
	// hold ends), so a restart leaves no forwarding gap.
	Converger interface{ Converged() bool }
	// Collector exports the module's Prometheus metrics.
	Collector interface{ Collectors() []prometheus.Collector }
	// StatusReporter adds a module's summary to GET /v1/status.
	StatusReporter interface{ Status() any }
)

// Core is what a module may use of the daemon.
type Core struct {
	Log *slog.Logger
	// RIB takes routing protocols' topology snapshots (Submit) and serves
	// routes and topologies to anyone (Snapshot, Subscribe).
	RIB *rib.Manager
	// FIB is the kernel table, nil when fib.enabled is false. Modules
	// other than the rib only read it (lookups, capabilities).
	FIB *fib.FIB
	// Protocol is the kernel route protocol of fared's routes.
	Protocol uint8
	// BFD is the daemon's one BFD speaker (RFC 5880/5881): every module
	// that needs liveness (the routing protocols, iNOF's BGP) asks it for sessions,
	// and clients asking for the same (interface, peer) share one. The
	// daemon runs it (before the modules, until after them) and serves
	// /v1/bfd/sessions.
	BFD *bfd.Manager
}

// Guard returns the panic guard of module name (internal/guard): every
// network-facing path of the module recovers through it — its event loop
// (loop.Guard), its socket readers, its gRPC handlers — so a bug that one
// packet or request triggers drops that input, is counted under
// fared_panics_total{module} and logged once, and the module runs on. The
// module's API handlers are guarded by the API server already.
func (c *Core) Guard(module string) *guard.Guard {
	return guard.New(module, c.Log.With("module", module))
}
