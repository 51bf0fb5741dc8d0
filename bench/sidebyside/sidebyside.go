// Package sidebyside runs FRR (isisd + zebra) and fared on the same
// synthetic fabric in one run and reports their figures side by side: the
// injector (bench/inject) floods the same LSPs to each router under test
// over veths, and the routers write real kernels in their namespaces.
//
// A run has one phase per router, one after the other (the machine's cores
// are not split between two routers syncing at once): start the kernel
// watcher and the injector, wait until the RUT holds every LSP and its
// kernel every route, wait until SPF is quiet, read the figures, change one
// cable's bandwidth deep in the fabric, read the incremental figures, stop
// the router. Then the two kernels and databases are compared with each
// other and with an independent oracle (Expected).
package sidebyside

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/netip"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/bench/inject"
	"github.com/fared/fared/bench/undertest"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/internal/kernwatch"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/spf"
)

// Spec names a fabric to run.
type Spec struct {
	Name   string // "3-stage 64x512"
	Fabric *closgen.Fabric
	// Change is the cable whose bandwidth changes for the incremental
	// figures (-1: the last cable whose change moves a FARE weight at
	// Self, so that fared has kernel work to do), ChangeBW its new
	// bandwidth (0: 10 Gb/s, below every generated speed).
	Change   int
	ChangeBW float32
}

// Options of a run.
type Options struct {
	Routers  []string // phases in order; default frr, fared
	FaredBin string
	RunDir   string
	Name     string    // run name; default a unique "sbs…"
	Log      io.Writer // progress lines; nil: none
	Cmds     io.Writer // commands the lab runs; nil: none
	Flood    inject.FloodMode
	Rate     int           // injector LSPs/s per circuit; 0 = unpaced
	Timeout  time.Duration // per wait; default 5 min
	Defaults interop.Defaults
	// FaredExtra and FRRExtra go into the routers' configs (undertest.Options).
	FaredExtra string
	FRRExtra   []string
	// Changes is how many bandwidth changes (back and forth on one cable)
	// give the incremental figures; default 5, -1 none.
	Changes int
	// ComputeRuns is how many in-process spf+fare runs give the library
	// reference figure (median); 0 = 5, -1 = none.
	ComputeRuns int
}

// Figures are one router's results. Durations are JSON nanoseconds.
type Figures struct {
	Router string `json:"router"`
	// LSDBSync: first adjacency Up → the RUT confirmed (acknowledged,
	// listed in a CSNP or flooded back) every injected LSP.
	LSDBSync time.Duration `json:"lsdb_sync_ns"`
	// KernelFull: first adjacency Up → the kernel first held every route
	// with its final next-hop set (and kept it).
	KernelFull time.Duration `json:"kernel_full_ns"`
	// KernelWrite: the first IS-IS kernel change → KernelFull.
	KernelWrite time.Duration `json:"kernel_write_ns"`
	// SPFFull: the last SPF over the complete database. FRR: `show isis
	// summary` last run duration (Dijkstra + route table, no zebra);
	// fared: its SPF log entry (SPF + FARE + next-hop resolution +
	// kernel write).
	SPFFull     time.Duration `json:"spf_full_ns"`
	SPFFullKind string        `json:"spf_full_kind,omitempty"`
	// SPFFullCompute: the same run without the kernel write. FRR: as
	// SPFFull (it has none); fared: the entry's compute_ns.
	SPFFullCompute time.Duration `json:"spf_full_compute_ns"`
	SPFRuns        int           `json:"spf_runs"` // runs during the initial sync
	// SPFIncr: the median duration of the SPF runs the bandwidth changes
	// caused (FRR always runs a full SPF; fared a route-only FARE update
	// when the topology holds), with every sample and the kinds of run.
	SPFIncr        time.Duration   `json:"spf_incr_ns"`
	SPFIncrSamples []time.Duration `json:"spf_incr_samples_ns"`
	SPFIncrKind    string          `json:"spf_incr_kind,omitempty"`
	SPFIncrTrigger string          `json:"spf_incr_trigger,omitempty"` // fared's log, first change
	// KernelIncr: the first change's LSPs handed to the injector → the last
	// kernel write they caused (0 with KernelIncrChanges 0: none). The
	// first change meets both routers with their SPF back-off quiet.
	// SyncToKernel: every LSP held → every route in the kernel (SPF
	// delays, computation, the kernel write; for fared also its start-up
	// hold, which keeps the kernel untouched until the database has been
	// stable for a second).
	SyncToKernel      time.Duration `json:"sync_to_kernel_ns"`
	KernelIncr        time.Duration `json:"kernel_incr_ns"`
	KernelIncrChanges int           `json:"kernel_incr_changes"`
	// RSS after the sync, summed over the router's daemons, and per daemon.
	RSSKB     int64            `json:"rss_kb"`
	RSS       map[string]int64 `json:"rss_kb_by_daemon"`
	PeakRSSKB int64            `json:"peak_rss_kb"`
	// CPU the daemons used during the phase (user + system).
	CPU time.Duration `json:"cpu_ns"`
	// Kernel contents after the sync.
	Routes         int `json:"routes"`
	NexthopObjects int `json:"nexthop_objects"`
	Groups         int `json:"groups"`
	// Injector counters for the phase, and its loop's worst tick gap.
	Counters   inject.Counters `json:"injector"`
	MaxTickGap time.Duration   `json:"injector_max_tick_gap_ns"`
	// Checks that failed for this router (empty: all passed).
	Problems []string `json:"problems,omitempty"`
}

