// Package aiecn compares ECN threshold settings on the software data
// plane (qos/sim): a sweep of static settings (the best one per scenario
// is found by it), the scenario's fixed profile, Adaptive RED (Linux
// sch_red's rule) and fared's AI ECN, on the three scenarios of
// qos/sim/scenario/testdata/aiecn-*.yaml. compare_test.go runs it:
//
//	go test ./bench/aiecn -run Compare -v               # CI: short runs, correctness only
//	go test ./bench/aiecn -run Compare -v -args -full   # the full tables (docs/qos.md)
//	go test ./bench/aiecn -run Compare -v -args -full -seed 2   # the same with another sim seed
package aiecn

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/qos/sim/scenario"
)

// The measured queue: switch S's port toward r, priority 3.
const (
	Node = "S"
	Port = "r"
	Prio = 3
)

// Kind is how a variant sets the thresholds.
type Kind string

const (
	Static Kind = "static"       // a WRED setting of the sweep
	Fixed  Kind = "fixed"        // the scenario file's profile
	ARED   Kind = "adaptive-red" // Linux's adaptive RED from the profile
	AIECN  Kind = "ai-ecn"       // fared's AI ECN from the profile
)

// Variant is one run's ECN.
type Variant struct {
	Kind Kind
	WRED model.WRED // Static only
	// Models are AI ECN's known models (the "trained" variant: the best
	// static settings of the pure scenarios' sweeps).
	Models map[string]model.WRED
}

func (v Variant) String() string {
	switch {
	case v.Kind == Static:
		return fmt.Sprintf("static %s/%s/%d%%", kb(v.WRED.Min), kb(v.WRED.Max), v.WRED.Prob)
	case v.Kind == AIECN && len(v.Models) > 0:
		return "ai-ecn + models"
	}
	return string(v.Kind)
}

func kb(n uint64) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1000)
}

// Metrics are one run's figures at the measured queue.
type Metrics struct {
	Variant  Variant
	Util     float64       // of the bottleneck port
	QueueP99 int64         // bytes, time-weighted
	QueueMax int64         // bytes
	MiceP50  time.Duration // FCT of flows below the scenario's split
	MiceP99  time.Duration
	Mice     int // mice flows started
	MiceDone int
	Pauses   uint64 // PAUSE frames sent in the network
	CNPs     uint64
	Events   uint64
	Wall     time.Duration
	// Correctness of what was applied, checked at every poll.
	Checks     int
	Violations []string // Kmax >= XOFF, Kmin >= Kmax, out of limits
	Decisions  int      // tuner changes
}

// Grid is the sweep of static settings: Kmin from 1 KB to 120 KB,
// Kmax = 2 or 5 x Kmin (capped at 140 KB, below XOFF 150 KB), Pmax 1,
// 10 or 50 percent.
func Grid() []model.WRED {
	var out []model.WRED
	seen := map[[3]uint64]bool{}
	for _, kmin := range []uint64{1_000, 2_000, 5_000, 10_000, 20_000, 40_000, 80_000, 120_000} {
		for _, mult := range []uint64{2, 5} {
			kmax := min(kmin*mult, 140_000)
			for _, p := range []int{1, 10, 50} {
				k := [3]uint64{kmin, kmax, uint64(p)}
				if kmax <= kmin || seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, model.WRED{Enable: true, Min: kmin, Max: kmax, Prob: p})
			}
		}
	}
	return out
}

// ShortGrid is the CI sweep: three settings across the range.
func ShortGrid() []model.WRED {
	return []model.WRED{
		{Enable: true, Min: 2_000, Max: 10_000, Prob: 10},
		{Enable: true, Min: 20_000, Max: 100_000, Prob: 10},
		{Enable: true, Min: 80_000, Max: 140_000, Prob: 10},
	}
}

