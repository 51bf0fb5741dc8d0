package interop

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"time"
)

// KillDaemon sends sig to one daemon of a node ("fared", "zebra",
// "isisd", "ospfd", "bird", "lldpd"), e.g. SIGKILL to isisd while zebra
// lives on. After SIGKILL it waits until the process is gone.
func (l *Lab) KillDaemon(ctx context.Context, node, daemon string, sig syscall.Signal) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	p, ok := l.daemons(n)[daemon]
	if !ok {
		return fmt.Errorf("node %s: %s is not running", node, daemon)
	}
	fmt.Fprintf(l.opts.Log, "kill -%d %s %s (pid %d)\n", sig, node, daemon, p)
	if err := syscall.Kill(p, sig); err != nil {
		return fmt.Errorf("node %s: kill %s: %w", node, daemon, err)
	}
	if sig == syscall.SIGKILL {
		if left := waitGone([]int{p}, 5*time.Second); len(left) > 0 {
			return fmt.Errorf("node %s: %s (pid %d) survives SIGKILL", node, daemon, p)
		}
	}
	return nil
}

// StartDaemon starts one stopped daemon of a node: an FRR node's
// routing daemon next to its running zebra (with the TE nudge the lab
// gives at start), or the daemon of a fared or bird node (StartNode).
func (l *Lab) StartDaemon(ctx context.Context, node, daemon string) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	running := l.daemons(n)
	if _, ok := running[daemon]; ok {
		return fmt.Errorf("node %s: %s is already running", node, daemon)
	}
	if n.Kind != "frr" {
		return l.StartNode(ctx, node)
	}
	if daemon != frrDaemon(n) {
		return fmt.Errorf("node %s: StartDaemon starts %s, not %s (use StartNode)", node, frrDaemon(n), daemon)
	}
	if _, ok := running["zebra"]; !ok {
		return fmt.Errorf("node %s: zebra is not running (use StartNode)", node)
	}
	if err := l.startFRRDaemon(ctx, n, daemon); err != nil {
		return err
	}
	if err := l.nudgeLinkParams(ctx, n); err != nil {
		return err
	}
	if err := l.waitReady(ctx, n); err != nil {
		return err
	}
	return l.save()
}

// upInterfaces returns the interfaces of a node that are up with a
// carrier: flags UP and LOWER_UP in `ip -o link`. (Not the "state"
// field: the kernel's link watcher sets the operational state up to a
// second late, and a daemon started right after the lab built the links
// would see them as down.)
func (l *Lab) upInterfaces(ctx context.Context, n *Node) (map[string]bool, error) {
	out, err := run(ctx, io.Discard, "ip", "-n", n.Netns, "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	return parseUpInterfaces(string(out)), nil
}

// parseUpInterfaces reads `ip -o link show`: "2: is1-1@if3:
// <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 ...".
func parseUpInterfaces(out string) map[string]bool {
	up := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		flags := strings.Split(strings.Trim(f[2], "<>"), ",")
		if slices.Contains(flags, "UP") && slices.Contains(flags, "LOWER_UP") {
			up[name] = true
		}
	}
	return up
}
