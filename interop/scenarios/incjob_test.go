package scenarios

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/interop"
)

// A legitimate INC job for the lab tests: one fareinc worker per host,
// driven over its stdin/stdout, with the lab's credentials.

// incJob is a legitimate INC job: one fareinc worker per host node.
type incJob struct {
	t       *testing.T
	l       *interop.Lab
	mgrNode string // the manager's node
	manager string // its address:port
	group   string
	hosts   []string
	ws      []*incWorker
	// msgs: INC messages used so far on each tree (message ids are
	// numbered per tree across operations; an attacker who watches the
	// job knows them).
	mu   sync.Mutex
	msgs map[uint32]uint32
}

type incWorker struct {
	rank  int
	cmd   *exec.Cmd
	in    interface{ Write([]byte) (int, error) }
	lines chan []byte
	qpn   uint32
	errb  *incLockedBuf
}

type incLockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *incLockedBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *incLockedBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// incResult is fareinc's output line for one operation.
type incResult struct {
	Mode     string `json:"mode"`
	Rank     int    `json:"rank"`
	Packets  int    `json:"packets"`
	Refused  int    `json:"refused"`
	Verified bool   `json:"verified"`
	TreeID   uint32 `json:"tree_id"`
	Error    string `json:"error"`
}

// startINCJob starts a worker of group on each host (rank = position),
// with the manager on node mgr, and waits until every one has joined.
func startINCJob(t *testing.T, l *interop.Lab, mgr, group string, hosts ...string) *incJob {
	t.Helper()
	manager := fmt.Sprintf("%s:7791", l.Node(mgr).Loopback)
	j := &incJob{t: t, l: l, mgrNode: mgr, manager: manager, group: group, hosts: hosts, msgs: map[uint32]uint32{}}
	for r, h := range hosts {
		cmd := exec.Command("ip", "netns", "exec", l.Node(h).Netns, bins.fareinc, "worker", "-v", "--manager", manager,
			"--group", group, "--rank", fmt.Sprint(r), "--ranks", fmt.Sprint(len(hosts)))
		cmd.Env = append(os.Environ(), l.ExecEnv(l.Node(h))...) // the lab's CA and the host's join token
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		w := &incWorker{rank: r, cmd: cmd, in: in, lines: make(chan []byte, 16), errb: &incLockedBuf{}}
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
			in.Close()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				s := w.errb.String()
				t.Logf("worker %d stderr (tail):\n%s", w.rank, s[max(0, len(s)-3000):])
			}
		})
		j.ws = append(j.ws, w)
	}
	for _, w := range j.ws {
		var joined struct {
			Joined bool   `json:"joined"`
			QPN    uint32 `json:"qpn"`
		}
		if err := w.read(&joined, 30*time.Second); err != nil || !joined.Joined {
			t.Fatalf("worker %d did not join: %v\n%s", w.rank, err, w.errb.String())
		}
		w.qpn = joined.QPN
	}
	return j
}

func (w *incWorker) read(v any, timeout time.Duration) error {
	select {
	case b, ok := <-w.lines:
		if !ok {
			return fmt.Errorf("worker %d: output closed", w.rank)
		}
		return json.Unmarshal(b, v)
	case <-time.After(timeout):
		return fmt.Errorf("worker %d: no answer in %v", w.rank, timeout)
	}
}

// try runs one fp32 sum of size bytes on every rank, each checking its
// result exactly (integer data), and returns the results; safe to call
// from any goroutine (it does not fail the test itself).
func (j *incJob) try(size int) ([]incResult, error) {
	b, _ := json.Marshal(map[string]any{"cmd": "allreduce", "size": fmt.Sprint(size), "dtype": "fp32", "op": "sum",
		"pattern": "int", "verify": true, "timeout": "90s"})
	for _, w := range j.ws {
		if _, err := w.in.Write(append(b, '\n')); err != nil {
			return nil, fmt.Errorf("worker %d: %v", w.rank, err)
		}
	}
	res := make([]incResult, len(j.ws))
	for i, w := range j.ws {
		if err := w.read(&res[i], 2*time.Minute); err != nil {
			return nil, err
		}
	}
	j.mu.Lock()
	if res[0].Error == "" {
		j.msgs[res[0].TreeID] += uint32(res[0].Packets)
	}
	j.mu.Unlock()
	return res, nil
}

// allreduce is try that fails the test on an error.
func (j *incJob) allreduce(size int) []incResult {
	j.t.Helper()
	res, err := j.try(size)
	if err != nil {
		j.t.Fatal(err)
	}
	return res
}

// runUntil runs checked allreduces of 256 KB back to back until stop,
// counting them in n; the first inexact result or error ends it.
func (j *incJob) runUntil(stop chan struct{}, n *int) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		res, err := j.try(256 << 10)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Error != "" || !r.Verified || r.Mode != "inc" {
				return fmt.Errorf("rank %d: %+v", r.Rank, r)
			}
		}
		*n++
	}
}

// used is how many messages the job has sent on tree so far.
func (j *incJob) used(tree uint32) uint32 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.msgs[tree]
}
