// Package qos is fared's lossless-QoS module (docs/qos.md): PFC per
// priority, the PFC deadlock watchdog (detection, auto-recovery, limit)
// and prevention (port groups), WRED/ECN profiles, fast ECN, large/small
// flow separation. The policy is held once (qos/policy) and drives the
// node's backend: linux (dcbnl, tc, nftables), sonic (CONFIG_DB and
// COUNTERS_DB in Redis) or sim (the software data plane, qos/sim).
package qos

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/qos/backend/linux"
	"github.com/fared/fared/qos/backend/sonic"
	"github.com/fared/fared/qos/ipcc"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/qos/qosconfig"
	"github.com/fared/fared/qos/sim/scenario"
)

func init() {
	config.Register(config.Section{Key: qosconfig.Key, Parse: qosconfig.Parse})
}

// Spec is the qos module's entry in fared's module table.
var Spec = daemon.Spec{
	Name:       "qos",
	Configured: func(c *config.Config) bool { return qosconfig.From(c) != nil },
	New:        newModule,
}

// interfaceLister is what New asks a backend to check interface names.
type interfaceLister interface {
	Interfaces(ctx context.Context) ([]string, error)
}

type backend interface {
	model.Backend
	interfaceLister
}

// open creates the backend a section asks for.
func open(q *qosconfig.Config, file string) (backend, error) {
	switch q.Backend {
	case "linux":
		return linux.New(linux.Options{})
	case "sonic":
		return sonic.New(sonic.Config{Addr: q.Sonic.Redis, ConfigDB: q.Sonic.ConfigDB, CountersDB: q.Sonic.CountersDB}), nil
	case "sim":
		path := q.Sim.Scenario
		if !filepath.IsAbs(path) && file != "" {
			path = filepath.Join(filepath.Dir(file), path)
		}
		s, err := scenario.Load(path)
		if err != nil {
			return nil, err
		}
		return s.Live(q.Sim.Node, q.Sim.Speed, time.Now)
	}
	return nil, fmt.Errorf("unknown backend %q", q.Backend)
}

