// Package undertest starts the routers under test (RUTs) of the
// side-by-side benchmarks: FRR (zebra + isisd) and fared, each in its own
// network namespace, each wired to its own injector namespace by one veth
// per circuit. Both worlds use the same interface names and addresses, so
// the two kernels' routes can be compared as they are.
//
// Names follow interop's conventions, so interop.DownAt(runDir, name)
// removes everything a run created, even after a crash: namespaces
// "<name>-<router>" and "<name>-<router>-i" (the injector's), FRR path
// space "<name>-<router>", run directory <runDir>/<name>/<router>/.
//
// The configs are rendered by interop (RenderZebra, RenderISISd,
// RenderFared) from an interop.Node built here. Starting the daemons
// repeats what interop's Lab does for its own nodes: interop has no node
// kind for an interface whose far end is not a lab node.
package undertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fared/fared/bench/inject"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/interop"
)

// Router kinds.
const (
	FRR   = "frr"
	Fared = "fared"
)

// Options of a run.
type Options struct {
	Name     string // run name: namespace prefix; interop.UniqueName gives a fresh one
	RunDir   string // default interop.DefaultRunDir
	FaredBin string // required for a fared router
	Log      io.Writer
	Defaults interop.Defaults // protocol timers; zero fields take the lab defaults
	// FaredExtra is YAML merged into the top level of fared's config
	// (e.g. "rib:\n  spf: {long-delay: 1s}\n").
	FaredExtra string
	// FRRExtra lines go into isisd's router block.
	FRRExtra []string
}

// Lab is a set of routers under test.
type Lab struct {
	Name    string
	Dir     string
	Routers []*Router
	opts    Options
}

// Router is one router under test.
type Router struct {
	Kind     string
	Node     *interop.Node // what its config was rendered from
	Netns    string        // its namespace
	InjNetns string        // the injector's namespace, facing it
	Ifaces   []string      // circuit interfaces, in circuit order (same names on both sides)
	Pids     map[string]int
	// FaredSock is fared's control socket.
	FaredSock string
}

// NetnsPath returns the bind-mount path of a named namespace.
func NetnsPath(name string) string { return filepath.Join("/run/netns", name) }

// DefaultDefaults are the lab's protocol timers (interop's defaults, log
// level info: a 6k-node database at debug level is mostly logging).
func DefaultDefaults() interop.Defaults {
	return interop.Defaults{HelloInterval: time.Second, HelloMultiplier: 3, LSPGenInterval: 500 * time.Millisecond,
		SPFInterval: time.Second, LogLevel: "info"}
}

// Missing says why a run cannot start here, or "".
func Missing(kinds []string, faredBin string) string {
	if os.Geteuid() != 0 {
		return "needs root (network namespaces)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "ip (iproute2) not found"
	}
	for _, k := range kinds {
		switch k {
		case FRR:
			for _, d := range []string{"zebra", "isisd"} {
				if _, err := os.Stat(filepath.Join(interop.FRRDir, d)); err != nil {
					return "FRR not installed: " + err.Error()
				}
			}
			if _, err := exec.LookPath("vtysh"); err != nil {
				return "vtysh not found (apt-get install frr)"
			}
		case Fared:
			if faredBin == "" {
				return "no fared binary given"
			}
		default:
			return "unknown router kind " + k
		}
	}
	return ""
}

