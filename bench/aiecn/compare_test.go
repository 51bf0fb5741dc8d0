package aiecn

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/qos/model"
)

var (
	full = flag.Bool("full", false, "run the full sweep and print the tables of docs/qos.md (minutes)")
	seed = flag.Uint64("seed", 0, "simulation seed for every run (0: the scenario files' own)")
)

type scen struct {
	name, file string
	pure       bool
	short      time.Duration // CI duration
	model      string        // the AI ECN model its best static setting trains
}

var scenarios = []scen{
	{"elephants", "../../qos/sim/scenario/testdata/aiecn-elephants.yaml", true, 20 * time.Millisecond, "elephants"},
	{"mice incast", "../../qos/sim/scenario/testdata/aiecn-incast.yaml", true, 8 * time.Millisecond, "mice"},
	{"phase-switching mix", "../../qos/sim/scenario/testdata/aiecn-mix.yaml", false, 100 * time.Millisecond, ""},
}

// runAll runs the variants on up to GOMAXPROCS goroutines (each run is
// its own deterministic simulation) and returns the results in order.
func runAll(t *testing.T, file string, vs []Variant, d time.Duration) []*Metrics {
	out := make([]*Metrics, len(vs))
	errs := make([]error, len(vs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = Run(file, v, d, *seed)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s %s: %v", file, vs[i], err)
		}
	}
	return out
}

// TestCompare runs every scenario with the static sweep, the fixed
// profile, Adaptive RED and AI ECN. In CI (without -full) the runs are
// short and the sweep small, and only correctness is asserted: every run
// completes, every threshold applied at every poll keeps Kmin < Kmax <
// XOFF and the tuning limits, the tuners act, and a rerun gives the same
// figures (determinism). With -full it prints the tables and the bars
// (which are reported, not asserted: they are findings).
func TestCompare(t *testing.T) {
	grid := ShortGrid()
	if *full {
		grid = Grid()
	}
	dur := func(sc scen) time.Duration {
		if *full {
			return 0
		}
		return sc.short
	}
	// Pass 1: the sweep, the fixed profile, Adaptive RED and AI ECN.
	type result struct {
		fixed, ared, ai, trained *Metrics
		statics                  []*Metrics
	}
	results := make([]result, len(scenarios))
	for i, sc := range scenarios {
		vs := []Variant{{Kind: Fixed}, {Kind: ARED}, {Kind: AIECN}}
		for _, w := range grid {
			vs = append(vs, Variant{Kind: Static, WRED: w})
		}
		res := runAll(t, sc.file, vs, dur(sc))
		results[i] = result{fixed: res[0], ared: res[1], ai: res[2], statics: res[3:]}
		for _, m := range res {
			check(t, sc, m)
		}
		if r := results[i]; r.ai.Decisions == 0 || r.ared.Decisions == 0 {
			t.Errorf("%s: AI ECN made %d decisions, Adaptive RED %d: a tuner never acted", sc.name, r.ai.Decisions, r.ared.Decisions)
		}
		if !*full {
			again, err := Run(sc.file, Variant{Kind: AIECN}, dur(sc), *seed)
			if err != nil {
				t.Fatal(err)
			}
			ai := results[i].ai
			if again.Util != ai.Util || again.MiceP99 != ai.MiceP99 || again.QueueP99 != ai.QueueP99 || again.Pauses != ai.Pauses || again.Events != ai.Events {
				t.Errorf("%s: AI ECN rerun differs: %+v vs %+v", sc.name, again, ai)
			}
		}
	}
	// Pass 2: AI ECN with known models "trained" on the pure scenarios:
	// each model takes the best static setting of the scenario that is
	// all of that traffic. On the pure scenarios this is in-sample; the
	// mix is the held-out test.
	models := map[string]model.WRED{}
	for i, sc := range scenarios {
		if sc.model != "" {
			models[sc.model] = Best(results[i].statics).Variant.WRED
		}
	}
	for i, sc := range scenarios {
		m, err := Run(sc.file, Variant{Kind: AIECN, Models: models}, dur(sc), *seed)
		if err != nil {
			t.Fatal(err)
		}
		check(t, sc, m)
		results[i].trained = m
	}

	var report strings.Builder
	if *seed != 0 {
		fmt.Fprintf(&report, "\nsimulation seed %d (the scenario files otherwise as they are)\n", *seed)
	}
	fmt.Fprintf(&report, "\nknown models from the pure scenarios' sweeps:")
	for _, name := range []string{"elephants", "mice"} {
		w := models[name]
		fmt.Fprintf(&report, " %s %s;", name, Variant{Kind: Static, WRED: w})
	}
	fmt.Fprintln(&report)
	for i, sc := range scenarios {
		r := results[i]
		best := Best(r.statics)
		fmt.Fprintf(&report, "\n### %s (%s)\n\n", sc.name, sc.file[strings.LastIndex(sc.file, "/")+1:])
		rows := []*Metrics{r.ai, r.trained, r.ared, r.fixed}
		n := len(rows)
		rows = append(rows, r.statics...)
		SortByUtil(rows[n:])
		Table(&report, rows, best)
		for _, m := range []*Metrics{r.ai, r.trained} {
			name := m.Variant.String()
			if m == r.trained && sc.pure {
				name += " (in-sample)"
			}
			if sc.pure {
				v := PureBar(m, best)
				fmt.Fprintf(&report, "\n%s, bar (within 5%% of the best static): %s\n", name, passStr(v.Pass))
				for _, l := range v.Lines {
					fmt.Fprintf(&report, "  %s\n", l)
				}
				continue
			}
			bar, info := MixBar(m, r.statics)
			for _, x := range []struct {
				name string
				v    Verdict
			}{{"bar: vs every static at >= 95% of AI ECN's utilisation", bar}, {"(a), information only: vs every static, keeping >= 95% of its utilisation", info}} {
				fmt.Fprintf(&report, "\n%s, %s: %s\n", name, x.name, passStr(x.v.Pass))
				for i, l := range x.v.Lines {
					if i == 12 {
						fmt.Fprintf(&report, "  ... %d more\n", len(x.v.Lines)-i)
						break
					}
					fmt.Fprintf(&report, "  %s\n", l)
				}
			}
		}
	}
	if *full || testing.Verbose() {
		t.Log(report.String())
	}
	if f := os.Getenv("AIECN_REPORT"); f != "" {
		os.WriteFile(f, []byte(report.String()), 0o644)
	}
}

// check asserts what holds for every run: the thresholds were checked at
// every poll and never broke the contract, and traffic crossed.
func check(t *testing.T, sc scen, m *Metrics) {
	t.Helper()
	if m.Checks == 0 {
		t.Errorf("%s %s: the applied thresholds were never checked", sc.name, m.Variant)
	}
	for _, v := range m.Violations {
		t.Errorf("%s %s: %s", sc.name, m.Variant, v)
	}
	if m.Util <= 0 {
		t.Errorf("%s %s: nothing crossed the bottleneck", sc.name, m.Variant)
	}
}

func passStr(ok bool) string {
	if ok {
		return "PASS"
	}
	return "NOT MET"
}
