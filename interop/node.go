package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func (l *Lab) node(name string) (*Node, error) {
	n := l.Node(name)
	if n == nil {
		names := make([]string, len(l.Nodes))
		for i, n := range l.Nodes {
			names[i] = n.Name
		}
		return nil, fmt.Errorf("lab %s: no node %q (nodes: %s)", l.Name, name, strings.Join(names, ", "))
	}
	return n, nil
}

// Exec runs a command inside the node's namespace and returns its combined
// output; on failure the error includes the output.
func (l *Lab) Exec(ctx context.Context, node string, args ...string) ([]byte, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, errors.New("exec: no command")
	}
	return runCombinedEnv(ctx, l.opts.Log, l.ExecEnv(n), "ip", append([]string{"netns", "exec", n.Netns}, args...)...)
}

// Vtysh runs vtysh commands against an FRR node and returns stdout.
func (l *Lab) Vtysh(ctx context.Context, node string, cmds ...string) (string, error) {
	n, err := l.node(node)
	if err != nil {
		return "", err
	}
	if n.Kind != "frr" {
		return "", fmt.Errorf("node %s is %s, not frr", node, n.Kind)
	}
	args := []string{"-N", n.FRRName}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := run(ctx, l.opts.Log, "vtysh", args...)
	return string(out), err
}

// VtyshJSON runs one vtysh command (which should end in "json") and
// decodes its output into v.
func (l *Lab) VtyshJSON(ctx context.Context, node, cmd string, v any) error {
	out, err := l.Vtysh(ctx, node, cmd)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("node %s: %q: bad JSON (%v): %.300s", node, cmd, err, out)
	}
	return nil
}

// Farectl runs `farectl -s <socket> -j args...` inside a fared node's
// namespace and returns stdout.
func (l *Lab) Farectl(ctx context.Context, node string, args ...string) ([]byte, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	if !n.runsFared() {
		return nil, fmt.Errorf("node %s is %s, not fared", node, n.Kind)
	}
	bin := l.FarectlBin
	if bin == "" {
		if bin, err = findBin(l.opts.FarectlBin, "farectl"); err != nil {
			return nil, err
		}
	}
	argv := append([]string{"netns", "exec", n.Netns, bin, "-s", n.Socket, "-j"}, args...)
	return run(ctx, l.opts.Log, "ip", argv...)
}

// FarectlJSON runs Farectl and decodes its output into v.
func (l *Lab) FarectlJSON(ctx context.Context, node string, v any, args ...string) error {
	out, err := l.Farectl(ctx, node, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("node %s: farectl %s: bad JSON (%v): %.300s", node, strings.Join(args, " "), err, out)
	}
	return nil
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

// SetLinkUp sets both ends of p2p link i administratively up or down (a
// veth's carrier follows its peer anyway; both ends keep it symmetric).
// For a LAN it sets every member's interface.
func (l *Lab) SetLinkUp(ctx context.Context, link int, up bool) error {
	lk := l.Link(link)
	if lk == nil {
		return fmt.Errorf("lab %s: no link %d", l.Name, link)
	}
	var errs []error
	if lk.LAN != "" {
		for _, m := range lk.Members {
			errs = append(errs, l.SetIfaceUp(ctx, m.Node, m.Iface, up))
		}
	} else {
		errs = append(errs, l.SetIfaceUp(ctx, lk.A, lk.IfA, up), l.SetIfaceUp(ctx, lk.B, lk.IfB, up))
	}
	return errJoin(errs)
}

// SetIfaceUp sets one interface of a node up or down.
func (l *Lab) SetIfaceUp(ctx context.Context, node, iface string, up bool) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	_, err = run(ctx, l.opts.Log, "ip", "-n", n.Netns, "link", "set", iface, upDown(up))
	return err
}

// FaredLog returns the path of a node's fared log (stdout and stderr).
func (l *Lab) FaredLog(node string) string {
	return filepath.Join(l.Dir, node, "fared.log")
}

// daemons returns the live daemon pids of a node, by daemon name. Pid
// files are the truth (a restart from another process rewrites them); a
// pid only counts if that process lives in the node's namespace, so a
// recycled pid is never signalled.
func (l *Lab) daemons(n *Node) map[string]int {
	m := map[string]int{}
	names := frrDaemons(n)
	switch {
	case n.runsFared():
		names = []string{"fared"}
	case n.Kind == "bird":
		names = []string{"bird"}
	case n.Kind == "host" && n.Agent == AgentLLDPD:
		names = []string{"lldpd"}
	case n.Kind == "host":
		names = nil
	}
	for _, d := range names {
		p := ReadPid(filepath.Join(n.Dir, d+".pid"))
		if p == 0 {
			p = n.Pids[d]
		}
		if alive(p) && inNetns(p, n.Netns) {
			m[d] = p
		}
	}
	return m
}

