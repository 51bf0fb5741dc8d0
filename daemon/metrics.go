package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vishvananda/netns"

	"github.com/fared/fared/config"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/promx"
	"github.com/fared/fared/rib"
)

// Prometheus metrics (docs/metrics.md has the table). The core counts what
// passes through it (computations, kernel writes, reloads) as it happens,
// reads the gauges from the rib's snapshot at scrape time, and registers
// the collectors of every running module (the Collector capability),
// unregistering them when a reload stops the module.

// spfBuckets span a computation of a few nodes (tens of µs) to a very
// large fabric (seconds): ×4 from 50 µs.
var spfBuckets = prometheus.ExponentialBuckets(50e-6, 4, 10)

type metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	spfRuns     *prometheus.CounterVec
	spfSeconds  *prometheus.HistogramVec
	fibSyncs    prometheus.Counter
	fibMessages prometheus.Counter
	fibErrors   prometheus.Counter
	fibChanges  *prometheus.CounterVec
	reweighted  prometheus.Counter
	reloads     *prometheus.CounterVec
	reloadOK    prometheus.Gauge
	reloadAt    prometheus.Gauge

	mu   sync.Mutex
	mods map[string][]prometheus.Collector // registered, by module
	srv  *http.Server
	ln   net.Listener
	cur  config.Metrics // what srv serves
	path atomic.Value   // string: cur.Path, read by the handler
}

func newMetrics(d *Daemon) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), log: d.log, mods: map[string][]prometheus.Collector{}}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.spfRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fared_spf_runs_total",
		Help: "Route computations, by kind: full (Dijkstra, then FARE) or route-only (FARE on the previous shortest-path DAG)."}, []string{"kind"})
	m.spfSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fared_spf_duration_seconds",
		Help: "Duration of route computations (SPF, FARE, merge, and the kernel write), by kind.", Buckets: spfBuckets}, []string{"kind"})
	m.fibSyncs = prometheus.NewCounter(prometheus.CounterOpts{Name: "fared_fib_syncs_total",
		Help: "Writes of the routing table to the kernel."})
	m.fibMessages = prometheus.NewCounter(prometheus.CounterOpts{Name: "fared_fib_messages_total",
		Help: "Netlink requests sent to the kernel by FIB writes."})
	m.fibErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "fared_fib_errors_total",
		Help: "Kernel refusals in FIB writes: one per failed object, or one for a failed write."})
	m.fibChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fared_fib_object_changes_total",
		Help: "Kernel objects changed by FIB writes, by object (route, group, nexthop) and operation (add, replace, delete)."}, []string{"object", "op"})
	m.reweighted = prometheus.NewCounter(prometheus.CounterOpts{Name: "fared_fare_weight_changes_total",
		Help: "Routes whose FARE kernel weights changed while their next hops stayed the same."})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fared_config_reloads_total",
		Help: "Configuration reloads, by result: applied or rejected (the old configuration kept)."}, []string{"result"})
	m.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{Name: "fared_config_last_reload_successful",
		Help: "1 if the last reload was applied (or none was tried), 0 if it was rejected."})
	m.reloadAt = prometheus.NewGauge(prometheus.GaugeOpts{Name: "fared_config_last_reload_success_timestamp_seconds",
		Help: "When the configuration in force was loaded (start or last applied reload), Unix time."})
	for _, c := range []prometheus.Collector{m.spfRuns, m.spfSeconds, m.fibSyncs, m.fibMessages, m.fibErrors, m.fibChanges,
		m.reweighted, m.reloads, m.reloadOK, m.reloadAt} {
		f(c)
	}
	// Every label value a dashboard sums over exists from the start, so
	// rate() sees the first increment.
	for _, k := range []string{"full", "route-only"} {
		m.spfRuns.WithLabelValues(k)
		m.spfSeconds.WithLabelValues(k)
	}
	for _, o := range []string{"route", "group", "nexthop"} {
		for _, op := range []string{"add", "replace", "delete"} {
			if o != "nexthop" || op != "replace" {
				m.fibChanges.WithLabelValues(o, op)
			}
		}
	}
	for _, r := range []string{"applied", "rejected"} {
		m.reloads.WithLabelValues(r)
	}
	m.reloadOK.Set(1)
	m.reloadAt.Set(float64(time.Now().UnixNano()) / 1e9)
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fared_build_info", Help: "Always 1; the labels name the build.",
		ConstLabels: prometheus.Labels{"version": d.opt.Version, "goversion": runtime.Version()}}, func() float64 { return 1 }))
	f(&coreCollector{d: d})
	f(guard.Collector())
	return m
}

