package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

var bins struct{ fared, farectl, fareinc string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fared-inc-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/fared/fared/cmd/fared",
		"github.com/fared/fared/cmd/farectl", "github.com/fared/fared/cmd/fareinc")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building:", err)
		os.Exit(1)
	}
	bins.fared, bins.farectl, bins.fareinc = filepath.Join(dir, "fared"), filepath.Join(dir, "farectl"), filepath.Join(dir, "fareinc")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fabric is the INC lab: switches from interop (fared leaves and spines,
// FRR spines), hosts built here (until farelab has host nodes): a
// namespace per host with a veth to its leaf, an address in the leaf's
// /24 (which the leaf originates in IS-IS), a default route to the leaf.
type fabric struct {
	t       *testing.T
	lab     *interop.Lab
	hosts   []host
	manager string // node running the manager
	mgrAddr string // address:port
}

type host struct {
	name, ns, leaf string
	addr           string // 10.1.<leaf>.<10+k>
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// topology: leaves l1..l<leaves>, fared spines s1, s2, FRR spine s3;
// every leaf linked to every spine. Leaf i originates 10.1.i.0/24.
func topology(leaves int, bw string) string {
	var b strings.Builder
	b.WriteString("name: inc\ndefaults: {log-level: info}\nnodes:\n")
	for i := 1; i <= leaves; i++ {
		fmt.Fprintf(&b, "  l%d: {kind: fared, prefixes: [10.1.%d.0/24]}\n", i, i)
	}
	b.WriteString("  s1: {kind: fared}\n  s2: {kind: fared}\n  s3: {kind: frr}\nlinks:\n")
	for i := 1; i <= leaves; i++ {
		for _, s := range []string{"s1", "s2", "s3"} {
			fmt.Fprintf(&b, "  - {a: l%d, b: %s, bandwidth: %s}\n", i, s, bw)
		}
	}
	return b.String()
}

// newFabric starts the lab with perLeaf hosts per leaf, enables INC on
// every fared node (switch; s2 is also the manager) and waits until the
// manager sees every switch in its topology.
func newFabric(t *testing.T, leaves, perLeaf int, incExtra string) *fabric {
	interop.RequireLab(t)
	lab := interop.StartLab(t, topology(leaves, "10G"), interop.Options{FaredBin: bins.fared, FarectlBin: bins.farectl})
	f := &fabric{t: t, lab: lab, manager: "s2"}
	ctx := ctxT(t)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, n := range lab.Nodes {
			if n.Kind != "fared" {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(n.Dir, "fared.log"))
			var lines []string
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "module=inc") {
					lines = append(lines, l)
				}
			}
			t.Logf("%s inc log:\n%s", n.Name, tail(strings.Join(lines, "\n"), 4000))
		}
	})
	for i := 1; i <= leaves; i++ {
		leaf := fmt.Sprintf("l%d", i)
		for k := 0; k < perLeaf; k++ {
			h := host{name: fmt.Sprintf("h%d", len(f.hosts)+1), leaf: leaf, addr: fmt.Sprintf("10.1.%d.%d", i, 10+k)}
			h.ns = lab.Name + "-" + h.name
			run(t, "ip", "netns", "add", h.ns)
			ns := h.ns
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
			leafNS := lab.Name + "-" + leaf
			run(t, "ip", "link", "add", "x", "netns", leafNS, "type", "veth", "peer", "y", "netns", h.ns)
			run(t, "ip", "-n", leafNS, "link", "set", "x", "name", h.name)
			run(t, "ip", "-n", h.ns, "link", "set", "y", "name", "eth0")
			// Point-to-point addressing: the host has a /32, the leaf
			// 10.1.<i>.1/32 on each host link and a /32 route per host; a
			// /24 on the host would make it ARP for its neighbours on a
			// link they are not on.
			gw := fmt.Sprintf("10.1.%d.1", i)
			run(t, "ip", "-n", h.ns, "link", "set", "lo", "up")
			run(t, "ip", "-n", h.ns, "addr", "add", h.addr+"/32", "dev", "eth0")
			run(t, "ip", "-n", h.ns, "link", "set", "eth0", "up")
			run(t, "ip", "-n", leafNS, "addr", "add", gw+"/32", "dev", h.name)
			run(t, "ip", "-n", leafNS, "link", "set", h.name, "up")
			run(t, "ip", "-n", leafNS, "route", "add", h.addr+"/32", "dev", h.name, "src", gw)
			run(t, "ip", "-n", h.ns, "route", "add", gw+"/32", "dev", "eth0", "src", h.addr)
			run(t, "ip", "-n", h.ns, "route", "add", "default", "via", gw, "dev", "eth0", "src", h.addr)
			f.hosts = append(f.hosts, h)
		}
	}
	mgr := lab.Node(f.manager)
	f.mgrAddr = fmt.Sprintf("%s:7791", mgr.Loopback)
	for _, n := range lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		sec := fmt.Sprintf("\ninc:\n  role: switch\n  manager: %s\n%s", f.mgrAddr, incExtra)
		if n.Name == f.manager {
			sec = "\ninc:\n  role: both\n" + incExtra
		}
		file := filepath.Join(n.Dir, "fared.yaml")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, sec...), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := lab.Farectl(ctx, n.Name, "reload"); err != nil {
			t.Fatalf("%s: reload: %v %s", n.Name, err, out)
		}
	}
	fared := 0
	for _, n := range lab.Nodes {
		if n.Kind == "fared" {
			fared++
		}
	}
	f.poll(ctx, 60*time.Second, "every INC switch registered and in the manager's topology", func() error {
		var sw []wire.INCRegisteredSwitch
		if err := lab.FarectlJSON(ctx, f.manager, &sw, "inc", "switches"); err != nil {
			return err
		}
		ok := 0
		for _, s := range sw {
			if s.Alive && s.InTopology {
				ok++
			}
		}
		if ok != fared {
			return fmt.Errorf("%d of %d: %+v", ok, fared, sw)
		}
		return nil
	})
	// Hosts reach the manager (IS-IS has the leaves' prefixes everywhere).
	for _, h := range f.hosts {
		f.poll(ctx, 60*time.Second, h.name+" reaches the manager", func() error {
			return exec.Command("ip", "netns", "exec", h.ns, "ping", "-c1", "-W1", mgr.Loopback.String()).Run()
		})
	}
	return f
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (f *fabric) poll(ctx context.Context, d time.Duration, what string, fn func() error) {
	f.t.Helper()
	if err := interop.Poll(ctx, d, what, fn); err != nil {
		f.t.Fatal(err)
	}
}