// Result is one run.
type Result struct {
	Spec      string    `json:"spec"`
	Date      time.Time `json:"date"`
	Nodes     int       `json:"nodes"`
	Cables    int       `json:"cables"`
	Prefixes  int       `json:"prefixes"`
	Circuits  int       `json:"circuits"`
	LSPs      int       `json:"lsps"`
	Flood     string    `json:"flood"`
	CPUs      int       `json:"cpus"`
	LoadStart string    `json:"load_start"`
	LoadEnd   string    `json:"load_end"`
	FRR       string    `json:"frr_version,omitempty"`
	// Compute is the in-process reference: spf.Run + fare.ComputeTable on
	// the generator's graph (median), and spf.Run alone.
	Compute    time.Duration `json:"lib_spf_fare_ns"`
	ComputeSPF time.Duration `json:"lib_spf_ns"`
	Routers    []Figures     `json:"routers"`
	// Agree: both kernels hold the oracle's routes and both databases
	// the injected LSPs (each router's own LSP aside).
	Agree    bool     `json:"agree"`
	Problems []string `json:"problems,omitempty"`
}

// Router returns the figures of one router, or nil.
func (r *Result) Router(kind string) *Figures {
	for i := range r.Routers {
		if r.Routers[i].Router == kind {
			return &r.Routers[i]
		}
	}
	return nil
}

type runner struct {
	spec     Spec
	o        Options
	f        *closgen.Fabric
	circuits []inject.Circuit
	want     map[netip.Prefix]kernwatch.Hops
	lab      *undertest.Lab
	res      *Result
	tables   map[string]*kernwatch.Table
	dbs      map[string]map[string]LSPRow
	injected []packet.LSPEntry
}

func (r *runner) logf(format string, args ...any) {
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
}

