package scenarios

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/interop/incfabric"
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
	ws      []*incfabric.Worker
	// msgs: INC messages used so far on each tree (message ids are
	// numbered per tree across operations; an attacker who watches the
	// job knows them).
	mu   sync.Mutex
	msgs map[uint32]uint32
}

// incResult is fareinc's output line for one operation.
type incResult = incfabric.Result

// startINCJob starts a worker of group on each host (rank = position),
// with the manager on node mgr, and waits until every one has joined.
func startINCJob(t *testing.T, l *interop.Lab, mgr, group string, hosts ...string) *incJob {
	t.Helper()
	manager := fmt.Sprintf("%s:7791", l.Node(mgr).Loopback)
	j := &incJob{t: t, l: l, mgrNode: mgr, manager: manager, group: group, hosts: hosts, msgs: map[uint32]uint32{}}
	j.ws = incfabric.StartWorkers(t, l, bins.Fareinc, manager, group, hosts, 30*time.Second)
	return j
}

// try runs one fp32 sum of size bytes on every rank, each checking its
// result exactly (integer data), and returns the results; safe to call
// from any goroutine (it does not fail the test itself).
func (j *incJob) try(size int) ([]incResult, error) {
	b, _ := json.Marshal(map[string]any{"cmd": "allreduce", "size": fmt.Sprint(size), "dtype": "fp32", "op": "sum",
		"pattern": "int", "verify": true, "timeout": "90s"})
	for _, w := range j.ws {
		if _, err := w.In.Write(append(b, '\n')); err != nil {
			return nil, fmt.Errorf("worker %d: %v", w.Rank, err)
		}
	}
	res := make([]incResult, len(j.ws))
	for i, w := range j.ws {
		if err := w.Read(&res[i], 2*time.Minute); err != nil {
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
