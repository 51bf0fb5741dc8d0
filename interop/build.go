package interop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A lab of 128 nodes and 960 links took about 5,000 `ip` commands, one
// process each, one after the other: minutes on a loaded 2-core machine.
// Up now creates the namespaces and all veth pairs in two `ip -batch`
// runs, and each namespace's addresses and links in one `ip -n NS -batch`
// run, several namespaces at once (buildWorkers).

// buildWorkers is how many namespaces are set up at once: enough to hide
// the exec latency, few enough not to starve what already runs.
const buildWorkers = 8

// ipBatch runs `ip [-n ns] -batch -` over lines (no-op without lines).
func ipBatch(ctx context.Context, log io.Writer, ns string, lines []string) error {
	_, err := ipBatchOut(ctx, log, ns, lines, false)
	return err
}

// ipBatchOut is ipBatch returning stdout; with force, ip goes on past a
// failing line (-force) and the error reports the failures.
func ipBatchOut(ctx context.Context, log io.Writer, ns string, lines []string, force bool) ([]byte, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	args := []string{"-batch", "-"}
	if force {
		args = append([]string{"-force"}, args...)
	}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	fmt.Fprintf(log, "+ ip %s <<%d lines\n%s\n", strings.Join(args, " "), len(lines), strings.Join(lines, "\n"))
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return out.Bytes(), &cmdError{Cmd: append([]string{"ip"}, args...), Err: err, Output: strings.TrimSpace(errb.String() + "\n" + out.String())}
	}
	return out.Bytes(), nil
}

// parallel runs f(0..n-1) on up to workers goroutines and returns the
// first error (the others still finish: a half-built lab is torn down by
// the caller).
func parallel(n, workers int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// buildNetwork creates namespaces, loopbacks, sysctls and p2p links in
// batches; LANs follow one by one (buildLAN).
func (l *Lab) buildNetwork(ctx context.Context) error {
	log := l.opts.Log
	var root []string
	perNS := map[string][]string{}
	for _, ns := range l.Netns {
		root = append(root, "netns add "+ns)
		perNS[ns] = []string{"link set lo up"}
	}
	if err := ipBatch(ctx, log, "", root); err != nil {
		return err
	}
	// Before the veths: default.rp_filter is inherited by interfaces
	// created later, and the kernel uses max(all, iface).
	// nexthop_compat_mode=0: a reweighted group is then announced once,
	// not once per route using it.
	if err := parallel(len(l.Nodes), buildWorkers, func(i int) error {
		_, err := run(ctx, log, "ip", "netns", "exec", l.Nodes[i].Netns, "sysctl", "-q", "-w",
			"net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
			"net.ipv4.nexthop_compat_mode=0")
		return err
	}); err != nil {
		return err
	}
	root = root[:0]
	for _, n := range l.Nodes {
		perNS[n.Netns] = append(perNS[n.Netns], "addr add "+n.Loopback.String()+"/32 dev lo")
	}
	for _, lk := range l.Links {
		if lk.LAN != "" {
			continue
		}
		a, b := l.Node(lk.A), l.Node(lk.B)
		// Created directly in both namespaces: nothing ever appears in the
		// root namespace, so names cannot clash with the host's.
		root = append(root, fmt.Sprintf("link add %s netns %s mtu 1500 type veth peer name %s netns %s mtu 1500", lk.IfA, a.Netns, lk.IfB, b.Netns))
		perNS[a.Netns] = append(perNS[a.Netns], "addr add "+lk.AddrA.String()+" dev "+lk.IfA, "link set "+lk.IfA+" up")
		perNS[b.Netns] = append(perNS[b.Netns], "addr add "+lk.AddrB.String()+" dev "+lk.IfB, "link set "+lk.IfB+" up")
	}
	if err := ipBatch(ctx, log, "", root); err != nil {
		return err
	}
	if err := parallel(len(l.Netns), buildWorkers, func(i int) error {
		return ipBatch(ctx, log, l.Netns[i], perNS[l.Netns[i]])
	}); err != nil {
		return err
	}
	for _, lk := range l.Links {
		if lk.LAN != "" {
			if err := l.buildLAN(ctx, lk); err != nil {
				return err
			}
		}
	}
	return nil
}