// worker is a fareinc worker process in a host namespace.
type worker struct {
	rank int
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	errb *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorkers runs one fareinc worker per host, ranks in host order.
func (f *fabric) startWorkers(group string, extra ...string) []*worker {
	t := f.t
	ws := make([]*worker, len(f.hosts))
	for r, h := range f.hosts {
		args := append([]string{"netns", "exec", h.ns, bins.fareinc, "worker", "-v", "--manager", f.mgrAddr, "--group", group,
			"--rank", fmt.Sprint(r), "--ranks", fmt.Sprint(len(f.hosts))}, extra...)
		cmd := exec.Command("ip", args...)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		w := &worker{rank: r, cmd: cmd, in: in, out: bufio.NewScanner(out), errb: &syncBuf{}}
		w.out.Buffer(make([]byte, 1<<20), 1<<20)
		cmd.Stderr = w.errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			w.in.Close()
			done := make(chan struct{})
			go func() { w.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				w.cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("worker %d stderr (tail):\n%s", w.rank, tail(w.errb.String(), 3000))
			}
		})
		ws[r] = w
	}
	for _, w := range ws {
		var j struct {
			Joined bool `json:"joined"`
		}
		if err := w.read(&j, 20*time.Second); err != nil || !j.Joined {
			t.Fatalf("worker %d did not join: %v\n%s", w.rank, err, w.errb.String())
		}
	}
	return ws
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// read decodes the next output line of the worker.
func (w *worker) read(v any, timeout time.Duration) error {
	line := make(chan []byte, 1)
	go func() {
		if w.out.Scan() {
			line <- append([]byte(nil), w.out.Bytes()...)
		} else {
			line <- nil
		}
	}()
	select {
	case b := <-line:
		if b == nil {
			return fmt.Errorf("worker %d: output closed", w.rank)
		}
		return json.Unmarshal(b, v)
	case <-time.After(timeout):
		return fmt.Errorf("worker %d: no answer in %v", w.rank, timeout)
	}
}

// Result is fareinc's output line.
type Result struct {
	Mode        string  `json:"mode"`
	Rank        int     `json:"rank"`
	Bytes       int     `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	AlgBW       float64 `json:"algbw_gbps"`
	BusBW       float64 `json:"busbw_gbps"`
	Retransmits int     `json:"retransmits"`
	Timeouts    int     `json:"timeouts"`
	NACKs       int     `json:"nacks"`
	Reports     int     `json:"timeout_reports"`
	Verified    bool    `json:"verified"`
	TreeID      uint32  `json:"tree_id"`
	Generation  uint64  `json:"generation"`
	Error       string  `json:"error"`
}

// allreduce sends the same command to every worker and collects one
// result each.
func allreduce(t *testing.T, ws []*worker, cmd map[string]any, timeout time.Duration) []Result {
	t.Helper()
	cmd["cmd"] = "allreduce"
	b, _ := json.Marshal(cmd)
	for _, w := range ws {
		if _, err := w.in.Write(append(b, '\n')); err != nil {
			t.Fatalf("worker %d: %v", w.rank, err)
		}
	}
	res := make([]Result, len(ws))
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w.read(&res[i], timeout) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if res[i].Error != "" || !res[i].Verified {
			t.Fatalf("%v: rank %d: %+v", cmd, i, res[i])
		}
	}
	return res
}
