package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

// TestDemoFabric runs the README's main job, examples/clos3.yaml, under a
// per-run name and checks what scripts/demo.sh shows: l1's weighted group
// for l2's prefix (draft §4.1: 40/50/100/10 by hand, in the README's
// table), h1 told that h2 joined zone storage-a, every leaf knowing the
// four hosts (tgt from LLDP), the QoS backend on l1's host port, and an
// INC allreduce of h1–h3 that each rank verifies. Every router runs BFD
// on its adjacencies and iNOF's sessions use the same speaker: nothing
// flaps (bfdNoFlap), before or after the rest.
func TestDemoFabric(t *testing.T) {
	topo, err := os.ReadFile("../../examples/clos3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := startLab(t, string(topo))
	ctx := ctxT(t)
	f := &fabric{t: t, ctx: ctx, l: l, proto: 187}
	f.waitRoute(f.ns("l1"), "l1", "10.10.2.0/24", map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 10}, 60*time.Second)
	routers := []string{"s1", "s2", "l1", "l2", "l3"}
	bfdNoFlap(t, ctx, l, routers, 20*time.Second)
	defer func() {
		// And nothing flapped while the modules worked either.
		for _, n := range routers {
			st, err := readBFDState(ctx, l, n)
			if err != nil {
				t.Errorf("at the end: %v", err)
				continue
			}
			for _, f := range st.flapped() {
				t.Errorf("%s: %s", n, f)
			}
			if k := bfdAdjDowns(t, l, n); k != 0 {
				t.Errorf("%s: %d adjacencies taken down by BFD", n, k)
			}
		}
	}()

	poll(t, ctx, 60*time.Second, "h1 told that h2 joined storage-a", func() error {
		var evs []wire.INOFEvent
		if err := l.FarectlJSON(ctx, "h1", &evs, "inof", "events"); err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == "join" && e.Host == "h2" && e.Zone == "storage-a" {
				return nil
			}
		}
		return fmt.Errorf("events %+v", evs)
	})
	poll(t, ctx, 30*time.Second, "l1 knows the four hosts", func() error {
		var hs []wire.INOFHost
		if err := l.FarectlJSON(ctx, "l1", &hs, "inof", "hosts"); err != nil {
			return err
		}
		src := map[string]string{}
		for _, h := range hs {
			src[h.ID] = h.Source
		}
		if len(src) != 4 || src["h1"] != "agent" || src["tgt"] != "bgp" {
			return fmt.Errorf("hosts %v", src)
		}
		return nil
	})

	var qs wire.QoSStatus
	if err := l.FarectlJSON(ctx, "l1", &qs, "qos", "status"); err != nil {
		t.Fatal(err)
	}
	if qs.Backend != "linux" || len(qs.Interfaces) != 1 || qs.Interfaces[0].Name != "h1-1" {
		t.Fatalf("qos status %+v", qs)
	}

	poll(t, ctx, 60*time.Second, "five aggregating switches registered", func() error {
		var sw []wire.INCRegisteredSwitch
		if err := l.FarectlJSON(ctx, "s1", &sw, "inc", "switches"); err != nil {
			return err
		}
		alive := 0
		for _, s := range sw {
			if s.Alive {
				alive++
			}
		}
		if alive != 5 {
			return fmt.Errorf("%d alive of %+v", alive, sw)
		}
		return nil
	})
	var wg sync.WaitGroup
	outs := make([]string, 3)
	errs := make([]error, 3)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			out, err := l.Exec(ctx, fmt.Sprintf("h%d", r+1), bins.Fareinc, "allreduce", "--manager", "10.255.0.1:7791", "--group", "demo",
				"--rank", fmt.Sprint(r), "--ranks", "3", "--size", "1MB", "--dtype", "fp32", "--op", "sum")
			outs[r], errs[r] = string(out), err
		}(r)
	}
	wg.Wait()
	for r := range 3 {
		var res struct {
			Mode     string `json:"mode"`
			Verified bool   `json:"verified"`
		}
		line := strings.TrimSpace(outs[r])
		if i := strings.LastIndex(line, "\n"); i >= 0 {
			line = line[i+1:]
		}
		if errs[r] != nil || json.Unmarshal([]byte(line), &res) != nil || res.Mode != "inc" || !res.Verified {
			t.Errorf("h%d: %v\n%s", r+1, errs[r], outs[r])
		}
	}
}