// Run runs the scenario at path with variant v (duration 0: the file's;
// seed 0: the file's, else only the simulation's seed is replaced, which
// drives the random ECN marking draws).
func Run(path string, v Variant, duration time.Duration, seed uint64) (*Metrics, error) {
	s, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	if duration > 0 {
		s.Duration = duration
	}
	if seed != 0 {
		s.Params.Seed = seed
	}
	for i := range s.Switches {
		q := s.Switches[i].QoS
		if q == nil {
			continue
		}
		switch v.Kind {
		case Static:
			for _, p := range q.Profiles {
				p.Colors[model.Green] = v.WRED
			}
			q.Tuning = nil
		case Fixed:
			q.Tuning = nil
		case ARED:
			if q.Tuning == nil {
				return nil, fmt.Errorf("%s: no ecn-tuning section to run %s with", path, v.Kind)
			}
			q.Tuning.Algorithm = policy.AlgoARED
		case AIECN:
			if q.Tuning == nil {
				return nil, fmt.Errorf("%s: no ecn-tuning section to run %s with", path, v.Kind)
			}
			q.Tuning.Algorithm = policy.AlgoAIECN
			if v.Models != nil {
				q.Tuning.Models = v.Models
			}
		}
	}
	in, err := s.Start()
	if err != nil {
		return nil, err
	}
	m := &Metrics{Variant: v}
	// Check what each controller applies at every poll: the measured
	// property is the contract (Kmin < Kmax < XOFF, within the limits).
	for name, c := range in.Controllers {
		sw := s.Switches[0]
		for _, x := range s.Switches {
			if x.Name == name {
				sw = x
			}
		}
		c, q := c, sw.QoS
		in.Net.Every(q.Poll, q.Poll, func(now time.Duration) bool {
			d := c.Applied()
			if d == nil {
				return true
			}
			m.Checks++
			for _, i := range d.Ifaces {
				for p := 0; p < model.NumPrio; p++ {
					prof := d.Profile(i.Queues[p].Profile)
					if prof == nil || !prof.Colors[model.Green].Enable {
						continue
					}
					g := prof.Colors[model.Green]
					bad := ""
					switch {
					case i.PFC.Has(p) && g.Max >= i.Thresholds[p].XOFF:
						bad = fmt.Sprintf("Kmax %d >= XOFF %d", g.Max, i.Thresholds[p].XOFF)
					case g.Min >= g.Max:
						bad = fmt.Sprintf("Kmin %d >= Kmax %d", g.Min, g.Max)
					case q.Tuning != nil && v.Kind != Static && v.Kind != Fixed && (g.Min < q.Tuning.MinThreshold || g.Max > q.Tuning.MaxThreshold):
						bad = fmt.Sprintf("%d/%d outside the limits %d..%d", g.Min, g.Max, q.Tuning.MinThreshold, q.Tuning.MaxThreshold)
					}
					if bad != "" && len(m.Violations) < 10 {
						m.Violations = append(m.Violations, fmt.Sprintf("%v %s %s/%d: %s", now, name, i.Name, p, bad))
					}
				}
			}
			return true
		})
	}
	t0 := time.Now()
	in.Net.RunUntil(s.Duration)
	m.Wall = time.Since(t0)
	if in.Err != nil {
		return nil, in.Err
	}
	r := in.Net.Collect(s.Split)
	for _, p := range r.Ports {
		if p.Node != Node || p.Port != Port {
			continue
		}
		m.Util = p.Util
		for _, q := range p.Queues {
			if q.Prio == Prio {
				m.QueueP99, m.QueueMax = q.Depth.P99, q.Depth.Max
			}
		}
	}
	m.MiceP50, m.MiceP99, m.Mice, m.MiceDone = r.Mice.P50, r.Mice.P99, r.Mice.Flows, r.Mice.Done
	m.Pauses = r.PauseTx
	m.CNPs = r.CNPs["receiver"] + r.CNPs["switch"]
	m.Events = r.Events
	for _, c := range in.Controllers {
		if t := c.Tuner(); t != nil {
			m.Decisions += len(t.Decisions())
		}
	}
	return m, nil
}

// latency is the scenario's latency figure: mice FCT p99 when it has
// mice, else the queue's p99 (as a duration at the port's rate it would
// not compare; bytes are kept as nanoseconds-free units).
func latency(m *Metrics) float64 {
	if m.Mice > 0 {
		return float64(m.MiceP99)
	}
	return float64(m.QueueP99)
}

// Best is the best static setting of a sweep: among the settings whose
// utilisation is at least 95% of the sweep's highest, the one with the
// lowest latency (mice FCT p99, or the queue's p99 without mice), then
// the higher utilisation.
func Best(statics []*Metrics) *Metrics {
	var top float64
	for _, m := range statics {
		top = max(top, m.Util)
	}
	var best *Metrics
	for _, m := range statics {
		if m.Util < 0.95*top {
			continue
		}
		if best == nil || latency(m) < latency(best) || latency(m) == latency(best) && m.Util > best.Util {
			best = m
		}
	}
	return best
}

// Verdict is a scenario's bar, with the numbers.
type Verdict struct {
	Pass  bool
	Lines []string
}

