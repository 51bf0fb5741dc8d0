package lab

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/packetsock"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/rocev2"
)

// Bins are the binaries a lab runs, built from this tree.
type Bins struct{ Fared, Farectl, Fareinc string }

// BuildBins builds fared, farectl and fareinc into dir.
func BuildBins(dir string) (Bins, error) {
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/fared/fared/cmd/fared",
		"github.com/fared/fared/cmd/farectl", "github.com/fared/fared/cmd/fareinc")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return Bins{}, fmt.Errorf("building: %w", err)
	}
	return Bins{Fared: filepath.Join(dir, "fared"), Farectl: filepath.Join(dir, "farectl"), Fareinc: filepath.Join(dir, "fareinc")}, nil
}

// Fabric is the INC lab: switches from interop (fared leaves and spines,
// FRR spines), hosts built here (until farelab has host nodes): a
// namespace per Host with a veth to its leaf, an address in the leaf's
// /24 (which the leaf originates in IS-IS), a default route to the leaf.
type Fabric struct {
	T       testing.TB
	Lab     *interop.Lab
	Hosts   []Host
	Manager string // node running the manager
	MgrAddr string // address:port
	bins    Bins
	extra   string // more keys of the inc section
}

// Host is a host namespace attached to a leaf.
type Host struct {
	Name, NS, Leaf string
	Addr           string // 10.1.<leaf>.<10+k>
}

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// topology: leaves l1..l<leaves>, fared spines s1, s2, FRR spine s3;
// every leaf linked to every spine. Leaf i originates 10.1.i.0/24.
func Topology(leaves int, bw string) string {
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

// NewFabric starts the lab with perLeaf hosts per leaf, enables INC on
// every fared node (switch; s2 is also the manager) and waits until the
// manager sees every switch in its topology.
func NewFabric(t testing.TB, bins Bins, leaves, perLeaf int, incExtra string) *Fabric {
	interop.RequireLab(t)
	lab := interop.StartLab(t, Topology(leaves, "10G"), interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
	f := &Fabric{T: t, Lab: lab, Manager: "s2", bins: bins, extra: incExtra}
	ctx := Ctx(t)
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
			h := Host{Name: fmt.Sprintf("h%d", len(f.Hosts)+1), Leaf: leaf, Addr: fmt.Sprintf("10.1.%d.%d", i, 10+k)}
			h.NS = lab.Name + "-" + h.Name
			run(t, "ip", "netns", "add", h.NS)
			ns := h.NS
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
			leafNS := lab.Name + "-" + leaf
			run(t, "ip", "link", "add", "x", "netns", leafNS, "type", "veth", "peer", "y", "netns", h.NS)
			run(t, "ip", "-n", leafNS, "link", "set", "x", "name", h.Name)
			run(t, "ip", "-n", h.NS, "link", "set", "y", "name", "eth0")
			// Point-to-point addressing: the Host has a /32, the leaf
			// 10.1.<i>.1/32 on each Host link and a /32 route per Host; a
			// /24 on the Host would make it ARP for its neighbours on a
			// link they are not on.
			gw := fmt.Sprintf("10.1.%d.1", i)
			run(t, "ip", "-n", h.NS, "link", "set", "lo", "up")
			run(t, "ip", "-n", h.NS, "addr", "add", h.Addr+"/32", "dev", "eth0")
			run(t, "ip", "-n", h.NS, "link", "set", "eth0", "up")
			run(t, "ip", "-n", leafNS, "addr", "add", gw+"/32", "dev", h.Name)
			run(t, "ip", "-n", leafNS, "link", "set", h.Name, "up")
			run(t, "ip", "-n", leafNS, "route", "add", h.Addr+"/32", "dev", h.Name, "src", gw)
			run(t, "ip", "-n", h.NS, "route", "add", gw+"/32", "dev", "eth0", "src", h.Addr)
			run(t, "ip", "-n", h.NS, "route", "add", "default", "via", gw, "dev", "eth0", "src", h.Addr)
			f.Hosts = append(f.Hosts, h)
		}
	}
	mgr := lab.Node(f.Manager)
	f.MgrAddr = fmt.Sprintf("%s:7791", mgr.Loopback)
	f.enableINC(ctx)
	f.WaitINC(ctx)
	return f
}

// metricsAddr is where every fared node of the fabric serves /metrics,
// in its own namespace.
const metricsAddr = "127.0.0.1:9342"

