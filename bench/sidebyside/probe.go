package sidebyside

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/bench/undertest"
	"github.com/fared/fared/interop"
)

func frrSummary(ctx context.Context, l *undertest.Lab) (undertest.SPFSummary, error) {
	out, err := l.Vtysh(ctx, "show isis summary")
	if err != nil {
		return undertest.SPFSummary{}, err
	}
	return undertest.ParseISISSummary(out)
}

// LSPRow is one database entry as a RUT reports it.
type LSPRow struct {
	Seq      uint32
	Checksum uint16
	Own      bool
}

// frrDB reads `show isis database`, keyed "hostname.pp-ff" as FRR
// prints it. Purged entries (holdtime 0) are left out.
func frrDB(ctx context.Context, l *undertest.Lab) (map[string]LSPRow, error) {
	out, err := l.Vtysh(ctx, "show isis database")
	if err != nil {
		return nil, err
	}
	rows, err := interop.ParseISISDatabase(out)
	db := map[string]LSPRow{}
	for _, r := range rows {
		if r.Holdtime > 0 {
			db[r.LSPID] = LSPRow{Seq: r.Seq, Checksum: r.Checksum, Own: r.Own}
		}
	}
	return db, err
}

// faredDB reads fared's level-2 database keyed like FRR's.
func faredDB(ctx context.Context, c *client.Client) (map[string]LSPRow, error) {
	var v []wire.ISISLSP
	if err := c.GetJSON(ctx, "/isis/database?level=2", &v); err != nil {
		return nil, err
	}
	db := map[string]LSPRow{}
	for _, e := range v {
		if e.Purged || e.Lifetime == 0 {
			continue
		}
		key := e.LSPID
		if e.Hostname != "" {
			key = e.Hostname + e.LSPID[len("0000.0000.0000"):]
		}
		db[key] = LSPRow{Seq: e.Seq, Checksum: e.Checksum, Own: e.Own}
	}
	return db, nil
}

func faredSPF(ctx context.Context, c *client.Client) (wire.SPFView, error) {
	var v wire.SPFView
	err := c.GetJSON(ctx, "/spf/log", &v)
	return v, err
}

// procStat is what /proc says about one process.
type procStat struct {
	RSSKB int64         // VmRSS
	HWMKB int64         // VmHWM: peak RSS
	CPU   time.Duration // utime + stime
}

const clockTick = 100 // USER_HZ on Linux

func readProc(pid int) (procStat, error) {
	var s procStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			s.RSSKB, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmHWM:":
			s.HWMKB, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the parenthesised command: state is field 3, utime 14.
	i := strings.LastIndexByte(string(st), ')')
	f := strings.Fields(string(st[i+2:]))
	if len(f) > 12 {
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		s.CPU = time.Duration(ut+stime) * time.Second / clockTick
	}
	return s, nil
}

// daemons returns the pids of a router's daemons by name.
func daemons(r *undertest.Router) map[string]int {
	out := map[string]int{}
	for _, d := range []string{"zebra", "isisd", "fared"} {
		if p, ok := r.Pids[d]; ok {
			out[d] = p
		}
	}
	return out
}

// stop sends SIGTERM to a router's daemons (routing daemon first) and
// waits up to 10 s for them to go.
func stop(r *undertest.Router) {
	ds := daemons(r)
	for _, d := range []string{"isisd", "fared", "zebra"} {
		p, ok := ds[d]
		if !ok {
			continue
		}
		_ = syscall.Kill(p, syscall.SIGTERM)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if syscall.Kill(p, 0) != nil || zombie(p) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
