package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/scrape"
	"github.com/fared/fared/interop"
)

// settle polls the invariants after a burst until all hold or Settle
// passes; it records a pass per invariant, or the last error of each
// that never held. Resources are sampled once the fabric has settled.
func (r *Runner) settle(ctx context.Context, label string) bool {
	t0 := time.Now()
	checks := []struct {
		name string
		f    func(context.Context) error
	}{
		{InvLSDB, r.checkLSDB},
		{InvKernel + "+" + InvNexthops, r.checkKernel},
		{InvReach, r.checkReach},
		{InvLogs, r.checkLogs},
	}
	last := map[string]error{}
	deadline := t0.Add(r.cfg.Settle)
	// Every round runs every check: one that held may break again while
	// another converges, and all must hold at once.
	var lastBad []string
	remedied := map[string]bool{}
	nextLog := t0.Add(10 * time.Second)
	for {
		var bad []string
		for _, c := range checks {
			last[c.name] = c.f(ctx)
			if last[c.name] != nil {
				bad = append(bad, c.name)
			}
		}
		if len(bad) == 0 {
			break
		}
		lastBad = bad
		if time.Since(t0) > 10*time.Second {
			r.remedyFRR(ctx, label, remedied)
		}
		if time.Now().After(nextLog) {
			nextLog = time.Now().Add(10 * time.Second)
			for _, name := range bad {
				r.logf("%s: after %v still not %s: %.400v", label, time.Since(t0).Round(time.Second), name, last[name])
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			for _, c := range checks {
				if err := last[c.name]; err != nil {
					r.fail("%s: %s not reached after %v: %v", label, c.name, time.Since(t0).Round(time.Millisecond), err)
				}
			}
			return false
		}
		time.Sleep(time.Second)
	}
	took := time.Since(t0)
	for _, c := range checks {
		for _, name := range strings.Split(c.name, "+") {
			r.rep.Checks[name]++
		}
	}
	if label != "initial" {
		r.rep.Settle = append(r.rep.Settle, took)
		for _, name := range lastBad {
			r.rep.LastToHold[name]++
		}
	}
	r.logf("%s: all invariants hold after %v", label, took.Round(time.Millisecond))
	r.res.sample(ctx, r)
	return true
}

// rejectedRE matches a route of `show ip route` the kernel refused
// ("I>r 10.255.0.3/32 ...").
var rejectedRE = regexp.MustCompile(`(?m)^[A-Za-z][> ]r .*$`)

// remedyFRR restarts an FRR node whose zebra has routes the kernel
// rejected, once per settle. FRR 8.4.4's zebra, after its isisd or ospfd
// was killed and started again, sometimes installs ECMP routes with a
// nexthop group id the kernel does not have ("Extended Error: Nexthop id
// does not exist", "Route install failed"); the route stays rejected and
// the node unreachable over it until zebra restarts. That is FRR's bug,
// not fared's: it is noted, and the node restarted so the soak goes on.
func (r *Runner) remedyFRR(ctx context.Context, label string, done map[string]bool) {
	for _, n := range r.l.Nodes {
		if n.Kind != "frr" || done[n.Name] {
			continue
		}
		out, err := r.l.Vtysh(ctx, n.Name, "show ip route")
		if err != nil {
			continue
		}
		rej := rejectedRE.FindAllString(out, -1)
		if len(rej) == 0 {
			continue
		}
		done[n.Name] = true
		r.note("%s: FRR %s: kernel rejected %d zebra routes (%s); zebra.log: %s; restarting the node", label, n.Name, len(rej),
			strings.TrimSpace(rej[0]), lastMatch(filepath.Join(n.Dir, "zebra.log"), "Extended Error"))
		if err := r.l.RestartNode(ctx, n.Name); err != nil {
			r.fail("%s: restart %s: %v", label, n.Name, err)
		}
	}
}

func lastMatch(path, sub string) string {
	b, _ := os.ReadFile(path)
	last := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			last = l
		}
	}
	return last
}

// --- databases ---

// lsdbRow is what two synchronised databases must agree on per LSP/LSA.
type lsdbRow struct {
	seq  uint32
	ck   uint16
	live bool
}

