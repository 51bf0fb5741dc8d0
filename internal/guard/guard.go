// Package guard is the one panic guard of every network-facing path: a
// module's event loop (internal/loop), its socket readers, its API and
// gRPC handlers. A bug that one received packet or request triggers then
// costs that input, not the routing process and every adjacency with it.
//
// A recovered panic is counted per module (Counts, the metric
// fared_panics_total{module}), logged once per (module, site) with the
// stack and the first bytes of the input, and the input is dropped; the
// module keeps running. State the input half-changed stays as it was left:
// the protocols' timers (hold times, refresh, CSNPs, retransmission)
// repair what matters, as they repair a lost packet.
//
// Recover must be deferred directly (recover only works in the deferred
// call itself):
//
//	g := guard.New("bfd", log)
//	defer g.Recover("rx", b, nil)
package guard

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// headBytes is how much of the offending input the log line shows.
const headBytes = 64

// Guard recovers panics for one module. The zero value is not usable: New.
type Guard struct {
	module string
	log    *slog.Logger
	c      *counter
}

// counter is shared by every Guard of one module name, so counts survive
// a module being rebuilt by a reload.
type counter struct {
	n      atomic.Uint64
	mu     sync.Mutex
	logged map[string]bool // sites already logged
}

var registry sync.Map // module name -> *counter

// New returns the guard of module (its config key, e.g. "inof"). log may
// be nil (slog.Default).
func New(module string, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.Default()
	}
	c, _ := registry.LoadOrStore(module, &counter{logged: map[string]bool{}})
	return &Guard{module: module, log: log, c: c.(*counter)}
}

// Recover recovers a panic of the goroutine that deferred it. site names
// the path ("rx", "grpc /fared.inc.v1.Manager/Join", "loop event"),
// input is what was being handled (its head is logged; may be nil), and
// then, if not nil, runs after a panic was recovered (a caller's own
// counter, a reply to a waiting caller). Without a panic it does nothing.
func (g *Guard) Recover(site string, input []byte, then func(r any)) {
	r := recover()
	if r == nil {
		return
	}
	g.note(site, input, r)
	if then != nil {
		then(r)
	}
}

// Do runs f and recovers a panic in it; it reports whether f returned
// normally.
func (g *Guard) Do(site string, input []byte, f func()) (ok bool) {
	defer g.Recover(site, input, func(any) { ok = false })
	f()
	return true
}

// Report counts and logs a panic value r that the caller recovered
// itself (when the site's name or the input is only worth building after
// a panic).
func (g *Guard) Report(site string, input []byte, r any) { g.note(site, input, r) }

func (g *Guard) note(site string, input []byte, r any) {
	g.c.n.Add(1)
	g.c.mu.Lock()
	first := !g.c.logged[site]
	g.c.logged[site] = true
	g.c.mu.Unlock()
	if !first {
		return
	}
	g.log.Error("BUG: panic while handling input; input dropped, module kept running",
		"module", g.module, "site", site, "panic", fmt.Sprint(r), "len", len(input),
		"head", hex.EncodeToString(input[:min(len(input), headBytes)]), "stack", string(debug.Stack()),
		"note", "logged once per site; further panics are only counted (fared_panics_total)")
}

// Count is the number of panics recovered for module so far.
func Count(module string) uint64 {
	if c, ok := registry.Load(module); ok {
		return c.(*counter).n.Load()
	}
	return 0
}

// Counts is every module's count of recovered panics (modules that have
// a guard, including those at zero).
func Counts() map[string]uint64 {
	out := map[string]uint64{}
	registry.Range(func(k, v any) bool {
		out[k.(string)] = v.(*counter).n.Load()
		return true
	})
	return out
}

// Collector exports fared_panics_total{module}.
func Collector() prometheus.Collector { return collector{} }

var panicsDesc = prometheus.NewDesc("fared_panics_total",
	"Panics recovered on a network-facing path (the input was dropped, the module kept running).", []string{"module"}, nil)

type collector struct{}

func (collector) Describe(ch chan<- *prometheus.Desc) { ch <- panicsDesc }

func (collector) Collect(ch chan<- prometheus.Metric) {
	cs := Counts()
	for _, k := range slices.Sorted(maps.Keys(cs)) {
		ch <- prometheus.MustNewConstMetric(panicsDesc, prometheus.CounterValue, float64(cs[k]), k)
	}
}
