// Package igptest holds the test helpers the IGP modules' tests share:
// polling, running an instance for a test, reload reports, log capture
// and metric scrapes.
package igptest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/logbuf"
	"github.com/fared/fared/internal/scrape"
)

// Poll retries f until it returns nil or the deadline passes.
func Poll(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not reached within %v: %v", what, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Go runs an instance's Run until stop is called (the test's end calls
// it: stopping twice is fine).
func Go(t testing.TB, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// Reloader is a module's reload half.
type Reloader interface {
	Check(cfg *config.Config) error
	Reconfigure(ctx context.Context, cfg *config.Config) (daemon.Change, error)
}

// Reload checks and applies cfg, as the daemon does, and returns the
// report.
func Reload(t testing.TB, m Reloader, cfg *config.Config) daemon.Change {
	t.Helper()
	if err := m.Check(cfg); err != nil {
		t.Fatalf("check: %v", err)
	}
	rep, err := m.Reconfigure(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// HasLine succeeds when a change line of rep contains every part.
func HasLine(rep daemon.Change, parts ...string) error {
	for _, c := range rep.Changed {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(c, p)
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("no change line with %q in %q (warnings %q)", parts, rep.Changed, rep.Warnings)
}

// Writer writes a test's log lines (slog handlers over it).
type Writer struct{ T testing.TB }

func (w Writer) Write(b []byte) (int, error) {
	w.T.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// LogBuf collects log lines for the "logged once" checks.
type LogBuf = logbuf.Buffer

// Gather scrapes collectors through a pedantic registry (what is
// collected must match what is described) and lints the names.
func Gather(t *testing.T, cs ...prometheus.Collector) (scrape.Families, error) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	probs, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	f := scrape.Families{}
	for _, mf := range mfs {
		f[mf.GetName()] = mf
	}
	return f, nil
}

// MetricIs succeeds when the series of name with labels sum to want.
func MetricIs(f scrape.Families, want float64, name string, labels ...string) error {
	v, ok := f.Sum(name, labels...)
	if !ok || v != want {
		return fmt.Errorf("%s%v = %v (present %v), want %v; series %v", name, labels, v, ok, want, f.Series(name))
	}
	return nil
}

// Series is a metric series and the sum its samples must reach (the
// arguments of MetricIs).
type Series struct {
	Want   float64
	Name   string
	Labels []string
}

// Metric is the series of name with labels, to sum to want.
func Metric(want float64, name string, labels ...string) Series {
	return Series{Want: want, Name: name, Labels: labels}
}

// PollMetrics polls the collectors until every series of want has its
// value.
func PollMetrics(t *testing.T, d time.Duration, what string, cs []prometheus.Collector, want ...Series) {
	t.Helper()
	Poll(t, d, what, func() error {
		f, err := Gather(t, cs...)
		if err != nil {
			return err
		}
		for _, s := range want {
			if err := MetricIs(f, s.Want, s.Name, s.Labels...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Failures drives MetricsThroughFailures on an instance with one Up
// adjacency on interface e0.
type Failures struct {
	Collectors     func() []prometheus.Collector
	StopPeer, Stop func() // silence the neighbour, stop the instance
	SendBad        func() // a malformed packet, as from the neighbour
	Rejected       Series // the rejection SendBad counts
	Adjacent       Series // the adjacency Up (its Want), 0 once the neighbour is silent
	Changes        string // the adjacency changes counter (labels interface, to)
}

// MetricsThroughFailures: a malformed packet is counted and keeps the
// adjacency; a silent neighbour takes it down (one change to down); a
// stopped instance costs the scrape its metrics, with an error (after the
// scrape timeout), rather than hanging it.
func MetricsThroughFailures(t *testing.T, f Failures) {
	t.Helper()
	f.SendBad()
	PollMetrics(t, 5*time.Second, "rejection counted", f.Collectors(), f.Rejected)
	up := f.Adjacent
	if m, _ := Gather(t, f.Collectors()...); MetricIs(m, up.Want, up.Name, up.Labels...) != nil {
		t.Fatal("adjacency lost to a bad packet")
	}
	f.StopPeer()
	PollMetrics(t, 10*time.Second, "adjacency down in the metrics", f.Collectors(),
		Metric(0, up.Name, up.Labels...), Metric(1, f.Changes, "interface", "e0", "to", "down"))
	f.Stop()
	if _, err := Gather(t, f.Collectors()...); err == nil {
		t.Fatal("a stopped instance answered")
	}
}
