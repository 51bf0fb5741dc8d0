// Package ns3 cross-checks fared's software data plane (qos/sim) against
// ns-3.37, a simulator nobody here wrote: the same DCTCP dumbbell with
// RED/ECN marking at the bottleneck, for two marking thresholds; mean
// queue and throughput must agree within 10%. See README.md.
package ns3

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/qos/sim/scenario"
)

// Setting is one run of the dumbbell.
type Setting struct {
	K          int     // marking threshold, packets
	Flows      int     // DCTCP senders
	End        float64 // seconds simulated
	Warmup     float64 // seconds before measuring
	AccessG    float64 // Gb/s
	BottleG    float64 // Gb/s
	DelayMicro float64 // per link
}

// Figures are what both simulators report.
type Figures struct {
	MeanQueuePkts  float64 `json:"mean_queue_pkts"`
	MeanQueueBytes float64 `json:"mean_queue_bytes"`
	ThroughputBps  float64 `json:"throughput_bps"`
	Marks          uint64  `json:"marks"`
}

const wire = 1502 // bytes on the wire per data packet: 1448 + 20 IP + 32 TCP + 2 PPP

var modules = []string{"ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-traffic-control", "ns3-applications"}

// requireNS3 fails in CI (CI=true) and skips elsewhere when g++,
// pkg-config or ns-3 are missing.
func requireNS3(t *testing.T) {
	t.Helper()
	why := ""
	for _, b := range []string{"g++", "pkg-config"} {
		if _, err := exec.LookPath(b); err != nil {
			why = b + " not found (apt-get install g++ pkg-config)"
		}
	}
	if why == "" {
		if out, err := exec.Command("pkg-config", append([]string{"--exists"}, modules...)...).CombinedOutput(); err != nil {
			why = fmt.Sprintf("ns-3 not found by pkg-config (apt-get install libns3-dev libgsl-dev): %v %s", err, out)
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but " + why)
	}
	t.Skip(why)
}

// buildNS3 compiles dumbbell.cc into dir.
func buildNS3(t *testing.T, dir string) string {
	t.Helper()
	flags, err := exec.Command("pkg-config", append([]string{"--cflags", "--libs"}, modules...)...).Output()
	if err != nil {
		t.Fatalf("pkg-config: %v", err)
	}
	bin := filepath.Join(dir, "dumbbell")
	args := append([]string{"-O1", "-std=c++17", "-w", filepath.Join("cc", "dumbbell.cc"), "-o", bin}, strings.Fields(string(flags))...)
	start := time.Now()
	if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	t.Logf("built the ns-3 scenario in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

func runNS3(t *testing.T, bin string, s Setting) Figures {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(bin, fmt.Sprint(s.K), fmt.Sprint(s.Flows), fmt.Sprint(s.End), fmt.Sprint(s.Warmup),
		fmt.Sprint(s.AccessG), fmt.Sprint(s.BottleG), fmt.Sprint(s.DelayMicro)).Output()
	if err != nil {
		t.Fatalf("ns-3 run: %v\n%s", err, out)
	}
	var f Figures
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("ns-3 output %q: %v", out, err)
	}
	t.Logf("ns-3 K=%d: %v wall", s.K, time.Since(start).Round(time.Millisecond))
	return f
}

// Scenario is the same dumbbell as a qos-sim scenario. ns-3's RED
// decides on the queue disc, which holds all waiting packets but the one
// in the device queue (1 packet); it marks when the disc holds K or more.
// qos/sim's queue holds every waiting packet, so the same rule is "mark
// at K+1 waiting packets".
func Scenario(s Setting) string {
	var b strings.Builder
	th := (s.K + 1) * wire
	fmt.Fprintf(&b, `name: dumbbell-k%d
seed: 1
duration: %gs
mtu: %d
params: {ack-size: 54, hist-bucket: %d}
dctcp: {g: 0.0625, init-cwnd: 10, rto: 200ms}
defaults: {rate: %gG, delay: %gus, buffer: 64MB, lossy-limit: 32MB}
qos:
  ecn-profiles:
    dctcp: {green: {min: %d, max: %d, probability: 100}, ecn: all}
  queues: {0: {ecn: dctcp}}
switches: [R]
hosts: [rcv`, s.K, s.End, wire, wire, s.AccessG, s.DelayMicro, th, th)
	for i := 0; i < s.Flows; i++ {
		fmt.Fprintf(&b, ", s%d", i)
	}
	fmt.Fprintf(&b, "]\nlinks:\n  - {a: R, b: rcv, rate: %gG}\n", s.BottleG)
	for i := 0; i < s.Flows; i++ {
		fmt.Fprintf(&b, "  - {a: s%d, b: R}\n", i)
	}
	b.WriteString("flows:\n")
	for i := 0; i < s.Flows; i++ {
		fmt.Fprintf(&b, "  - {src: s%d, dst: rcv, cc: dctcp, stop: %gs}\n", i, s.End+1)
	}
	return b.String()
}

func runSim(t *testing.T, s Setting) (Figures, time.Duration) {
	t.Helper()
	sc, err := scenario.Parse(fmt.Sprintf("dumbbell-k%d", s.K), []byte(Scenario(s)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := sc.Start()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	warm := time.Duration(s.Warmup * float64(time.Second))
	in.Net.RunUntil(warm)
	in.Net.ResetStats()
	in.Net.RunUntil(time.Duration(s.End * float64(time.Second)))
	wall := time.Since(start)
	p := in.Net.Node("R").Port("rcv")
	d := p.Depth(0)
	c := p.Queue(0)
	span := s.End - s.Warmup
	return Figures{MeanQueuePkts: d.Mean / wire, MeanQueueBytes: d.Mean, ThroughputBps: float64(c.TxBytes) * 8 / span, Marks: c.Marks}, wall
}

func rel(a, b float64) float64 { return math.Abs(a-b) / b }

// TestNS3Agreement: for K = 20 and 65 packets, qos/sim's mean bottleneck
// queue and throughput are within 10% of ns-3's.
func TestNS3Agreement(t *testing.T) {
	requireNS3(t)
	bin := buildNS3(t, t.TempDir())
	base := Setting{Flows: 4, End: 0.5, Warmup: 0.1, AccessG: 10, BottleG: 1, DelayMicro: 20}
	var rows []string
	for _, k := range []int{20, 65} {
		s := base
		s.K = k
		ns := runNS3(t, bin, s)
		ours, wall := runSim(t, s)
		t.Logf("qos/sim K=%d: %v wall", k, wall.Round(time.Millisecond))
		dq, dt := rel(ours.MeanQueuePkts, ns.MeanQueuePkts), rel(ours.ThroughputBps, ns.ThroughputBps)
		rows = append(rows, fmt.Sprintf("| %d | %.2f | %.2f | %+.1f%% | %.1f | %.1f | %+.2f%% | %d | %d |", k,
			ns.MeanQueuePkts, ours.MeanQueuePkts, 100*(ours.MeanQueuePkts-ns.MeanQueuePkts)/ns.MeanQueuePkts,
			ns.ThroughputBps/1e6, ours.ThroughputBps/1e6, 100*(ours.ThroughputBps-ns.ThroughputBps)/ns.ThroughputBps,
			ns.Marks, ours.Marks))
		if dq > 0.10 {
			t.Errorf("K=%d: mean queue %.2f packets vs ns-3 %.2f (%.1f%% apart, limit 10%%)", k, ours.MeanQueuePkts, ns.MeanQueuePkts, 100*dq)
		}
		if dt > 0.10 {
			t.Errorf("K=%d: throughput %.1f Mb/s vs ns-3 %.1f (%.1f%% apart, limit 10%%)", k, ours.ThroughputBps/1e6, ns.ThroughputBps/1e6, 100*dt)
		}
	}
	t.Logf("\n| K (pkts) | ns-3 mean queue | qos/sim mean queue | diff | ns-3 Mb/s | qos/sim Mb/s | diff | ns-3 marks | qos/sim marks |\n|---|---|---|---|---|---|---|---|---|\n%s",
		strings.Join(rows, "\n"))
}
