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

// TestAIECNRules walks AI ECN's rules with hand-computed thresholds
// (limits 1K..140K, Kmax/Kmin = 5 from the profile).
func TestAIECNRules(t *testing.T) {
	tu, q := tunerQueue(t, TunerConfig{Algorithm: AlgoAIECN, Prios: model.PriosOf(3), MinThreshold: 1000, MaxThreshold: 140_000, UtilTarget: 0.9})
	a := tu.alg
	step := func(o Observation, wantMin, wantMax uint64, what string) {
		t.Helper()
		w, why := a.decide(q, o)
		w = q.clamp(w)
		if why != "" {
			q.cur = w
		}
		if w.Min != wantMin || w.Max != wantMax {
			t.Fatalf("%s: %d/%d (%q), want %d/%d", what, w.Min, w.Max, why, wantMin, wantMax)
		}
	}
	mixed := Observation{Util: 0.95, MiceShare: 0.2}
	step(Observation{Util: 0.01, MiceShare: 0.2}, 20_000, 100_000, "idle: no model yet")
	step(mixed, 20_000, 100_000, "first busy interval: model mixed, the configured profile")
	o := mixed
	o.Util, o.Marks = 0.5, 10
	step(o, 25_000, 125_000, "under-utilised with marks and mice: x1.25")
	step(o, 31_250, 140_000, "again: Kmax stops at the limit")
	o = mixed
	o.MinDepth = 3000
	// 0.9 - 0.2 x 0.2 = 0.86
	step(o, 26_875, 134_375, "full link, standing queue: x0.86")
	step(mixed, 26_875, 134_375, "full link, queue drained: hold")
	el := Observation{Util: 0.6, Marks: 5, MiceShare: 0.005}
	step(el, 26_875, 134_375, "elephants seen once: pending, hold")
	step(el, 20_000, 100_000, "elephants twice: switch, new model, configured profile")
	step(el, 16_000, 80_000, "elephants alone under-utilised with marks: x0.8")
	step(Observation{Util: 0.95, MiceShare: 0}, 16_000, 80_000, "elephants, full link, queue drained: hold")
	step(Observation{Util: 0.95, MiceShare: 0}, 16_000, 80_000, "hold (the model has settled)")
	step(mixed, 16_000, 80_000, "mixed once: pending")
	step(mixed, 26_875, 134_375, "mixed again: known model, its remembered Kmin")
	el.Util = 0.95
	step(el, 26_875, 134_375, "elephants once")
	step(el, 16_000, 80_000, "elephants again: remembered 16K (it settled: 3 intervals)")
	if q.model != "elephants" {
		t.Errorf("model %q", q.model)
	}
	// Kmin rises to at most 90% of the limit.
	o = mixed
	o.Util, o.Marks, o.MiceShare = 0.5, 1, 0.005
	for i := 0; i < 20; i++ {
		w, _ := a.decide(q, Observation{Util: 0.5, Marks: 1, MiceShare: 0.2})
		q.cur = q.clamp(w)
	}
	if q.cur.Min != 126_000 || q.cur.Max != 140_000 {
		t.Errorf("after many raises %d/%d, want 126000/140000", q.cur.Min, q.cur.Max)
	}
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