// PureBar: on a pure scenario AI ECN is within 5% of the best static
// setting: utilisation at least 95% of it, latency at most 105%.
func PureBar(ai, best *Metrics) Verdict {
	v := Verdict{Pass: true}
	if ai.Util < 0.95*best.Util {
		v.Pass = false
		v.Lines = append(v.Lines, fmt.Sprintf("utilisation %.3f < 95%% of the best static's %.3f", ai.Util, best.Util))
	}
	if latency(ai) > 1.05*latency(best) {
		v.Pass = false
		v.Lines = append(v.Lines, fmt.Sprintf("latency %s > 105%% of the best static's %s", latStr(ai), latStr(best)))
	}
	if v.Pass {
		v.Lines = append(v.Lines, fmt.Sprintf("utilisation %.3f vs %.3f, latency %s vs %s (best static %s)", ai.Util, best.Util, latStr(ai), latStr(best), best.Variant))
	}
	return v
}

func latStr(m *Metrics) string {
	if m.Mice > 0 {
		return "mice p99 " + us(m.MiceP99)
	}
	return fmt.Sprintf("queue p99 %s", kb(uint64(m.QueueP99)))
}

// MixBar scores the phase-switching mix (docs/qos.md, "How the
// comparison is scored"). bar is the issue's bar, read with "its" = AI
// ECN's: against every static setting whose utilisation is at least 95%
// of AI ECN's, a strictly lower mice FCT p99 and strictly fewer PAUSEs
// (or both none); not met when no setting qualifies. info is the other
// reading, printed only: against every static setting, lower p99 and
// fewer PAUSEs while keeping at least 95% of that setting's utilisation.
func MixBar(ai *Metrics, statics []*Metrics) (bar, info Verdict) {
	bar.Pass, info.Pass = true, true
	n := 0
	for _, s := range statics {
		var worse []string
		if ai.MiceP99 >= s.MiceP99 {
			worse = append(worse, fmt.Sprintf("mice p99 %s >= %s", us(ai.MiceP99), us(s.MiceP99)))
		}
		if ai.Pauses >= s.Pauses && s.Pauses > 0 || ai.Pauses > s.Pauses {
			worse = append(worse, fmt.Sprintf("PAUSEs %d >= %d", ai.Pauses, s.Pauses))
		}
		if s.Util >= 0.95*ai.Util {
			n++
			verdict := fmt.Sprintf("beaten (mice p99 %s, PAUSEs %d)", us(s.MiceP99), s.Pauses)
			if len(worse) > 0 {
				bar.Pass = false
				verdict = "fails: " + strings.Join(worse, ", ")
			}
			bar.Lines = append(bar.Lines, fmt.Sprintf("%s (util %.3f): %s", s.Variant, s.Util, verdict))
		}
		if ai.Util < 0.95*s.Util {
			worse = append(worse, fmt.Sprintf("utilisation %.3f < 95%% of %.3f", ai.Util, s.Util))
		}
		if len(worse) > 0 {
			info.Pass = false
			info.Lines = append(info.Lines, fmt.Sprintf("%s (util %.3f): %s", s.Variant, s.Util, strings.Join(worse, ", ")))
		}
	}
	if n == 0 {
		bar.Pass = false
		bar.Lines = append(bar.Lines, fmt.Sprintf("no static setting reaches 95%% of AI ECN's utilisation %.3f: nothing to compare with", ai.Util))
	} else {
		bar.Lines = append([]string{fmt.Sprintf("%d static settings at >= 95%% of its utilisation %.3f", n, ai.Util)}, bar.Lines...)
	}
	return bar, info
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/1e3) }

// Table prints results, one row each, marking the best static.
func Table(w io.Writer, rows []*Metrics, best *Metrics) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tutil\tqueue p99\tqueue max\tmice p50\tmice p99\tPAUSE\tCNPs\twall")
	for _, m := range rows {
		name := m.Variant.String()
		if m == best {
			name += " (best static)"
		}
		mp50, mp99 := "-", "-"
		if m.Mice > 0 {
			mp50, mp99 = us(m.MiceP50), us(m.MiceP99)
			if m.MiceDone < m.Mice {
				mp99 += fmt.Sprintf(" (%d/%d done)", m.MiceDone, m.Mice)
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\t%s\t%s\t%d\t%d\t%.1fs\n", name, m.Util, kb(uint64(m.QueueP99)), kb(uint64(m.QueueMax)),
			mp50, mp99, m.Pauses, m.CNPs, m.Wall.Seconds())
	}
	tw.Flush()
}

// SortByUtil orders rows by utilisation, highest first (the sweep's
// frontier reads top-down).
func SortByUtil(rows []*Metrics) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Util > rows[j].Util })
}
