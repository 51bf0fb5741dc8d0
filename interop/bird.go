package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// BIRD is a BIRD 2 daemon (Debian's bird2) in a lab node's namespace:
// a node of kind bird (Lab.BIRD), or one StartBIRD put in place of an FRR
// node's daemons.
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
// there are any. Routes are not exported to the kernel. (For a node of
// kind bird, RenderBIRD renders the full config.)
func RenderBIRDOSPF(n *Node, d Defaults, keys []AuthKey) (string, error) {
	m := *n
	m.Area = "0.0.0.0"
	m.Prefixes = nil
	m.Interfaces = append([]Iface(nil), n.Interfaces...)
	for i := range m.Interfaces {
		m.Interfaces[i].Area = "0.0.0.0"
	}
	return renderBIRD(&m, d, keys, false)
}

// RenderBIRD renders bird.conf for a node of kind bird: OSPFv2 with each
// interface in its area (p2p links as ptp, LANs broadcast with the node's
// priority), the loopback as a stub in the node's area, its extra
// prefixes as stub networks there, the node's auth keys, and every OSPF
// route exported to the kernel (ECMP merged into multipath routes), so
// traffic crosses a BIRD node like any other.
func RenderBIRD(n *Node, d Defaults) (string, error) { return renderBIRD(n, d, n.Auth, true) }

func renderBIRD(n *Node, d Defaults, keys []AuthKey, kernel bool) (string, error) {
	var b strings.Builder
	hello := frrSeconds(d.HelloInterval)
	// retransmit 2: BIRD refuses 1 (FRR and fared nodes use 1s).
	fmt.Fprintf(&b, "# rendered by farelab for node %s\nrouter id %s;\n", n.Name, n.Loopback)
	fmt.Fprintf(&b, "log %q all;\n", filepath.Join(n.Dir, "bird.log"))
	b.WriteString("protocol device { scan time 1; }\n")
	if kernel {
		b.WriteString("protocol kernel {\n  ipv4 { import none; export all; };\n  merge paths yes;\n}\n")
	}
	b.WriteString("protocol ospf v2 lab {\n  debug { states, events, packets };\n  ecmp yes;\n  ipv4 { import all; export none; };\n")
	// Areas in a fixed order: the node's own first (it holds the
	// loopback), then the others as their interfaces name them.
	areas := []string{n.Area}
	for _, f := range n.Interfaces {
		if f.Area != "" && !slices.Contains(areas, f.Area) {
			areas = append(areas, f.Area)
		}
	}
	for i, a := range areas {
		fmt.Fprintf(&b, "  area %s {\n", a)
		if i == 0 {
			for _, p := range n.Prefixes {
				fmt.Fprintf(&b, "    stubnet %s;\n", p.Prefix)
			}
			b.WriteString("    interface \"lo\" { stub yes; };\n")
		}
		for _, f := range n.Interfaces {
			if f.Area != a && !(f.Area == "" && i == 0) {
				continue
			}
			typ := "ptp"
			if f.Type == "lan" {
				typ = "broadcast"
			}
			fmt.Fprintf(&b, "    interface \"%s\" {\n      type %s;\n      hello %d;\n      dead %d;\n      retransmit 2;\n      cost %d;\n",
				f.Name, typ, hello, hello*d.HelloMultiplier, min(f.Metric, 65535))
			if f.Type == "lan" && n.Priority >= 0 {
				fmt.Fprintf(&b, "      priority %d;\n", n.Priority)
			}
			if f.Edge {
				b.WriteString("      stub yes;\n") // toward a host
			}
			if n.BFD != nil {
				b.WriteString("      bfd yes;\n")
			}
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
		b.WriteString("  };\n")
	}
	b.WriteString("}\n")
	if n.BFD != nil {
		b.WriteString(renderBIRDBFD(n))
	}
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

// ReconfigureBIRD renders a bird node's config again from the lab's state
// (a test changed the node's spec, e.g. its BFD keys), writes it and has
// bird load it (`birdc configure`).
func (l *Lab) ReconfigureBIRD(ctx context.Context, node string) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	conf, err := RenderBIRD(n, l.Topo.Defaults)
	if err != nil {
		return err
	}
	path, _, _ := birdFiles(n)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return err
	}
	out, err := l.Birdc(ctx, node, "configure")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Reconfigured") {
		return fmt.Errorf("birdc configure on %s: %s", node, out)
	}
	return nil
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

// BIRD node kind: `kind: bird` in a topology runs bird (Debian's bird2)
// in the node's namespace with RenderBIRD's config. Control socket, config,
// pid file and log live in the node's directory.

func birdFiles(n *Node) (conf, sock, pid string) {
	return filepath.Join(n.Dir, "bird.conf"), filepath.Join(n.Dir, "bird.ctl"), filepath.Join(n.Dir, "bird.pid")
}

// BIRDCommand returns the command line that starts bird on n.
func (l *Lab) BIRDCommand(n *Node) []string {
	conf, sock, pid := birdFiles(n)
	return []string{"ip", "netns", "exec", n.Netns, "bird", "-c", conf, "-s", sock, "-P", pid}
}

func (l *Lab) startBIRDNode(ctx context.Context, n *Node) error {
	conf, err := RenderBIRD(n, l.Topo.Defaults)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	path, _, pidFile := birdFiles(n)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return err
	}
	_ = os.Remove(pidFile)
	argv := l.BIRDCommand(n)
	// bird parses its config before it forks: a bad one fails here with
	// BIRD's own file:line message.
	if _, err := runCombined(ctx, l.opts.Log, argv[0], argv[1:]...); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err) // carries bird's output
	}
	return Poll(ctx, 10*time.Second, "node "+n.Name+": bird pid file "+pidFile, func() error {
		if p := ReadPid(pidFile); p > 0 && alive(p) {
			n.Pids["bird"] = p
			return nil
		}
		return errors.New("not written yet")
	})
}

