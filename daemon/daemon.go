package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Options are what the command line adds to the config.
type Options struct {
	// Socket is the control socket; empty: the config's.
	Socket string
	Log    *slog.Logger
	// Level is the handler's level, changed live by a reload of log-level.
	Level   *slog.LevelVar
	Version string
	// NetNS is the network namespace of the kernel FIB and the link
	// monitor (tests); 0: the current one.
	NetNS netns.NsHandle
}

// Daemon is one fared: the core and its modules.
type Daemon struct {
	opt   Options
	specs []Spec
	log   *slog.Logger
	core  *Core
	srv   *api.Server

	reloadMu sync.Mutex  // one reload at a time (SIGHUP and the API)
	running  atomic.Bool // the core and modules are up: reloads may run

	mu      sync.Mutex // guards cfg and mods
	cfg     *config.Config
	mods    map[string]*running
	runCtx  context.Context
	exited  chan exit
	started time.Time
	present map[string]bool // interfaces seen since start (d.mu)

	metrics *metrics // Prometheus registry and listener (metrics.go)
}

type running struct {
	spec   Spec
	m      Module
	cancel context.CancelCauseFunc
	done   chan struct{}
}

type exit struct {
	name string
	err  error
}

// New prepares a daemon for cfg with the given module table; Run starts it.
func New(cfg *config.Config, specs []Spec, o Options) *Daemon {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Socket == "" {
		o.Socket = cfg.Socket
	}
	d := &Daemon{opt: o, specs: specs, log: o.Log, cfg: cfg, mods: map[string]*running{}, exited: make(chan exit, len(specs))}
	d.metrics = newMetrics(d)
	return d
}

