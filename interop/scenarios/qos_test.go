package scenarios

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/interop"
)

// The qos module end to end: the real fared and farectl binaries, config
// sections added by reload, real veths and traffic for the linux backend,
// the software data plane for the watchdog.

const qosTopo = `name: qos
nodes:
  qa: {kind: fared}
  qb: {kind: fared}
links:
  - {a: qa, b: qb, bandwidth: 1G}
`

// appendConfig writes base + extra as the node's fared.yaml and returns
// the line number the extra text starts at.
func appendConfig(t *testing.T, path, base, extra string) int {
	t.Helper()
	if err := os.WriteFile(path, []byte(base+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Count(base, "\n") + 1
}

// addSection appends a section to node's fared.yaml and reloads it; a
// rejected reload fails the test. It returns the reload's answer.
func addSection(t *testing.T, ctx context.Context, l *interop.Lab, node, section string) []byte {
	t.Helper()
	cfgPath := filepath.Join(l.Node(node).Dir, "fared.yaml")
	base, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	appendConfig(t, cfgPath, string(base), section)
	out, err := l.Farectl(ctx, node, "reload")
	if err != nil {
		t.Fatalf("%s reload: %v %s", node, err, out)
	}
	return out
}

// udpFrom sends n datagrams with a DSCP from inside namespace ns.
func udpFrom(t *testing.T, ns string, dst string, sport, dscp, n, size int) {
	t.Helper()
	var c *net.UDPConn
	err := nsenter.DoNamed(ns, func() (err error) {
		// Unconnected: the peer's port unreachable does not fail sends.
		c, err = net.ListenUDP("udp4", &net.UDPAddr{Port: sport})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, _ := c.SyscallConn()
	raw.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, dscp<<2) })
	buf := make([]byte, size)
	to := &net.UDPAddr{IP: net.ParseIP(dst), Port: 9}
	for i := 0; i < n; i++ {
		if _, err := c.WriteToUDP(buf, to); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
}

// TestQoSLinuxBackend: a qos section added by reload drives the linux
// backend on the lab's veth: farectl reports DCB unsupported (with the
// kernel's reason) and the rest supported; DSCP traffic lands in the
// HTB classes farectl shows; bad sections are refused with file:line
// and the running state stays.
func TestQoSLinuxBackend(t *testing.T) {
	l := startLab(t, qosTopo)
	ctx := ctxT(t)
	a := l.Node("qa")
	iface := a.Interfaces[0].Name
	cfgPath := filepath.Join(a.Dir, "fared.yaml")
	base, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	section := fmt.Sprintf(`qos:
  backend: linux
  poll-interval: 100ms
  dscp-map: {26: 3, 46: 5}
  pfc: {priorities: [3], xoff: 400K, xon: 350K, headroom: 90K}
  ecn-profiles:
    roce: {green: {min: 100K, max: 300K, probability: 5}}
  queues: {3: {ecn: roce}}
  interfaces:
    - name: %s
      rate: 1G
`, iface)
	addSection(t, ctx, l, "qa", section)
	var st wire.QoSStatus
	poll(t, ctx, 10*time.Second, "qos applied", func() error {
		if err := l.FarectlJSON(ctx, "qa", &st, "qos", "status"); err != nil {
			return err
		}
		if !st.Applied {
			return fmt.Errorf("not applied: %s", st.LastError)
		}
		return nil
	})
	feat := map[string]wire.QoSFeature{}
	for _, f := range st.Interfaces[0].Features {
		feat[f.Feature] = f
	}
	if f := feat["pfc"]; f.Supported || !strings.Contains(f.Reason, "not supported") {
		t.Errorf("pfc on a veth: %+v, want unsupported with the kernel's reason", f)
	}
	for _, f := range []string{"dscp-map", "ets", "flows", "counters"} {
		if !feat[f].Supported {
			t.Errorf("%s unsupported: %s", f, feat[f].Reason)
		}
	}
	if f := feat["ecn"]; f.Supported || !strings.Contains(f.Reason, "RED") {
		t.Errorf("ecn: %+v, want unsupported (no RED qdisc in this kernel)", f)
	}

	peer := l.Links[0].AddrB.Addr().String()
	// Resolve the neighbour first: a burst to an unresolved one loses
	// what exceeds the ARP queue before it reaches the qdisc.
	if out, err := exec.Command("ip", "netns", "exec", a.Netns, "ping", "-c", "1", "-W", "2", peer).CombinedOutput(); err != nil {
		t.Fatalf("ping %s: %v %s", peer, err, out)
	}
	udpFrom(t, a.Netns, peer, 40001, 26, 250, 500)
	udpFrom(t, a.Netns, peer, 40002, 46, 150, 500)
	frame := uint64(500 + 8 + 20 + 14)
	var fl wire.QoSFlows
	poll(t, ctx, 5*time.Second, "class counters", func() error {
		if err := l.FarectlJSON(ctx, "qa", &fl, "qos", "flows"); err != nil {
			return err
		}
		got := map[string]uint64{}
		for _, c := range fl.Interfaces[0].Classes {
			got[c.Name] = c.Packets
			if c.Name == "1:13" && c.Bytes != 250*frame {
				return fmt.Errorf("1:13 bytes %d, want %d", c.Bytes, 250*frame)
			}
		}
		if got["1:13"] != 250 || got["1:15"] != 150 {
			return fmt.Errorf("class packets %v, want 1:13=250 1:15=150", got)
		}
		return nil
	})

	var ecn wire.QoSECN
	if err := l.FarectlJSON(ctx, "qa", &ecn, "qos", "ecn"); err != nil {
		t.Fatal(err)
	}
	if len(ecn.Profiles) != 1 || ecn.Profiles[0].Name != "roce" || len(ecn.Queues) != 1 || ecn.Queues[0].Priority != 3 {
		t.Errorf("qos ecn: %+v", ecn)
	}
	// The text views render (farectl without -j).
	for _, noun := range [][]string{{"status"}, {"pfc"}, {"watchdog"}, {"ecn"}, {"flows"}} {
		argv := append([]string{"netns", "exec", a.Netns, bins.Farectl, "-s", a.Socket, "qos"}, noun...)
		if out, err := exec.Command("ip", argv...).CombinedOutput(); err != nil || len(out) == 0 {
			t.Errorf("farectl qos %s: %v\n%s", noun[0], err, out)
		}
	}
	poll(t, ctx, 5*time.Second, "fared logs the unsupported DCB on the veth", func() error {
		b, err := os.ReadFile(l.FaredLog("qa"))
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "qos feature unsupported on this interface") || !strings.Contains(string(b), "feature=pfc") {
			return fmt.Errorf("not in fared.log")
		}
		return nil
	})

	// Bad sections: each reload is refused with file:line and nothing
	// changes.
	for _, bad := range []struct{ name, from, to, want string }{
		{"kmax >= xoff", "max: 300K", "max: 400K", "ecn-profile roce max threshold 400000 is not below the queue's PFC xoff 400000"},
		{"unknown interface", "    - name: " + iface + "\n", "    - name: " + iface + "\n    - name: nope0\n", "qos interface nope0: no such interface on this node (linux backend)"},
		{"port groups overlap", "  interfaces:\n", "  prevention:\n    port-groups:\n      - {name: g1, interfaces: [" + iface + ", lo]}\n      - {name: g2, interfaces: [lo, " + iface + "]}\n  interfaces:\n    - name: lo\n", "is already in port group g1 (groups must not overlap)"},
	} {
		start := appendConfig(t, cfgPath, string(base), strings.Replace(section, bad.from, bad.to, 1))
		out, err := l.Farectl(ctx, "qa", "reload")
		if err == nil {
			t.Errorf("%s: reload accepted:\n%s", bad.name, out)
			continue
		}
		msg := err.Error() + string(out)
		if !strings.Contains(msg, bad.want) || !strings.Contains(msg, cfgPath+":") {
			t.Errorf("%s: reload error %q, want file:line and %q (section starts at line %d)", bad.name, msg, bad.want, start)
		}
	}
	// A good reload is applied live: DSCP 46 moves to priority 4.
	appendConfig(t, cfgPath, string(base), strings.Replace(section, "46: 5", "46: 4", 1))
	var rl wire.Reload
	if err := l.FarectlJSON(ctx, "qa", &rl, "reload"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if w := rl.Modules["qos"].Warnings; len(w) > 0 {
		t.Errorf("qos reload warnings: %v", w)
	}
	if ch := strings.Join(rl.Modules["qos"].Changed, "; "); !strings.Contains(ch, "46: 5 -> 4") {
		t.Errorf("qos changes %q, want the DSCP 46 move", ch)
	}
	udpFrom(t, a.Netns, peer, 40003, 46, 70, 500)
	poll(t, ctx, 5*time.Second, "DSCP 46 in class 1:14 after the reload", func() error {
		if err := l.FarectlJSON(ctx, "qa", &fl, "qos", "flows"); err != nil {
			return err
		}
		for _, c := range fl.Interfaces[0].Classes {
			if c.Name == "1:14" && c.Packets == 70 {
				return nil
			}
		}
		return fmt.Errorf("classes %+v", fl.Interfaces[0].Classes)
	})

	var after wire.QoSStatus
	if err := l.FarectlJSON(ctx, "qa", &after, "qos", "status"); err != nil {
		t.Fatal(err)
	}
	if !after.Applied || len(after.Interfaces) != 1 || after.Interfaces[0].Name != iface {
		t.Errorf("after refused reloads: %+v", after)
	}
}

// TestQoSRefusesToStart: fared with a qos section naming an interface the
// node lacks exits non-zero at start with file:line.
func TestQoSRefusesToStart(t *testing.T) {
	interop.RequireLab(t)
	ns := interop.UniqueName("qosbad")
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fared.yaml")
	os.WriteFile(cfg, []byte(`router-id: 10.0.0.1
fib: {enabled: false}
qos:
  backend: linux
  interfaces:
    - name: lo
    - name: eth9
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bins.Fared, "-c", cfg, "--socket", filepath.Join(dir, "s.sock")).CombinedOutput()
	if err == nil {
		t.Fatalf("fared started with an unknown interface:\n%s", out)
	}
	if want := cfg + ":7: qos interface eth9: no such interface on this node (linux backend)"; !strings.Contains(string(out), want) {
		t.Fatalf("fared said:\n%s\nwant %q", out, want)
	}
}

// TestQoSSimWatchdogCLI: fared runs switch B of the four-switch loop on
// the sim backend (its own watchdog on the wall clock; A, C and D run
// theirs inside the simulation). farectl shows the deadlock detected,
// recovered, then the limit; PFC stays off; `farectl qos pfc restore`
// brings it back.
func TestQoSSimWatchdogCLI(t *testing.T) {
	l, ctx := simSwitch(t, "qsim", "qs", simLoop4)
	var wd wire.QoSWatchdog
	iface := func(name string) wire.QoSWatchdogIface {
		for _, i := range wd.Interfaces {
			if i.Name == name {
				return i
			}
		}
		return wire.QoSWatchdogIface{}
	}
	poll(t, ctx, 60*time.Second, "B's ring port C reaches the deadlock limit", func() error {
		if err := l.FarectlJSON(ctx, "qs", &wd, "qos", "watchdog"); err != nil {
			return err
		}
		if c := iface("C"); c.Mode != "limited" {
			return fmt.Errorf("C: %+v", c)
		}
		return nil
	})
	c := iface("C")
	if c.Detections != 2 || c.Recoveries != 1 || c.LimitHits != 1 {
		t.Errorf("C after the limit: %+v, want 2 detections, 1 recovery, 1 limit hit", c)
	}
	var kinds []string
	for _, e := range wd.Events {
		if e.Interface == "C" {
			kinds = append(kinds, e.Kind)
			if e.Kind == "detected" && (e.LatencySeconds < 0.2 || e.LatencySeconds > 0.2+0.1+0.05) {
				t.Errorf("detection latency %.3fs, want 0.2..0.3 s (detection-time + poll, plus scheduling)", e.LatencySeconds)
			}
		}
	}
	if strings.Join(kinds, ",") != "detected,recovered,detected,limit" {
		t.Errorf("C's events %v", kinds)
	}
	// The module's Prometheus metrics say the same as farectl.
	f, err := enableMetrics(t, ctx, l, "qs").scrape()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []error{
		metricIs(f, 2, "fared_qos_watchdog_detections_total", "interface", "C"),
		metricIs(f, 1, "fared_qos_watchdog_limit_hits_total", "interface", "C"),
		metricIs(f, 1, "fared_qos_watchdog_mode", "interface", "C", "mode", "limited"),
		metricIs(f, 0, "fared_qos_pfc_enabled", "interface", "C", "priority", "3"),
		metricIs(f, 1, "fared_module_up", "module", "qos"),
	} {
		if e != nil {
			t.Error(e)
		}
	}
	// PFC stays off on C, poll after poll.
	for i := 0; i < 5; i++ {
		var pfc wire.QoSPFC
		if err := l.FarectlJSON(ctx, "qs", &pfc, "qos", "pfc"); err != nil {
			t.Fatal(err)
		}
		for _, pi := range pfc.Interfaces {
			if pi.Name == "C" && pi.Priorities[3].Enabled {
				t.Fatal("PFC back on C without restore")
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	var res wire.QoSRestore
	if err := l.FarectlJSON(ctx, "qs", &res, "qos", "pfc", "restore", "C"); err != nil {
		t.Fatal(err)
	}
	if !res.Restored || res.Mode != "normal" {
		t.Fatalf("restore: %+v", res)
	}
	var pfc wire.QoSPFC
	if err := l.FarectlJSON(ctx, "qs", &pfc, "qos", "pfc"); err != nil {
		t.Fatal(err)
	}
	for _, pi := range pfc.Interfaces {
		if pi.Name == "C" && !pi.Priorities[3].Enabled {
			t.Error("PFC still off on C after restore")
		}
	}
	// Restoring an unknown interface is the caller's mistake.
	if out, err := l.Farectl(ctx, "qs", "qos", "pfc", "restore", "nope"); err == nil || !strings.Contains(err.Error()+string(out), "not a qos interface") {
		t.Errorf("restore of an unknown interface: %v %s", err, out)
	}
}

// simSwitch starts a lab of one fared node, whose qos section start
// adds: simLoop4 or simMix.
func simSwitch(t *testing.T, lab, node string, start func(*testing.T, context.Context, *interop.Lab, string) []byte) (*interop.Lab, context.Context) {
	l := startLab(t, "name: "+lab+"\nnodes:\n  "+node+": {kind: fared}\n")
	ctx := ctxT(t)
	start(t, ctx, l, node)
	return l, ctx
}

// simQoS writes a simulation scenario into node's directory as file and
// adds the qos section by reload: the sim backend starts. It returns the
// reload's answer.
func simQoS(t *testing.T, ctx context.Context, l *interop.Lab, node, file string, scenario []byte, qos string) []byte {
	t.Helper()
	if err := os.WriteFile(filepath.Join(l.Node(node).Dir, file), scenario, 0o644); err != nil {
		t.Fatal(err)
	}
	return addSection(t, ctx, l, node, qos)
}

// simLoop4 makes node switch B of the four-switch loop (loop4.yaml) on
// the sim backend: its own watchdog on the wall clock.
func simLoop4(t *testing.T, ctx context.Context, l *interop.Lab, node string) []byte {
	t.Helper()
	scen, err := os.ReadFile("../../qos/sim/scenario/testdata/loop4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The loop never stops here: deadlock after deadlock. Only B (fared)
	// watches for deadlocks: A, C and D run no watchdog.
	text := strings.Replace(string(scen), "start: 0, stop: 1ms", "start: 0, stop: 1h", 1)
	text = strings.Replace(text, "  watchdog:\n", "  watchdog:\n    enabled: false\n", 1)
	if !strings.Contains(text, "enabled: false") || !strings.Contains(text, "stop: 1h") {
		t.Fatal("loop4.yaml changed: adapt this test")
	}
	return simQoS(t, ctx, l, node, "loop4.yaml", []byte(text), `qos:
  backend: sim
  sim: {scenario: loop4.yaml, node: B, speed: 0.01}
  poll-interval: 100ms
  dscp-map: {26: 3, 27: 2, 48: 6}
  pfc: {priorities: [3], xoff: 300K, xon: 250K, headroom: 100K}
  watchdog: {detection-time: 200ms, restoration-time: 500ms, action: drop, limit: 2, limit-window: 1m}
  interfaces: [{name: A}, {name: C}, {name: hB}]
`)
}

// simMix makes node switch S of aiecn-mix.yaml on the sim backend, with
// AI ECN and IPCC in its qos section.
func simMix(t *testing.T, ctx context.Context, l *interop.Lab, node string) []byte {
	t.Helper()
	scen, err := os.ReadFile("../../qos/sim/scenario/testdata/aiecn-mix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ifaces []string
	for _, h := range []string{"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "r"} {
		ifaces = append(ifaces, "{name: "+h+"}")
	}
	// Wall-clock polls drive fared's controller (10 ms = 0.1 ms simulated
	// at speed 0.01); IPCC runs inside the simulation, in simulated time.
	return simQoS(t, ctx, l, node, "mix.yaml", scen, `qos:
  backend: sim
  sim: {scenario: mix.yaml, node: S, speed: 0.01}
  poll-interval: 10ms
  dscp-map: {26: 3, 48: 6}
  pfc: {priorities: [3], xoff: 150K, xon: 120K, headroom: 60K}
  watchdog: {enabled: false}
  ecn-profiles:
    roce: {green: {min: 20K, max: 100K, probability: 10}}
  queues: {3: {ecn: roce}}
  flows: {mode: classify, elephant-rate: 1G, elephant-size: 100K}
  ecn-tuning: {algorithm: ai-ecn, interval: 100ms, min-threshold: 1K, max-threshold: 140K}
  ipcc: {interfaces: [r], poll: 10us, low: 20K, high: 100K, learn-cm: true}
  interfaces: [`+strings.Join(ifaces, ", ")+`]
`)
}
