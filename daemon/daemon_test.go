package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fared/fared/internal/testns"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
)

// toy is a module written the way a new module is: its own config
// section, its own API, link events, and a Check that refuses what it
// cannot apply. It proves the contract: it plugs in with a Spec, without
// any edit to cmd/fared or the api server.
type toy struct {
	limit  int
	mu     sync.Mutex
	events []string
	runs   *atomic.Int32
}

type toyConfig struct{ Limit int }

func init() {
	config.Register(config.Section{Key: "toy", Parse: func(w *config.Walker, k, v *yaml.Node) any {
		c := &toyConfig{Limit: 3}
		if w.IsMapping(k, v) {
			w.Mapping(v, map[string]config.Field{"limit": config.SetInt(w, &c.Limit, 0, 100)})
		}
		return c
	}})
}

func toyConf(c *config.Config) *toyConfig {
	t, _ := c.Sections["toy"].(*toyConfig)
	return t
}

var toyRuns atomic.Int32

var toySpec = daemon.Spec{
	Name:       "toy",
	Configured: func(c *config.Config) bool { return toyConf(c) != nil },
	New: func(core *daemon.Core, c *config.Config) (daemon.Module, error) {
		return &toy{limit: toyConf(c).Limit, runs: &toyRuns}, nil
	},
}

// toyCause is why the last toy's Run ended.
var toyCause atomic.Value

func (t *toy) Run(ctx context.Context) error {
	t.runs.Add(1)
	<-ctx.Done()
	toyCause.Store(context.Cause(ctx))
	return nil
}

// Check refuses a limit above 10: the whole reload is rejected.
func (t *toy) Check(c *config.Config) error {
	if l := toyConf(c).Limit; l > 10 {
		return fmt.Errorf("limit %d: at most 10 can be applied live", l)
	}
	return nil
}

func (t *toy) Reconfigure(ctx context.Context, c *config.Config) (daemon.Change, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := toyConf(c).Limit
	if n == t.limit {
		return daemon.Change{}, nil
	}
	ch := daemon.Change{Changed: []string{fmt.Sprintf("limit: %d -> %d", t.limit, n)}}
	t.limit = n
	return ch, nil
}

func (t *toy) Routes(r *api.Router) {
	r.Handle("GET events", func(*http.Request) (any, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		return map[string]any{"limit": t.limit, "events": append([]string{}, t.events...)}, nil
	})
}

func (t *toy) LinkEvent(ev netif.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, ev.Name+" "+ev.Kind.String())
}

type harness struct {
	stop func() // stops the daemon (once)
	t    *testing.T
	ns   string
	file string
	d    *daemon.Daemon
	c    *client.Client
	errc chan error
}

func start(t *testing.T, cfgText string, specs ...daemon.Spec) *harness {
	t.Helper()
	n := testns.New(t, "fdt")
	ns, h := n.Name, n.Handle
	dir := t.TempDir()
	file := filepath.Join(dir, "fared.yaml")
	sock := filepath.Join(dir, "fared.sock")
	hs := &harness{t: t, ns: ns, file: file, errc: make(chan error, 1)}
	hs.write(cfgText)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	hs.d = daemon.New(cfg, specs, daemon.Options{Socket: sock, Log: log, NetNS: h, Level: new(slog.LevelVar)})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { hs.errc <- hs.d.Run(ctx) }()
	var once sync.Once
	hs.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-hs.errc:
				if err != nil {
					t.Errorf("daemon stopped with %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("daemon did not stop")
			}
		})
	}
	t.Cleanup(func() {
		hs.stop()
		if t.Failed() {
			mu.Lock()
			t.Logf("daemon log:\n%s", logs.String())
			mu.Unlock()
		}
	})
	hs.c = client.New(sock)
	hs.poll("API up", func() error { _, err := hs.c.Get(context.Background(), "/status"); return err })
	return hs
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (h *harness) write(text string) {
	h.t.Helper()
	if err := os.WriteFile(h.file, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) poll(what string, f func() error) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) ip(args ...string) {
	h.t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", h.ns}, args...)...).CombinedOutput(); err != nil {
		h.t.Fatalf("ip %v: %v %s", args, err, out)
	}
}

const toyBase = "router-id: 10.0.0.1\nfib: {on-shutdown: flush}\n"

