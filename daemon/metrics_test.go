package daemon_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/fared/fared/api"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/scrape"
)

// metered is a module with metrics of its own (the Collector capability):
// the daemon must register them while it runs and drop them when a
// reload stops it.
type metered struct{ ticks prometheus.Counter }

func init() {
	config.Register(config.Section{Key: "metered", Parse: func(w *config.Walker, k, v *yaml.Node) any {
		w.IsMapping(k, v)
		return struct{}{}
	}})
}

var meteredSpec = daemon.Spec{
	Name:       "metered",
	Configured: func(c *config.Config) bool { _, ok := c.Sections["metered"]; return ok },
	New: func(*daemon.Core, *config.Config) (daemon.Module, error) {
		m := &metered{ticks: prometheus.NewCounter(prometheus.CounterOpts{Name: "fared_metered_ticks_total", Help: "Ticks."})}
		m.ticks.Add(7)
		return m, nil
	},
}

func (m *metered) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (m *metered) Check(*config.Config) error    { return nil }
func (m *metered) Reconfigure(context.Context, *config.Config) (daemon.Change, error) {
	return daemon.Change{}, nil
}
func (m *metered) Routes(*api.Router)                 {}
func (m *metered) Collectors() []prometheus.Collector { return []prometheus.Collector{m.ticks} }

// The metrics listener serves a well-formed, lint-clean exposition in the
// daemon's namespace; a module's collectors come and go with the module
// on reload; reloads are counted; the listener follows the section (path,
// address, removal), and a reload is refused nothing for it.
func TestMetricsListenerAndModules(t *testing.T) {
	const base = toyBase + "metrics: {listen: 127.0.0.1:9342}\n"
	h := start(t, base+"metered: {}\n", meteredSpec, toySpec)
	ctx := context.Background()
	get := func(url string) scrape.Families {
		t.Helper()
		fams, body, err := scrape.Scrape(ctx, h.ns, url)
		if err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		return fams
	}
	val := func(f scrape.Families, name string, labels ...string) float64 {
		t.Helper()
		v, ok := f.Sum(name, labels...)
		if !ok {
			t.Fatalf("%s%v absent; have %v", name, labels, f.Series(name))
		}
		return v
	}
	reload := func(cfg string, wantOK bool) {
		t.Helper()
		h.write(cfg)
		res, err := h.d.Reload(ctx)
		if (err == nil) != wantOK {
			t.Fatalf("reload: %+v %v", res, err)
		}
	}
	url := "http://127.0.0.1:9342/metrics"
	f := get(url)
	if val(f, "fared_module_up", "module", "metered") != 1 || val(f, "fared_module_up", "module", "toy") != 0 {
		t.Fatalf("module_up: %v", f.Series("fared_module_up"))
	}
	if val(f, "fared_metered_ticks_total") != 7 || val(f, "fared_build_info") != 1 {
		t.Fatal("module or build metrics")
	}
	for name, typ := range map[string]string{"fared_spf_runs_total": "COUNTER", "fared_spf_duration_seconds": "HISTOGRAM",
		"fared_fib_messages_total": "COUNTER", "fared_fib_errors_total": "COUNTER", "fared_fare_weight_changes_total": "COUNTER",
		"fared_config_reloads_total": "COUNTER", "go_goroutines": "GAUGE", "process_start_time_seconds": "GAUGE"} {
		if f.Type(name) != typ {
			t.Errorf("%s: type %q, want %s", name, f.Type(name), typ)
		}
	}

	if u, err := f.Undocumented("../docs/metrics.md", "fared_metered_"); err != nil || len(u) > 0 {
		t.Errorf("not in docs/metrics.md: %v %v", u, err)
	}

	// The module's section removed: it stops, its metrics go.
	reload(base, true)
	f = get(url)
	if _, ok := f.Sum("fared_metered_ticks_total"); ok || val(f, "fared_module_up", "module", "metered") != 0 {
		t.Fatalf("stopped module still exported: %v %v", f.Series("fared_metered_ticks_total"), f.Series("fared_module_up"))
	}
	// Back: a new instance registers its own (fresh) counter.
	reload(base+"metered: {}\n", true)
	f = get(url)
	if val(f, "fared_metered_ticks_total") != 7 || val(f, "fared_config_reloads_total", "result", "applied") != 2 {
		t.Fatalf("after re-adding: reloads %v", f.Series("fared_config_reloads_total"))
	}
	// A config with errors is rejected and counted.
	reload(base+"metered: {}\nbogus: 1\n", false)
	f = get(url)
	if val(f, "fared_config_reloads_total", "result", "rejected") != 1 || val(f, "fared_config_last_reload_successful") != 0 {
		t.Fatalf("rejected reload: %v", f.Series("fared_config_reloads_total"))
	}

	// Another path on the same socket.
	reload(toyBase+"metrics: {listen: 127.0.0.1:9342, path: /m}\n", true)
	get("http://127.0.0.1:9342/m")
	if _, err := scrape.Get(ctx, h.ns, url); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("old path: %v", err)
	}
	// Another port: the old one closes.
	reload(toyBase+"metrics: {listen: 127.0.0.1:9343}\n", true)
	get("http://127.0.0.1:9343/metrics")
	if _, err := scrape.Get(ctx, h.ns, url); err == nil {
		t.Fatal("old port still served")
	}
	// An address that cannot be bound: a warning, the old listener stays.
	h.write(toyBase + "metrics: {listen: 192.0.2.1:9342}\n")
	res, err := h.d.Reload(ctx)
	if err != nil || !strings.Contains(strings.Join(res.Warnings, "\n"), "still serving on 127.0.0.1:9343") {
		t.Fatalf("unbindable address: %+v %v", res, err)
	}
	get("http://127.0.0.1:9343/metrics")
	// Section removed: no listener.
	reload(toyBase, true)
	if _, err := scrape.Get(ctx, h.ns, "http://127.0.0.1:9343/metrics"); err == nil {
		t.Fatal("listener still up without a metrics section")
	}
}

// fared refuses to start when the metrics address cannot be bound.
func TestMetricsListenFailureStopsStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	os.WriteFile(file, []byte("router-id: 10.0.0.1\nfib: {enabled: false}\nmetrics: {listen: "+l.Addr().String()+"}\n"), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	d := daemon.New(cfg, nil, daemon.Options{Socket: filepath.Join(dir, "s.sock")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Run(ctx); err == nil || !strings.Contains(err.Error(), "metrics: cannot listen on "+l.Addr().String()) {
		t.Fatalf("Run: %v", err)
	}
}