// MetricsURL is the /metrics URL of a fared node, from inside its
// namespace.
const MetricsURL = "http://" + metricsAddr + "/metrics"

// enableINC appends the inc section to every fared node's config (s2 is
// also the manager) and reloads it. farelab renders the rest.
func (f *Fabric) enableINC(ctx context.Context) {
	for _, n := range f.Lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		// The lab's INC credentials (interop): a certificate per node, the
		// manager's token key; the workers get host tokens (StartWorkers).
		sec := fmt.Sprintf("\ninc:\n  role: switch\n  manager: %s\n%s%s", f.MgrAddr, f.Lab.INCTrustYAML(n.Name, false), f.extra)
		if n.Name == f.Manager {
			sec = "\ninc:\n  role: both\n" + f.Lab.INCTrustYAML(n.Name, true) + f.extra
		}
		// Metrics in the node's own namespace (MetricsURL).
		sec = "\nmetrics: {listen: " + metricsAddr + "}" + sec
		file := filepath.Join(n.Dir, "fared.yaml")
		b, err := os.ReadFile(file)
		if err != nil {
			f.T.Fatal(err)
		}
		if strings.Contains(string(b), "\ninc:\n") {
			continue
		}
		if err := os.WriteFile(file, append(b, sec...), 0o644); err != nil {
			f.T.Fatal(err)
		}
		if out, err := f.Lab.Farectl(ctx, n.Name, "reload"); err != nil {
			f.T.Fatalf("%s: reload: %v %s", n.Name, err, out)
		}
	}
}

// RestartFared restarts every fared node on its current config file
// with IS-IS hello padding off. Needed after an MTU above 1500: a padded
// hello of a jumbo MTU has an 802.3 length beyond 1535, which IS-IS over
// LLC cannot carry (fared drops such frames), so adjacencies would
// expire; and hello-padding is not applied by a reload. fared is started
// here because farelab would render the config again (without inc:).
// FRR nodes keep padding: their adjacencies with fared go down, which
// leaves FRR out of the topology and changes nothing else.
func (f *Fabric) RestartFared(ctx context.Context) {
	for _, n := range f.Lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		if err := f.Lab.StopNode(ctx, n.Name); err != nil {
			f.T.Fatal(err)
		}
		file := filepath.Join(n.Dir, "fared.yaml")
		b, err := os.ReadFile(file)
		if err != nil {
			f.T.Fatal(err)
		}
		if !strings.Contains(string(b), "hello-padding: false") {
			// Indent like the key that follows "isis:" (the renderer's style).
			i := strings.Index(string(b), "\nisis:\n")
			if i < 0 {
				f.T.Fatalf("%s: no isis section in %s", n.Name, file)
			}
			rest := string(b[i+len("\nisis:\n"):])
			indent := rest[:len(rest)-len(strings.TrimLeft(rest, " "))]
			b = []byte(string(b[:i]) + "\nisis:\n" + indent + "hello-padding: false\n" + rest)
			if err := os.WriteFile(file, b, 0o644); err != nil {
				f.T.Fatal(err)
			}
		}
		logf, err := os.OpenFile(f.Lab.FaredLog(n.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			f.T.Fatal(err)
		}
		argv := f.Lab.FaredCommand(n)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			f.T.Fatal(err)
		}
		logf.Close()
		go cmd.Wait()
		// Down stops it with the namespace's other processes; stop it here
		// too, in case the lab outlives the test.
		f.T.Cleanup(func() { cmd.Process.Kill() })
		node := n.Name
		f.Poll(ctx, 30*time.Second, node+" API up", func() error {
			_, err := f.Lab.Farectl(ctx, node, "status")
			return err
		})
	}
	f.WaitINC(ctx)
}