// TestToyModulePlugsIn: a module given only as a Spec runs, serves its
// API under /v1/toy/, hears link events from the kernel, and takes part
// in reloads; removing its section stops it, adding it back starts it.
func TestToyModulePlugsIn(t *testing.T) {
	h := start(t, toyBase+"toy: {limit: 2}\n", toySpec)
	ctx := context.Background()
	var v struct {
		Limit  int      `json:"limit"`
		Events []string `json:"events"`
	}
	h.ip("link", "add", "dum0", "type", "veth", "peer", "name", "dum1")
	h.ip("link", "set", "dum1", "up")
	h.ip("link", "set", "dum0", "up")
	h.poll("toy hears dum0 come up", func() error {
		if err := h.c.GetJSON(ctx, "/toy/events", &v); err != nil {
			return err
		}
		if !strings.Contains(strings.Join(v.Events, ","), "dum0 link-up") {
			return fmt.Errorf("events %v", v.Events)
		}
		return nil
	})
	var st wire.Status
	if err := h.c.GetJSON(ctx, "/status", &st); err != nil || strings.Join(st.Modules, ",") != "toy" {
		t.Fatalf("status %+v %v", st, err)
	}

	// A reload the module accepts is applied and reported per module.
	h.write(toyBase + "toy: {limit: 5}\n")
	b, err := h.c.Post(ctx, "/reload", nil)
	if err != nil || !strings.Contains(string(b), `"limit: 2 -> 5"`) {
		t.Fatalf("reload: %s %v", b, err)
	}
	// One it refuses changes nothing, and says why (422).
	h.write(toyBase + "toy: {limit: 50}\n")
	_, err = h.c.Post(ctx, "/reload", nil)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 422 || !strings.Contains(ce.Reason, "toy: limit 50: at most 10") {
		t.Fatalf("refused reload: %v", err)
	}
	if err := h.c.GetJSON(ctx, "/toy/events", &v); err != nil || v.Limit != 5 {
		t.Fatalf("after a refused reload the limit is %d (%v), want 5", v.Limit, err)
	}
	// A config with errors is refused with file:line.
	h.write(toyBase + "toy: {limit: 5, colour: red}\n")
	if _, err = h.c.Post(ctx, "/reload", nil); err == nil || !strings.Contains(err.Error(), h.file+":3: unknown key \"colour\"") {
		t.Fatalf("bad file: %v", err)
	}

	// Section removed: the module stops and its API says so.
	runs := toyRuns.Load()
	h.write(toyBase)
	b, err = h.c.Post(ctx, "/reload", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"stopped"`) {
		t.Fatalf("reload without toy: %s", b)
	}
	if _, err := h.c.Get(ctx, "/toy/events"); !errors.As(err, &ce) || ce.Status != 404 || ce.Reason != "toy is not configured on this daemon" {
		t.Fatalf("stopped module's API: %v", err)
	}
	if c, _ := toyCause.Load().(error); !errors.Is(c, daemon.ErrRemoved) {
		t.Fatalf("a removed module's context ends with %v, want ErrRemoved", c)
	}
	// Section added back: a new instance starts.
	h.write(toyBase + "toy: {limit: 1}\n")
	b, err = h.c.Post(ctx, "/reload", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.poll("toy started again", func() error {
		if toyRuns.Load() != runs+1 {
			return fmt.Errorf("runs %d", toyRuns.Load())
		}
		return h.c.GetJSON(ctx, "/toy/events", &v)
	})
	if v.Limit != 1 {
		t.Fatalf("restarted toy has limit %d", v.Limit)
	}
	// The daemon stopping ends it with ErrShutdown: a module then leaves
	// its sessions as a restart would (graceful restart), not withdraws.
	h.stop()
	if c, _ := toyCause.Load().(error); !errors.Is(c, daemon.ErrShutdown) {
		t.Fatalf("a module stopped with the daemon ends with %v, want ErrShutdown", c)
	}
}

// TestConcurrentReloads: SIGHUP and the API may reload at once; reloads
// are serialised and each sees a consistent module set (run with -race).
func TestConcurrentReloads(t *testing.T) {
	h := start(t, toyBase+"toy: {limit: 2}\n", toySpec)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				_, err := h.d.Reload(ctx)
				errs <- err
				return
			}
			_, err := h.c.Post(ctx, "/reload", nil)
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := h.d.Modules(); strings.Join(got, ",") != "toy" {
		t.Fatalf("modules after concurrent reloads: %v", got)
	}
}

// TestReloadSPFTimers: new rib SPF timers reach the rib's back-off on
// reload, per routing protocol of the module table (configured or not).
func TestReloadSPFTimers(t *testing.T) {
	h := start(t, toyBase+"rib:\n  spf: {initial-delay: 2s}\n", toySpec, isis.Spec, ospf.Spec)
	if d := h.d.RIB().Routing("isis").Delay.InitialDelay; d != 2*time.Second {
		t.Fatalf("initial delay at start %v", d)
	}
	h.write(toyBase + "rib:\n  spf: {initial-delay: 20ms, long-delay: 1s}\n  ecmp-only: true\n")
	res, err := h.d.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"isis", "ospf"} {
		r := h.d.RIB().Routing(p)
		if r.Delay.InitialDelay != 20*time.Millisecond || r.Delay.LongDelay != time.Second || !r.ECMPOnly {
			t.Errorf("%s after reload: %+v", p, r)
		}
	}
	if ch := strings.Join(res.Modules["rib"].Changed, "\n"); !strings.Contains(ch, "isis: spf timers") || !strings.Contains(ch, "ospf: ecmp-only false -> true") {
		t.Errorf("rib report: %q", ch)
	}
}

// running-config writes what is in force, module sections included, and
// parses back; log level changes live and a bad level is a 400.
func TestRunningConfigAndLogLevel(t *testing.T) {
	h := start(t, toyBase+"toy: {limit: 4}\n", toySpec)
	ctx := context.Background()
	var rc wire.RunningConfig
	if err := h.c.GetJSON(ctx, "/running-config", &rc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rc.YAML, "toy:\n    limit: 4\n") || !strings.Contains(rc.YAML, "on-shutdown: flush") {
		t.Fatalf("running-config:\n%s", rc.YAML)
	}
	if _, err := config.Parse("rc.yaml", []byte(rc.YAML)); err != nil {
		t.Fatalf("running-config does not parse: %v\n%s", err, rc.YAML)
	}
	b, err := h.c.Post(ctx, "/log/level", wire.LogLevel{Level: "warn"})
	if err != nil || !strings.Contains(string(b), `"warn"`) {
		t.Fatalf("log level: %s %v", b, err)
	}
	var ce *client.Error
	if _, err := h.c.Post(ctx, "/log/level", wire.LogLevel{Level: "loud"}); !errors.As(err, &ce) || ce.Status != 400 {
		t.Fatalf("bad level: %v", err)
	}
}
