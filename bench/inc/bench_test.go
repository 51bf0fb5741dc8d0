// Package inc benchmarks in-network allreduce against the ring on the
// same links: the INC lab (8 hosts, 4 leaves, 2 fared spines, an FRR
// spine) with every link shaped by tbf, MTU-sized payloads of 1 KB and
// 4 KB, sizes from 1 to 64 MB. It reports the median time, algorithm and
// bus bandwidth, the bytes each link carried (sysfs), and the CPU the
// switches' data planes and the clients used; with perf installed, where
// the CPU goes.
//
//	CI=true go test ./bench/inc/                       # short: one size, checks both modes run
//	FARED_BENCH_INC=full CI=true go test -timeout 60m -v ./bench/inc/   # the grid (README.md)
//
// FARED_BENCH_INC_OUT=file.json keeps the rows; FARED_BENCH_INC_PERF=dir
// records perf profiles of the 64 MB, 1 KB-payload runs;
// FARED_BENCH_INC_ONLY=1gbit/4096 runs only the matching points;
// FARED_BENCH_INC_RTT=1ms gives both modes' IRN BDP-FC that round trip
// (fareinc --rtt; default 25µs, a NIC's).
package inc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/interop/incfabric"
)

// point is one configuration of the grid.
type point struct {
	Rate    string // tbf rate on every link ("" = unshaped veth)
	Payload int    // bytes of elements per packet (the RoCE path MTU)
	Size    string
	Iters   int
}

// row is one measured configuration and mode.
type row struct {
	point
	Mode      string
	Median    float64 // seconds
	AlgBW     float64 // Gb/s, size / median
	BusBW     float64 // algbw × 2(N−1)/N
	HostLink  float64 // bytes sent per host link per operation, host→leaf, mean
	LeafLink  float64 // bytes sent per host link per operation, leaf→host, mean
	Fabric    float64 // bytes per operation on all leaf↔spine links, both directions
	SwitchCPU float64 // data-plane CPU seconds of all INC switches per operation
	// SwitchPPS is the aggregators' packets (received, all switches) per
	// data-plane CPU second: the data plane's speed, whatever the links.
	SwitchPPS float64
	ClientCPU float64 // CPU seconds of all fareinc processes per operation
	Retx      int     // retransmissions, all ranks, all iterations
}