// Daemons returns the pids of a node's live daemons by name ("fared",
// "zebra", "isisd", ...): a test's "the process is still alive" check.
func (l *Lab) Daemons(node string) (map[string]int, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	return l.daemons(n), nil
}

// inNetns reports whether pid runs in the named network namespace.
func inNetns(pid int, ns string) bool {
	a, err1 := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pid))
	b, err2 := os.Stat(filepath.Join("/run/netns", ns))
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// StopNode stops a node's daemons with SIGTERM (SIGKILL after 10s). FRR's
// isisd goes first so zebra can withdraw its routes cleanly.
func (l *Lab) StopNode(ctx context.Context, node string) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	d := l.daemons(n)
	for _, name := range []string{"isisd", "ospfd", "bfdd", "zebra", "fared", "lldpd", "bird"} {
		if p, ok := d[name]; ok {
			fmt.Fprintf(l.opts.Log, "stopping %s %s (pid %d)\n", node, name, p)
			if err := terminate([]int{p}, 10*time.Second); err != nil {
				return fmt.Errorf("node %s: %s: %w", node, name, err)
			}
		}
	}
	return nil
}

// StartNode (re)starts a node's daemons from its rendered config and waits
// until they answer.
func (l *Lab) StartNode(ctx context.Context, node string) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	if d := l.daemons(n); len(d) > 0 {
		return fmt.Errorf("node %s: already running (%v)", node, d)
	}
	if err := l.startNode(ctx, n); err != nil {
		return err
	}
	if err := l.waitReady(ctx, n); err != nil {
		return err
	}
	return l.save()
}

// RestartNode stops and starts a node.
func (l *Lab) RestartNode(ctx context.Context, node string) error {
	if err := l.StopNode(ctx, node); err != nil {
		return err
	}
	return l.StartNode(ctx, node)
}

// KillNode sends sig to every daemon of a node (to simulate a crash with
// SIGKILL, or a hang with SIGSTOP). After SIGKILL it waits until they are
// gone.
func (l *Lab) KillNode(ctx context.Context, node string, sig syscall.Signal) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	d := l.daemons(n)
	if len(d) == 0 {
		return fmt.Errorf("node %s: no daemon running", node)
	}
	var pids []int
	for name, p := range d {
		fmt.Fprintf(l.opts.Log, "kill -%d %s %s (pid %d)\n", sig, node, name, p)
		if err := syscall.Kill(p, sig); err != nil {
			return fmt.Errorf("node %s: kill %s: %w", node, name, err)
		}
		pids = append(pids, p)
	}
	if sig == syscall.SIGKILL {
		if left := waitGone(pids, 5*time.Second); len(left) > 0 {
			return fmt.Errorf("node %s: %v survive SIGKILL", node, left)
		}
	}
	return nil
}

// Capture starts tcpdump on an interface of a node, writing a pcap to
// file. It returns once tcpdump listens; stop ends it and flushes the file.
func (l *Lab) Capture(ctx context.Context, node, iface, file string) (stop func() error, err error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("tcpdump"); err != nil {
		return nil, errors.New("tcpdump not found; apt-get install tcpdump")
	}
	// -Z root: tcpdump otherwise drops to user tcpdump and may not be
	// able to write file. -U: packet-buffered, so a stopped capture holds
	// everything seen.
	argv := []string{"ip", "netns", "exec", n.Netns, "tcpdump", "-i", iface, "-w", file, "-U", "-s", "0", "-n", "-Z", "root"}
	fmt.Fprintf(l.opts.Log, "+ %s &\n", strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &cmdError{Cmd: argv, Err: err}
	}
	listening := make(chan struct{})
	var msgs strings.Builder
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once {
				msgs.WriteString(sc.Text() + "\n")
			}
			if !once && strings.Contains(sc.Text(), "listening on") {
				once = true
				close(listening)
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-listening:
	case err := <-done:
		return nil, &cmdError{Cmd: argv, Err: fmt.Errorf("exited: %v", err), Output: msgs.String()}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return nil, &cmdError{Cmd: argv, Err: errors.New("not listening after 10s"), Output: msgs.String()}
	}
	stopped := false
	return func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("capture %s %s: %w", node, iface, err)
		}
		return nil
	}, nil
}