// observe is the rib's Observe hook (the rib's goroutine).
func (m *metrics) observe(o rib.Observation) {
	m.spfRuns.WithLabelValues(o.SPF.Kind()).Inc()
	m.spfSeconds.WithLabelValues(o.SPF.Kind()).Observe(o.SPF.Duration().Seconds())
	m.reweighted.Add(float64(o.Reweighted))
	if !o.Synced {
		return
	}
	st := o.FIB
	m.fibSyncs.Inc()
	m.fibMessages.Add(float64(st.Messages))
	m.fibErrors.Add(float64(o.FIBErrors))
	for _, c := range []struct {
		obj, op string
		n       int
	}{{"route", "add", st.RoutesAdded}, {"route", "replace", st.RoutesReplaced}, {"route", "delete", st.RoutesDeleted},
		{"group", "add", st.GroupsAdded}, {"group", "replace", st.GroupsReplaced}, {"group", "delete", st.GroupsDeleted},
		{"nexthop", "add", st.NexthopsAdded}, {"nexthop", "delete", st.NexthopsDeleted}} {
		if c.n > 0 {
			m.fibChanges.WithLabelValues(c.obj, c.op).Add(float64(c.n))
		}
	}
}

// reloaded counts a reload's outcome.
func (m *metrics) reloaded(ok bool) {
	if ok {
		m.reloads.WithLabelValues("applied").Inc()
		m.reloadOK.Set(1)
		m.reloadAt.Set(float64(time.Now().UnixNano()) / 1e9)
		return
	}
	m.reloads.WithLabelValues("rejected").Inc()
	m.reloadOK.Set(0)
}

// addModule registers a module's collectors. A collector the registry
// refuses (a name another one took) is logged and left out: metrics never
// stop a module.
func (m *metrics) addModule(name string, mod Module) {
	c, ok := mod.(Collector)
	if !ok {
		return
	}
	var done []prometheus.Collector
	for _, col := range c.Collectors() {
		if err := m.reg.Register(col); err != nil {
			m.log.Error("module metrics not registered", "module", name, "err", err)
			continue
		}
		done = append(done, col)
	}
	m.mu.Lock()
	m.mods[name] = done
	m.mu.Unlock()
}

// removeModule unregisters what addModule registered for a stopped module.
func (m *metrics) removeModule(name string) {
	m.mu.Lock()
	cols := m.mods[name]
	delete(m.mods, name)
	m.mu.Unlock()
	for _, c := range cols {
		m.reg.Unregister(c)
	}
}

// handler serves the exposition. A collector that fails (a module that
// did not answer in time) costs its own metrics, not the scrape.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		ErrorLog: slogPrinter{m.log}, Timeout: 10 * time.Second})
}

type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.l.Warn("metrics: " + fmt.Sprint(v...)) }

// serve starts, moves or stops the listener so that it serves c (nil:
// none). A new address is bound before the old listener closes; if it
// cannot be bound, the old one keeps serving and the error says why.
func (m *metrics) serve(c *config.Metrics, ns netns.NsHandle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c == nil {
		m.closeLocked()
		return nil
	}
	if m.srv != nil && c.Listen == m.cur.Listen {
		m.cur = *c
		m.path.Store(c.Path)
		return nil
	}
	ln, err := listenIn(ns, c.Listen)
	if err != nil && m.srv != nil && errors.Is(err, syscall.EADDRINUSE) {
		// The new address overlaps the old one (":9342" to
		// "127.0.0.1:9342"): free it, and put the old one back on failure.
		old := m.cur
		m.closeLocked()
		if ln, err = listenIn(ns, c.Listen); err != nil {
			if ln2, err2 := listenIn(ns, old.Listen); err2 == nil {
				m.startLocked(ln2, old)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("metrics: cannot listen on %s: %w", c.Listen, err)
	}
	m.closeLocked()
	m.startLocked(ln, *c)
	return nil
}

func (m *metrics) startLocked(ln net.Listener, c config.Metrics) {
	h := m.handler()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The path may change on reload without a new socket.
			if p, _ := m.path.Load().(string); r.URL.Path != p {
				http.NotFound(w, r)
				return
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			h.ServeHTTP(w, r)
		})}
	m.srv, m.ln, m.cur = srv, ln, c
	m.path.Store(c.Path)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("metrics listener stopped", "listen", c.Listen, "err", err)
		}
	}()
	m.log.Info("metrics listener", "listen", ln.Addr().String(), "path", c.Path)
}

// Addr is the listener's address (nil: none).
func (m *metrics) addr() net.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

func (m *metrics) closeLocked() {
	if m.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = m.srv.Shutdown(ctx)
	cancel()
	_ = m.srv.Close()
	m.srv, m.ln, m.cur = nil, nil, config.Metrics{}
}

func (m *metrics) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
}

