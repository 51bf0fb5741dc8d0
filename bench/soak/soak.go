package soak

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fared/fared/interop"
)

// Config tunes a run.
type Config struct {
	Seed      uint64
	Duration  time.Duration // chaos time; the last settle and checks come after it
	Settle    time.Duration // deadline for the invariants after each burst (default 90s)
	LossPct   int           // loss on a lossy link, each direction (default 5)
	LossLinks int           // links given loss in each cycle (default 2)
	MaxEvents int           // events in one burst: 1..MaxEvents (default 3)
	Log       io.Writer     // progress lines; nil: none
}

func (c Config) withDefaults() Config {
	c.Settle = cmp.Or(c.Settle, 90*time.Second)
	c.LossPct = cmp.Or(c.LossPct, 5)
	c.LossLinks = cmp.Or(c.LossLinks, 2)
	c.MaxEvents = cmp.Or(c.MaxEvents, 3)
	c.Log = cmp.Or(c.Log, io.Discard)
	return c
}

// Event kinds.
const (
	EvLoss         = "loss"          // a link gets LossPct% loss both ways for one cycle
	EvFlap         = "flap"          // a link goes down, then up
	EvKillFared    = "kill-fared"    // kill -9 fared, start it again
	EvKillISISd    = "kill-isisd"    // kill -9 isisd (zebra lives), start it again
	EvKillOSPFd    = "kill-ospfd"    // kill -9 ospfd (zebra lives), start it again
	EvRestartFared = "restart-fared" // SIGTERM and start
	EvRestartFRR   = "restart-frr"   // SIGTERM all FRR daemons of a node and start
)

// Invariants.
const (
	InvLSDB      = "lsdb-identical"
	InvKernel    = "kernel-equals-routes"
	InvNexthops  = "no-orphan-nexthops"
	InvReach     = "loopbacks-reachable"
	InvLogs      = "no-panic-in-logs"
	InvResources = "no-goroutine-fd-growth"
)

// Report is what a run did and found.
type Report struct {
	Seed     uint64
	Cycles   int
	Events   map[string]int // injected, by kind
	Checks   map[string]int // passed, by invariant (once per cycle)
	Failures []string
	// Settle is, per cycle, how long after the burst every invariant
	// held (the first check round that passed them all).
	Settle []time.Duration
	// LastToHold counts, per invariant, the bursts after which it was
	// still failing in the last round before all held.
	LastToHold map[string]int
	Resources  []Lifetime
	// Notes are lab troubles that are not fared's (FRR limits).
	Notes   []string
	Elapsed time.Duration
}

// event is one planned disturbance.
type event struct {
	kind   string
	node   string // node events
	link   int    // flap
	start  time.Duration
	down   time.Duration
	failed bool
}

// action is one step of a burst's timeline.
type action struct {
	at   time.Duration
	ev   *event
	undo bool
}

// Runner drives chaos on a running lab of Topology.
type Runner struct {
	l   *interop.Lab
	cfg Config
	rng *rand.Rand
	rep *Report
	res *resources
	// lossy holds the links with loss now.
	lossy []int
}

// New prepares a run on l.
func New(l *interop.Lab, cfg Config) *Runner {
	cfg = cfg.withDefaults()
	return &Runner{
		l: l, cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed50a4)),
		rep: &Report{Seed: cfg.Seed, Events: map[string]int{}, Checks: map[string]int{}, LastToHold: map[string]int{}},
		res: newResources(),
	}
}

func (r *Runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "%s soak: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func (r *Runner) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.logf("NOTE %s", s)
	r.rep.Notes = append(r.rep.Notes, s)
}

func (r *Runner) fail(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.logf("FAIL %s", s)
	r.rep.Failures = append(r.rep.Failures, s)
}

// Run settles the lab, then runs cycles of chaos and checks until
// Duration has passed, removes every disturbance and checks once more.
func (r *Runner) Run(ctx context.Context) *Report {
	start := time.Now()
	defer func() { r.rep.Elapsed = time.Since(start) }()
	r.logf("seed %d, duration %v", r.cfg.Seed, r.cfg.Duration)
	defer r.clearLoss(context.Background())
	if !r.settle(ctx, "initial") {
		return r.rep
	}
	for time.Since(start) < r.cfg.Duration && ctx.Err() == nil {
		r.rep.Cycles++
		r.cycle(ctx, r.rep.Cycles)
	}
	r.clearLoss(ctx)
	r.settle(ctx, "final")
	r.res.judge(r)
	return r.rep
}

