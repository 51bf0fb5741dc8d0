package policy

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/fared/fared/qos/model"
)

// tunedDesired is one interface "e" with queue 3 lossless (XOFF 150K)
// and profile roce 20K/100K/10%.
func tunedDesired() *model.Desired {
	d := &model.Desired{Poll: 100 * time.Microsecond}
	d.DSCP[26] = 3
	i := model.Iface{Name: "e", PFCConfigured: model.PriosOf(3), PFC: model.PriosOf(3)}
	for q := range i.Thresholds {
		i.Thresholds[q] = model.PFCThresholds{XOFF: 150_000, XON: 120_000, Headroom: 60_000}
		i.Queues[q] = model.Queue{Sched: model.Strict, Weight: 1}
	}
	i.Queues[3].Profile = "roce"
	d.Ifaces = []model.Iface{i}
	p := model.Profile{Name: "roce", ECN: model.ECNAll}
	p.Colors[model.Green] = model.WRED{Enable: true, Min: 20_000, Max: 100_000, Prob: 10}
	d.Profiles = []model.Profile{p}
	return d
}

func tunerQueue(t *testing.T, cfg TunerConfig) (*ECNTuner, *tunedQueue) {
	t.Helper()
	tu, err := NewECNTuner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tu.sync(tunedDesired())
	q := tu.queues[QueueKey{"e", 3}]
	if q == nil {
		t.Fatal("queue e/3 not tuned")
	}
	return tu, q
}

// aiStepper feeds observations to AI ECN's decide as the tuner does
// (the decision clamped, applied only when it gives a reason) and checks
// Kmin/Kmax/Pmax after each.
func aiStepper(t *testing.T, tu *ECNTuner, q *tunedQueue) func(o Observation, wantMin, wantMax uint64, wantProb int, what string) {
	return func(o Observation, wantMin, wantMax uint64, wantProb int, what string) {
		t.Helper()
		w, why := tu.alg.decide(q, o)
		w = q.clamp(w)
		if why != "" {
			q.cur = w
		}
		if q.cur.Min != wantMin || q.cur.Max != wantMax || q.cur.Prob != wantProb {
			t.Fatalf("%s: %d/%d/%d%% (%q), want %d/%d/%d%%", what, q.cur.Min, q.cur.Max, q.cur.Prob, why, wantMin, wantMax, wantProb)
		}
	}
}

func aiConfig() TunerConfig {
	return TunerConfig{Algorithm: AlgoAIECN, Prios: model.PriosOf(3), MinThreshold: 1000, MaxThreshold: 140_000, UtilTarget: 0.9}
}