func (r *Runner) db(ctx context.Context, n *interop.Node) (map[string]lsdbRow, error) {
	db := map[string]lsdbRow{}
	switch {
	case n.Kind == "fared" && n.Protocol == "isis":
		var v []wire.ISISLSP
		if err := r.l.FarectlJSON(ctx, n.Name, &v, "isis", "database"); err != nil {
			return nil, err
		}
		for _, e := range v {
			key := e.LSPID
			if e.Hostname != "" {
				key = e.Hostname + e.LSPID[len("0000.0000.0000"):]
			}
			db[key] = lsdbRow{e.Seq, e.Checksum, e.Lifetime > 0}
		}
	case n.Kind == "frr" && n.Protocol == "isis":
		rows, err := r.l.ISISDatabase(ctx, n.Name)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			db[e.LSPID] = lsdbRow{e.Seq, e.Checksum, e.Holdtime > 0}
		}
	case n.Kind == "fared":
		var v []wire.OSPFLSA
		if err := r.l.FarectlJSON(ctx, n.Name, &v, "ospf", "database"); err != nil {
			return nil, err
		}
		for _, e := range v {
			if e.Type == 9 || e.Type == 5 || e.Type == 11 {
				continue // link-scope differs per node; the fabrics have no AS-scope LSAs
			}
			db[fmt.Sprintf("%s/%d/%s/%s", e.Area, e.Type, e.ID, e.AdvRouter)] = lsdbRow{uint32(e.Seq), e.Checksum, e.Age < 3600}
		}
	default:
		var v struct {
			Areas map[string]map[string]json.RawMessage `json:"areas"`
		}
		if err := r.l.VtyshJSON(ctx, n.Name, "show ip ospf database json", &v); err != nil {
			return nil, err
		}
		types := map[string]int{"routerLinkStates": 1, "networkLinkStates": 2, "summaryLinkStates": 3, "asbrSummaryLinkStates": 4, "areaLocalOpaqueLsa": 10}
		for area, m := range v.Areas {
			for name, raw := range m {
				typ, ok := types[name]
				if !ok {
					continue // counts
				}
				var rows []struct {
					LsID, AdvertisedRouter, SequenceNumber, Checksum string
					LsaAge                                           int
				}
				if err := json.Unmarshal(raw, &rows); err != nil {
					return nil, fmt.Errorf("%s: %s: %v", n.Name, name, err)
				}
				for _, e := range rows {
					seq, _ := strconv.ParseUint(e.SequenceNumber, 16, 32)
					ck, _ := strconv.ParseUint(e.Checksum, 16, 16)
					db[fmt.Sprintf("%s/%d/%s/%s", area, typ, e.LsID, e.AdvertisedRouter)] = lsdbRow{uint32(seq), uint16(ck), e.LsaAge < 3600}
				}
			}
		}
	}
	return db, nil
}

func digest(db map[string]lsdbRow) string {
	var s []string
	for k, v := range db {
		if v.live {
			s = append(s, fmt.Sprintf("%s/%#x/%#04x", k, v.seq, v.ck))
		}
	}
	sort.Strings(s)
	return strings.Join(s, "\n")
}

