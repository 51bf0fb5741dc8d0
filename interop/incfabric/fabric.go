// Package incfabric is the INC lab of the lab library: a farelab fabric of
// fared leaves and spines (and an FRR spine) with host nodes, INC on
// every fared node, and fareinc workers on the hosts, driven over their
// stdin and stdout. TestINCFabric (interop/scenarios) and bench/inc use
// it.
package incfabric

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Fabric is the INC lab: farelab's fared leaves l1..lN, fared spines s1
// and s2 (s2 is also the manager), an FRR spine s3, and host nodes, each
// on one leaf.
type Fabric struct {
	T       testing.TB
	Lab     *interop.Lab
	Hosts   []Host
	Manager string // node running the manager
	MgrAddr string // address:port
	bins    interop.Bins
}

// Host is a host node of the fabric.
type Host struct {
	Name, NS, Leaf string
	Iface          string // its interface to the leaf
	Addr           string // its address on that link
}

// metricsAddr is where every fared node of the fabric serves /metrics,
// in its own namespace.
const metricsAddr = "127.0.0.1:9342"

// MetricsURL is the /metrics URL of a fared node, from inside its
// namespace.
const MetricsURL = "http://" + metricsAddr + "/metrics"

// Topology is the fabric's topology: leaves l1..l<leaves>, fared spines
// s1 and s2, the FRR spine s3, every leaf linked to every spine at bw;
// perLeaf hosts on each leaf (h1, h2, ... in leaf order). Every fared
// node is an INC switch (s2 also the manager; incExtra: more keys of
// its inc section, as YAML flow-mapping entries) and serves /metrics at
// metricsAddr. Nodes are numbered in file order, so the manager's
// loopback is 10.255.0.<leaves+2>.
func Topology(leaves, perLeaf int, bw, incExtra string) string {
	extra := ""
	if incExtra != "" {
		extra = ", " + incExtra
	}
	metrics := "metrics: {listen: " + metricsAddr + "}"
	sw := fmt.Sprintf("{%s, inc: {role: switch, manager: \"10.255.0.%d:7791\"%s}}", metrics, leaves+2, extra)
	var b strings.Builder
	b.WriteString("name: inc\ndefaults: {log-level: info}\nnodes:\n")
	for i := 1; i <= leaves; i++ {
		fmt.Fprintf(&b, "  l%d: {kind: fared, config: %s}\n", i, sw)
	}
	fmt.Fprintf(&b, "  s1: {kind: fared, config: %s}\n", sw)
	fmt.Fprintf(&b, "  s2: {kind: fared, config: {%s, inc: {role: both%s}}}\n", metrics, extra)
	b.WriteString("  s3: {kind: frr}\n")
	for h := 1; h <= leaves*perLeaf; h++ {
		fmt.Fprintf(&b, "  h%d: {kind: host, agent: none}\n", h)
	}
	b.WriteString("links:\n")
	for i := 1; i <= leaves; i++ {
		for _, s := range []string{"s1", "s2", "s3"} {
			fmt.Fprintf(&b, "  - {a: l%d, b: %s, bandwidth: %s}\n", i, s, bw)
		}
	}
	for h := 1; h <= leaves*perLeaf; h++ {
		fmt.Fprintf(&b, "  - {a: h%d, b: l%d, bandwidth: %s}\n", h, (h-1)/perLeaf+1, bw)
	}
	return b.String()
}