// waitBIRD waits until bird answers on its control socket.
func (l *Lab) waitBIRD(ctx context.Context, n *Node) error {
	_, sock, _ := birdFiles(n)
	return Poll(ctx, 10*time.Second, "node "+n.Name+": birdc "+sock, func() error {
		if !alive(n.Pids["bird"]) {
			return Permanent(fmt.Errorf("bird exited:\n%s", tail(filepath.Join(n.Dir, "bird.log"), 2000)))
		}
		_, err := runCombined(ctx, l.opts.Log, "birdc", "-s", sock, "show status")
		return err
	})
}

// BIRD returns the handle of a node of kind bird (Cmd runs birdc).
func (l *Lab) BIRD(node string) (*BIRD, error) {
	n, err := l.node(node)
	if err != nil {
		return nil, err
	}
	if n.Kind != "bird" {
		return nil, fmt.Errorf("node %s is %s, not bird", node, n.Kind)
	}
	conf, sock, pid := birdFiles(n)
	return &BIRD{l: l, node: node, Conf: conf, Sock: sock, pid: pid}, nil
}

// Birdc runs one birdc command on a node of kind bird and returns its
// output.
func (l *Lab) Birdc(ctx context.Context, node string, args ...string) (string, error) {
	b, err := l.BIRD(node)
	if err != nil {
		return "", err
	}
	return b.Cmd(ctx, args...)
}

// BIRDLSA is one row of `birdc show ospf lsadb`.
type BIRDLSA struct {
	Area      string // "" for AS-scope ("Global")
	Type      int    // OSPFv2 LS type (1, 2, 3, 5, 9, 10, 11 ...)
	ID        string
	AdvRouter string
	Age       int
	Seq       uint32
	Checksum  uint16
}

// ParseBIRDLSADB parses `show ospf lsadb` of BIRD 2.0.12:
//
//	Area 0.0.0.0
//
//	 Type   LS ID           Router          Sequence   Age  Checksum
//	 0001  10.255.0.1      10.255.0.1      80000004     4    b4e5
//
// BIRD prints the type as its internal code in hex: the OSPFv2 LS type
// in the low byte, flooding-scope bits above it (0x2001 router, 0x200a
// area-local opaque, 0x4005 external ...); Type keeps the low byte.
func ParseBIRDLSADB(out string) ([]BIRDLSA, error) {
	var rows []BIRDLSA
	area := ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "Area":
			area = f[1]
		case len(f) == 1 && f[0] == "Global":
			area = ""
		case len(f) == 6 && strings.Count(f[1], ".") == 3:
			typ, err1 := strconv.ParseUint(f[0], 16, 32)
			seq, err2 := strconv.ParseUint(f[3], 16, 32)
			age, err3 := strconv.Atoi(f[4])
			ck, err4 := strconv.ParseUint(f[5], 16, 16)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				return nil, fmt.Errorf("bird lsadb line %q: %v", line, err)
			}
			rows = append(rows, BIRDLSA{Area: area, Type: int(typ & 0xff), ID: f[1], AdvRouter: f[2], Age: age, Seq: uint32(seq), Checksum: uint16(ck)})
		}
	}
	return rows, nil
}

// checkBIRDNode refuses what a BIRD node cannot do: BIRD 2 has no IS-IS
// (so a bird node needs protocol ospf, which is not the default), floods
// no TE or Extended Prefix LSAs of its own (te, path-bandwidth) and has
// no levels.
func (p *tparser) checkBIRDNode(v *yaml.Node, what string, n *NodeSpec, seen map[string]*yaml.Node) {
	if n.Protocol != "ospf" {
		if k := seen["protocol"]; k != nil {
			p.errf(k, "%s: kind bird runs OSPFv2 only (BIRD has no IS-IS), got protocol %q", what, n.Protocol)
		} else {
			p.errf(v, "%s: kind bird runs OSPFv2 only (BIRD has no IS-IS), but the topology's protocol is %q: set protocol: ospf", what, n.Protocol)
		}
	}
	if k := seen["te"]; k != nil {
		p.errf(k, "%s: te: BIRD originates no TE LSAs", what)
	}
	if k := seen["level"]; k != nil {
		p.errf(k, "%s: level is an IS-IS setting", what)
	}
	for _, ps := range n.Prefixes {
		if ps.PathBandwidth != 0 {
			p.errf(seen["prefixes"], "%s: prefix %s: BIRD cannot advertise a path-bandwidth (no Extended Prefix LSAs)", what, ps.Prefix)
		}
	}
}

// BIRDNeighbor is one row of `birdc show ospf neighbors`.
type BIRDNeighbor struct {
	RouterID, State, Interface, Address string
}

// ParseBIRDNeighbors parses `show ospf neighbors` into rows (a router
// met on two interfaces is two rows, unlike BIRDOSPFNeighbors):
//
//	Router ID   	Pri	     State     	DTime	Interface  Router IP
//	10.255.0.1  	  0	Full/PtP  	 2.974	f1-1       10.254.0.0
func ParseBIRDNeighbors(out string) []BIRDNeighbor {
	var rows []BIRDNeighbor
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && strings.Count(f[0], ".") == 3 && strings.Contains(f[2], "/") {
			rows = append(rows, BIRDNeighbor{RouterID: f[0], State: f[2], Interface: f[4], Address: f[5]})
		}
	}
	return rows
}
