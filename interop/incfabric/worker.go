package incfabric

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/interop"
)

// Worker is a fareinc worker process on a host node, driven by JSON
// lines: commands on its stdin, one answer line each on its stdout.
type Worker struct {
	Rank  int
	Cmd   *exec.Cmd
	In    io.WriteCloser
	QPN   uint32 // its QP, from its join line
	lines chan []byte
	errb  *interop.LockedBuffer
}

// startWorker starts a fareinc worker of group (rank of ranks) on host
// node host, with the manager at manager (address:port) and the lab's
// INC credentials; extra are more fareinc worker flags. The worker is
// stopped at the end of the test (its stderr logged if the test failed).
func startWorker(t testing.TB, lab *interop.Lab, fareinc, host, manager, group string, rank, ranks int, extra ...string) *Worker {
	n := lab.Node(host)
	if n == nil {
		t.Fatalf("no node %s", host)
	}
	args := append([]string{"netns", "exec", n.Netns, fareinc, "worker", "-v", "--manager", manager, "--group", group,
		"--rank", fmt.Sprint(rank), "--ranks", fmt.Sprint(ranks)}, extra...)
	cmd := exec.Command("ip", args...)
	cmd.Env = append(os.Environ(), lab.ExecEnv(n)...) // the lab's CA and the host's join token
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	w := &Worker{Rank: rank, Cmd: cmd, In: in, lines: make(chan []byte, 16), errb: &interop.LockedBuffer{}}
	cmd.Stderr = w.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			w.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		w.In.Close()
		done := make(chan struct{})
		go func() { w.Cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			w.Cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("worker %d stderr (tail):\n%s", w.Rank, tail(w.errb.String(), 3000))
		}
	})
	return w
}

// join waits for the worker's join line.
func (w *Worker) join(t testing.TB, timeout time.Duration) {
	t.Helper()
	var j struct {
		Joined bool   `json:"joined"`
		QPN    uint32 `json:"qpn"`
	}
	if err := w.Read(&j, timeout); err != nil || !j.Joined {
		t.Fatalf("worker %d did not join: %v\n%s", w.Rank, err, w.errb.String())
	}
	w.QPN = j.QPN
}

// Stderr is what the worker has written to its stderr so far.
func (w *Worker) Stderr() string { return w.errb.String() }

// StartWorkers runs one fareinc worker per host of the fabric, ranks in
// host order, and waits until all have joined.
func (f *Fabric) StartWorkers(group string, extra ...string) []*Worker {
	hosts := make([]string, len(f.Hosts))
	for i, h := range f.Hosts {
		hosts[i] = h.Name
	}
	return StartWorkers(f.T, f.Lab, f.bins.Fareinc, f.MgrAddr, group, hosts, 20*time.Second, extra...)
}

// StartWorkers starts a worker of group on each host node (rank = its
// position in hosts), then waits up to timeout for each to join.
func StartWorkers(t testing.TB, lab *interop.Lab, fareinc, manager, group string, hosts []string, timeout time.Duration, extra ...string) []*Worker {
	t.Helper()
	ws := make([]*Worker, len(hosts))
	for r, h := range hosts {
		ws[r] = startWorker(t, lab, fareinc, h, manager, group, r, len(hosts), extra...)
	}
	for _, w := range ws {
		w.join(t, timeout)
	}
	return ws
}

// Read decodes the next output line of the Worker.
func (w *Worker) Read(v any, timeout time.Duration) error {
	select {
	case b, ok := <-w.lines:
		if !ok {
			return fmt.Errorf("worker %d: output closed", w.Rank)
		}
		return json.Unmarshal(b, v)
	case <-time.After(timeout):
		return fmt.Errorf("worker %d: no answer in %v", w.Rank, timeout)
	}
}

// Result is fareinc's output line.
type Result struct {
	Mode        string  `json:"mode"`
	Rank        int     `json:"rank"`
	Bytes       int     `json:"bytes"`
	Packets     int     `json:"packets"`
	Seconds     float64 `json:"seconds"`
	AlgBW       float64 `json:"algbw_gbps"`
	BusBW       float64 `json:"busbw_gbps"`
	Retransmits int     `json:"retransmits"`
	Timeouts    int     `json:"timeouts"`
	NACKs       int     `json:"nacks"`
	Reports     int     `json:"timeout_reports"`
	Refused     int     `json:"refused"`
	Verified    bool    `json:"verified"`
	TreeID      uint32  `json:"tree_id"`
	Generation  uint64  `json:"generation"`
	Error       string  `json:"error"`
}

// AllReduce sends the same command to every worker and collects one
// result each; it fails the test on an error or, with "verify": true, a
// result that does not verify.
func AllReduce(t testing.TB, ws []*Worker, cmd map[string]any, timeout time.Duration) []Result {
	t.Helper()
	cmd["cmd"] = "allreduce"
	b, _ := json.Marshal(cmd)
	for _, w := range ws {
		if _, err := w.In.Write(append(b, '\n')); err != nil {
			t.Fatalf("worker %d: %v", w.Rank, err)
		}
	}
	res := make([]Result, len(ws))
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w.Read(&res[i], timeout) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if res[i].Error != "" || cmd["verify"] == true && !res[i].Verified {
			t.Fatalf("%v: rank %d: %+v", cmd, i, res[i])
		}
	}
	return res
}

// Sum adds up f over the results.
func Sum(rs []Result, f func(Result) int) int {
	n := 0
	for _, r := range rs {
		n += f(r)
	}
	return n
}