func TestINCBench(t *testing.T) {
	full := os.Getenv("FARED_BENCH_INC") == "full"
	grid := []point{{Rate: "1gbit", Payload: 1024, Size: "1MB", Iters: 1}}
	if full {
		grid = nil
		for _, sz := range []string{"1MB", "4MB"} {
			grid = append(grid, point{Rate: "20mbit", Payload: 1024, Size: sz, Iters: 3})
		}
		for _, pl := range []int{1024, 4096} {
			for _, sz := range []string{"1MB", "8MB", "64MB"} {
				grid = append(grid, point{Rate: "1gbit", Payload: pl, Size: sz, Iters: 3})
			}
		}
	}
	if only := os.Getenv("FARED_BENCH_INC_ONLY"); only != "" {
		// e.g. "1gbit/4096": run only the matching points.
		grid = slices.DeleteFunc(grid, func(p point) bool { return !strings.Contains(fmt.Sprintf("%s/%d/%s", p.Rate, p.Payload, p.Size), only) })
	}
	f := incfabric.New(t, interop.LabBins(t), 4, 2, "")
	ctx := incfabric.Ctx(t)
	var rows []row
	shaped, mtu := "", 0
	var ws []*incfabric.Worker
	for gi, p := range grid {
		if p.Rate != shaped || needMTU(p.Payload) != mtu {
			for _, w := range ws {
				w.In.Write([]byte(`{"cmd":"quit"}` + "\n"))
			}
			shape(t, f, p.Rate, needMTU(p.Payload))
			shaped, mtu = p.Rate, needMTU(p.Payload)
			args := []string{"--payload", strconv.Itoa(p.Payload)}
			if rtt := os.Getenv("FARED_BENCH_INC_RTT"); rtt != "" {
				// IRN BDP-FC's round trip, for both modes: the window
				// is bottleneck × rtt / payload.
				args = append(args, "--rtt", rtt)
			}
			ws = f.StartWorkers(fmt.Sprintf("bench%d", gi), args...)
			waitReady(t, f)
		}
		for _, mode := range []string{"inc", "ring"} {
			r := row{point: p, Mode: mode}
			links0, sw0, cl0 := linkBytes(t, f), switchCPU(t, f), clientCPU(t, ws)
			var times []float64
			var perf *exec.Cmd
			if dir := os.Getenv("FARED_BENCH_INC_PERF"); dir != "" && p.Size == "64MB" && p.Payload == 1024 {
				// Where the CPU goes: the whole machine for 5 s of the run.
				perf = exec.Command("perf", "record", "-a", "-g", "-F", "499", "-o", filepath.Join(dir, "perf-"+mode+".data"), "--", "sleep", "5")
				if err := perf.Start(); err != nil {
					t.Logf("perf: %v", err)
					perf = nil
				}
			}
			res := incfabric.AllReduce(t, ws, map[string]any{"size": p.Size, "dtype": "fp32", "op": "sum", "mode": mode,
				"iters": p.Iters, "verify": false, "timeout": "10m"}, 30*time.Minute)
			// AllReduce returns the first iteration of each rank; read the rest.
			all := [][]incfabric.Result{res}
			for it := 1; it < p.Iters; it++ {
				more := make([]incfabric.Result, len(ws))
				for i, w := range ws {
					if err := w.Read(&more[i], 30*time.Minute); err != nil || more[i].Error != "" {
						t.Fatalf("%+v %s iteration %d rank %d: %v %s", p, mode, it, i, err, more[i].Error)
					}
				}
				all = append(all, more)
			}
			for _, it := range all {
				slow := 0.0
				for _, x := range it {
					slow = max(slow, x.Seconds)
					r.Retx += x.Retransmits
				}
				times = append(times, slow) // an operation ends when its slowest rank does
			}
			if perf != nil {
				perf.Wait()
			}
			slices.Sort(times)
			r.Median = times[len(times)/2]
			r.AlgBW = float64(it0(res).Bytes) * 8 / r.Median / 1e9
			r.BusBW = r.AlgBW * 2 * 7 / 8
			links1, sw1, cl1 := linkBytes(t, f), switchCPU(t, f), clientCPU(t, ws)
			n := float64(p.Iters)
			var up, down, fab float64
			for k, v := range links1 {
				d := float64(v-links0[k]) / n
				switch {
				case strings.HasPrefix(k, "h"): // a host's one link, to its leaf
					up += d / float64(len(f.Hosts))
				case strings.HasPrefix(k, "l") && strings.Contains(k, "/h"):
					down += d / float64(len(f.Hosts))
				case strings.HasPrefix(k, "l") || strings.HasPrefix(k, "s"):
					fab += d
				}
			}
			r.HostLink, r.LeafLink, r.Fabric = up, down, fab
			r.SwitchCPU, r.ClientCPU = (sw1.cpu-sw0.cpu)/n, (cl1-cl0)/n
			if sw1.cpu > sw0.cpu {
				r.SwitchPPS = float64(sw1.packets-sw0.packets) / (sw1.cpu - sw0.cpu)
			}
			rows = append(rows, r)
			t.Logf("%-6s %-7s payload %4d %5s: median %7.3fs algbw %.4f Gb/s busbw %.4f Gb/s | per host link %s up %s down | fabric %s | switch CPU %.2fs (%.0f packets/CPU-s) client CPU %.2fs | retx %d",
				mode, p.Rate, p.Payload, p.Size, r.Median, r.AlgBW, r.BusBW, human(up), human(down), human(fab), r.SwitchCPU, r.SwitchPPS, r.ClientCPU, r.Retx)
			_ = ctx
		}
	}
	if out := os.Getenv("FARED_BENCH_INC_OUT"); out != "" {
		b, _ := json.MarshalIndent(rows, "", "  ")
		os.WriteFile(out, b, 0o644)
	}
	for i := 0; i+1 < len(rows); i += 2 {
		inc, ring := rows[i], rows[i+1]
		t.Logf("%-7s payload %4d %5s: INC %.4f Gb/s, ring %.4f Gb/s (algbw): INC/ring %.2f×; host link bytes INC/ring %.2f",
			inc.Rate, inc.Payload, inc.Size, inc.AlgBW, ring.AlgBW, ring.Median/inc.Median, inc.HostLink/ring.HostLink)
	}
}

func it0(rs []incfabric.Result) incfabric.Result { return rs[0] }

func needMTU(payload int) int {
	if payload > 1024 {
		return 9000
	}
	return 1500
}

func human(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1fMB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fKB", b/(1<<10))
	}
	return fmt.Sprintf("%.0fB", b)
}

