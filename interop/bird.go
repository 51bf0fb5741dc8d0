package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BIRD is a BIRD 2 daemon (Debian's bird2) running in a lab node's
// namespace in place of the node's FRR daemons: the lab built the node's
// namespace, links and addresses; StartBIRD stops FRR there and starts
// bird with a rendered config. Until farelab has a BIRD node kind, this
// is how tests talk to BIRD.
type BIRD struct {
	l    *Lab
	node string
	Conf string // bird.conf path
	Sock string // control socket for birdc
	pid  string
}

// birdAlg is BIRD's name of a cryptographic algorithm.
func birdAlg(a string) (string, bool) {
	m := map[string]string{"md5": "keyed md5", "hmac-sha-1": "hmac sha1", "hmac-sha-256": "hmac sha256",
		"hmac-sha-384": "hmac sha384", "hmac-sha-512": "hmac sha512"}
	s, ok := m[a]
	return s, ok
}

// RenderBIRDOSPF renders a bird.conf for node n: OSPFv2 in area 0 on
// every interface (p2p links as ptp), the loopback as a stub, the lab's
// hello and dead intervals, cryptographic authentication with keys when
// there are any. Routes are not exported to the kernel.
func RenderBIRDOSPF(n *Node, d Defaults, keys []AuthKey) (string, error) {
	var b strings.Builder
	hello := frrSeconds(d.HelloInterval)
	fmt.Fprintf(&b, "# rendered by farelab for node %s\nrouter id %s;\n", n.Name, n.Loopback)
	fmt.Fprintf(&b, "log %q all;\n", filepath.Join(n.Dir, "bird.log"))
	b.WriteString("protocol device { scan time 1; }\n")
	b.WriteString("protocol ospf v2 lab {\n  debug { states, events, packets };\n  ipv4 { import all; export none; };\n  area 0 {\n")
	b.WriteString("    interface \"lo\" { stub yes; };\n")
	for _, f := range n.Interfaces {
		typ := "ptp"
		if f.Type == "lan" {
			typ = "broadcast"
		}
		fmt.Fprintf(&b, "    interface \"%s\" {\n      type %s;\n      hello %d;\n      dead %d;\n      cost %d;\n",
			f.Name, typ, hello, hello*d.HelloMultiplier, min(f.Metric, 65535))
		if len(keys) > 0 {
			b.WriteString("      authentication cryptographic;\n")
		}
		for _, k := range keys {
			alg, ok := birdAlg(k.Algorithm)
			if !ok {
				return "", fmt.Errorf("bird: no algorithm %q", k.Algorithm)
			}
			fmt.Fprintf(&b, "      password %q { id %d; algorithm %s; };\n", k.Secret, k.ID, alg)
		}
		b.WriteString("    };\n")
	}
	b.WriteString("  };\n}\n")
	return b.String(), nil
}

// StartBIRD stops the node's daemons and starts bird in its namespace
// with conf. The caller stops it (Stop) before the lab goes down.
func (l *Lab) StartBIRD(ctx context.Context, node, conf string) (*BIRD, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	if err := l.StopNode(ctx, node); err != nil {
		return nil, err
	}
	b := &BIRD{l: l, node: node, Conf: filepath.Join(n.Dir, "bird.conf"), Sock: filepath.Join(n.Dir, "bird.ctl"), pid: filepath.Join(n.Dir, "bird.pid")}
	if err := os.WriteFile(b.Conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if out, err := l.Exec(ctx, node, "bird", "-c", b.Conf, "-s", b.Sock, "-P", b.pid); err != nil {
		return nil, fmt.Errorf("bird on %s: %v: %s", node, err, out)
	}
	// bird forks into the background; wait for its control socket.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := b.Cmd(ctx, "show status"); err == nil {
			return b, nil
		} else if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("bird on %s does not answer: %v", node, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Cmd runs a birdc command and returns its output.
func (b *BIRD) Cmd(ctx context.Context, args ...string) (string, error) {
	out, err := runCombined(ctx, b.l.opts.Log, "birdc", append([]string{"-s", b.Sock}, args...)...)
	return string(out), err
}

// Stop ends the bird process (by its pid file) and waits until it is gone.
func (b *BIRD) Stop() error {
	raw, err := os.ReadFile(b.pid)
	if err != nil {
		return nil // never started
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("bird pid file %s: %q", b.pid, raw)
	}
	return terminate([]int{pid}, 10*time.Second)
}

// BIRDOSPFNeighbors parses `show ospf neighbors`: router id -> state
// ("Full/PtP", "Full/DR", ...).
func BIRDOSPFNeighbors(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// "10.255.0.1  1  Full/PtP  00:30  f1-1  10.254.0.0"
		if len(f) >= 3 && strings.Count(f[0], ".") == 3 && strings.Contains(f[2], "/") {
			m[f[0]] = f[2]
		}
	}
	return m
}