// TestAIECNElephants walks rules E1-E3 by hand: profile 20K/100K/10%
// (Kmax/Kmin 5), limits 1K..140K, Pmax 1..100%, target 0.9, so the band
// is [0.9, 0.95].
func TestAIECNElephants(t *testing.T) {
	tu, q := tunerQueue(t, aiConfig())
	step := aiStepper(t, tu, q)
	step(Observation{Util: 0.01}, 20_000, 100_000, 10, "idle: nothing learnt")
	step(Observation{Util: 1, MiceShare: 0}, 20_000, 100_000, 10, "first busy interval: model elephants, the configured profile")
	step(Observation{Util: 0.97, MaxDepth: 30_000}, 10_000, 50_000, 10, "E1: above the band, Kmin / 2")
	step(Observation{Util: 0.97, MaxDepth: 3000}, 3000, 15_000, 10, "E1: the deepest queue (3K) is below 10K / 2")
	step(Observation{Util: 0.97}, 1000, 5000, 10, "E1: an empty queue: straight to the floor (min-threshold)")
	step(Observation{Util: 0.97}, 1000, 5000, 20, "E1 at the floor: Pmax x 2")
	step(Observation{Util: 0.92, Marks: 5}, 1000, 5000, 20, "in the band: hold")
	step(Observation{Util: 0.96}, 1000, 5000, 40, "E1: Pmax x 2")
	step(Observation{Util: 0.96}, 1000, 5000, 80, "E1: Pmax x 2")
	step(Observation{Util: 0.96}, 1000, 5000, 100, "E1: Pmax x 2, at most the bound")
	step(Observation{Util: 0.96}, 1000, 5000, 100, "E1: nothing left to probe")
	low := Observation{Util: 0.85, Marks: 10}
	step(low, 1000, 5000, 100, "E2: below the target with marks, falling: 1st interval")
	step(low, 1000, 5000, 100, "E2: 2nd")
	step(low, 1000, 5000, 50, "E2: 3rd: Pmax back to 50%, the cap here")
	step(Observation{Util: 0.96}, 1000, 5000, 50, "E1: at the floor and the cap: hold")
	// Recovering: 0.70, 0.80, 0.88 rises 0.09 an interval, 0.88 + 3 x
	// 0.09 >= 0.9: the count starts again.
	step(Observation{Util: 0.7, Marks: 10}, 1000, 5000, 50, "E2: 1st")
	step(Observation{Util: 0.8, Marks: 10}, 1000, 5000, 50, "E2: 2nd (0.80 vs 0.96 two intervals back: not rising)")
	step(Observation{Util: 0.88, Marks: 10}, 1000, 5000, 50, "recovering: the count starts again")
	flat := Observation{Util: 0.8, Marks: 10}
	step(flat, 1000, 5000, 50, "E2: 1st (0.80 vs 0.80)")
	step(flat, 1000, 5000, 50, "E2: 2nd")
	step(flat, 1000, 5000, 25, "E2: Pmax back to 25%")
	step(flat, 1000, 5000, 25, "E2: 1st")
	step(flat, 1000, 5000, 25, "E2: 2nd")
	step(flat, 1000, 5000, 12, "E2: Pmax back to 12% (25 / 2 in whole percents)")
	step(flat, 1000, 5000, 12, "E2: 1st")
	step(flat, 1000, 5000, 12, "E2: 2nd")
	step(flat, 1000, 5000, 10, "E2: Pmax back to 10%, not below the configured one")
	step(flat, 1000, 5000, 10, "E2: 1st")
	step(flat, 1000, 5000, 10, "E2: 2nd")
	step(flat, 2000, 10_000, 10, "E2: Pmax at the configured one: Kmin x 2, the model's floor")
	step(Observation{Util: 0.97}, 2000, 10_000, 10, "E1: at the new floor and cap: hold")
}

// TestAIECNMice walks rules M1-M3 by hand (same queue as above, mice 20%
// of bytes: model mixed).
func TestAIECNMice(t *testing.T) {
	tu, q := tunerQueue(t, aiConfig())
	step := aiStepper(t, tu, q)
	low := Observation{Util: 0.5, Marks: 10, MiceShare: 0.2}
	step(low, 20_000, 100_000, 10, "first busy interval: model mixed, the configured profile")
	step(low, 20_000, 100_000, 10, "watching the interval after a change")
	// Flat at 0.5: shortfall 0.4, Kmin x (1 + 2 x 0.4 / 0.9) = x 1.8889:
	// 37778, Kmax 188889 capped at 140K.
	step(low, 37_778, 140_000, 10, "M1")
	step(low, 37_778, 140_000, 10, "watching")
	paused := low
	paused.Pauses = 2
	step(paused, 37_778, 140_000, 10, "M1 never with PAUSEs")
	step(Observation{Util: 0.85, Marks: 5, MiceShare: 0.2}, 37_778, 140_000, 10, "0.5 -> 0.85: rising, hold")
	// 0.8 after 0.5 two intervals back is still rising (0.8 + 3 x 0.15);
	// then 0.8 after 0.85: trend 0, shortfall 0.1, x 1.2222: 46173.
	step(Observation{Util: 0.8, Marks: 5, MiceShare: 0.2}, 37_778, 140_000, 10, "rising, hold")
	step(Observation{Util: 0.8, Marks: 5, MiceShare: 0.2}, 46_173, 140_000, 10, "M1 with the trend's shortfall")
	full := Observation{Util: 0.97, MeanDepth: 20_000, MiceShare: 0.2}
	step(full, 46_173, 140_000, 10, "watching")
	// Kmin x (0.9 - 0.2 x 0.2) = x 0.86: 39709; Pmax x 2.
	step(full, 39_709, 140_000, 20, "M2")
	step(full, 39_709, 140_000, 20, "watching")
	step(full, 34_149, 140_000, 40, "M2 again (Kmax 170747 capped)")
	step(Observation{Util: 0.92, Marks: 3, MeanDepth: 5000, MiceShare: 0.2}, 34_149, 140_000, 40, "watching")
	step(Observation{Util: 0.92, Marks: 3, MeanDepth: 5000, MiceShare: 0.2}, 34_149, 140_000, 40, "in the band: hold")
	step(Observation{Util: 0.97, MiceShare: 0.2}, 34_149, 140_000, 40, "above the band, queue empty: hold")
	// Kmin rises to at most 90% of the limit.
	for i := 0; i < 20; i++ {
		w, why := tu.alg.decide(q, low)
		if why != "" {
			q.cur = q.clamp(w)
		}
	}
	if q.cur.Min != 126_000 || q.cur.Max != 140_000 {
		t.Errorf("after many raises %d/%d, want 126000/140000", q.cur.Min, q.cur.Max)
	}
}