// Config returns the configuration in force.
func (d *Daemon) Config() *config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// Run builds the core and the configured modules, runs them until ctx ends
// or one of them fails, and stops them in order: modules first (they may
// still withdraw routes), then the rib and the link monitor, then the
// kernel FIB (keep or flush), then the API.
func (d *Daemon) Run(ctx context.Context) error {
	cfg := d.Config()
	d.started = time.Now()
	defer d.metrics.close()
	if err := d.buildCore(cfg); err != nil {
		return err
	}
	defer d.closeCore()

	// Build every configured module before anything runs: a module that
	// cannot start stops the daemon before it touches the network.
	var built []*running
	for _, s := range d.specs {
		if !s.Configured(cfg) {
			continue
		}
		m, err := s.New(d.core, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		built = append(built, &running{spec: s, m: m})
	}
	gid, err := config.SocketGID(cfg.SocketGroup)
	if err != nil {
		return fmt.Errorf("socket-group: %w", err)
	}
	srv, err := api.Listen(d.opt.Socket, d.log, d.specNames(), api.Perm{Group: gid})
	if err != nil {
		return err
	}
	d.srv = srv
	defer srv.Close()
	d.coreRoutes()
	if err := d.metrics.serve(cfg.Metrics, d.opt.NetNS); err != nil {
		return err
	}

	coreCtx, stopCore := context.WithCancel(context.Background())
	var coreWG sync.WaitGroup
	coreWG.Add(1)
	go func() { defer coreWG.Done(); d.core.RIB.Run(coreCtx) }()
	coreWG.Add(1)
	go func() { defer coreWG.Done(); d.core.BFD.Run(coreCtx) }()
	coreWG.Add(1)
	go func() { defer coreWG.Done(); d.monitor(coreCtx) }()

	modCtx, stopMods := context.WithCancelCause(context.Background())
	d.mu.Lock()
	d.runCtx = modCtx
	for _, r := range built {
		d.start(r)
	}
	d.mu.Unlock()
	d.running.Store(true)
	d.log.Info("fared started", "config", cfg.File, "socket", d.opt.Socket, "modules", strings.Join(d.Modules(), ","))
	_, warn := hostChecks()
	for _, w := range warn {
		d.log.Warn(w)
	}
	for _, w := range cfg.MissingInterfaces(d.ifaceExists) {
		d.log.Warn(w)
	}
	d.notify("READY=1\nSTATUS=running: " + strings.Join(d.Modules(), ", "))

	var runErr error
	select {
	case <-ctx.Done():
	case e := <-d.exited:
		runErr = fmt.Errorf("%s: %w", e.name, e.err)
		d.log.Error("module failed, stopping", "module", e.name, "err", e.err)
	}
	d.notify("STOPPING=1")
	// No reload may start or stop a module from here on.
	d.reloadMu.Lock()
	d.running.Store(false)
	d.reloadMu.Unlock()
	stopMods(ErrShutdown)
	d.mu.Lock()
	mods := d.mods
	d.mu.Unlock()
	for _, r := range mods {
		<-r.done
	}
	stopCore()
	coreWG.Wait()
	return runErr
}

// start runs a built module under the daemon's module context; d.mu held.
func (d *Daemon) start(r *running) {
	ctx, cancel := context.WithCancelCause(d.runCtx)
	r.cancel, r.done = cancel, make(chan struct{})
	d.mods[r.spec.Name] = r
	d.srv.Mount(r.spec.Name, r.m.Routes)
	d.metrics.addModule(r.spec.Name, r.m)
	go func() {
		defer close(r.done)
		err := r.m.Run(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			select {
			case d.exited <- exit{r.spec.Name, err}:
			default:
			}
		}
	}()
}

// stop ends a running module whose section was removed; d.mu not held.
func (d *Daemon) stop(r *running) {
	d.srv.Unmount(r.spec.Name)
	d.metrics.removeModule(r.spec.Name)
	r.cancel(ErrRemoved)
	<-r.done
	d.mu.Lock()
	delete(d.mods, r.spec.Name)
	d.mu.Unlock()
	d.core.RIB.Drop(r.spec.Name) // a routing protocol's topologies go with it
}

// RIB is the daemon's routing table (nil before Run).
func (d *Daemon) RIB() *rib.Manager {
	if d.core == nil {
		return nil
	}
	return d.core.RIB
}

// Modules returns the names of the running modules, sorted.
func (d *Daemon) Modules() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(maps.Keys(d.mods))
}

func (d *Daemon) specNames() []string {
	out := make([]string, len(d.specs))
	for i, s := range d.specs {
		out[i] = s.Name
	}
	return out
}

// buildCore opens the kernel FIB (adopting what a previous run left) and
// creates the rib and the BFD speaker.
func (d *Daemon) buildCore(cfg *config.Config) error {
	d.core = &Core{Log: d.log, Protocol: fibProtocol(cfg, d.specs)}
	d.core.BFD = bfd.New(bfd.Options{Logger: d.log, Guard: d.core.Guard("bfd")})
	d.metrics.reg.MustRegister(d.core.BFD.Collector())
	if cfg.FIB.Enabled {
		fc := FIBConfig(cfg, d.specs)
		fc.NetNS, fc.Logger = d.opt.NetNS, d.log
		k, err := fib.Open(fc)
		if err != nil {
			return fmt.Errorf("cannot open the kernel FIB: %w", err)
		}
		// Keep what a previous run installed until the first computation
		// after convergence replaces it.
		if err := k.Adopt(); err != nil {
			k.Close()
			return fmt.Errorf("cannot read back the kernel FIB: %w", err)
		}
		d.log.Info("kernel FIB", "capabilities", fmt.Sprintf("%+v", k.Capabilities()), "on_shutdown", cfg.FIB.OnShutdown)
		d.core.FIB = k
	}
	rc := rib.Config{Routing: map[string]rib.Routing{}, Default: ribRouting(cfg.Routing(""), nil), Log: d.log, Ready: d.converged, Observe: d.metrics.observe}
	for _, s := range routingSpecs(d.specs) {
		rc.Routing[s.Name] = ribRouting(cfg.Routing(s.Name), s.Routing.Select)
	}
	if d.core.FIB != nil {
		rc.FIB = d.core.FIB
	}
	d.core.RIB = rib.New(rc)
	return nil
}