// checkInterfaces refuses interfaces the node does not have, with the
// config line that names them.
func checkInterfaces(ctx context.Context, be interfaceLister, q *qosconfig.Config, file string) error {
	have, err := be.Interfaces(ctx)
	if err != nil {
		return fmt.Errorf("qos: %s backend: listing interfaces: %w", q.Backend, err)
	}
	set := map[string]bool{}
	for _, n := range have {
		set[n] = true
	}
	var errs config.Errors
	for _, f := range q.Ifaces {
		if !set[f.Name] {
			errs = append(errs, &config.Error{File: file, Line: f.Line,
				Msg: fmt.Sprintf("qos interface %s: no such interface on this node (%s backend)", f.Name, q.Backend)})
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errs
}

// probe opens a backend only to check the section against the node, and
// closes it (New and Check must hold nothing).
func probe(q *qosconfig.Config, file string) error {
	if q.Backend == "sim" {
		// Checking the scenario and node is cheap; the simulation is
		// not started until Run.
		path := q.Sim.Scenario
		if !filepath.IsAbs(path) && file != "" {
			path = filepath.Join(filepath.Dir(file), path)
		}
		s, err := scenario.Load(path)
		if err != nil {
			return &config.Error{File: file, Line: q.Sim.Line, Msg: fmt.Sprintf("qos sim scenario: %v", err)}
		}
		found := false
		for _, sw := range s.Switches {
			found = found || sw.Name == q.Sim.Node
		}
		if !found {
			return &config.Error{File: file, Line: q.Sim.Line, Msg: fmt.Sprintf("qos sim: scenario %s has no switch %q", s.Name, q.Sim.Node)}
		}
		names := s.Ports(q.Sim.Node)
		return checkInterfaces(context.Background(), staticLister(names), q, file)
	}
	be, err := open(q, file)
	if err != nil {
		return fmt.Errorf("qos: %s backend: %w", q.Backend, err)
	}
	defer be.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return checkInterfaces(ctx, be, q, file)
}

type staticLister []string

func (s staticLister) Interfaces(context.Context) ([]string, error) { return s, nil }

func newModule(core *daemon.Core, c *config.Config) (daemon.Module, error) {
	q := qosconfig.From(c)
	if err := probe(q, c.File); err != nil {
		return nil, err
	}
	m := &Module{log: core.Log.With("module", "qos"), guard: core.Guard("qos"), cfg: q, file: c.File, loop: loop.New(64)}
	m.loop.Guard(m.guard)
	return m, nil
}

// Module is the running qos module. Everything below the loop line is
// owned by the loop's goroutine.
type Module struct {
	log   *slog.Logger
	guard *guard.Guard // the qos module's panic guard (its loop, IPCC's readers and loop)
	file  string
	loop  *loop.Loop

	mu      sync.Mutex // guards cfg and summary (read by API and Status)
	cfg     *qosconfig.Config
	summary Summary

	// loop-owned
	be      backend
	ctl     *policy.Controller
	lastErr error
	retick  chan time.Duration
	said    map[string]bool // unsupported features already logged
	runCtx  context.Context
	ipcc    ipccRun
	overlay overlayRun
}

// ipccRun is IPCC as it runs on the node's backend (at most one of rt,
// sim), or why it does not.
type ipccRun struct {
	cfg    *qosconfig.IPCC
	rt     *ipcc.Runtime
	sim    *scenario.IPCCRun
	cancel context.CancelFunc
	done   chan struct{}
	note   string
}

// Summary is the module's part of GET /v1/status.
type Summary struct {
	Backend    string `json:"backend"`
	Interfaces int    `json:"interfaces"`
	Detections int    `json:"detections"`
	Limited    int    `json:"limited_interfaces"`
	LastError  string `json:"last_error,omitempty"`
}

// Status implements daemon.StatusReporter.
func (m *Module) Status() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.summary
}

func (m *Module) config() *qosconfig.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// Run opens the backend, applies the configuration and polls every
// poll-interval until ctx ends. A backend that fails is retried at each
// poll; the error shows in status.
func (m *Module) Run(ctx context.Context) error {
	q := m.config()
	be, err := open(q, m.file)
	if err != nil {
		return fmt.Errorf("qos: %s backend: %w", q.Backend, err)
	}
	defer be.Close()
	m.be = be
	m.ctl = policy.NewController(be, q.Desired(), q.WatchdogConfig())
	m.retick = make(chan time.Duration, 1)
	m.runCtx = ctx
	m.setTuner(nil, q)
	m.startIPCC(q)
	defer m.stopIPCC()
	m.note(m.ctl.Start(ctx))
	m.logReport()
	m.applyOverlay(q)
	poll := q.Poll
	for {
		inner, cancel := context.WithCancel(ctx)
		stop := make(chan struct{})
		var next time.Duration
		go func() {
			select {
			case next = <-m.retick:
				cancel()
			case <-stop:
			}
		}()
		m.loop.Run(inner, poll, time.Now, m)
		close(stop)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if next > 0 {
			poll = next
		}
	}
}

func (m *Module) note(err error) {
	if err != nil && (m.lastErr == nil || err.Error() != m.lastErr.Error()) {
		m.log.Warn("qos backend", "err", err)
	}
	m.lastErr = err
	m.refreshSummary()
}

func (m *Module) refreshSummary() {
	s := Summary{Backend: m.be.Name(), Interfaces: len(m.ctl.Configured().Ifaces)}
	for _, v := range m.ctl.Watchdog().Ifaces() {
		s.Detections += v.Detections
		if v.Mode == policy.Limited {
			s.Limited++
		}
	}
	if m.lastErr != nil {
		s.LastError = m.lastErr.Error()
	}
	m.mu.Lock()
	m.summary = s
	m.mu.Unlock()
}

// logReport says once what the backend cannot do on each interface (a
// veth has no DCB: fared says so and carries on).
func (m *Module) logReport() {
	rep := m.ctl.Report()
	for _, i := range m.ctl.Configured().Ifaces {
		for _, s := range rep[i.Name] {
			key := i.Name + "/" + string(s.Feature) + "/" + s.Reason
			if s.OK || m.said[key] {
				continue
			}
			if m.said == nil {
				m.said = map[string]bool{}
			}
			m.said[key] = true
			m.log.Info("qos feature unsupported on this interface", "backend", m.be.Name(), "interface", i.Name, "feature", s.Feature, "reason", s.Reason)
		}
	}
}

// Events of the module's loop.
type (
	restoreReq struct {
		iface string
		reply chan<- restoreRes
	}
	restoreRes struct {
		ok   bool
		mode string
		err  error
	}
	reconfReq struct {
		q     *qosconfig.Config
		reply chan<- error
	}
	reapply struct{}
)

// Handle runs one event in the loop.
func (m *Module) Handle(ev any) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch e := ev.(type) {
	case restoreReq:
		ok, err := m.ctl.Restore(ctx, time.Now(), e.iface)
		var mode string
		for _, v := range m.ctl.Watchdog().Ifaces() {
			if v.Iface == e.iface {
				mode = string(v.Mode)
			}
		}
		if ok {
			m.log.Info("pfc restored by operator", "interface", e.iface)
		}
		m.refreshSummary()
		e.reply <- restoreRes{ok, mode, err}
	case reconfReq:
		old := m.config()
		m.setTuner(old, e.q)
		if !reflect.DeepEqual(old.IPCC, e.q.IPCC) || !reflect.DeepEqual(old.DSCP, e.q.DSCP) {
			m.stopIPCC()
			m.startIPCC(e.q)
		}
		err := m.ctl.Reconfigure(ctx, e.q.Desired(), e.q.WatchdogConfig())
		m.note(err)
		m.logReport()
		m.applyOverlay(e.q)
		e.reply <- err
	case reapply:
		m.note(m.ctl.Reapply(ctx))
	case overlayCheck:
		m.applyOverlay(m.config())
	}
}