// Up creates one router of each kind, wired for the fabric's circuits.
// Daemons are started and answer on their control sockets; adjacencies
// form only once an injector runs on the circuits. On error, everything
// created is removed.
func Up(ctx context.Context, f *closgen.Fabric, circuits []inject.Circuit, kinds []string, o Options) (*Lab, error) {
	if o.RunDir == "" {
		o.RunDir = interop.DefaultRunDir
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	d := DefaultDefaults()
	if o.Defaults.HelloInterval != 0 {
		d.HelloInterval = o.Defaults.HelloInterval
	}
	if o.Defaults.HelloMultiplier != 0 {
		d.HelloMultiplier = o.Defaults.HelloMultiplier
	}
	if o.Defaults.LSPGenInterval != 0 {
		d.LSPGenInterval = o.Defaults.LSPGenInterval
	}
	if o.Defaults.SPFInterval != 0 {
		d.SPFInterval = o.Defaults.SPFInterval
	}
	if o.Defaults.LogLevel != "" {
		d.LogLevel = o.Defaults.LogLevel
	}
	o.Defaults = d
	if why := Missing(kinds, o.FaredBin); why != "" {
		return nil, errors.New("undertest: " + why)
	}
	if len(o.Name) == 0 || len(o.Name) > interop.MaxLabName {
		return nil, fmt.Errorf("undertest: run name %q: 1..%d bytes", o.Name, interop.MaxLabName)
	}
	l := &Lab{Name: o.Name, Dir: filepath.Join(o.RunDir, o.Name), opts: o}
	if _, err := os.Stat(l.Dir); err == nil {
		return nil, fmt.Errorf("undertest: %s exists (a run named %s is up?)", l.Dir, o.Name)
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return nil, err
	}
	for i, k := range kinds {
		r, err := l.plan(f, circuits, k, i)
		if err != nil {
			_ = l.Down()
			return nil, err
		}
		l.Routers = append(l.Routers, r)
	}
	for _, r := range l.Routers {
		if err := l.build(ctx, r); err != nil {
			_ = l.Down()
			return nil, fmt.Errorf("undertest %s: %w", r.Kind, err)
		}
	}
	for _, r := range l.Routers {
		if err := l.start(ctx, r); err != nil {
			_ = l.Down()
			return nil, fmt.Errorf("undertest %s: %w", r.Kind, err)
		}
	}
	return l, nil
}

// Down stops every daemon of the run and removes its namespaces and files.
func (l *Lab) Down() error { return interop.DownAt(l.opts.RunDir, l.Name) }

// Router returns the router of the given kind, or nil.
func (l *Lab) Router(kind string) *Router {
	for _, r := range l.Routers {
		if r.Kind == kind {
			return r
		}
	}
	return nil
}

func (l *Lab) plan(f *closgen.Fabric, circuits []inject.Circuit, kind string, i int) (*Router, error) {
	self := f.Self
	var lo netip.Addr
	var extra []interop.PrefixSpec
	for k, p := range f.Nodes[self].Prefixes {
		if k == 0 && p.Prefix.Bits() == 32 {
			// The node's /32 is the loopback: FRR advertises it as a
			// passive lo with metric 0, fared as its router id prefix.
			lo = p.Prefix.Addr()
			continue
		}
		extra = append(extra, interop.PrefixSpec{Prefix: p.Prefix})
	}
	if !lo.IsValid() {
		lo = inject.RouterID(self)
	}
	ns := l.Name + "-" + kind
	n := &interop.Node{
		Name: kind, Kind: kind, Index: i + 1, Netns: ns, Loopback: lo,
		SystemID: inject.SystemID(self).String(), Hostname: f.Nodes[self].Name,
		Area: inject.DefaultArea, Level: "2", Priority: -1, NoTE: true,
		Prefixes: extra, Dir: filepath.Join(l.Dir, kind), Pids: map[string]int{},
	}
	r := &Router{Kind: kind, Node: n, Netns: ns, InjNetns: ns + "-i", Pids: n.Pids}
	for _, c := range circuits {
		n.Interfaces = append(n.Interfaces, interop.Iface{Name: c.Iface, Type: "p2p", Addr: c.RUTAddr,
			Peer: f.Nodes[c.Node].Name, PeerIface: c.Iface, Bandwidth: float64(c.BW) * 8, Metric: int(c.Metric), Level: "2"})
		r.Ifaces = append(r.Ifaces, c.Iface)
	}
	switch kind {
	case FRR:
		n.FRRName = ns
	case Fared:
		n.Socket = filepath.Join(n.Dir, "fared.sock")
		r.FaredSock = n.Socket
	}
	return r, nil
}

func (l *Lab) run(ctx context.Context, stdin string, args ...string) error {
	fmt.Fprintf(l.opts.Log, "+ ip %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "ip", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// build creates the two namespaces and the veths, in three ip batches.
func (l *Lab) build(ctx context.Context, r *Router) error {
	for _, ns := range []string{r.Netns, r.InjNetns} {
		if err := l.run(ctx, "", "netns", "add", ns); err != nil {
			return err
		}
	}
	var root, rut, inj strings.Builder
	for i, f := range r.Node.Interfaces {
		fmt.Fprintf(&root, "link add %s netns %s mtu 1500 type veth peer name %s netns %s mtu 1500\n", f.Name, r.InjNetns, f.Name, r.Netns)
		fmt.Fprintf(&rut, "addr add %s dev %s\nlink set %s up\n", f.Addr, f.Name, f.Name)
		_ = i
	}
	fmt.Fprintf(&rut, "link set lo up\naddr add %s/32 dev lo\n", r.Node.Loopback)
	inj.WriteString("link set lo up\n")
	for _, f := range r.Node.Interfaces {
		peer := otherEnd(f.Addr)
		fmt.Fprintf(&inj, "addr add %s dev %s\nlink set %s up\n", peer, f.Name, f.Name)
	}
	if err := l.run(ctx, root.String(), "-batch", "-"); err != nil {
		return err
	}
	if err := l.run(ctx, rut.String(), "-n", r.Netns, "-batch", "-"); err != nil {
		return err
	}
	if err := l.run(ctx, inj.String(), "-n", r.InjNetns, "-batch", "-"); err != nil {
		return err
	}
	// As interop sets them: forwarding on, no reverse-path filter, and a
	// reweighted nexthop group announced once rather than once per route.
	return l.run(ctx, "", "netns", "exec", r.Netns, "sysctl", "-q", "-w",
		"net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
		"net.ipv4.nexthop_compat_mode=0")
}

// otherEnd is the other address of a /31.
func otherEnd(p netip.Prefix) netip.Prefix {
	b := p.Addr().As4()
	b[3] ^= 1
	return netip.PrefixFrom(netip.AddrFrom4(b), p.Bits())
}

func (l *Lab) start(ctx context.Context, r *Router) error {
	if err := os.MkdirAll(r.Node.Dir, 0o755); err != nil {
		return err
	}
	switch r.Kind {
	case FRR:
		return l.startFRR(ctx, r)
	case Fared:
		return l.startFared(ctx, r)
	}
	return fmt.Errorf("unknown kind %q", r.Kind)
}

func (l *Lab) startFRR(ctx context.Context, r *Router) error {
	n := r.Node
	isisd := interop.RenderISISd(n, l.opts.Defaults)
	if len(l.opts.FRRExtra) > 0 {
		var add strings.Builder
		for _, s := range l.opts.FRRExtra {
			add.WriteString(" " + s + "\n")
		}
		isisd = strings.Replace(isisd, " log-adjacency-changes\n", " log-adjacency-changes\n"+add.String(), 1)
	}
	sock, err := interop.WriteFRRFiles(n, l.Name, map[string]string{"zebra.conf": interop.RenderZebra(n), "isisd.conf": isisd})
	if err != nil {
		return err
	}
	for _, d := range []string{"zebra", "isisd"} {
		argv := interop.FRRCommand(n, d)
		fmt.Fprintf(l.opts.Log, "+ %s\n", strings.Join(argv, " "))
		// Output to a file, not a pipe: the daemonised child keeps it.
		outPath := filepath.Join(n.Dir, d+".out")
		out, err := os.Create(outPath)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Run()
		out.Close()
		if err != nil {
			b, _ := os.ReadFile(outPath)
			return fmt.Errorf("%s: %v: %s", d, err, b)
		}
		pidFile := filepath.Join(n.Dir, d+".pid")
		if err := interop.Poll(ctx, 10*time.Second, d+" pid file", func() error {
			p := interop.ReadPid(pidFile)
			if p == 0 {
				return errors.New("not written yet")
			}
			n.Pids[d] = p
			return nil
		}); err != nil {
			return err
		}
		wait := filepath.Join(sock, d+".vty")
		if d == "zebra" {
			wait = filepath.Join(sock, "zserv.api")
		}
		if err := interop.Poll(ctx, 10*time.Second, d+" socket "+wait, func() error {
			_, err := os.Stat(wait)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) startFared(ctx context.Context, r *Router) error {
	n := r.Node
	cfg, err := interop.RenderFared(n, l.opts.Defaults)
	if err != nil {
		return err
	}
	if l.opts.FaredExtra != "" {
		// Merged, not appended: the rendered file states rib: already.
		if cfg, err = interop.MergeSections(cfg, []byte(l.opts.FaredExtra)); err != nil {
			return fmt.Errorf("fared extra: %w", err)
		}
	}
	path := filepath.Join(n.Dir, "fared.yaml")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(n.Dir, "fared.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	argv := []string{"ip", "netns", "exec", n.Netns, l.opts.FaredBin, "-c", path, "--socket", n.Socket}
	fmt.Fprintf(l.opts.Log, "+ %s &\n", strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid // ip netns exec execs in place
	n.Pids["fared"] = pid
	_ = os.WriteFile(filepath.Join(n.Dir, "fared.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return interop.Poll(ctx, 15*time.Second, "fared control socket", func() error {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(n.Dir, "fared.log"))
			return interop.Permanent(fmt.Errorf("fared exited: %s", tailString(b, 2000)))
		default:
		}
		_, err := os.Stat(n.Socket)
		return err
	})
}

func tailString(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Vtysh runs vtysh commands on the FRR router.
func (l *Lab) Vtysh(ctx context.Context, cmds ...string) (string, error) {
	r := l.Router(FRR)
	if r == nil {
		return "", errors.New("undertest: no FRR router")
	}
	args := []string{"-N", r.Node.FRRName}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "vtysh", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("vtysh %s: %v: %s", strings.Join(cmds, "; "), err, errb.String())
	}
	return out.String(), nil
}

// LogTail returns the end of a router's daemon logs, for error reports.
func (l *Lab) LogTail(r *Router, n int) string {
	var files []string
	if r.Kind == FRR {
		files = []string{"zebra.log", "isisd.log"}
	} else {
		files = []string{"fared.log"}
	}
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(r.Node.Dir, f))
		fmt.Fprintf(&b, "--- %s %s:\n%s\n", r.Kind, f, tailString(data, n))
	}
	return b.String()
}