// New starts the fabric with perLeaf hosts per leaf and waits until the
// manager sees every switch in its topology and every host reaches it.
func New(t testing.TB, bins interop.Bins, leaves, perLeaf int, incExtra string) *Fabric {
	lab := interop.StartLab(t, Topology(leaves, perLeaf, "10G", incExtra), interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
	f := &Fabric{T: t, Lab: lab, Manager: "s2", bins: bins}
	t.Cleanup(func() {
		if t.Failed() {
			f.logINC()
		}
	})
	for _, n := range lab.HostNodes() {
		if len(n.Interfaces) != 1 {
			t.Fatalf("host %s: %d interfaces, want 1", n.Name, len(n.Interfaces))
		}
		i := n.Interfaces[0]
		f.Hosts = append(f.Hosts, Host{Name: n.Name, NS: n.Netns, Leaf: i.Peer, Iface: i.Name, Addr: i.Addr.Addr().String()})
	}
	f.MgrAddr = fmt.Sprintf("%s:7791", lab.Node(f.Manager).Loopback)
	f.WaitINC(Ctx(t))
	return f
}

// logINC logs the INC lines of every fared node's log.
func (f *Fabric) logINC() {
	for _, n := range f.Lab.Nodes {
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
		f.T.Logf("%s inc log:\n%s", n.Name, tail(strings.Join(lines, "\n"), 4000))
	}
}

// RestartFared restarts every fared node on its current config file
// with IS-IS hello padding off. Needed after an MTU above 1500: a padded
// hello of a jumbo MTU has an 802.3 length beyond 1535, which IS-IS over
// LLC cannot carry (fared drops such frames), so adjacencies would
// expire; and hello-padding is not applied by a reload. fared is started
// here, on the edited file, because farelab would render the config
// again. FRR nodes keep padding: their adjacencies with fared go down,
// which leaves FRR out of the topology and changes nothing else.
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
	f.Poll(ctx, 60*time.Second, "every INC switch registered and in the manager's topology", SwitchesReady(ctx, lab, f.Manager, fared))
	// Hosts reach the manager (IS-IS has the host links everywhere).
	for _, h := range f.Hosts {
		f.Poll(ctx, 60*time.Second, h.Name+" reaches the manager", func() error {
			return exec.Command("ip", "netns", "exec", h.NS, "ping", "-c1", "-W1", mgr.Loopback.String()).Run()
		})
	}
}

// SwitchesReady is a Poll condition: the manager on node mgr has n live
// registered switches, each in its topology.
func SwitchesReady(ctx context.Context, lab *interop.Lab, mgr string, n int) func() error {
	return func() error {
		var sw []wire.INCRegisteredSwitch
		if err := lab.FarectlJSON(ctx, mgr, &sw, "inc", "switches"); err != nil {
			return err
		}
		ok := 0
		for _, s := range sw {
			if s.Alive && s.InTopology {
				ok++
			}
		}
		if ok != n {
			return fmt.Errorf("%d of %d: %+v", ok, n, sw)
		}
		return nil
	}
}

// Ctx is a context for lab operations, cancelled at the end of the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Poll polls fn until it succeeds (interop.Poll), failing the test after d.
func (f *Fabric) Poll(ctx context.Context, d time.Duration, what string, fn func() error) {
	f.T.Helper()
	if err := interop.Poll(ctx, d, what, fn); err != nil {
		f.T.Fatal(err)
	}
}

// SwitchTotals adds up the data-plane counters of every INC switch.
func (f *Fabric) SwitchTotals(ctx context.Context) wire.INCSwitchCounters {
	var tot wire.INCSwitchCounters
	for _, n := range f.Lab.Nodes {
		if n.Kind != "fared" {
			continue
		}
		var v wire.INCSwitch
		if err := f.Lab.FarectlJSON(ctx, n.Name, &v, "inc", "switch"); err != nil {
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
	Run(t, "ip", "netns", "exec", ns, "nft", fmt.Sprintf("add table inet loss; "+
		"add chain inet loss out { type filter hook output priority 0; }; "+
		"add rule inet loss out udp dport 4791 numgen random mod 100 < %d drop", pct))
}

// NoLoss removes NftLoss's table from ns.
func NoLoss(t testing.TB, ns string) {
	Run(t, "ip", "netns", "exec", ns, "nft", "delete table inet loss")
}

// Run runs a command, failing the test with its output if it fails.
func Run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Capture reads the frames arriving at or leaving one interface
// (AF_PACKET), keeping the RoCEv2 ones as IP packets.
type Capture struct {
	Where string
	fd    int
}

// OpenCapture starts capturing on iface in namespace ns.
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

// Drain returns the RoCEv2 packets captured so far.
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

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