// Tick polls the backend and steps the policies.
func (m *Module) Tick(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := m.ctl.Poll(ctx, now)
	for _, e := range ev {
		args := []any{"interface", e.Iface}
		if e.Prio >= 0 {
			args = append(args, "priority", e.Prio)
		}
		switch e.Kind {
		case policy.EvDetected:
			m.log.Warn("pfc deadlock detected: pfc off during recovery", append(args, "xoff_for", now.Sub(e.Since).String())...)
		case policy.EvLimit:
			m.log.Error("pfc deadlock limit reached: pfc stays off until `farectl qos pfc restore`", args...)
		default:
			m.log.Info("pfc watchdog "+string(e.Kind), args...)
		}
	}
	m.note(err)
	m.retryOverlay(now)
}

// Settle does nothing: every event applies what it changed.
func (m *Module) Settle(time.Time) {}

// Check validates a new section against the node; backend changes need
// a restart.
func (m *Module) Check(c *config.Config) error {
	q := qosconfig.From(c)
	old := m.config()
	if q.Backend != old.Backend {
		return &config.Error{File: c.File, Line: q.Line, Msg: fmt.Sprintf("qos backend %s -> %s cannot change live (restart fared)", old.Backend, q.Backend)}
	}
	if q.Backend == "sim" && q.Sim != old.Sim {
		return &config.Error{File: c.File, Line: q.Sim.Line, Msg: "qos sim scenario and node cannot change live (restart fared)"}
	}
	if q.Sonic != old.Sonic {
		return &config.Error{File: c.File, Line: q.Line, Msg: "qos sonic connection cannot change live (restart fared)"}
	}
	var err error
	qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer qcancel()
	qerr := m.loop.Query(qctx, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = checkInterfaces(ctx, m.be, q, c.File)
	})
	if qerr != nil {
		return qerr
	}
	return err
}

// Reconfigure applies a checked section.
func (m *Module) Reconfigure(ctx context.Context, c *config.Config) (daemon.Change, error) {
	q := qosconfig.From(c)
	old := m.config()
	ch := daemon.Change{Changed: config.Diff(old, q)}
	err, aerr := loop.Ask(ctx, m.loop, func(r chan<- error) any { return reconfReq{q, r} })
	if aerr != nil {
		return ch, aerr
	}
	if err != nil {
		ch.Warnings = append(ch.Warnings, "backend: "+err.Error()+" (retried every poll)")
	}
	m.mu.Lock()
	m.cfg = q
	m.mu.Unlock()
	if q.Poll != old.Poll {
		select {
		case m.retick <- q.Poll:
		default:
		}
	}
	return ch, nil
}