// TestAIECNModels: model changes, memory and phase changes, by hand.
func TestAIECNModels(t *testing.T) {
	tu, q := tunerQueue(t, aiConfig())
	step := aiStepper(t, tu, q)
	el := Observation{Util: 0.92, MiceShare: 0}
	step(el, 20_000, 100_000, 10, "elephants, the configured profile")
	step(Observation{Util: 0.97, MaxDepth: 30_000}, 10_000, 50_000, 10, "E1")
	step(el, 10_000, 50_000, 10, "hold (2nd interval in the model)")
	step(el, 10_000, 50_000, 10, "hold (3rd: the average starts at 10K)")
	step(el, 10_000, 50_000, 10, "hold")
	step(Observation{Util: 0.97, MaxDepth: 0}, 1000, 5000, 10, "E1 to the floor (the average is still 10K)")
	step(Observation{Util: 0.92, MiceShare: 0.05}, 1000, 5000, 10, "mostly-elephants, next model: seen once, pending")
	step(el, 1000, 5000, 10, "elephants again")
	mixed := Observation{Util: 0.92, MiceShare: 0.2}
	step(mixed, 20_000, 100_000, 10, "mixed, two models away: a phase change, taken at once; new, across the mice divide: the configured profile")
	step(mixed, 20_000, 100_000, 10, "hold (watching)")
	step(mixed, 20_000, 100_000, 10, "hold")
	step(mixed, 20_000, 100_000, 10, "hold: settled")
	// Elephants' remembered Kmin: the average starts at its 3rd interval
	// (10K), then takes the Kmin in force in each later one with weight
	// 0.25: 10K, 10K (the interval that moved it to 1K), 1K (the pending
	// interval counts for nothing): 10K x 0.1^0.25 = 5623.4; Kmax 28117.
	step(el, 5623, 28_117, 10, "elephants: known, its averaged Kmin")
	full := Observation{Util: 0.97, MaxDepth: 30_000}
	step(full, 5623, 28_117, 10, "watching after the jump: 1")
	step(full, 5623, 28_117, 10, "2")
	step(full, 5623, 28_117, 10, "3")
	step(full, 2812, 14_059, 10, "E1 again: 2811.7, Kmax 14058.5")
	step(mixed, 20_000, 100_000, 10, "mixed: known, the configured profile it kept")
}

// TestAIECNConfiguredModel: a known model from the configuration is
// where the tuner starts the first time the traffic matches it.
func TestAIECNConfiguredModel(t *testing.T) {
	tu, q := tunerQueue(t, TunerConfig{Algorithm: AlgoAIECN, Prios: model.PriosOf(3), MinThreshold: 1000, MaxThreshold: 140_000,
		Models: map[string]model.WRED{"elephants": {Enable: true, Min: 2000, Max: 10_000, Prob: 50}}})
	w, why := tu.alg.decide(q, Observation{Util: 0.9, MiceShare: 0})
	if w.Min != 2000 || w.Max != 10_000 || w.Prob != 50 {
		t.Fatalf("%d/%d/%d%% (%s), want the configured model 2000/10000/50%%", w.Min, w.Max, w.Prob, why)
	}
}