// shape sets the MTU and a tbf of rate ("" removes it) on every link of
// the lab, both ends. After a jumbo MTU fared restarts without IS-IS
// hello padding (incfabric.Fabric.RestartFared says why).
func shape(t *testing.T, f *incfabric.Fabric, rate string, mtu int) {
	ifaces := interfaces(t, f)
	changed := false
	for ns, ifs := range ifaces {
		for _, i := range ifs {
			b, _ := exec.Command("ip", "netns", "exec", ns, "cat", filepath.Join("/sys/class/net", i, "mtu")).Output()
			if strings.TrimSpace(string(b)) != strconv.Itoa(mtu) {
				run(t, "ip", "-n", ns, "link", "set", i, "mtu", strconv.Itoa(mtu))
				changed = true
			}
		}
	}
	if changed {
		f.RestartFared(incfabric.Ctx(t))
	}
	for ns, ifs := range ifaces {
		for _, i := range ifs {
			if rate == "" {
				exec.Command("tc", "-n", ns, "qdisc", "del", "dev", i, "root").Run()
				continue
			}
			// burst: at least a timer tick of data (HZ ≥ 250) and a jumbo frame.
			bits, _ := parseRate(rate)
			burst := max(int(bits/8/250), 2*mtu+64)
			run(t, "tc", "-n", ns, "qdisc", "replace", "dev", i, "root", "tbf", "rate", rate, "burst", strconv.Itoa(burst), "latency", "50ms")
		}
	}
}

func parseRate(s string) (float64, error) {
	m := map[string]float64{"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
	for suf, mul := range m {
		if strings.HasSuffix(s, suf) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, suf), 64)
			return v * mul, err
		}
	}
	return strconv.ParseFloat(s, 64)
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// interfaces lists the lab's veths per namespace.
func interfaces(t *testing.T, f *incfabric.Fabric) map[string][]string {
	out := map[string][]string{}
	var nss []string
	for _, n := range f.Lab.Nodes { // the hosts are lab nodes too
		nss = append(nss, n.Netns)
	}
	for _, ns := range nss {
		b, err := exec.Command("ip", "-n", ns, "-o", "link", "show", "type", "veth").Output()
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 1 {
				out[ns] = append(out[ns], strings.SplitN(strings.TrimSuffix(fs[1], ":"), "@", 2)[0])
			}
		}
	}
	return out
}

// linkBytes reads tx_bytes of every veth from sysfs, keyed "node/iface".
func linkBytes(t *testing.T, f *incfabric.Fabric) map[string]uint64 {
	out := map[string]uint64{}
	for ns, ifs := range interfaces(t, f) {
		node := ns[strings.LastIndex(ns, "-")+1:]
		for _, i := range ifs {
			b, err := exec.Command("ip", "netns", "exec", ns, "cat", filepath.Join("/sys/class/net", i, "statistics/tx_bytes")).Output()
			if err != nil {
				t.Fatal(err)
			}
			v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
			out[node+"/"+i] = v
		}
	}
	return out
}

// switchLoad is the INC data planes' CPU seconds and the packets their
// aggregators received, summed over the switches.
type switchLoad struct {
	cpu     float64
	packets uint64
}

// switchCPU sums the INC data planes' CPU time and packets.
func switchCPU(t *testing.T, f *incfabric.Fabric) switchLoad {
	var s switchLoad
	for _, n := range f.Lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		var v wire.INCSwitch
		if err := f.Lab.FarectlJSON(incfabric.Ctx(t), n.Name, &v, "inc", "switch"); err != nil {
			t.Fatal(err)
		}
		if v.CPU != nil {
			s.cpu += v.CPU.Seconds
		}
		s.packets += v.Totals.Packets
	}
	return s
}

// clientCPU sums the fareinc processes' CPU time (utime+stime).
func clientCPU(t *testing.T, ws []*incfabric.Worker) float64 {
	var s float64
	for _, w := range ws {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.Cmd.Process.Pid))
		if err != nil {
			continue
		}
		fs := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		u, _ := strconv.ParseFloat(fs[11], 64)
		k, _ := strconv.ParseFloat(fs[12], 64)
		s += (u + k) / 100 // USER_HZ
	}
	return s
}

// waitReady waits until the group's tree is ready again (after MTU or
// shaping changes, or new workers).
func waitReady(t *testing.T, f *incfabric.Fabric) {
	ctx := incfabric.Ctx(t)
	f.Poll(ctx, time.Minute, "tree ready", func() error {
		var trees []wire.INCTree
		if err := f.Lab.FarectlJSON(ctx, f.Manager, &trees, "inc", "trees"); err != nil {
			return err
		}
		for _, tr := range trees {
			if tr.Ready && tr.Members == len(f.Hosts) {
				return nil
			}
		}
		return fmt.Errorf("trees %+v", trees)
	})
}