// LinkEvent re-applies when a configured interface comes (back) up: a
// recreated device has lost its qdiscs and DCB settings.
func (m *Module) LinkEvent(ev netif.Event) {
	if ev.Kind != netif.LinkUp {
		return
	}
	if m.config().Iface(ev.Name) != nil {
		m.loop.TryPost(reapply{})
	}
	if overlayTunnel(m.config(), ev.Name) {
		m.loop.TryPost(overlayCheck{})
	}
}

// Routes registers /v1/qos/.
func (m *Module) Routes(r *api.Router) { m.routes(r) }

// setTuner puts the configured ECN tuner on the controller; an unchanged
// ecn-tuning section keeps the running one (and what it learnt).
func (m *Module) setTuner(old, q *qosconfig.Config) {
	if old != nil && reflect.DeepEqual(old.Tuning, q.Tuning) {
		return
	}
	if q.Tuning == nil {
		m.ctl.SetTuner(nil)
		return
	}
	t, err := policy.NewECNTuner(q.Tuning.TunerConfig)
	if err != nil {
		m.log.Warn("ecn tuning", "err", err)
		m.ctl.SetTuner(nil)
		return
	}
	m.ctl.SetTuner(t)
	m.log.Info("ecn tuning on", "algorithm", q.Tuning.Algorithm, "priorities", q.Tuning.Prios.String(), "interval", q.Tuning.Interval)
}

// startIPCC runs IPCC on the node's backend: for real on linux, inside
// the simulation on sim; SONiC has no per-packet path to the CPU here.
func (m *Module) startIPCC(q *qosconfig.Config) {
	m.ipcc = ipccRun{cfg: q.IPCC}
	if q.IPCC == nil {
		return
	}
	c := q.IPCC.IPCCConfig
	switch be := m.be.(type) {
	case *scenario.LiveBackend:
		m.ipcc.sim = scenario.StartIPCC(be.Instance.Net, be.Node, c, be.Epoch, q.IPCC.LearnCM)
		m.ipcc.note = "sim: inside the data plane (observer, queue depths, switch CNPs)"
	default:
		if m.be.Name() != "linux" {
			m.ipcc.note = "not run: the " + m.be.Name() + " backend has no path for RoCEv2 copies and CNPs (linux and sim do)"
			m.log.Warn("ipcc " + m.ipcc.note)
			return
		}
		if q.IPCC.LearnCM {
			m.log.Warn("ipcc learn-cm is for qos-sim only: on linux sender QPs are learnt from ACKs and NAKs")
		}
		capture := q.IPCC.Capture
		if len(capture) == 0 {
			for _, i := range q.Ifaces {
				capture = append(capture, i.Name)
			}
		}
		rt := ipcc.New(ipcc.Config{Policy: c, Capture: capture, DSCP: q.Desired().DSCP, RouteCache: q.IPCC.RouteCache,
			RouteTTL: q.IPCC.RouteTTL, Log: m.log.With("feature", "ipcc"), Guard: m.guard})
		ctx, cancel := context.WithCancel(m.runCtx)
		done := make(chan struct{})
		m.ipcc.rt, m.ipcc.cancel, m.ipcc.done = rt, cancel, done
		m.ipcc.note = "linux: AF_PACKET copies, HTB class backlog over netlink, raw-socket CNPs"
		go func() {
			defer close(done)
			if err := rt.Run(ctx); err != nil {
				m.log.Error("ipcc stopped", "err", err)
			}
		}()
	}
}

func (m *Module) stopIPCC() {
	if m.ipcc.cancel != nil {
		m.ipcc.cancel()
		<-m.ipcc.done
	}
	if m.ipcc.sim != nil {
		m.ipcc.sim.Stop()
	}
	m.ipcc = ipccRun{}
}