// onlyIn lists the digest lines of a that b lacks.
func onlyIn(a, b string) string {
	in := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		in[l] = true
	}
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !in[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

// checkLSDB: within each fabric every node holds the same live LSPs/LSAs.
func (r *Runner) checkLSDB(ctx context.Context) error {
	first := map[string]string{}
	firstNode := map[string]string{}
	var diffs []string
	for _, n := range r.l.Nodes {
		db, err := r.db(ctx, n)
		if err != nil {
			return err
		}
		d := digest(db)
		if d == "" {
			return fmt.Errorf("%s: empty database", n.Name)
		}
		if f, ok := first[n.Protocol]; !ok {
			first[n.Protocol], firstNode[n.Protocol] = d, n.Name
		} else if d != f {
			diffs = append(diffs, fmt.Sprintf("%s lacks [%s] has [%s]", n.Name, onlyIn(f, d), onlyIn(d, f)))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("databases differ from %v's: %s", firstNode, strings.Join(diffs, "; "))
	}
	return nil
}

// --- kernel ---

type hop struct {
	gw     netip.Addr
	ifidx  int
	weight uint32
}

func (h hop) String() string { return fmt.Sprintf("%s@%d w%d", h.gw, h.ifidx, h.weight) }

func hopsString(hs []hop) string {
	sort.Slice(hs, func(i, j int) bool { return hs[i].String() < hs[j].String() })
	var s []string
	for _, h := range hs {
		s = append(s, h.String())
	}
	return strings.Join(s, ", ")
}

// checkKernel: on every fared node, the kernel's routes of fared's
// protocol (read over netlink) are exactly its computed routes (`farectl
// route`) with the same next hops and weights, and every nexthop object
// of that protocol is used by a route, directly or as a group member.
func (r *Runner) checkKernel(ctx context.Context) error {
	for _, n := range r.l.Nodes {
		if n.Kind != "fared" {
			continue
		}
		var routes []wire.Route
		if err := r.l.FarectlJSON(ctx, n.Name, &routes, "route"); err != nil {
			return err
		}
		want := map[netip.Prefix][]hop{}
		for _, rt := range routes {
			if rt.Down {
				continue
			}
			var hs []hop
			for _, h := range rt.NextHops {
				if !h.Unresolved {
					hs = append(hs, hop{h.Gateway, h.IfIndex, h.KernelWeight})
				}
			}
			if len(hs) > 0 {
				want[rt.Prefix] = hs
			}
		}
		proto := uint8(unix.RTPROT_ISIS)
		if n.Protocol == "ospf" {
			proto = unix.RTPROT_OSPF
		}
		krs, nhs, err := dumpKernel(n.Netns, proto)
		if err != nil {
			return fmt.Errorf("%s: %v", n.Name, err)
		}
		byID := map[uint32]fib.KernelNexthop{}
		for _, nh := range nhs {
			byID[nh.ID] = nh
		}
		used := map[uint32]bool{}
		got := map[netip.Prefix][]hop{}
		for _, kr := range krs {
			top, ok := byID[kr.NhID]
			if !ok {
				return fmt.Errorf("%s: kernel route %s uses nexthop %d, which does not exist", n.Name, kr.Prefix, kr.NhID)
			}
			used[top.ID] = true
			if len(top.Group) == 0 {
				got[kr.Prefix] = []hop{{top.Gateway, top.IfIndex, 0}}
				continue
			}
			for _, m := range top.Group {
				used[m.ID] = true
				mh := byID[m.ID]
				got[kr.Prefix] = append(got[kr.Prefix], hop{mh.Gateway, mh.IfIndex, m.Weight})
			}
		}
		for p, hs := range want {
			if len(hs) == 1 {
				hs = []hop{{hs[0].gw, hs[0].ifidx, 0}} // a plain nexthop has no weight
			}
			if g, w := hopsString(got[p]), hopsString(hs); g != w {
				return fmt.Errorf("%s: %s: kernel [%s], computed [%s]", n.Name, p, g, w)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				return fmt.Errorf("%s: kernel route %s [%s] is not a computed route", n.Name, p, hopsString(got[p]))
			}
		}
		var orphans []string
		for _, nh := range nhs {
			if !used[nh.ID] {
				orphans = append(orphans, fmt.Sprintf("%d (%s@%d, %d members)", nh.ID, nh.Gateway, nh.IfIndex, len(nh.Group)))
			}
		}
		if len(orphans) > 0 {
			return fmt.Errorf("%s: nexthop objects no route uses: %s", n.Name, strings.Join(orphans, ", "))
		}
	}
	return nil
}

func dumpKernel(ns string, proto uint8) ([]fib.KernelRoute, []fib.KernelNexthop, error) {
	h, err := netns.GetFromName(ns)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	return fib.Dump(h, proto)
}

// --- reachability ---

// checkReach: every leaf pings every other node's loopback of its fabric
// from its own loopback (3 echoes, one answer is enough: links may be
// lossy on purpose), all pings at once.
func (r *Runner) checkReach(ctx context.Context) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for _, a := range r.l.Nodes {
		if !isLeaf(a.Name) {
			continue
		}
		for _, b := range r.l.Nodes {
			if b == a || b.Protocol != a.Protocol {
				continue
			}
			wg.Add(1)
			go func(a, b *interop.Node) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				out, err := r.l.Exec(ctx, a.Name, "ping", "-n", "-q", "-c", "3", "-i", "0.2", "-W", "1", "-I", a.Loopback.String(), b.Loopback.String())
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s -> %s (%s): %v %s", a.Name, b.Name, b.Loopback, err, lastLine(out)))
					mu.Unlock()
				}
			}(a, b)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// --- logs ---

var (
	faredCrash = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[running\]|WARNING: DATA RACE)`)
	// FRR logs a crash with the signal and a backtrace; SIGKILL leaves
	// no line, SIGTERM logs "Terminating on signal".
	frrCrash = regexp.MustCompile(`Received signal (4|6|7|8|11) |Backtrace for|in thread .* scheduled from`)
)

// checkLogs: no panic in any fared log, no crash in any FRR log.
func (r *Runner) checkLogs(ctx context.Context) error {
	var errs []error
	for _, n := range r.l.Nodes {
		files, re := []string{"fared.log"}, faredCrash
		if n.Kind == "frr" {
			files, re = []string{"zebra.log", n.Protocol + "d.log", "zebra.out", n.Protocol + "d.out"}, frrCrash
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(n.Dir, f))
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				return err
			}
			if loc := re.FindIndex(b); loc != nil {
				end := min(len(b), loc[0]+600)
				errs = append(errs, fmt.Errorf("%s %s: %s", n.Name, f, b[loc[0]:end]))
			}
		}
	}
	return errors.Join(errs...)
}

// --- loss ---

// setLoss drops LossPct% of the packets entering each end of link i: a
// netdev ingress chain per interface in the node's namespace.
func (r *Runner) setLoss(ctx context.Context, i int) error {
	lk := r.l.Link(i)
	for _, end := range []struct{ node, iface string }{{lk.A, lk.IfA}, {lk.B, lk.IfB}} {
		chain := "loss" + strconv.Itoa(i)
		script := fmt.Sprintf("table netdev soak {\n chain %s {\n  type filter hook ingress device %q priority 0;\n  numgen random mod 100 < %d drop\n }\n}\n",
			chain, end.iface, r.cfg.LossPct)
		if err := nftScript(ctx, r.l, end.node, script); err != nil {
			return err
		}
	}
	return nil
}

// clearLoss removes every loss chain (the whole table, per node).
func (r *Runner) clearLoss(ctx context.Context) {
	for _, i := range r.lossy {
		lk := r.l.Link(i)
		for _, node := range []string{lk.A, lk.B} {
			// Absent already when both ends of two lossy links share a node.
			_, _ = r.l.Exec(ctx, node, "nft", "delete", "table", "netdev", "soak")
		}
	}
	r.lossy = nil
}

func nftScript(ctx context.Context, l *interop.Lab, node, script string) error {
	f, err := os.CreateTemp("", "soak-nft-*.nft")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script); err != nil {
		f.Close()
		return err
	}
	f.Close()
	if out, err := l.Exec(ctx, node, "nft", "-f", f.Name()); err != nil {
		return fmt.Errorf("nft on %s: %v: %s", node, err, out)
	}
	return nil
}

// --- resources ---

// Lifetime is one fared process's resource samples, taken each time the
// fabric had settled.
type Lifetime struct {
	Node       string
	Pid        int
	Samples    int
	Goroutines [2]int // first, last
	FDs        [2]int
	Threads    [2]int
	MaxGor     int
	MaxFDs     int
}

type resources struct {
	byPid map[int]*Lifetime
	order []int
}

func newResources() *resources { return &resources{byPid: map[int]*Lifetime{}} }

func (s *resources) sample(ctx context.Context, r *Runner) {
	for _, n := range r.l.Nodes {
		if n.Kind != "fared" {
			continue
		}
		d, err := r.l.Daemons(n.Name)
		if err != nil || d["fared"] == 0 {
			r.fail("resources: %s: no fared (%v)", n.Name, err)
			continue
		}
		pid := d["fared"]
		fds, err1 := countFDs(pid)
		thr, err2 := threads(pid)
		gor, err3 := goroutines(ctx, n.Netns)
		if err := errors.Join(err1, err2, err3); err != nil {
			r.fail("resources: %s pid %d: %v", n.Name, pid, err)
			continue
		}
		lt := s.byPid[pid]
		if lt == nil {
			lt = &Lifetime{Node: n.Name, Pid: pid, Goroutines: [2]int{gor, gor}, FDs: [2]int{fds, fds}, Threads: [2]int{thr, thr}}
			s.byPid[pid] = lt
			s.order = append(s.order, pid)
		}
		lt.Samples++
		lt.Goroutines[1], lt.FDs[1], lt.Threads[1] = gor, fds, thr
		lt.MaxGor, lt.MaxFDs = max(lt.MaxGor, gor), max(lt.MaxFDs, fds)
	}
}

// Growth limits between a process's first and last settled sample: a
// scrape itself runs a few goroutines, and a neighbour's reconnect may
// leave a socket in flux.
const (
	goroutineSlack = 10
	fdSlack        = 4
)

// judge records each process lifetime and fails one that grew.
func (s *resources) judge(r *Runner) {
	passed := true
	for _, pid := range s.order {
		lt := s.byPid[pid]
		r.rep.Resources = append(r.rep.Resources, *lt)
		if lt.Samples < 3 {
			continue
		}
		if lt.Goroutines[1]-lt.Goroutines[0] > goroutineSlack || lt.FDs[1]-lt.FDs[0] > fdSlack {
			passed = false
			r.fail("%s pid %d over %d samples: goroutines %d -> %d, fds %d -> %d", lt.Node, pid, lt.Samples,
				lt.Goroutines[0], lt.Goroutines[1], lt.FDs[0], lt.FDs[1])
		}
	}
	if passed {
		r.rep.Checks[InvResources]++
	}
}

func countFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents), err
}

func threads(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no Threads line")
}

func goroutines(ctx context.Context, ns string) (int, error) {
	fam, _, err := scrapeMetrics(ctx, ns)
	if err != nil {
		return 0, err
	}
	v, ok := fam.Sum("go_goroutines")
	if !ok {
		return 0, errors.New("no go_goroutines")
	}
	return int(v), nil
}

func scrapeMetrics(ctx context.Context, ns string) (scrape.Families, []byte, error) {
	body, err := scrape.Get(ctx, ns, metricsURL)
	if err != nil {
		return nil, nil, err
	}
	f, err := scrape.Parse(bytes.NewReader(body))
	return f, body, err
}