// TestARED checks Linux's rule by hand: profile 20K/100K/10%, target band
// [20K + 2 x 16K, 20K + 3 x 16K] = [52K, 68K].
func TestARED(t *testing.T) {
	tu, q := tunerQueue(t, TunerConfig{Algorithm: AlgoARED, Prios: model.PriosOf(3), MinThreshold: 1000, MaxThreshold: 140_000, MinProb: 1, MaxProb: 100})
	a := tu.alg
	want := func(o Observation, p float64, changed bool) {
		t.Helper()
		w, why := a.decide(q, o)
		if (why != "") != changed {
			t.Fatalf("avg %.0f: changed %v (%q), want %v", o.MeanDepth, why != "", why, changed)
		}
		q.cur = q.clamp(w)
		if math.Abs(w.ProbExact-p) > 1e-12 || w.Min != 20_000 || w.Max != 100_000 {
			t.Fatalf("avg %.0f: %d/%d max_p %g, want 20000/100000 %g", o.MeanDepth, w.Min, w.Max, w.ProbExact, p)
		}
	}
	want(Observation{MeanDepth: 80_000}, 0.11, true)      // + min(0.01, 0.1/4)
	want(Observation{MeanDepth: 60_000}, 0.11, false)     // inside the band
	want(Observation{MeanDepth: 30_000}, 0.11*0.9, true)  // x 0.9
	want(Observation{MeanDepth: 68_000}, 0.11*0.9, false) // the band's edges are in it
	s := q.state.(*aredState)
	s.maxP = 0.02
	want(Observation{MeanDepth: 90_000}, 0.025, true) // + min(0.01, 0.02/4 = 0.005)
	s.maxP = 0.009
	if _, why := a.decide(q, Observation{MeanDepth: 0}); why != "" {
		t.Errorf("max_p below 1%% decreased: %s", why)
	}
	s.maxP = 0.51
	if _, why := a.decide(q, Observation{MeanDepth: 99_000}); why != "" {
		t.Errorf("max_p above 50%% increased: %s", why)
	}
}

// fakeBackend records what a controller applies.
type fakeBackend struct {
	applied []*model.Desired
	c       *model.Counters
}

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Apply(_ context.Context, d *model.Desired) (model.Report, error) {
	f.applied = append(f.applied, d)
	return model.Report{}, nil
}
func (f *fakeBackend) Counters(context.Context) (*model.Counters, error) { return f.c, nil }
func (f *fakeBackend) Close() error                                      { return nil }

// TestTunerThroughController: the controller samples every poll, the
// tuner decides every interval, and what is applied gives the tuned queue
// its own profile while the configured one stays. A limit above XOFF
// (which conf refuses) is still clamped below it.
func TestTunerThroughController(t *testing.T) {
	be := &fakeBackend{}
	d := tunedDesired()
	d.Elephant = &model.Elephant{Rate: 1e9 / 8, Size: 100_000, ClassifyOnly: true}
	c := NewController(be, d, WatchdogConfig{})
	tu, err := NewECNTuner(TunerConfig{Algorithm: AlgoAIECN, Prios: model.PriosOf(3), Interval: time.Millisecond,
		MinThreshold: 1000, MaxThreshold: 400_000, UtilTarget: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	c.SetTuner(tu)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Half the link's bytes, half of them mice, marks: AI ECN raises.
	ic := &model.IfaceCounters{Name: "e", Speed: 25e9}
	be.c = &model.Counters{Ifaces: map[string]*model.IfaceCounters{"e": ic}}
	perPoll := uint64(25e9 / 8 * 100e-6 / 2)
	for i := 1; i <= 200; i++ {
		pc := &ic.Prio[3]
		pc.TxBytes += perPoll
		pc.TxPackets += perPoll / 1000
		pc.ElephantBytes += perPoll / 2
		pc.MiceBytes += perPoll / 2
		pc.Marks++
		pc.Depth = 5000
		if _, err := c.Poll(ctx, t0.Add(time.Duration(i)*100*time.Microsecond)); err != nil {
			t.Fatal(err)
		}
		a := c.Applied()
		p := a.Profile(a.Iface("e").Queues[3].Profile)
		if g := p.Colors[model.Green]; g.Max >= 150_000 || g.Min >= g.Max {
			t.Fatalf("poll %d: applied %d/%d, XOFF 150000", i, g.Min, g.Max)
		}
	}
	a := c.Applied()
	name := a.Iface("e").Queues[3].Profile
	if name != "roce@e/3" || a.Profile("roce") == nil {
		t.Fatalf("tuned queue profile %q, profiles %+v", name, a.Profiles)
	}
	if g := a.Profile(name).Colors[model.Green]; g.Max != 149_999 || g.Min != 134_999 {
		t.Errorf("after 20 ms of raises %d/%d, want 134999/149999 (0.9 x and at XOFF-1)", g.Min, g.Max)
	}
	if g := d.Profile("roce").Colors[model.Green]; g.Min != 20_000 {
		t.Errorf("the configured profile changed: %+v", g)
	}
	if n := len(tu.Decisions()); n == 0 || len(be.applied) < 3 {
		t.Errorf("%d decisions, %d applies", n, len(be.applied))
	}
}
