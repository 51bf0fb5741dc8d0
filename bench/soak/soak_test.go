package soak

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
)

var (
	duration = flag.Duration("soak.duration", 60*time.Second, "chaos time (the 20-minute run: -soak.duration 20m -timeout 60m)")
	seed     = flag.Uint64("soak.seed", 0, "seed of the event sequence (0: from the clock; printed)")
	report   = flag.String("soak.report", "", "write the report as JSON to this file")
)

// TestSoak runs the chaos soak on Topology for -soak.duration (60s in
// CI). Under CI=true a missing prerequisite (root, FRR, nft) fails.
func TestSoak(t *testing.T) {
	interop.RequireLab(t)
	if _, err := exec.LookPath("nft"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but nft not found (apt-get install nftables)")
		}
		t.Skip("nft not found (apt-get install nftables)")
	}
	bins := interop.LabBins(t)
	l := interop.StartLab(t, Topology, interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("soak seed %d (replay: -soak.seed %d)", s, s)
	ctx, cancel := context.WithTimeout(context.Background(), *duration+15*time.Minute)
	defer cancel()
	rep := New(l, Config{Seed: s, Duration: *duration, Log: testWriter{t}}).Run(ctx)
	t.Logf("soak report:\n%s", rep)
	if *report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*report, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(rep.Failures) > 0 {
		t.Fatalf("%d failures (seed %d)", len(rep.Failures), s)
	}
	if rep.Cycles == 0 || len(rep.Events) == 0 {
		t.Fatalf("no chaos ran: %d cycles, events %v", rep.Cycles, rep.Events)
	}
	for _, inv := range []string{InvLSDB, InvKernel, InvNexthops, InvReach, InvLogs, InvResources} {
		if rep.Checks[inv] == 0 {
			t.Errorf("invariant %s never checked", inv)
		}
	}
	checksCatch(t, ctx, l)
}

// checksCatch plants faults the checks exist for, on the settled lab: a
// nexthop object of fared's protocol that no route uses, then a panic
// line in a fared log.
func checksCatch(t *testing.T, ctx context.Context, l *interop.Lab) {
	r := New(l, Config{})
	lk := l.Links[0] // il1 - is1
	if _, err := l.Exec(ctx, lk.A, "ip", "nexthop", "add", "id", "4242", "via", lk.AddrB.Addr().String(), "dev", lk.IfA, "proto", "isis"); err != nil {
		t.Fatal(err)
	}
	if err := r.checkKernel(ctx); err == nil || !strings.Contains(err.Error(), "nexthop objects no route uses: 4242 ") {
		t.Errorf("planted nexthop 4242 on %s: checkKernel says %v", lk.A, err)
	}
	if _, err := l.Exec(ctx, lk.A, "ip", "nexthop", "del", "id", "4242"); err != nil {
		t.Fatal(err)
	}
	if err := r.checkKernel(ctx); err != nil {
		t.Errorf("after removing the planted nexthop: %v", err)
	}
	f, err := os.OpenFile(l.FaredLog(lk.A), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("panic: planted by the soak test\n\ngoroutine 1 [running]:\n")
	f.Close()
	if err := r.checkLogs(ctx); err == nil || !strings.Contains(err.Error(), "panic: planted") {
		t.Errorf("planted panic in %s's log: checkLogs says %v", lk.A, err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-min(1, len(p))]))
	return len(p), nil
}

// TestPlanDeterministic: a seed fixes the loss links and every burst (no
// root needed: the lab is only planned).
func TestPlanDeterministic(t *testing.T) {
	topo, err := interop.ParseTopology([]byte(Topology))
	if err != nil {
		t.Fatal(err)
	}
	l, err := interop.Plan(topo, interop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	draw := func(seed uint64) []string {
		r := New(l, Config{Seed: seed})
		var out []string
		for range 20 {
			for _, i := range r.pickLinks(r.cfg.LossLinks, nil) {
				out = append(out, "loss "+l.Links[i].IfA)
			}
			for _, e := range r.plan() {
				out = append(out, e.String())
				if e.kind != EvFlap && !fits(l.Node(e.node), e.kind) {
					t.Fatalf("%s on %s (%s %s)", e.kind, e.node, l.Node(e.node).Kind, l.Node(e.node).Protocol)
				}
			}
		}
		return out
	}
	a, b, c := draw(42), draw(42), draw(43)
	if len(a) != len(b) {
		t.Fatalf("seed 42 drew %d then %d steps", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42, step %d: %q then %q", i, a[i], b[i])
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == c[i]
	}
	if same {
		t.Fatal("seeds 42 and 43 drew the same sequence")
	}
	kinds := map[string]bool{}
	for _, s := range a {
		k, _, _ := strings.Cut(s, " ")
		kinds[k] = true
	}
	for _, k := range []string{EvFlap, EvKillFared, EvKillISISd, EvKillOSPFd, EvRestartFared, EvRestartFRR} {
		if !kinds[k] {
			t.Errorf("20 bursts of seed 42 have no %s: %v", k, kinds)
		}
	}
}

func TestRejectedRE(t *testing.T) {
	// FRR 8.4.4 `show ip route` on a leaf whose zebra lost its nexthop
	// groups (soak, seed 20261124).
	out := `I>* 10.254.0.0/31 [115/20] via 10.254.0.5, is1-1, weight 1, 00:00:10
I   10.254.0.4/31 [115/20] via 10.254.0.5, is1-1 inactive, weight 1, 00:00:10
C>* 10.254.0.4/31 is directly connected, is1-1, 00:09:58
I>r 10.255.0.3/32 [115/20] via 10.254.0.5, is1-1, weight 1, 00:00:10
  r                        via 10.254.0.7, is2-1, weight 1, 00:00:10
C>* 10.255.0.4/32 is directly connected, lo, 00:12:43
I>r 10.255.0.5/32 [115/20] via 10.254.0.5, is1-1, weight 1, 00:00:10
`
	got := rejectedRE.FindAllString(out, -1)
	if len(got) != 2 || !strings.HasPrefix(got[0], "I>r 10.255.0.3/32") || !strings.HasPrefix(got[1], "I>r 10.255.0.5/32") {
		t.Fatalf("%q", got)
	}
}