func (d *Daemon) closeCore() {
	if d.core == nil || d.core.FIB == nil {
		return
	}
	if err := d.core.FIB.Close(); err != nil {
		d.log.Error("closing the kernel FIB", "err", err)
	}
}

// converged: every module that gates the start-up hold is done.
func (d *Daemon) converged() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.mods {
		if c, ok := r.m.(Converger); ok && !c.Converged() {
			return false
		}
	}
	return true
}

// monitor follows the kernel's links and addresses: the FIB drops the next
// hops of a link that went down at once (before any protocol notices),
// then every module that watches links hears of it.
func (d *Daemon) monitor(ctx context.Context) {
	evs := make(chan netif.Event, 64)
	go func() {
		if err := netif.Monitor(ctx, d.opt.NetNS, evs); err != nil && ctx.Err() == nil {
			d.log.Error("netlink monitor stopped", "err", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-evs:
			d.noteInterface(ev)
			if k := d.core.FIB; k != nil {
				switch ev.Kind {
				case netif.LinkDown, netif.LinkGone:
					// Errors are per object and retried by the next Sync;
					// the event matters more than the report.
					_ = k.LinkDown(ev.IfIndex)
				case netif.LinkUp:
					k.LinkUp(ev.IfIndex)
				}
			}
			d.mu.Lock()
			for _, r := range d.mods {
				if w, ok := r.m.(LinkWatcher); ok {
					w.LinkEvent(ev)
				}
			}
			d.mu.Unlock()
		}
	}
}

// ifaceExists looks an interface up in the daemon's namespace.
func (d *Daemon) ifaceExists(name string) bool {
	h, err := netlink.NewHandleAt(netif.Namespace(d.opt.NetNS))
	if err != nil {
		return true // cannot tell: no warning
	}
	defer h.Close()
	_, err = h.LinkByName(name)
	return err == nil
}

// noteInterface logs a configured interface appearing or disappearing
// while fared runs (the protocols pick it up by themselves).
func (d *Daemon) noteInterface(ev netif.Event) {
	if ev.Initial || (ev.Kind != netif.LinkGone && ev.Kind != netif.LinkUp && ev.Kind != netif.LinkDown) {
		return
	}
	d.mu.Lock()
	if d.present == nil {
		d.present = map[string]bool{}
	}
	was := d.present[ev.Name]
	d.present[ev.Name] = ev.Kind != netif.LinkGone
	cfg := d.cfg
	d.mu.Unlock()
	for _, r := range cfg.InterfaceRefs() {
		if r.Name != ev.Name {
			continue
		}
		switch {
		case ev.Kind == netif.LinkGone:
			d.log.Warn("configured interface disappeared", "interface", r.Name, "section", r.Section, "at", fmt.Sprintf("%s:%d", cfg.File, r.Line))
		case !was:
			d.log.Info("configured interface appeared", "interface", r.Name, "section", r.Section, "state", ev.Kind)
		}
	}
}

// FIBConfig is the kernel FIB a config asks for, with the module table
// the daemon runs (which tells the kernel protocol of its routes).
func FIBConfig(cfg *config.Config, specs []Spec) fib.Config {
	fc := fib.Config{Protocol: fibProtocol(cfg, specs), Metric: cfg.FIB.Metric, KeepOnShutdown: cfg.FIB.OnShutdown == "keep"}
	if r := cfg.FIB.Resilient; r != nil {
		fc.Resilient = &fib.Resilient{Buckets: r.Buckets, IdleTimer: r.IdleTimer, UnbalancedTimer: r.UnbalancedTimer}
	}
	return fc
}

// routingSpecs are the routing protocols of the module table, in its
// order.
func routingSpecs(specs []Spec) []Spec {
	var out []Spec
	for _, s := range specs {
		if s.Routing != nil {
			out = append(out, s)
		}
	}
	return out
}

// ribRouting turns the config's settings of one protocol into the rib's.
func ribRouting(r config.Routing, sel rib.Selection) rib.Routing {
	t := r.SPF
	d := r.Damping
	return rib.Routing{ECMPOnly: r.ECMPOnly, Distance: r.Distance, Select: sel, Delay: spf.DelayConfig{InitialDelay: t.InitialDelay,
		ShortDelay: t.ShortDelay, LongDelay: t.LongDelay, TimeToLearn: t.TimeToLearn, Holddown: t.Holddown},
		Damping: rib.DampConfig{Changes: d.Changes, Window: d.Window, Hold: d.Hold, MaxHold: d.MaxHold}}
}

// fibProtocol is the kernel protocol of our routes and nexthops (one FIB
// holds all of fared's routes): that of the first routing protocol of the
// module table the config runs, else of the table's first routing
// protocol; 0 (the fib package's default) for a table without one.
func fibProtocol(cfg *config.Config, specs []Spec) uint8 {
	rs := routingSpecs(specs)
	for _, s := range rs {
		if s.Configured(cfg) {
			return s.Routing.KernelProto
		}
	}
	if len(rs) > 0 {
		return rs[0].Routing.KernelProto
	}
	return 0
}

// hostChecks reads the kernel switches a router depends on and returns
// what is wrong, in words. It reads the daemon's own namespace (fared runs
// inside the namespace it routes for).
func hostChecks() (wire.Forwarding, []string) {
	on := func(path string) (bool, bool) {
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			return false, false
		}
		return b[0] == '1', true
	}
	var fw wire.Forwarding
	var warn []string
	var ok bool
	if fw.IPv4, ok = on("/proc/sys/net/ipv4/ip_forward"); ok && !fw.IPv4 {
		warn = append(warn, "net.ipv4.ip_forward=0: this router does not forward IPv4 (sysctl -w net.ipv4.ip_forward=1)")
	}
	if fw.IPv6, ok = on("/proc/sys/net/ipv6/conf/all/forwarding"); ok && !fw.IPv6 {
		warn = append(warn, "net.ipv6.conf.all.forwarding=0: this router does not forward IPv6 (sysctl -w net.ipv6.conf.all.forwarding=1)")
	}
	// With nexthop_compat_mode=1 (the kernel default) every group replace
	// also makes the kernel announce each route using the group, which
	// defeats "reweight touches no route" for listeners.
	if compat, ok := on("/proc/sys/net/ipv4/nexthop_compat_mode"); ok && compat {
		warn = append(warn, "net.ipv4.nexthop_compat_mode=1: the kernel announces every route of a reweighted group; set it to 0")
	}
	return fw, warn
}

// Status is GET /v1/status.
func (d *Daemon) Status() wire.Status {
	cfg := d.Config()
	up := time.Since(d.started)
	fw, warn := hostChecks()
	st := wire.Status{Version: d.opt.Version, Hostname: cfg.Hostname, RouterID: cfg.RouterID.String(), Config: cfg.File,
		Uptime: up.Round(time.Second).String(), UptimeSeconds: up.Seconds(), Modules: d.Modules(), Forwarding: fw, Warnings: warn}
	for m, n := range guard.Counts() {
		if n > 0 {
			if st.Panics == nil {
				st.Panics = map[string]uint64{}
			}
			st.Panics[m] = n
		}
	}
	return st
}

// ModuleStatus collects the StatusReporter summaries.
func (d *Daemon) moduleStatus() map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]any{}
	for n, r := range d.mods {
		if s, ok := r.m.(StatusReporter); ok {
			out[n] = s.Status()
		}
	}
	return out
}
