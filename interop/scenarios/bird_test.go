package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/fare"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/ospf"
)

// birdTopo: f1's only neighbour is BIRD (p2p), so whatever of f1's the
// others hold crossed BIRD. BIRD (priority 100) is DR of the LAN seg with
// fared and FRR on it, and meets f2 on a p2p link too. f1 originates a
// prefix with a Path Bandwidth (Extended Prefix LSA); b1 a stub prefix.
const birdTopo = `name: bird
protocol: ospf
nodes:
  f1: {kind: fared, prefixes: [{prefix: 10.20.1.0/24, path-bandwidth: 40G}]}
  b1: {kind: bird, priority: 100, prefixes: [10.10.1.0/24]}
  f2: {kind: fared}
  r1: {kind: frr}
links:
  - {a: f1, b: b1, bandwidth: 100G}
  - {a: b1, b: f2}
  - {lan: seg, nodes: [b1, f2, r1]}
`

// birdOSPFDB reads BIRD's database in the key shape of ospfNodeDB.
func birdOSPFDB(ctx context.Context, l *interop.Lab, node string) (map[string]ospfRow, error) {
	out, err := l.Birdc(ctx, node, "show ospf lsadb")
	if err != nil {
		return nil, err
	}
	rows, err := interop.ParseBIRDLSADB(out)
	if err != nil {
		return nil, err
	}
	db := map[string]ospfRow{}
	for _, r := range rows {
		a := r.Area
		if a == "" {
			a = "AS"
		}
		db[fmt.Sprintf("%s/%d/%s/%s", a, r.Type, r.ID, r.AdvRouter)] = ospfRow{Seq: r.Seq, Checksum: r.Checksum, Age: r.Age}
	}
	return db, nil
}

func anyOSPFDB(ctx context.Context, l *interop.Lab, node string) (map[string]ospfRow, error) {
	if l.Node(node).Kind == "bird" {
		return birdOSPFDB(ctx, l, node)
	}
	return ospfNodeDB(ctx, l, node)
}

// sameDBs succeeds when every node holds the same live LSAs (keys,
// sequence numbers, checksums) and that set includes every key of must.
func sameDBs(ctx context.Context, l *interop.Lab, must []string, nodes ...string) func() error {
	return func() error {
		var first string
		for i, n := range nodes {
			db, err := anyOSPFDB(ctx, l, n)
			if err != nil {
				return err
			}
			for _, k := range must {
				if r, ok := db[k]; !ok || r.Age >= ospf.MaxAge {
					return fmt.Errorf("%s lacks %s", n, k)
				}
			}
			d, _ := ospfDigest(db)
			if i == 0 {
				first = d
			} else if d != first {
				return fmt.Errorf("databases differ:\n%s:\n%s\n%s:\n%s", nodes[0], first, n, d)
			}
		}
		return nil
	}
}

// birdFull succeeds when BIRD's neighbours are exactly want ("router id
// on interface" -> state prefix, e.g. "Full/PtP").
func birdFull(ctx context.Context, l *interop.Lab, node string, want map[string]string) func() error {
	return func() error {
		out, err := l.Birdc(ctx, node, "show ospf neighbors")
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, r := range interop.ParseBIRDNeighbors(out) {
			got[r.RouterID+" on "+r.Interface] = r.State
		}
		if len(got) != len(want) {
			return fmt.Errorf("BIRD's neighbours %v, want %v", got, want)
		}
		for k, st := range want {
			if !strings.HasPrefix(got[k], st) {
				return fmt.Errorf("BIRD's neighbour %s: %q, want %s (all: %v)", k, got[k], st, got)
			}
		}
		return nil
	}
}

// pings pings dst from node's loopback (one echo, 1s): a poll check.
func pings(ctx context.Context, l *interop.Lab, node, dst string) func() error {
	return func() error {
		out, err := l.Exec(ctx, node, "ping", "-n", "-c", "1", "-W", "1", "-I", rid(l, node), dst)
		if err != nil {
			return fmt.Errorf("%s -> %s: %v: %s", node, dst, err, out)
		}
		return nil
	}
}

// kernelRoutes returns node's IPv4 routes of one protocol as prefix ->
// sorted "via GW dev IF" list, read with iproute2 (`ip route`, `ip
// nexthop`), not through the daemons' own views.
func kernelRoutes(ctx context.Context, l *interop.Lab, node, proto string) (map[string][]string, error) {
	out, err := l.Exec(ctx, node, "ip", "-4", "route", "show", "proto", proto)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			cur = f[0]
			m[cur] = nil
		}
		for i := 0; i+1 < len(f); i++ {
			switch f[i] {
			case "via":
				m[cur] = append(m[cur], "via "+f[i+1]+" dev "+after(f, "dev"))
			case "nhid":
				hops, err := kernelNexthop(ctx, l, node, f[i+1])
				if err != nil {
					return nil, err
				}
				m[cur] = append(m[cur], hops...)
			}
		}
		sort.Strings(m[cur])
	}
	return m, nil
}

