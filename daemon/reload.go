package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
)

// ReloadError is a reload that changed nothing: the file has errors, or a
// module refused the new configuration.
type ReloadError struct {
	Module string // "" for the config file itself
	Err    error
}

func (e *ReloadError) Error() string {
	if e.Module == "" {
		return e.Err.Error()
	}
	return e.Module + ": " + e.Err.Error()
}

func (e *ReloadError) Unwrap() error { return e.Err }

// Reload re-reads the config file and applies it, atomically across
// modules: first the file is parsed and every running module checks it
// and every newly configured module is built; if any of that fails,
// nothing changes and the old configuration stays in force. Then the core
// and each module apply their part, modules whose section appeared start,
// and modules whose section disappeared stop. Reloads are serialised.
func (d *Daemon) Reload(ctx context.Context) (res wire.Reload, err error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !d.running.Load() {
		// SIGHUP before Run built the core, or after it stopped.
		return wire.Reload{}, &ReloadError{Err: errors.New("fared is not running yet (or any more): nothing to reload")}
	}
	d.notify(fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d", monotonicUsec()))
	defer func() {
		d.metrics.reloaded(res.Reloaded)
		d.notify("READY=1")
	}()
	old := d.Config()
	nc, err := config.Load(old.File)
	if err != nil {
		d.log.Error("reload rejected, keeping the running configuration", "err", err)
		return wire.Reload{}, &ReloadError{Err: err}
	}
	return d.apply(ctx, old, nc)
}

func (d *Daemon) apply(ctx context.Context, old, nc *config.Config) (wire.Reload, error) {
	d.mu.Lock()
	mods := make(map[string]*running, len(d.mods))
	for n, r := range d.mods {
		mods[n] = r
	}
	d.mu.Unlock()

	// Phase one: validate everything, change nothing.
	var toStart []*running
	var toStop []*running
	var errs []error
	for _, s := range d.specs {
		r, on := mods[s.Name], s.Configured(nc)
		switch {
		case r != nil && on:
			if err := r.m.Check(nc); err != nil {
				errs = append(errs, &ReloadError{Module: s.Name, Err: err})
			}
		case r != nil && !on:
			toStop = append(toStop, r)
		case r == nil && on:
			m, err := s.New(d.core, nc)
			if err != nil {
				errs = append(errs, &ReloadError{Module: s.Name, Err: err})
				continue
			}
			toStart = append(toStart, &running{spec: s, m: m})
		}
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		d.log.Error("reload rejected, keeping the running configuration", "err", err)
		return wire.Reload{}, err
	}

	// Phase two: apply.
	out := wire.Reload{Reloaded: true, Warnings: []string{}, Modules: map[string]wire.ModuleReload{}}
	report := func(name string, c Change, err error) {
		mr := wire.ModuleReload{Changed: nonNil(c.Changed), Warnings: nonNil(c.Warnings)}
		if err != nil {
			mr.Error = err.Error()
		}
		out.Modules[name] = mr
		for _, w := range c.Warnings {
			out.Warnings = append(out.Warnings, name+": "+w)
		}
	}
	report("core", d.applyCore(old, nc), nil)
	report("rib", d.applyRIB(old, nc), nil)
	var applyErrs []string
	for _, s := range d.specs {
		r := mods[s.Name]
		if r == nil || !s.Configured(nc) {
			continue
		}
		c, err := r.m.Reconfigure(ctx, nc)
		report(s.Name, c, err)
		if err != nil {
			// Check accepted it: a failure here is a bug or the module
			// going away; report it, the others are applied.
			applyErrs = append(applyErrs, s.Name+": "+err.Error())
			d.log.Error("module failed to apply a checked reload", "module", s.Name, "err", err)
		}
	}
	d.mu.Lock()
	d.cfg = nc
	d.mu.Unlock()
	for _, r := range toStop {
		d.stop(r)
		out.Stopped = append(out.Stopped, r.spec.Name)
		d.log.Info("module stopped: its section was removed", "module", r.spec.Name)
	}
	d.mu.Lock()
	for _, r := range toStart {
		d.start(r)
		out.Started = append(out.Started, r.spec.Name)
		d.log.Info("module started: its section was added", "module", r.spec.Name)
	}
	d.mu.Unlock()
	d.log.Info("configuration reloaded", "config", nc.File, "warnings", len(out.Warnings))
	if len(applyErrs) > 0 {
		return out, fmt.Errorf("reload applied with errors: %s", strings.Join(applyErrs, "; "))
	}
	return out, nil
}

// applyCore applies what the core can change live (the log level) and
// names what needs a restart.
func (d *Daemon) applyCore(old, nc *config.Config) Change {
	var c Change
	if old.LogLevel != nc.LogLevel {
		if d.opt.Level != nil {
			d.opt.Level.Set(nc.LogLevel)
			c.Changed = append(c.Changed, fmt.Sprintf("log-level: %s -> %s", old.LogLevel, nc.LogLevel))
		} else {
			c.Warnings = append(c.Warnings, "log-level: cannot change the level of this logger")
		}
	}
	if old.Socket != nc.Socket {
		c.Warnings = append(c.Warnings, "socket: needs a restart, ignored")
	}
	if old.SocketGroup != nc.SocketGroup {
		d.applySocketGroup(old.SocketGroup, nc.SocketGroup, &c)
	}
	d.applyMetrics(old, nc, &c)
	if old.FIB.Enabled != nc.FIB.Enabled || old.FIB.Metric != nc.FIB.Metric || old.FIB.OnShutdown != nc.FIB.OnShutdown ||
		!sameResilient(old.FIB.Resilient, nc.FIB.Resilient) {
		c.Warnings = append(c.Warnings, "fib: needs a restart, ignored")
	}
	if old.Hostname != nc.Hostname {
		// Status reads the configuration in force; IS-IS re-originates
		// its TLV 137 itself (its reload report says so).
		c.Changed = append(c.Changed, fmt.Sprintf("hostname: %s -> %s", old.Hostname, nc.Hostname))
	}
	return c
}

func sameResilient(a, b *config.Resilient) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// applyRIB hands each routing protocol's new ecmp-only, SPF timers and
// distance to the rib.
func (d *Daemon) applyRIB(old, nc *config.Config) Change {
	var c Change
	for _, s := range routingSpecs(d.specs) {
		p := s.Name
		o, n := old.Routing(p), nc.Routing(p)
		if o == n {
			continue
		}
		d.core.RIB.SetRouting(p, ribRouting(n, s.Routing.Select))
		if o.ECMPOnly != n.ECMPOnly {
			c.Changed = append(c.Changed, fmt.Sprintf("%s: ecmp-only %v -> %v", p, o.ECMPOnly, n.ECMPOnly))
		}
		if o.SPF != n.SPF {
			c.Changed = append(c.Changed, fmt.Sprintf("%s: spf timers %+v -> %+v", p, o.SPF, n.SPF))
		}
		if o.Damping != n.Damping {
			c.Changed = append(c.Changed, fmt.Sprintf("%s: capacity-damping %+v -> %+v", p, o.Damping, n.Damping))
		}
		if o.Distance != n.Distance {
			c.Changed = append(c.Changed, fmt.Sprintf("%s: distance %d -> %d", p, o.Distance, n.Distance))
		}
	}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// applySocketGroup gives the control socket its new group; with none, the
// socket goes back to fared's own group.
func (d *Daemon) applySocketGroup(old, name string, c *Change) {
	gid, err := config.SocketGID(name)
	if err == nil && gid < 0 {
		gid = os.Getegid()
	}
	if err == nil && d.srv != nil {
		err = d.srv.SetGroup(gid)
	}
	if err != nil {
		c.Warnings = append(c.Warnings, fmt.Sprintf("socket-group: %v; the socket keeps its group", err))
		return
	}
	c.Changed = append(c.Changed, fmt.Sprintf("socket-group: %q -> %q", old, name))
}