// Run runs the spec. The lab is removed before Run returns, also on error.
// An error means the run could not be carried out; disagreements between
// the routers are in Result.Problems (and Agree false).
func Run(ctx context.Context, spec Spec, o Options) (res *Result, err error) {
	if len(o.Routers) == 0 {
		o.Routers = []string{undertest.FRR, undertest.Fared}
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Name == "" {
		o.Name = interop.UniqueName("sbs")
	}
	if o.ComputeRuns == 0 {
		o.ComputeRuns = 5
	}
	if o.Changes == 0 {
		o.Changes = 5
	}
	f := spec.Fabric
	if spec.ChangeBW == 0 {
		spec.ChangeBW = closgen.Gbps(10)
	}
	if spec.Change < 0 {
		if spec.Change, err = pickChange(f, spec.ChangeBW); err != nil {
			return nil, err
		}
	}
	r := &runner{spec: spec, o: o, f: f, tables: map[string]*kernwatch.Table{}, dbs: map[string]map[string]LSPRow{}}
	cb := f.Cables[spec.Change]
	r.logf("incremental change: cable %d %s–%s %v → %v Gb/s", spec.Change, f.Nodes[cb.A].Name, f.Nodes[cb.B].Name, cb.BW*8/1e9, spec.ChangeBW*8/1e9)
	if r.circuits, err = inject.Circuits(f); err != nil {
		return nil, err
	}
	if r.want, err = Expected(f, r.circuits); err != nil {
		return nil, err
	}
	r.res = &Result{Spec: spec.Name, Date: time.Now().UTC(), Nodes: len(f.Nodes), Cables: len(f.Cables),
		Prefixes: f.Prefixes(), Circuits: len(r.circuits), CPUs: runtime.NumCPU(), LoadStart: loadavg(),
		Flood: map[inject.FloodMode]string{inject.FloodAll: "all", inject.FloodOne: "one"}[o.Flood]}
	if o.ComputeRuns > 0 {
		r.res.Compute, r.res.ComputeSPF = compute(f, o.ComputeRuns)
		r.logf("library reference: spf+fare %v, spf %v (median of %d)", r.res.Compute, r.res.ComputeSPF, o.ComputeRuns)
	}
	r.logf("starting %s: %d nodes, %d cables, %d circuits, %s", spec.Name, len(f.Nodes), len(f.Cables), len(r.circuits), strings.Join(o.Routers, ", "))
	r.lab, err = undertest.Up(ctx, f, r.circuits, o.Routers, undertest.Options{Name: o.Name, RunDir: o.RunDir, FaredBin: o.FaredBin,
		Log: o.Cmds, Defaults: o.Defaults, FaredExtra: o.FaredExtra, FRRExtra: o.FRRExtra})
	if err != nil {
		return nil, err
	}
	if out, err := r.lab.Vtysh(ctx, "show version"); err == nil {
		r.res.FRR = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	}
	defer func() {
		if derr := r.lab.Down(); derr != nil && err == nil {
			err = fmt.Errorf("teardown: %w", derr)
		}
	}()
	for _, kind := range o.Routers {
		fig, perr := r.phase(ctx, r.lab.Router(kind))
		if perr != nil {
			return r.res, fmt.Errorf("%s: %w\n%s", kind, perr, r.lab.LogTail(r.lab.Router(kind), 3000))
		}
		r.res.Routers = append(r.res.Routers, *fig)
	}
	r.compare()
	r.res.LoadEnd = loadavg()
	return r.res, nil
}

// pickChange returns a cable, not at Self, whose new bandwidth bw changes
// a FARE weight at Self (found with the library: the same answer whatever
// the routers do). Candidates are the cables at Self's neighbours, those to
// a node with prefixes (a leaf) first, from the last: a change deeper in a
// large fabric is absorbed by the sum of parallel paths and moves nothing
// at Self.
func pickChange(f *closgen.Fabric, bw float32) (int, error) {
	weights := func(f *closgen.Fabric) map[netip.Prefix][]float64 {
		res := spf.Run(f.Graph())
		out := map[netip.Prefix][]float64{}
		for _, rt := range fare.ComputeTable(res, spf.Routes(res), fare.Options{}).Routes {
			out[rt.Prefix] = rt.Weights()
		}
		return out
	}
	nbr := map[int]bool{}
	for _, c := range f.CablesOf(f.Self) {
		nbr[f.Cables[c].A], nbr[f.Cables[c].B] = true, true
	}
	var leafward, other []int
	for c := len(f.Cables) - 1; c >= 0; c-- {
		cb := f.Cables[c]
		if cb.A == f.Self || cb.B == f.Self || cb.BW == bw || (!nbr[cb.A] && !nbr[cb.B]) {
			continue
		}
		if len(f.Nodes[cb.A].Prefixes) > 0 || len(f.Nodes[cb.B].Prefixes) > 0 {
			leafward = append(leafward, c)
		} else {
			other = append(other, c)
		}
	}
	base := weights(f)
	cands := append(leafward, other...)
	for _, c := range cands[:min(len(cands), 64)] {
		for p, w := range weights(f.WithCableBW(c, bw)) {
			if !slices.Equal(w, base[p]) {
				return c, nil
			}
		}
	}
	return 0, fmt.Errorf("no cable at %s's neighbours changes a FARE weight at it when set to %v B/s", f.Nodes[f.Self].Name, bw)
}

// compute is the library reference: the median of n runs of spf.Run +
// fare.ComputeTable (and of spf.Run alone) on the fabric's graph.
func compute(f *closgen.Fabric, n int) (full, spfOnly time.Duration) {
	g := f.Graph()
	var a, b []time.Duration
	for range n {
		t0 := time.Now()
		res := spf.Run(g)
		t1 := time.Now()
		fare.ComputeTable(res, spf.Routes(res), fare.Options{})
		t2 := time.Now()
		a = append(a, t2.Sub(t0))
		b = append(b, t1.Sub(t0))
	}
	return median(a), median(b)
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func (r *runner) phase(ctx context.Context, rt *undertest.Router) (*Figures, error) {
	fig := &Figures{Router: rt.Kind, RSS: map[string]int64{}}
	r.logf("%s: phase starts", rt.Kind)
	cpu0 := r.cpu(rt)
	w, err := kernwatch.Watch(undertest.NetnsPath(rt.Netns))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	inj, err := inject.New(inject.Config{Fabric: r.f, Flood: r.o.Flood, Rate: r.o.Rate,
		HelloInterval: r.hello(), Log: slog.New(slog.DiscardHandler)}, r.circuits)
	if err != nil {
		return nil, err
	}
	if r.injected == nil {
		r.injected, _ = inj.Entries(ctx)
		r.res.LSPs = len(r.injected)
	}
	ports, err := inject.OpenPorts(undertest.NetnsPath(rt.InjNetns), rt.Ifaces)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithCancel(ctx)
	injDone := make(chan error, 1)
	go func() { injDone <- inj.Run(ictx, ports) }()
	defer func() {
		cancel()
		<-injDone
	}()
	var fc *client.Client
	if rt.Kind == undertest.Fared {
		fc = client.New(rt.FaredSock)
	}

	// 1. The whole database.
	var st inject.Status
	if err := interop.Poll(ctx, r.o.Timeout, "every LSP held by "+rt.Kind, func() error {
		var err error
		if st, err = inj.Status(ctx); err != nil {
			return err
		}
		if !st.Full() {
			return fmt.Errorf("%d/%d circuits Up, %d/%d LSPs held", st.Up, st.Circuits, st.Held, st.LSPs)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	fig.LSDBSync = st.LastHeld.Sub(st.FirstUp)
	r.logf("%s: LSDB synchronised in %v", rt.Kind, fig.LSDBSync.Round(time.Millisecond))

	// 2. Every route in the kernel.
	var kernelAt time.Time
	if err := interop.Poll(ctx, r.o.Timeout, "every route in "+rt.Kind+"'s kernel", func() error {
		at, ok := w.Reached(r.want, st.FirstUp)
		if !ok {
			if s, err := inj.Status(ctx); err == nil && s.Counters.AdjDowns > 0 {
				return fmt.Errorf("%d adjacencies went down during the sync (%d/%d Up now)", s.Counters.AdjDowns, s.Up, s.Circuits)
			}
			t, err := kernwatch.Read(undertest.NetnsPath(rt.Netns))
			if err != nil {
				return err
			}
			d := kernwatch.Diff(r.want, t.Routes, 3)
			return fmt.Errorf("%d routes in the kernel, %d wanted; e.g. %s", len(t.Routes), len(r.want), strings.Join(d, "; "))
		}
		kernelAt = at
		return nil
	}); err != nil {
		return nil, err
	}
	fig.KernelFull = kernelAt.Sub(st.FirstUp)
	fig.SyncToKernel = kernelAt.Sub(st.LastHeld)
	if first := w.FirstChange(st.FirstUp); !first.IsZero() {
		fig.KernelWrite = kernelAt.Sub(first)
	}
	r.logf("%s: kernel holds every route %v after the first adjacency", rt.Kind, fig.KernelFull.Round(time.Millisecond))

	// 3. SPF quiet: the figures of the last full run can be read, and the
	// incremental change does not land in a back-off.
	if err := r.quiet(ctx, rt, fc); err != nil {
		return nil, err
	}
	if err := r.spfFull(ctx, rt, fc, fig, st.LastHeld); err != nil {
		return nil, err
	}
	r.logf("%s: last full SPF %v (%s), %d runs", rt.Kind, fig.SPFFull, fig.SPFFullKind, fig.SPFRuns)
	r.memory(rt, fig)
	t, err := kernwatch.Read(undertest.NetnsPath(rt.Netns))
	if err != nil {
		return nil, err
	}
	r.tables[rt.Kind] = t
	fig.Routes, fig.NexthopObjects, fig.Groups = len(t.Routes), t.NexthopObjects, t.Groups
	if d := kernwatch.Diff(r.want, t.Routes, 5); len(d) > 0 {
		fig.Problems = append(fig.Problems, "kernel differs from the oracle: "+strings.Join(d, "; "))
	}
	if db, err := r.readDB(ctx, rt, fc); err != nil {
		return nil, err
	} else {
		r.dbs[rt.Kind] = db
		fig.Problems = append(fig.Problems, r.checkDB(rt.Kind, db)...)
	}

	// 4. One bandwidth change, re-flooded.
	if r.o.Changes > 0 {
		if err := r.incremental(ctx, rt, fc, inj, w, fig); err != nil {
			return nil, err
		}
	}
	if s, err := inj.Status(ctx); err == nil {
		fig.Counters, fig.MaxTickGap = s.Counters, s.MaxTickGap
	}
	fig.CPU = r.cpu(rt) - cpu0
	stop(rt)
	r.logf("%s: phase done", rt.Kind)
	return fig, nil
}

// hello is the routers' hello interval, which the injector uses too.
func (r *runner) hello() time.Duration {
	if r.o.Defaults.HelloInterval != 0 {
		return r.o.Defaults.HelloInterval
	}
	return undertest.DefaultDefaults().HelloInterval
}

func (r *runner) cpu(rt *undertest.Router) time.Duration {
	var sum time.Duration
	for _, p := range daemons(rt) {
		if s, err := readProc(p); err == nil {
			sum += s.CPU
		}
	}
	return sum
}

func (r *runner) memory(rt *undertest.Router, fig *Figures) {
	for d, p := range daemons(rt) {
		s, err := readProc(p)
		if err != nil {
			fig.Problems = append(fig.Problems, fmt.Sprintf("%s: %v", d, err))
			continue
		}
		fig.RSS[d] = s.RSSKB
		fig.RSSKB += s.RSSKB
		fig.PeakRSSKB += s.HWMKB
	}
}

// quiet waits until the router's SPF back-off is idle: fared's RFC 8405
// machine back in QUIET (its holddown over), FRR's last run at least 2 s
// ago (its minimum interval is 1 s).
func (r *runner) quiet(ctx context.Context, rt *undertest.Router, fc *client.Client) error {
	return interop.Poll(ctx, r.o.Timeout, rt.Kind+" SPF quiet", func() error {
		if fc != nil {
			v, err := faredSPF(ctx, fc)
			if err != nil {
				return err
			}
			// The view is the state as of the last SPF (the snapshot's),
			// so its deadlines say when the machine returns to QUIET.
			d, ok := v.Delays["isis"]
			if !ok || d.State == "QUIET" {
				return nil
			}
			now := time.Now()
			if d.SPFAt.After(now) || d.HolddownAt.After(now) || d.LearnAt.After(now) {
				return fmt.Errorf("SPF back-off %s (holddown until %s)", d.State, d.HolddownAt.Format("15:04:05.000"))
			}
			return nil
		}
		s, err := frrSummary(ctx, r.lab)
		if err != nil {
			return err
		}
		if s.Elapsed < 2*time.Second {
			return fmt.Errorf("last SPF %v ago", s.Elapsed)
		}
		return nil
	})
}

func (r *runner) spfFull(ctx context.Context, rt *undertest.Router, fc *client.Client, fig *Figures, synced time.Time) error {
	if fc == nil {
		s, err := frrSummary(ctx, r.lab)
		if err != nil {
			return err
		}
		fig.SPFFull, fig.SPFFullKind, fig.SPFRuns = s.Duration, "full", s.Runs
		fig.SPFFullCompute = s.Duration
		return nil
	}
	v, err := faredSPF(ctx, fc)
	if err != nil {
		return err
	}
	fig.SPFRuns = len(v.Log)
	for i := len(v.Log) - 1; i >= 0; i-- {
		e := v.Log[i]
		if e.Kind == "full" {
			fig.SPFFull, fig.SPFFullKind = e.Duration, fmt.Sprintf("full, %d nodes", e.Nodes)
			fig.SPFFullCompute = e.Compute
			if e.At.Before(synced) {
				// The last LSP changed no topology (it cannot happen
				// with generated fabrics, where every LSP adds links);
				// say so rather than hide it.
				fig.SPFFullKind += ", before the last LSP"
			}
			return nil
		}
	}
	return errors.New("no full SPF in fared's log")
}

func (r *runner) readDB(ctx context.Context, rt *undertest.Router, fc *client.Client) (map[string]LSPRow, error) {
	if fc != nil {
		return faredDB(ctx, fc)
	}
	return frrDB(ctx, r.lab)
}

// key names an injected LSP as the routers print it: hostname.pp-ff.
func (r *runner) key(id packet.LSPID) string {
	sys := id.SystemID()
	v := int(sys[2])<<24 | int(sys[3])<<16 | int(sys[4])<<8 | int(sys[5])
	name := id.NodeID().String()
	if v >= 1 && v <= len(r.f.Nodes) {
		name = r.f.Nodes[v-1].Name + id.String()[len("0000.0000.0000"):]
	}
	return name
}

// checkDB compares a router's database with what the injector flooded:
// every injected LSP in the same version, nothing else but its own.
func (r *runner) checkDB(kind string, db map[string]LSPRow) []string {
	var bad []string
	want := map[string]bool{}
	for _, e := range r.injected {
		k := r.key(e.ID)
		want[k] = true
		got, ok := db[k]
		switch {
		case !ok:
			bad = append(bad, k+" missing")
		case got.Seq != e.Seq || got.Checksum != e.Checksum:
			bad = append(bad, fmt.Sprintf("%s seq %#x checksum %#04x, injected %#x %#04x", k, got.Seq, got.Checksum, e.Seq, e.Checksum))
		}
	}
	for k, row := range db {
		if !want[k] && !row.Own {
			bad = append(bad, k+" unexpected")
		}
	}
	sort.Strings(bad)
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s database differs from the injected one: %s", kind, strings.Join(bad, "; "))}
}

// incremental changes one cable's bandwidth Options.Changes times, back
// and forth, each once the previous one is done (SPF ran, kernel quiet).
// The first change comes with the routers' back-off quiet: its kernel
// latency is the figure; the SPF figure is the median over all changes.
func (r *runner) incremental(ctx context.Context, rt *undertest.Router, fc *client.Client, inj *inject.Injector, w *kernwatch.Watcher, fig *Figures) error {
	orig := r.f.Cables[r.spec.Change].BW
	kinds := map[string]int{}
	for i := 0; i < r.o.Changes; i++ {
		bw := r.spec.ChangeBW
		if i%2 == 1 {
			bw = orig
		}
		d, kind, trig, kl, kn, err := r.change(ctx, rt, fc, inj, w, bw)
		if err != nil {
			return err
		}
		kinds[kind]++
		if d > 0 {
			fig.SPFIncrSamples = append(fig.SPFIncrSamples, d)
		}
		if i == 0 {
			fig.KernelIncr, fig.KernelIncrChanges, fig.SPFIncrTrigger = kl, kn, trig
		}
		r.logf("%s: change %d: SPF %v (%s), kernel %v (%d changes)", rt.Kind, i+1, d, kind, kl.Round(time.Microsecond), kn)
	}
	if len(fig.SPFIncrSamples) > 0 {
		fig.SPFIncr = median(slices.Clone(fig.SPFIncrSamples))
	}
	var ks []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		ks = append(ks, fmt.Sprintf("%s ×%d", k, kinds[k]))
	}
	fig.SPFIncrKind = strings.Join(ks, ", ")
	return nil
}

// change sets the bandwidth once and returns the SPF it caused (duration,
// kind, fared's trigger) and the kernel's last write after it.
func (r *runner) change(ctx context.Context, rt *undertest.Router, fc *client.Client, inj *inject.Injector, w *kernwatch.Watcher, bw float32) (spfD time.Duration, kind, trig string, kernel time.Duration, writes int, err error) {
	var before undertest.SPFSummary
	if fc == nil {
		if before, err = frrSummary(ctx, r.lab); err != nil {
			return
		}
	}
	ch, err := inj.SetCableBW(ctx, r.spec.Change, bw)
	if err != nil {
		return
	}
	if len(ch.LSPs) == 0 {
		err = errors.New("the bandwidth change changed no LSP")
		return
	}
	if err = interop.Poll(ctx, r.o.Timeout, "changed LSPs held by "+rt.Kind, func() error {
		_, ok, err := inj.HeldAt(ctx, ch.LSPs)
		if err == nil && !ok {
			err = errors.New("not yet")
		}
		return err
	}); err != nil {
		return
	}
	// The SPF the change caused. fared's log is a ring of 64 entries:
	// compare by time, not by length.
	perr := interop.Poll(ctx, 30*time.Second, rt.Kind+" SPF after the change", func() error {
		if fc == nil {
			s, err := frrSummary(ctx, r.lab)
			if err != nil {
				return err
			}
			if s.Runs == before.Runs {
				return errors.New("no new SPF run")
			}
			spfD, kind = s.Duration, "full"
			return nil
		}
		v, err := faredSPF(ctx, fc)
		if err != nil {
			return err
		}
		for _, e := range v.Log {
			if e.At.After(ch.At) {
				spfD, kind, trig = e.Duration, e.Kind, e.Trigger
				return nil
			}
		}
		return errors.New("no new SPF run")
	})
	if perr != nil {
		// A router may decide that a bandwidth sub-TLV changes nothing it
		// computes: record it rather than fail the run.
		kind = "none within 30 s"
		r.logf("%s: %v", rt.Kind, perr)
	}
	// Kernel changes the new bandwidth caused, once they stopped.
	var last time.Time
	_ = interop.Poll(ctx, r.o.Timeout, rt.Kind+" kernel quiet after the change", func() error {
		l, c := w.LastChange(ch.At)
		if l != last || c != writes || time.Since(max0(l, ch.At)) < 2*time.Second {
			last, writes = l, c
			return errors.New("kernel still changing")
		}
		return nil
	})
	if writes > 0 {
		kernel = last.Sub(ch.At)
	}
	return spfD, kind, trig, kernel, writes, nil
}

func max0(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// compare checks the routers against each other.
func (r *runner) compare() {
	agree := true
	for _, fg := range r.res.Routers {
		if len(fg.Problems) > 0 {
			agree = false
		}
	}
	kinds := r.o.Routers
	for i := 1; i < len(kinds); i++ {
		a, b := r.tables[kinds[0]], r.tables[kinds[i]]
		if a == nil || b == nil {
			continue
		}
		if d := kernwatch.Diff(a.Routes, b.Routes, 5); len(d) > 0 {
			agree = false
			r.res.Problems = append(r.res.Problems, fmt.Sprintf("kernels of %s and %s differ: %s", kinds[0], kinds[i], strings.Join(d, "; ")))
		}
		da, db := r.dbs[kinds[0]], r.dbs[kinds[i]]
		for k, x := range da {
			if y, ok := db[k]; !x.Own && (!ok || x != y) {
				agree = false
				r.res.Problems = append(r.res.Problems, fmt.Sprintf("databases of %s and %s differ at %s", kinds[0], kinds[i], k))
				break
			}
		}
	}
	r.res.Agree = agree && len(r.res.Routers) == len(kinds)
}