// kernelNexthop resolves a nexthop object (`ip nexthop show id N`): a
// single "id N via GW dev IF ..." or a "id N group A,W/B,W ...".
func kernelNexthop(ctx context.Context, l *interop.Lab, node, id string) ([]string, error) {
	out, err := l.Exec(ctx, node, "ip", "nexthop", "show", "id", id)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(out))
	if g := after(f, "group"); g != "" {
		var hops []string
		for _, m := range strings.Split(g, "/") {
			h, err := kernelNexthop(ctx, l, node, strings.Split(m, ",")[0])
			if err != nil {
				return nil, err
			}
			hops = append(hops, h...)
		}
		return hops, nil
	}
	return []string{"via " + after(f, "via") + " dev " + after(f, "dev")}, nil
}

// after returns the word after key in f, or "".
func after(f []string, key string) string {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}

// TestBIRDOSPF: BIRD 2 as a farelab node between fared and FRR. Full on
// p2p and on a LAN where BIRD is DR; one database everywhere; routes and
// packets both ways through BIRD's kernel; fared's TE and Extended Prefix
// LSAs cross BIRD intact and are still understood on the far side. BIRD
// floods them but originates none, so fared weighs paths through BIRD's
// links equally (fare.ModeMissingBW). Then BIRD is killed with SIGKILL
// and started again by the lab.
func TestBIRDOSPF(t *testing.T) {
	l := startLab(t, birdTopo)
	ctx := ctxT(t)
	b1 := l.Node("b1")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("b1 bird.log (tail):\n%s", tailFile(filepath.Join(b1.Dir, "bird.log"), 6000))
		}
	})
	f1, f2, r1, b := rid(l, "f1"), rid(l, "f2"), rid(l, "r1"), rid(l, "b1")
	wantBIRD := map[string]string{f1 + " on f1-1": "Full/PtP", f2 + " on f2-1": "Full/PtP", f2 + " on seg": "Full/", r1 + " on seg": "Full/"}
	poll(t, ctx, 40*time.Second, "fared and FRR Full", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "f2": 3, "r1": 2}))
	poll(t, ctx, 10*time.Second, "BIRD Full on p2p and LAN", birdFull(ctx, l, "b1", wantBIRD))

	// BIRD is the LAN's DR (priority 100 against 1).
	var nbrs []ospf.NeighborView
	if err := l.FarectlJSON(ctx, "f2", &nbrs, "ospf", "neighbors"); err != nil {
		t.Fatal(err)
	}
	lanAddr := ""
	for _, m := range l.Links[2].Members {
		if m.Node == "b1" {
			lanAddr = m.Addr.Addr().String()
		}
	}
	for _, n := range nbrs {
		if n.Interface == "seg" && n.DR != lanAddr {
			t.Fatalf("f2 sees DR %s on seg, want BIRD's %s", n.DR, lanAddr)
		}
	}

	// One database: f1's router, TE (opaque type 1) and Extended Prefix
	// (opaque type 7) LSAs are in all four, and BIRD's network LSA as DR.
	f1DB, err := anyOSPFDB(ctx, l, "f1")
	if err != nil {
		t.Fatal(err)
	}
	must := []string{"0.0.0.0/1/" + f1 + "/" + f1, "0.0.0.0/1/" + b + "/" + b, "0.0.0.0/2/" + lanAddr + "/" + b}
	types := map[string]bool{}
	for k := range f1DB {
		p := strings.Split(k, "/")
		if p[1] == "10" && p[3] == f1 {
			must = append(must, k)
			types[strings.Split(p[2], ".")[0]] = true
		}
	}
	if !types["1"] || !types["7"] {
		t.Fatalf("f1 originates no TE (1) or Extended Prefix (7) opaque LSA: %v", f1DB)
	}
	poll(t, ctx, 30*time.Second, "identical databases with f1's opaque LSAs", sameDBs(ctx, l, must, "f1", "b1", "f2", "r1"))
	bdb, err := birdOSPFDB(ctx, l, "b1")
	if err != nil {
		t.Fatal(err)
	}
	for k := range bdb {
		if p := strings.Split(k, "/"); p[3] == b && p[1] != "1" && p[1] != "2" {
			t.Errorf("BIRD originates %s: only router and network LSAs expected", k)
		}
	}

	// What crossed BIRD is understood on the far side: f2 reads f1's
	// link bandwidth (TE) and f1's prefix Path Bandwidth (Extended Prefix).
	poll(t, ctx, 20*time.Second, "f2 decodes f1's TE and Extended Prefix LSAs", func() error {
		g, err := faredOSPFGraph(ctx, l, "f2", "0.0.0.0")
		if err != nil {
			return err
		}
		var bw, pb uint64
		for _, n := range g.Nodes {
			for _, lk := range n.Links {
				if n.RouterID == f1 && lk.MaxBPS != nil {
					bw = *lk.MaxBPS
				}
				if n.RouterID == b && lk.MaxBPS != nil {
					return fmt.Errorf("BIRD's link to %s has a bandwidth: %d", lk.To, *lk.MaxBPS)
				}
			}
		}
		for _, p := range g.Prefixes {
			if p.Prefix == "10.20.1.0/24" && p.PathBPS != nil {
				pb = *p.PathBPS
			}
		}
		if bw != 100e9 || pb != 40e9 {
			return fmt.Errorf("f1's link bandwidth %d (want 100G), path bandwidth %d (want 40G)", bw, pb)
		}
		return nil
	})

	// Routes both ways: fared and FRR learn BIRD's prefixes; BIRD puts
	// fared's and FRR's into its kernel (ECMP to f2 over both links).
	poll(t, ctx, 20*time.Second, "routes both ways", func() error {
		for _, c := range []struct{ node, proto, prefix, want string }{
			{"f1", "ospf", "10.10.1.0/24", "via 10.254.0.1 dev b1-1"},
			{"f1", "ospf", r1, "via 10.254.0.1 dev b1-1"},
			{"b1", "bird", f1, "via 10.254.0.0 dev f1-1"},
			{"b1", "bird", "10.20.1.0/24", "via 10.254.0.0 dev f1-1"},
			{"b1", "bird", f2, "via 10.253.0.3 dev seg,via 10.254.0.3 dev f2-1"},
			{"b1", "bird", r1, "via 10.253.0.4 dev seg"},
		} {
			m, err := kernelRoutes(ctx, l, c.node, c.proto)
			if err != nil {
				return err
			}
			if got := strings.Join(m[c.prefix], ","); got != c.want {
				return fmt.Errorf("%s: kernel route %s proto %s: %q, want %q (all: %v)", c.node, c.prefix, c.proto, got, c.want, m)
			}
		}
		out, err := l.Vtysh(ctx, "r1", "show ip route 10.10.1.0/24")
		if err != nil || !strings.Contains(out, "* 10.253.0.2, via seg") {
			return fmt.Errorf("r1 has no route to BIRD's stub via BIRD: %v\n%s", err, out)
		}
		return nil
	})
	poll(t, ctx, 10*time.Second, "f1 pings r1 through BIRD", pings(ctx, l, "f1", r1))
	poll(t, ctx, 10*time.Second, "r1 pings f1 through BIRD", pings(ctx, l, "r1", f1))
	poll(t, ctx, 10*time.Second, "BIRD pings f1", pings(ctx, l, "b1", f1))

	// BIRD floods no TE: paths over its links have no bandwidth, and
	// fared falls back to equal weights for them.
	var rt []struct {
		Mode string `json:"mode"`
	}
	if err := l.FarectlJSON(ctx, "f2", &rt, "route", f1+"/32"); err != nil || len(rt) != 1 || rt[0].Mode != fare.ModeMissingBW {
		t.Fatalf("f2's route to f1: %+v, %v; want mode %s", rt, err, fare.ModeMissingBW)
	}

	// No adjacency flapped (the auth test saw a Full->Init flap right
	// after the first Full when BIRD replaced FRR under the same router id).
	for _, n := range []string{"f1", "f2"} {
		var v []ospf.NeighborView
		if err := l.FarectlJSON(ctx, n, &v, "ospf", "neighbors"); err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			if x.Flaps != 0 {
				t.Errorf("%s: neighbour %s on %s flapped %d times", n, x.RouterID, x.Interface, x.Flaps)
			}
		}
	}
	if log := tailFile(filepath.Join(b1.Dir, "bird.log"), 1<<20); strings.Contains(log, "changed state from Full") {
		t.Errorf("BIRD left Full:\n%s", grepLines(log, "changed state from Full"))
	}

	// Crash and restart: the lab restarts a bird node like any other.
	routerSeq := bdb["0.0.0.0/1/"+b+"/"+b].Seq
	if err := l.KillNode(ctx, "b1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 10*time.Second, "f1 drops BIRD", ospfAdjacencies(ctx, l, map[string]int{"f1": 0}))
	if err := l.StartNode(ctx, "b1"); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 40*time.Second, "Full again", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "f2": 3, "r1": 2}))
	poll(t, ctx, 10*time.Second, "BIRD Full again", birdFull(ctx, l, "b1", wantBIRD))
	poll(t, ctx, 30*time.Second, "identical databases again", sameDBs(ctx, l, must[:2], "f1", "b1", "f2", "r1"))
	bdb, err = birdOSPFDB(ctx, l, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if s := bdb["0.0.0.0/1/"+b+"/"+b].Seq; int32(s) <= int32(routerSeq) {
		t.Errorf("BIRD's router LSA after restart has seq %#x, before %#x", s, routerSeq)
	}
	poll(t, ctx, 20*time.Second, "f1 pings r1 through the restarted BIRD", pings(ctx, l, "f1", r1))
}

func tailFile(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