// cycle: new lossy links, a burst of events, heal, settle and check.
func (r *Runner) cycle(ctx context.Context, n int) {
	r.clearLoss(ctx)
	r.lossy = r.pickLinks(r.cfg.LossLinks, nil)
	for _, i := range r.lossy {
		if err := r.setLoss(ctx, i); err != nil {
			r.fail("cycle %d: loss on link %d: %v", n, i, err)
		}
		r.rep.Events[EvLoss]++
	}
	evs := r.plan()
	var desc []string
	for _, e := range evs {
		desc = append(desc, e.String())
	}
	r.logf("cycle %d: loss on links %v; %s", n, r.lossy, strings.Join(desc, ", "))
	r.burst(ctx, n, evs)
	r.heal(ctx, n)
	r.settle(ctx, fmt.Sprintf("cycle %d", n))
}

func (e *event) String() string {
	what := e.node
	if e.kind == EvFlap {
		what = fmt.Sprintf("link %d", e.link)
	}
	return fmt.Sprintf("%s %s at +%v for %v", e.kind, what, e.start.Round(time.Millisecond), e.down.Round(time.Millisecond))
}

// plan draws a burst: 1..MaxEvents events on distinct nodes and links,
// starting within 4s of each other, each lasting 0.5..4s.
func (r *Runner) plan() []*event {
	kinds := []struct {
		kind   string
		weight int
	}{{EvFlap, 35}, {EvKillFared, 20}, {EvKillISISd, 10}, {EvKillOSPFd, 10}, {EvRestartFared, 12}, {EvRestartFRR, 13}}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	n := 1 + r.rng.IntN(r.cfg.MaxEvents)
	usedNodes := map[string]bool{}
	var usedLinks []int
	var evs []*event
	for len(evs) < n {
		x := r.rng.IntN(total)
		kind := ""
		for _, k := range kinds {
			if x < k.weight {
				kind = k.kind
				break
			}
			x -= k.weight
		}
		e := &event{kind: kind, start: time.Duration(r.rng.IntN(4000)) * time.Millisecond,
			down: time.Duration(500+r.rng.IntN(3500)) * time.Millisecond}
		if kind == EvFlap {
			ls := r.pickLinks(1, usedLinks)
			if len(ls) == 0 {
				continue
			}
			e.link = ls[0]
			usedLinks = append(usedLinks, e.link)
		} else {
			var cands []string
			for _, nd := range r.l.Nodes {
				if !usedNodes[nd.Name] && fits(nd, kind) {
					cands = append(cands, nd.Name)
				}
			}
			if len(cands) == 0 {
				continue
			}
			e.node = cands[r.rng.IntN(len(cands))]
			usedNodes[e.node] = true
		}
		evs = append(evs, e)
	}
	return evs
}

func fits(n *interop.Node, kind string) bool {
	switch kind {
	case EvKillFared, EvRestartFared:
		return n.Kind == "fared"
	case EvKillISISd:
		return n.Kind == "frr" && n.Protocol == "isis"
	case EvKillOSPFd:
		return n.Kind == "frr" && n.Protocol == "ospf"
	case EvRestartFRR:
		return n.Kind == "frr"
	}
	return false
}

// pickLinks draws k distinct links not in not.
func (r *Runner) pickLinks(k int, not []int) []int {
	var cands []int
	for i := range r.l.Links {
		skip := false
		for _, j := range not {
			skip = skip || i == j
		}
		if !skip {
			cands = append(cands, i)
		}
	}
	var out []int
	for len(out) < k && len(cands) > 0 {
		j := r.rng.IntN(len(cands))
		out = append(out, cands[j])
		cands = append(cands[:j], cands[j+1:]...)
	}
	sort.Ints(out)
	return out
}

// burst plays the events' timeline in this goroutine: the lab's
// bookkeeping (pid maps, state file) is not safe for concurrent use, and
// one goroutine keeps the order reproducible. A step that blocks (a start
// waits for readiness) delays the steps after it.
func (r *Runner) burst(ctx context.Context, n int, evs []*event) {
	var tl []action
	for _, e := range evs {
		tl = append(tl, action{at: e.start, ev: e})
		if e.kind != EvRestartFared && e.kind != EvRestartFRR {
			tl = append(tl, action{at: e.start + e.down, ev: e, undo: true})
		}
	}
	sort.SliceStable(tl, func(i, j int) bool { return tl[i].at < tl[j].at })
	t0 := time.Now()
	for _, a := range tl {
		if d := a.at - time.Since(t0); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		if a.ev.failed {
			continue
		}
		if err := r.do(ctx, a.ev, a.undo); err != nil {
			a.ev.failed = true
			r.fail("cycle %d: %s (undo=%v): %v", n, a.ev, a.undo, err)
			continue
		}
		if !a.undo {
			r.rep.Events[a.ev.kind]++
		}
	}
}

