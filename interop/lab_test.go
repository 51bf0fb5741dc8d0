package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitAdjacencies polls until node has exactly the wanted Up adjacencies.
func waitAdjacencies(t *testing.T, ctx context.Context, l *Lab, node string, want ...string) {
	t.Helper()
	err := Poll(ctx, 60*time.Second, node+": isis adjacencies "+strings.Join(want, ","), func() error {
		up, err := l.ISISUp(ctx, node)
		if err != nil {
			return err
		}
		for _, w := range want {
			found := false
			for _, u := range up {
				found = found || u == w
			}
			if !found {
				return fmt.Errorf("up: %v", up)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitPing(t *testing.T, ctx context.Context, l *Lab, from, to string) {
	t.Helper()
	src, dst := l.Node(from).Loopback.String(), l.Node(to).Loopback.String()
	err := Poll(ctx, 60*time.Second, fmt.Sprintf("ping %s -> %s", from, to), func() error {
		_, err := l.Exec(ctx, from, "ping", "-c", "1", "-W", "1", "-I", src, dst)
		return err
	})
	if err != nil {
		out, _ := l.Exec(ctx, from, "ip", "route")
		t.Fatalf("%v\nroutes on %s:\n%s", err, from, out)
	}
}

// assertGone checks that nothing of the lab is left: namespaces, FRR
// daemons with its path space, run and FRR directories.
func assertGone(t *testing.T, name string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, name+"-") {
			t.Errorf("namespace left: %s", line)
		}
	}
	// pgrep -f matches the daemons' command lines ("-N <lab>-<node>");
	// zombies have none, so only live daemons count.
	if out, err := exec.Command("pgrep", "-af", "-N "+name+"-").CombinedOutput(); err == nil {
		t.Errorf("processes left:\n%s", out)
	}
	for _, p := range []string{filepath.Join(DefaultRunDir, name)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
	for _, g := range []string{filepath.Join(frrStateDir, name+"-*"), filepath.Join(frrConfDir, name+"-*")} {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			t.Errorf("left: %v", m)
		}
	}
}

// startConverged starts the lab of topo and waits until its IS-IS
// adjacencies are up (each entry: a node, then its neighbours as
// "peer@iface") and the loopbacks answer pings (from, to), logging when.
func startConverged(t *testing.T, topo string, adjacencies [][]string, pings ...[2]string) (*Lab, context.Context) {
	t.Helper()
	start := time.Now()
	l := StartLab(t, topo, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	for _, a := range adjacencies {
		waitAdjacencies(t, ctx, l, a[0], a[1:]...)
	}
	t.Logf("adjacencies up %v after Up started", time.Since(start).Round(time.Millisecond))
	for _, p := range pings {
		waitPing(t, ctx, l, p[0], p[1])
	}
	t.Logf("loopbacks reachable %v after Up started", time.Since(start).Round(time.Millisecond))
	return l, ctx
}

const p2pTopo = `name: p2p
nodes:
  r1: {kind: frr}
  r2: {kind: frr}
links:
  - {a: r1, b: r2, bandwidth: 100G}
  - {a: r1, b: r2, bandwidth: 40G}
`

func TestLabFRRP2P(t *testing.T) {
	l, ctx := startConverged(t, p2pTopo, [][]string{{"r1", "r2@r2-1", "r2@r2-2"}, {"r2", "r1@r1-1", "r1@r1-2"}},
		[2]string{"r1", "r2"}, [2]string{"r2", "r1"})

	// Both parallel links carry the bandwidth farelab gave zebra.
	db, err := l.Vtysh(ctx, "r1", "show isis database detail r1.00-00")
	if err != nil {
		t.Fatal(err)
	}
	for _, bw := range []string{"Maximum Bandwidth: 1.25e+10", "Maximum Bandwidth: 5e+09"} {
		if !strings.Contains(db, bw) {
			t.Errorf("r1's LSP lacks %q:\n%s", bw, db)
		}
	}

	// The state file lets another process drive the lab.
	o, err := Open(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if o.Node("r2").Loopback != l.Node("r2").Loopback || !o.Ready || len(o.Netns) != 2 {
		t.Errorf("opened state differs: %+v", o)
	}
	if names, err := List(); err != nil || !strings.Contains(" "+strings.Join(names, " ")+" ", " "+l.Name+" ") {
		t.Errorf("List() = %v, %v; want it to contain %s", names, err, l.Name)
	}

	// Cutting both links drops the adjacencies; restoring brings them back.
	if err := l.SetLinkUp(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, 30*time.Second, "r2-1 adjacency down", func() error {
		up, err := l.ISISUp(ctx, "r1")
		if err != nil {
			return err
		}
		if strings.Contains(strings.Join(up, " "), "@r2-1") {
			return fmt.Errorf("still up: %v", up)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetLinkUp(ctx, 0, true); err != nil {
		t.Fatal(err)
	}
	waitAdjacencies(t, ctx, l, "r1", "r2@r2-1", "r2@r2-2")

	// Restart a node: its daemons come back and re-form adjacencies.
	if err := l.RestartNode(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	waitAdjacencies(t, ctx, l, "r1", "r2@r2-1", "r2@r2-2")

	// A capture sees r1's hellos.
	pcap := filepath.Join(t.TempDir(), "r1.pcap")
	stop, err := l.Capture(ctx, "r1", "r2-1", pcap)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(pcap); err != nil || st.Size() <= 24 {
		t.Errorf("capture %s: %v, %v", pcap, st, err)
	}

	name := l.Name
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
}

const lanTopo = `name: lan
defaults: {hello-interval: 1s}
nodes:
  r1: {kind: frr, priority: 100}
  r2: {kind: frr}
  r3: {kind: frr}
links:
  - {lan: seg1, nodes: [r1, r2, r3], bandwidth: 10G}
`

func TestLabFRRLAN(t *testing.T) {
	l, ctx := startConverged(t, lanTopo, [][]string{{"r1", "r2@seg1", "r3@seg1"}, {"r2", "r1@seg1", "r3@seg1"}, {"r3", "r1@seg1", "r2@seg1"}},
		[2]string{"r2", "r3"}, [2]string{"r3", "r1"})

	// r1 has the highest priority: it is DIS, so the pseudonode LSP is
	// r1.xx-00.
	db, err := l.Vtysh(ctx, "r2", "show isis database")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(db, "r1.0") {
		t.Errorf("no pseudonode LSP from r1 (DIS):\n%s", db)
	}

	name := l.Name
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
}

// TestDownWithoutState removes the state file of a running lab and checks
// that Down(name) still finds and removes everything by name.
func TestDownWithoutState(t *testing.T) {
	l := StartLab(t, p2pTopo, Options{Name: "nost"})
	name := l.Name
	if err := os.Remove(filepath.Join(l.Dir, stateFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(name); err == nil {
		t.Fatal("Open succeeded without a state file")
	}
	if err := Down(name); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
}

// TestFaredStandIn runs a fared node with a stand-in binary that checks its
// command line and creates the control socket: it covers config writing,
// process start, readiness and Stop/Start without the real daemon.
func TestFaredStandIn(t *testing.T) {
	RequireLab(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fared")
	script := `#!/bin/sh
# fared stand-in: fared -c CFG --socket SOCK
[ "$1" = -c ] && [ "$3" = --socket ] || { echo "bad args: $*"; exit 2; }
grep -q '^router-id: 10.255.0.2' "$2" || { echo "bad config"; exit 3; }
trap 'rm -f "$4"; exit 0' TERM
exec python3 -c 'import socket,sys,time,signal,os
signal.signal(signal.SIGTERM, lambda *a: (os.unlink(sys.argv[1]), sys.exit(0)))
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()
while True: time.sleep(1)' "$4"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 needed by the stand-in")
	}
	l := StartLab(t, `name: fsi
nodes:
  r1: {kind: frr}
  f1: {kind: fared, prefixes: [{prefix: 10.10.1.0/24, path-bandwidth: 40G}]}
links:
  - {a: f1, b: r1, bandwidth: 100G}
`, Options{FaredBin: bin})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f1 := l.Node("f1")
	if _, err := os.Stat(f1.Socket); err != nil {
		t.Fatal(err)
	}
	// Processes are really in the namespace.
	if out, err := l.Exec(ctx, "f1", "ip", "-br", "addr", "show", "r1-1"); err != nil || !strings.Contains(string(out), "10.254.0.0/31") {
		t.Errorf("f1 r1-1: %s %v", out, err)
	}
	if err := l.StopNode(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	if d := l.daemons(f1); len(d) != 0 {
		t.Errorf("still running after StopNode: %v", d)
	}
	if err := l.StartNode(ctx, "f1"); err != nil {
		t.Fatalf("%v\n%s", err, tail(l.FaredLog("f1"), 1000))
	}
	if d := l.daemons(f1); d["fared"] == 0 {
		t.Errorf("not running after StartNode")
	}
	name := l.Name
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
}

// TestUpFailureCleansUp: a fared that exits at once makes Up fail, and Up
// removes everything it had built.
func TestUpFailureCleansUp(t *testing.T) {
	RequireLab(t)
	topo, err := ParseTopology([]byte("name: fail\nnodes:\n  r1: {kind: frr}\n  f1: {kind: fared}\nlinks:\n  - {a: r1, b: f1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	name := UniqueName("fail")
	t.Cleanup(func() { _ = Down(name) })
	_, err = Up(context.Background(), topo, Options{Name: name, FaredBin: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "fared exited") {
		t.Fatalf("Up: %v, want a fared exited error", err)
	}
	assertGone(t, name)
}