// WaitINC waits until the manager sees every fared node as a registered
// switch in its topology and every host reaches the manager.
func (f *Fabric) WaitINC(ctx context.Context) {
	lab := f.Lab
	mgr := lab.Node(f.Manager)
	fared := 0
	for _, n := range lab.Nodes {
		if n.Kind == "fared" {
			fared++
		}
	}
	f.Poll(ctx, 60*time.Second, "every INC switch registered and in the manager's topology", func() error {
		var sw []wire.INCRegisteredSwitch
		if err := lab.FarectlJSON(ctx, f.Manager, &sw, "inc", "switches"); err != nil {
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
	for _, h := range f.Hosts {
		f.Poll(ctx, 60*time.Second, h.Name+" reaches the manager", func() error {
			return exec.Command("ip", "netns", "exec", h.NS, "ping", "-c1", "-W1", mgr.Loopback.String()).Run()
		})
	}
}

// Ctx is a context for lab operations, cancelled at the end of the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (f *Fabric) Poll(ctx context.Context, d time.Duration, what string, fn func() error) {
	f.T.Helper()
	if err := interop.Poll(ctx, d, what, fn); err != nil {
		f.T.Fatal(err)
	}
}

// Worker is a fareinc worker process in a host namespace.
type Worker struct {
	Rank int
	Cmd  *exec.Cmd
	In   io.WriteCloser
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

// StartWorkers runs one fareinc worker per host, ranks in host order.
func (f *Fabric) StartWorkers(group string, extra ...string) []*Worker {
	t := f.T
	ws := make([]*Worker, len(f.Hosts))
	for r, h := range f.Hosts {
		args := append([]string{"netns", "exec", h.NS, f.bins.Fareinc, "worker", "-v", "--manager", f.MgrAddr, "--group", group,
			"--rank", fmt.Sprint(r), "--ranks", fmt.Sprint(len(f.Hosts))}, extra...)
		cmd := exec.Command("ip", args...)
		env, err := f.Lab.INCClientEnv(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(os.Environ(), env...)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		w := &Worker{Rank: r, Cmd: cmd, In: in, out: bufio.NewScanner(out), errb: &syncBuf{}}
		w.out.Buffer(make([]byte, 1<<20), 1<<20)
		cmd.Stderr = w.errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
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
		ws[r] = w
	}
	for _, w := range ws {
		var j struct {
			Joined bool `json:"joined"`
		}
		if err := w.Read(&j, 20*time.Second); err != nil || !j.Joined {
			t.Fatalf("worker %d did not join: %v\n%s", w.Rank, err, w.errb.String())
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

// read decodes the next output line of the Worker.
func (w *Worker) Read(v any, timeout time.Duration) error {
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
// result each.
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

func Sum(rs []Result, f func(Result) int) int {
	n := 0
	for _, r := range rs {
		n += f(r)
	}
	return n
}

// SwitchTotals adds up the data-plane counters of every INC switch.
func (f *Fabric) SwitchTotals(ctx interface{ Done() <-chan struct{} }) wire.INCSwitchCounters {
	var tot wire.INCSwitchCounters
	for _, n := range f.Lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		var v wire.INCSwitch
		if err := f.Lab.FarectlJSON(Ctx(f.T), n.Name, &v, "inc", "switch"); err != nil {
			f.T.Fatal(err)
		}
		tot.Duplicates += v.Totals.Duplicates
		tot.Served += v.Totals.Served
		tot.PartialResends += v.Totals.PartialResends
		tot.Packets += v.Totals.Packets
	}
	return tot
}

// NftLoss drops pct% of the RoCEv2 packets ns sends: on a host, its
// link to the leaf; on a switch, every link it sends on (to hosts,
// leaves, spines). Each link direction then loses pct% once.
func NftLoss(t testing.TB, ns string, pct int) {
	run(t, "ip", "netns", "exec", ns, "nft", fmt.Sprintf("add table inet loss; "+
		"add chain inet loss out { type filter hook output priority 0; }; "+
		"add rule inet loss out udp dport 4791 numgen random mod 100 < %d drop", pct))
}

// Capture reads the frames arriving at or leaving one interface
// (AF_PACKET), keeping the RoCEv2 ones as IP packets.
type Capture struct {
	Where string
	fd    int
}

func OpenCapture(t testing.TB, ns, iface string) *Capture {
	c := &Capture{Where: ns + "/" + iface}
	err := nsenter.DoNamed(ns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		c.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, int(packetsock.Htons(unix.ETH_P_IP)))
		if err != nil {
			return err
		}
		return unix.Bind(c.fd, &unix.SockaddrLinklayer{Protocol: packetsock.Htons(unix.ETH_P_IP), Ifindex: ifi.Index})
	})
	if err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 32<<20)
	t.Cleanup(func() { unix.Close(c.fd) })
	return c
}

func (c *Capture) Drain() [][]byte {
	var out [][]byte
	buf := make([]byte, 9216)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			return out
		}
		ip := buf[:n]
		if n > 28 && ip[0]>>4 == 4 && ip[9] == 17 && binary.BigEndian.Uint16(ip[22:]) == rocev2.UDPPort {
			out = append(out, append([]byte(nil), ip...))
		}
	}
}