func (r *Runner) do(ctx context.Context, e *event, undo bool) error {
	l := r.l
	switch e.kind {
	case EvFlap:
		return l.SetLinkUp(ctx, e.link, undo)
	case EvKillFared:
		if undo {
			return l.StartNode(ctx, e.node)
		}
		return l.KillNode(ctx, e.node, syscall.SIGKILL)
	case EvKillISISd, EvKillOSPFd:
		d := strings.TrimPrefix(e.kind, "kill-")
		if undo {
			return l.StartDaemon(ctx, e.node, d)
		}
		return l.KillDaemon(ctx, e.node, d, syscall.SIGKILL)
	case EvRestartFared, EvRestartFRR:
		return l.RestartNode(ctx, e.node)
	}
	return fmt.Errorf("unknown event %q", e.kind)
}

// heal brings back whatever a failed step left down: every link up,
// every node's daemons running. Nothing is done when the burst went well.
func (r *Runner) heal(ctx context.Context, n int) {
	for i := range r.l.Links {
		if err := r.l.SetLinkUp(ctx, i, true); err != nil {
			r.fail("cycle %d: heal link %d: %v", n, i, err)
		}
	}
	for _, nd := range r.l.Nodes {
		d, err := r.l.Daemons(nd.Name)
		if err != nil {
			r.fail("cycle %d: %v", n, err)
			continue
		}
		want := map[string][]string{"fared": {"fared"}, "frr": {"zebra", map[string]string{"isis": "isisd", "ospf": "ospfd"}[nd.Protocol]}}[nd.Kind]
		missing := 0
		for _, w := range want {
			if _, ok := d[w]; !ok {
				missing++
			}
		}
		if missing == 0 {
			continue
		}
		r.fail("cycle %d: heal: %s has %v, want %v", n, nd.Name, d, want)
		if err := r.l.RestartNode(ctx, nd.Name); err != nil {
			r.fail("cycle %d: heal: restart %s: %v", n, nd.Name, err)
		}
	}
}

// String formats the report for a person: events by kind, checks by
// invariant, settle times, fared resource lifetimes, failures.
func (rep *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d cycles in %v\n", rep.Seed, rep.Cycles, rep.Elapsed.Round(time.Second))
	total := 0
	for _, k := range slices.Sorted(maps.Keys(rep.Events)) {
		fmt.Fprintf(&b, "  event %-14s %5d\n", k, rep.Events[k])
		total += rep.Events[k]
	}
	fmt.Fprintf(&b, "  events total         %5d\n", total)
	for _, k := range slices.Sorted(maps.Keys(rep.Checks)) {
		fmt.Fprintf(&b, "  check %-24s passed %4d\n", k, rep.Checks[k])
	}
	if len(rep.Settle) > 0 {
		s := append([]time.Duration(nil), rep.Settle...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		fmt.Fprintf(&b, "  settle after a burst: median %v, max %v (%d bursts)\n",
			s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond), len(s))
	}
	for _, k := range slices.Sorted(maps.Keys(rep.LastToHold)) {
		fmt.Fprintf(&b, "  last to hold: %-36s %4d bursts\n", k, rep.LastToHold[k])
	}
	for _, lt := range rep.Resources {
		fmt.Fprintf(&b, "  fared %-4s pid %-7d samples %3d goroutines %d->%d (max %d) fds %d->%d (max %d) threads %d->%d\n",
			lt.Node, lt.Pid, lt.Samples, lt.Goroutines[0], lt.Goroutines[1], lt.MaxGor, lt.FDs[0], lt.FDs[1], lt.MaxFDs, lt.Threads[0], lt.Threads[1])
	}
	fmt.Fprintf(&b, "  notes %d\n", len(rep.Notes))
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "    %s\n", n)
	}
	fmt.Fprintf(&b, "  failures %d\n", len(rep.Failures))
	for _, f := range rep.Failures {
		fmt.Fprintf(&b, "    %s\n", f)
	}
	return b.String()
}