// listenIn binds a TCP listener in namespace ns (0: the current one);
// a socket keeps the namespace it was created in.
func listenIn(ns netns.NsHandle, addr string) (net.Listener, error) {
	var ln net.Listener
	err := nsenter.Do(ns, func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil && ln != nil {
		ln.Close() // made, but the thread could not come back
		ln = nil
	}
	return ln, err
}

// coreCollector reads the gauges of the core at scrape time: the rib's
// snapshot (routes, topologies, FARE anomalies, the last kernel write's
// leftovers) and which modules run.
type coreCollector struct{ d *Daemon }

var (
	descModuleUp = prometheus.NewDesc("fared_module_up",
		"1 for each module running, 0 for a module of the table that is not configured.", []string{"module"}, nil)
	descRoutes = prometheus.NewDesc("fared_rib_routes",
		"Routes in the routing table, by protocol.", []string{"protocol"}, nil)
	descTopoNodes = prometheus.NewDesc("fared_topology_nodes",
		"Nodes (routers and pseudonodes) in the topology SPF last ran on, by protocol and topology (a level or an area).", []string{"protocol", "topology"}, nil)
	descTopoLinks = prometheus.NewDesc("fared_topology_links",
		"Directed links in the topology SPF last ran on.", []string{"protocol", "topology"}, nil)
	descTopoPrefixes = prometheus.NewDesc("fared_topology_prefixes",
		"Prefix advertisements in the topology SPF last ran on.", []string{"protocol", "topology"}, nil)
	descAnomalies = prometheus.NewDesc("fared_fare_anomalies",
		"Bad bandwidth values and ECMP fallbacks in the last computation, by kind (docs/fare.md).", []string{"kind"}, nil)
	descUnresolved = prometheus.NewDesc("fared_fib_routes_unresolved",
		"Prefixes left out of the kernel by the last write: no usable next hop.", nil, nil)
	descConflicting = prometheus.NewDesc("fared_fib_routes_conflicting",
		"Prefixes left out of the kernel by the last write: another protocol's route holds them.", nil, nil)
	descComputed = prometheus.NewDesc("fared_rib_last_computation_timestamp_seconds",
		"When the routing table was last computed, Unix time (0: not yet).", nil, nil)
)

func (c *coreCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descModuleUp, descRoutes, descTopoNodes, descTopoLinks, descTopoPrefixes,
		descAnomalies, descUnresolved, descConflicting, descComputed} {
		ch <- d
	}
}

func (c *coreCollector) Collect(ch chan<- prometheus.Metric) {
	running := map[string]bool{}
	for _, n := range c.d.Modules() {
		running[n] = true
	}
	for _, s := range c.d.specs {
		ch <- prometheus.MustNewConstMetric(descModuleUp, prometheus.GaugeValue, promx.Flag(running[s.Name]), s.Name)
	}
	r := c.d.RIB()
	if r == nil {
		return
	}
	snap := r.Snapshot()
	byProto := map[string]int{}
	for _, g := range snap.Graphs {
		byProto[g.Protocol] += 0 // a protocol with a topology and no route shows 0
	}
	for _, rt := range snap.Routes {
		byProto[rt.Protocol]++
	}
	promx.ByKey(ch, descRoutes, prometheus.GaugeValue, byProto)
	for _, g := range snap.Graphs {
		topo := g.Area
		if topo == "" {
			topo = fmt.Sprintf("L%d", g.Level)
		}
		ch <- prometheus.MustNewConstMetric(descTopoNodes, prometheus.GaugeValue, float64(len(g.Nodes)), g.Protocol, topo)
		ch <- prometheus.MustNewConstMetric(descTopoLinks, prometheus.GaugeValue, float64(len(g.Links)), g.Protocol, topo)
		ch <- prometheus.MustNewConstMetric(descTopoPrefixes, prometheus.GaugeValue, float64(len(g.Prefixes)), g.Protocol, topo)
	}
	for k, n := range snap.Anomalies {
		ch <- prometheus.MustNewConstMetric(descAnomalies, prometheus.GaugeValue, float64(n), fare.Anomaly(k).String())
	}
	ch <- prometheus.MustNewConstMetric(descUnresolved, prometheus.GaugeValue, float64(snap.FIB.RoutesUnresolved))
	ch <- prometheus.MustNewConstMetric(descConflicting, prometheus.GaugeValue, float64(snap.FIB.RoutesConflicting()))
	at := 0.0
	if !snap.Computed.IsZero() {
		at = float64(snap.Computed.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(descComputed, prometheus.GaugeValue, at)
}

// applyMetrics moves the listener as a reload's metrics section says
// (applyCore). A failure to bind keeps the old listener: a warning.
func (d *Daemon) applyMetrics(old, nc *config.Config, c *Change) {
	diff := config.Diff(old.Metrics, nc.Metrics)
	if len(diff) == 0 {
		return
	}
	if err := d.metrics.serve(nc.Metrics, d.opt.NetNS); err != nil {
		keep := "no listener"
		if old.Metrics != nil {
			keep = "still serving on " + old.Metrics.Listen
		}
		c.Warnings = append(c.Warnings, err.Error()+"; "+keep)
		return
	}
	for _, s := range diff {
		c.Changed = append(c.Changed, "metrics: "+s)
	}
}
