package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Well-known paths.
const (
	// DefaultRunDir holds one directory per lab: lab.json and per-node
	// configs, logs, pid files and fared sockets.
	DefaultRunDir = "/run/farelab"
	// FRRDir holds the FRR daemons (Debian layout).
	FRRDir = "/usr/lib/frr"
	// frrStateDir is where FRR daemons started with -N NAME put their
	// sockets: /var/run/frr/NAME/.
	frrStateDir = "/var/run/frr"
	// frrConfDir is where vtysh -N NAME reads NAME/vtysh.conf.
	frrConfDir = "/etc/frr"
	// vtyshMarker starts the vtysh.conf files farelab writes, so Down only
	// removes /etc/frr/<dir> it created.
	vtyshMarker = "! farelab"
	stateFile   = "lab.json"
)

// Options tune Up.
type Options struct {
	Name       string // lab name; default the topology name (use UniqueName for per-run names)
	FaredBin   string // default: fared next to the running executable, then $PATH
	FarectlBin string // default: farectl next to the running executable, then $PATH
	RunDir     string // default DefaultRunDir
	Log        io.Writer
}

func (o Options) withDefaults() Options {
	if o.RunDir == "" {
		o.RunDir = DefaultRunDir
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// findBin resolves a helper binary: explicit path, next to the running
// executable (farelab, fared and farectl are installed together), $PATH.
func findBin(explicit, name string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("%s binary %q: %w", name, explicit, err)
		}
		return filepath.Abs(p)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found next to %s or in $PATH", name, os.Args[0])
	}
	return filepath.Abs(p)
}

// Plan computes names and addresses of a lab without creating anything.
func Plan(t *Topology, o Options) (*Lab, error) {
	o = o.withDefaults()
	name := o.Name
	if name == "" {
		name = t.Name
	}
	l, err := plan(t, name)
	if err != nil {
		return nil, err
	}
	l.setDir(o.RunDir)
	l.opts = o
	return l, nil
}

// Up builds and starts a lab. On failure it tears down what it built.
func Up(ctx context.Context, t *Topology, o Options) (*Lab, error) {
	l, err := Plan(t, o)
	if err != nil {
		return nil, err
	}
	o = l.opts
	if os.Geteuid() != 0 {
		return nil, errors.New("farelab needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("ip (iproute2) not found in $PATH")
	}
	for _, n := range l.Nodes {
		switch n.Kind {
		case "frr":
			for _, d := range []string{"zebra", frrDaemon(n)} {
				if _, err := os.Stat(filepath.Join(FRRDir, d)); err != nil {
					return nil, fmt.Errorf("node %s: FRR not installed (%v); apt-get install frr", n.Name, err)
				}
			}
		case "bird":
			for _, b := range []string{"bird", "birdc"} {
				if _, err := exec.LookPath(b); err != nil {
					return nil, fmt.Errorf("node %s: %s not found (apt-get install bird2)", n.Name, b)
				}
			}
		case "fared", "host":
			if n.runsFared() && l.FaredBin == "" {
				if l.FaredBin, err = findBin(o.FaredBin, "fared"); err != nil {
					return nil, fmt.Errorf("node %s: %w (set --fared / Options.FaredBin)", n.Name, err)
				}
			}
			if n.Agent == AgentLLDPD {
				if _, err := exec.LookPath("lldpd"); err != nil {
					return nil, fmt.Errorf("node %s: lldpd not found (apt-get install lldpd)", n.Name)
				}
			}
		}
	}
	// farectl is only needed by Farectl; resolve it now so the state file
	// tells other processes which one goes with this lab.
	l.FarectlBin, _ = findBin(o.FarectlBin, "farectl")

	if _, err := os.Stat(filepath.Join(l.Dir, stateFile)); err == nil {
		return nil, fmt.Errorf("lab %q already exists (%s); run: farelab down %s", l.Name, l.Dir, l.Name)
	}
	existing, err := listNetns(ctx)
	if err != nil {
		return nil, err
	}
	for _, ns := range l.Netns {
		if existing[ns] {
			return nil, fmt.Errorf("namespace %q already exists (leftover of lab %q?); run: farelab down %s", ns, l.Name, l.Name)
		}
	}

	start := time.Now()
	l.Created = start
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return nil, err
	}
	// Record the plan before creating anything, so Down finds a
	// half-built lab even if this process dies mid-way.
	if err := l.save(); err != nil {
		return nil, err
	}
	if err := l.build(ctx); err != nil {
		if derr := l.Down(); derr != nil {
			return nil, fmt.Errorf("up %s: %w (and teardown failed: %v)", l.Name, err, derr)
		}
		return nil, fmt.Errorf("up %s: %w", l.Name, err)
	}
	l.Ready = true
	if err := l.save(); err != nil {
		_ = l.Down()
		return nil, err
	}
	fmt.Fprintf(o.Log, "lab %s up in %v\n", l.Name, time.Since(start).Round(time.Millisecond))
	return l, nil
}

func (l *Lab) ip(ctx context.Context, args ...string) error {
	_, err := run(ctx, l.opts.Log, "ip", args...)
	return err
}

// build creates namespaces, links and addresses, then starts the daemons.
func (l *Lab) build(ctx context.Context) error {
	if err := l.buildNetwork(ctx); err != nil {
		return err
	}
	if err := l.buildPrefixIfaces(ctx); err != nil {
		return err
	}
	for _, n := range l.Nodes {
		if n.isHost() {
			if err := l.hostRoutes(ctx, n); err != nil {
				return err
			}
		}
	}
	if err := l.makeINCCredentials(); err != nil {
		return fmt.Errorf("INC credentials: %w", err)
	}
	for _, n := range l.Nodes {
		if err := l.startNode(ctx, n); err != nil {
			return err
		}
	}
	for _, n := range l.Nodes {
		if err := l.waitReady(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) buildLAN(ctx context.Context, lk *Link) error {
	args := []string{"-n", lk.Netns, "link", "add", lk.Bridge, "type", "bridge"}
	if lk.Shared {
		args = append(args, "group_fwd_mask", "0x4000") // bit 14: 01-80-C2-00-00-0E
	}
	if err := l.ip(ctx, args...); err != nil {
		return err
	}
	if err := l.ip(ctx, "-n", lk.Netns, "link", "set", lk.Bridge, "up"); err != nil {
		return err
	}
	for _, m := range lk.Members {
		n := l.Node(m.Node)
		if err := l.ip(ctx, "link", "add", m.Port, "netns", lk.Netns, "mtu", "1500", "type", "veth",
			"peer", "name", m.Iface, "netns", n.Netns, "mtu", "1500"); err != nil {
			return err
		}
		if err := l.ip(ctx, "-n", lk.Netns, "link", "set", m.Port, "master", lk.Bridge, "up"); err != nil {
			return err
		}
		if err := l.ip(ctx, "-n", n.Netns, "addr", "add", m.Addr.String(), "dev", m.Iface); err != nil {
			return err
		}
		if err := l.ip(ctx, "-n", n.Netns, "link", "set", m.Iface, "up"); err != nil {
			return err
		}
	}
	return nil
}

// save writes the state file atomically.
func (l *Lab) save() error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(l.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(l.Dir, stateFile))
}

// Open loads a lab from its state file under DefaultRunDir.
func Open(name string) (*Lab, error) { return OpenAt(DefaultRunDir, name) }

// OpenAt loads a lab from its state file under runDir.
func OpenAt(runDir, name string) (*Lab, error) {
	path := filepath.Join(runDir, name, stateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lab %q not found (no %s)", name, path)
		}
		return nil, err
	}
	l := &Lab{}
	if err := json.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.opts = Options{RunDir: runDir}.withDefaults()
	return l, nil
}

// SetLog sets where the lab logs the commands it runs.
func (l *Lab) SetLog(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	l.opts.Log = w
}

// List returns the names of the labs under DefaultRunDir.
func List() ([]string, error) { return ListAt(DefaultRunDir) }

// ListAt returns the names of the labs (directories) under runDir.
func ListAt(runDir string) ([]string, error) {
	ents, err := os.ReadDir(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && checkName("lab", e.Name(), MaxLabName) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// listNetns returns the names of all named network namespaces.
func listNetns(ctx context.Context) (map[string]bool, error) {
	out, err := run(ctx, io.Discard, "ip", "netns", "list")
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			m[f[0]] = true
		}
	}
	return m, nil
}

// Down tears down the lab: processes, namespaces, files.
func (l *Lab) Down() error {
	return downLab(l.opts.withDefaults(), l.Name, l)
}

// Down tears down the named lab under DefaultRunDir. It works without a
// state file: every namespace named "<name>-*" that no other lab's state
// file claims is cleaned, with every process in it.
func Down(name string) error { return DownAt(DefaultRunDir, name) }

// DownAt is Down for labs under runDir.
func DownAt(runDir, name string) error {
	if err := checkName("lab", name, MaxLabName); err != nil {
		return err
	}
	l, err := OpenAt(runDir, name)
	if err != nil {
		l = nil // state lost: fall back to the name prefix
	}
	return downLab(Options{RunDir: runDir}.withDefaults(), name, l)
}

// claimedByOthers returns namespaces recorded by other labs' state files:
// lab "a" must not remove "a-b-x" if that belongs to a lab named "a-b".
func claimedByOthers(runDir, name string) map[string]bool {
	claimed := map[string]bool{}
	others, _ := ListAt(runDir)
	for _, o := range others {
		if o == name {
			continue
		}
		if ol, err := OpenAt(runDir, o); err == nil {
			for _, ns := range ol.Netns {
				claimed[ns] = true
			}
		}
		// Even without a state file, "<other>-*" belongs to the other lab
		// when other is longer than name (a more specific prefix).
		if strings.HasPrefix(o, name+"-") {
			claimed["prefix:"+o+"-"] = true
		}
	}
	return claimed
}

func ours(ns, name string, claimed map[string]bool) bool {
	if !strings.HasPrefix(ns, name+"-") || claimed[ns] {
		return false
	}
	for k := range claimed {
		if p, ok := strings.CutPrefix(k, "prefix:"); ok && strings.HasPrefix(ns, p) {
			return false
		}
	}
	return true
}

func downLab(o Options, name string, l *Lab) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fmt.Fprintf(o.Log, "tearing down lab %s\n", name)
	claimed := claimedByOthers(o.RunDir, name)
	nsSet := map[string]bool{}
	if l != nil {
		for _, ns := range l.Netns {
			nsSet[ns] = true
		}
	}
	all, err := listNetns(ctx)
	if err != nil {
		return err
	}
	for ns := range all {
		if ours(ns, name, claimed) {
			nsSet[ns] = true
		}
	}
	var errs []error
	// Every process inside the namespaces: FRR daemons, fared, tcpdump,
	// whatever a test started with Exec.
	// One ip process for all namespaces (a lab of 128 nodes took 128,
	// which under load outlasted Down's deadline).
	var pidLines []string
	for ns := range nsSet {
		if all[ns] {
			pidLines = append(pidLines, "netns pids "+ns)
		}
	}
	out, err := ipBatchOut(ctx, io.Discard, "", pidLines, true)
	if err != nil {
		errs = append(errs, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	if err := terminate(pids, 5*time.Second); err != nil {
		errs = append(errs, err)
	}
	names := make([]string, 0, len(nsSet))
	for ns := range nsSet {
		names = append(names, ns)
	}
	sort.Strings(names)
	var delLines []string
	for _, ns := range names {
		if all[ns] {
			delLines = append(delLines, "netns del "+ns)
		}
	}
	if _, err := ipBatchOut(ctx, o.Log, "", delLines, true); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range names {
		// Per-node FRR state (sockets) and vtysh.conf.
		_ = os.RemoveAll(filepath.Join(frrStateDir, ns))
		removeVtyshConf(ns)
	}
	// Leftovers whose namespace is already gone.
	for _, dir := range []string{frrStateDir, frrConfDir} {
		matches, _ := filepath.Glob(filepath.Join(dir, name+"-*"))
		for _, m := range matches {
			if !ours(filepath.Base(m), name, claimed) {
				continue
			}
			if dir == frrConfDir {
				removeVtyshConf(filepath.Base(m))
			} else {
				_ = os.RemoveAll(m)
			}
		}
	}
	if err := os.RemoveAll(filepath.Join(o.RunDir, name)); err != nil {
		errs = append(errs, err)
	}
	return errJoin(errs)
}

// removeVtyshConf removes /etc/frr/NAME if it holds only the vtysh.conf
// farelab wrote.
func removeVtyshConf(frrName string) {
	dir := filepath.Join(frrConfDir, frrName)
	b, err := os.ReadFile(filepath.Join(dir, "vtysh.conf"))
	if err != nil || !strings.HasPrefix(string(b), vtyshMarker) {
		return
	}
	_ = os.Remove(filepath.Join(dir, "vtysh.conf"))
	_ = os.Remove(dir) // fails, harmlessly, if someone put more there
}

// frrIDs returns the uid and gid of the frr user: the daemons drop to it,
// so their pid files and socket directories must be writable by it.
func frrIDs() (int, int, error) {
	u, err := user.Lookup("frr")
	if err != nil {
		return 0, 0, fmt.Errorf("FRR user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// startNode writes the node's config and starts its daemons.
func (l *Lab) startNode(ctx context.Context, n *Node) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	switch n.Kind {
	case "frr":
		return l.startFRR(ctx, n)
	case "fared":
		return l.startFared(ctx, n)
	case "host":
		return l.startHost(ctx, n)
	case "bird":
		return l.startBIRDNode(ctx, n)
	}
	return fmt.Errorf("node %s: unknown kind %q", n.Name, n.Kind)
}

func (l *Lab) startFRR(ctx context.Context, n *Node) error {
	files := map[string]string{
		"zebra.conf":           RenderZebra(n),
		frrDaemon(n) + ".conf": renderFRRProtocol(n, l.Topo.Defaults),
	}
	if n.BFD != nil {
		files["bfdd.conf"] = RenderBFDd(n)
	}
	sock, err := WriteFRRFiles(n, l.Name, files)
	if err != nil {
		return err
	}
	for _, d := range frrDaemons(n) {
		if err := l.startFRRDaemon(ctx, n, d); err != nil {
			return err
		}
		if d == "zebra" {
			// isisd retries a missing zebra only after a delay; waiting
			// for zserv.api makes it connect at once.
			api := filepath.Join(sock, "zserv.api")
			if err := Poll(ctx, 10*time.Second, "node "+n.Name+": zebra socket "+api, func() error {
				_, err := os.Stat(api)
				return err
			}); err != nil {
				return fmt.Errorf("%w\n%s", err, tail(filepath.Join(n.Dir, "zebra.log"), 2000))
			}
		}
	}
	return l.nudgeLinkParams(ctx, n)
}

// nudgeLinkParams changes each interface's link parameters once after isisd
// is up. FRR 8.4.4's isisd only takes TE parameters from a link-params
// update that zebra sends after the circuit exists; the ones read from
// zebra.conf at start-up are often missed, and the LSP then lacks sub-TLV 9.
func (l *Lab) nudgeLinkParams(ctx context.Context, n *Node) error {
	if n.NoTE {
		return nil
	}
	vty := filepath.Join(frrStateDir, n.FRRName, frrDaemon(n)+".vty")
	if err := Poll(ctx, 10*time.Second, "node "+n.Name+": "+frrDaemon(n)+" socket "+vty, func() error {
		_, err := os.Stat(vty)
		return err
	}); err != nil {
		return err
	}
	// Nudge until isisd reports TE parameters on every interface: an
	// update that arrives before isisd has its circuits from zebra is lost
	// as well.
	return Poll(ctx, 20*time.Second, "node "+n.Name+": "+frrDaemon(n)+" TE link parameters", func() error {
		out, err := l.Vtysh(ctx, n.Name, teInterfaceCommand(n))
		if err != nil {
			return err
		}
		// An interface that is down (a test took the link down while
		// the daemon restarted) gets no TE parameters until it is up
		// again: waiting for it would only time out.
		up, err := l.upInterfaces(ctx, n)
		if err != nil {
			return err
		}
		var missing []string
		for _, f := range n.Interfaces {
			if !f.Edge && up[f.Name] && !teParamsShown(n, out, f.Name) {
				missing = append(missing, f.Name)
			}
		}
		for _, f := range n.Interfaces {
			if !slices.Contains(missing, f.Name) {
				continue
			}
			bw := frrBandwidth(f.Bandwidth)
			if _, err := l.Vtysh(ctx, n.Name, "configure terminal", "interface "+f.Name, "link-params", "max-rsv-bw 1", "max-rsv-bw "+bw); err != nil {
				return Permanent(fmt.Errorf("link-params on %s: %w", f.Name, err))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no TE parameters yet on %v", missing)
		}
		return nil
	})
}

// WriteFRRFiles prepares node n of lab to run FRR daemons with -N
// n.FRRName: it writes files (name → content) into n.Dir, creates the
// daemons' state directory and gives both to the frr user (the daemons
// drop to frr:frr right after start, then write their pid files and their
// sockets under /var/run/frr/<name>/), and writes the vtysh.conf that
// vtysh -N reads (it complains on stderr when missing), marked so Down
// removes only ours. It returns the state directory.
func WriteFRRFiles(n *Node, lab string, files map[string]string) (string, error) {
	uid, gid, err := frrIDs()
	if err != nil {
		return "", err
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(n.Dir, f), []byte(s), 0o644); err != nil {
			return "", err
		}
	}
	sock := filepath.Join(frrStateDir, n.FRRName)
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return "", err
	}
	for _, p := range []string{n.Dir, sock} {
		if err := os.Chown(p, uid, gid); err != nil {
			return "", err
		}
	}
	etc := filepath.Join(frrConfDir, n.FRRName)
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(etc, "vtysh.conf"), []byte(vtyshMarker+" lab "+lab+"\n"), 0o644); err != nil {
		return "", err
	}
	return sock, nil
}

// FRRCommand returns the command line that starts an FRR daemon of n.
// -P 0 disables the TCP vty: vtysh talks over the unix socket, and no
// daemon listens on a port.
func FRRCommand(n *Node, daemon string) []string {
	return []string{"ip", "netns", "exec", n.Netns, filepath.Join(FRRDir, daemon),
		"-N", n.FRRName,
		"-f", filepath.Join(n.Dir, daemon+".conf"),
		"-i", filepath.Join(n.Dir, daemon+".pid"),
		"--log", "file:" + filepath.Join(n.Dir, daemon+".log"),
		"-P", "0", "-d"}
}

func (l *Lab) startFRRDaemon(ctx context.Context, n *Node, daemon string) error {
	argv := FRRCommand(n, daemon)
	pidFile := filepath.Join(n.Dir, daemon+".pid")
	_ = os.Remove(pidFile)
	// Output goes to a file, not a pipe: the daemonized child would keep a
	// pipe open and make Wait hang.
	outPath := filepath.Join(n.Dir, daemon+".out")
	out, err := os.Create(outPath)
	if err != nil {
		return err
	}
	defer out.Close()
	fmt.Fprintf(l.opts.Log, "+ %s\n", strings.Join(argv, " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(outPath)
		return &cmdError{Cmd: argv, Err: err, Output: string(b) + tail(filepath.Join(n.Dir, daemon+".log"), 2000)}
	}
	what := fmt.Sprintf("node %s: %s pid file %s", n.Name, daemon, pidFile)
	if err := Poll(ctx, 10*time.Second, what, func() error {
		if p := ReadPid(pidFile); p > 0 && alive(p) {
			n.Pids[daemon] = p
			return nil
		}
		return errors.New("not written yet")
	}); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(filepath.Join(n.Dir, daemon+".log"), 2000))
	}
	return nil
}

// FaredCommand returns the command line that starts fared on n.
func (l *Lab) FaredCommand(n *Node) []string {
	return []string{"ip", "netns", "exec", n.Netns, l.FaredBin,
		"-c", filepath.Join(n.Dir, "fared.yaml"), "--socket", n.Socket}
}

func (l *Lab) startFared(ctx context.Context, n *Node) error {
	cfg, err := l.renderNodeConfig(n)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.Dir, "fared.yaml"), cfg, 0o644); err != nil {
		return err
	}
	_ = os.Remove(n.Socket)
	return l.startDaemon(n, "fared", l.FaredCommand(n))
}

// waitReady waits until a node's control interfaces answer: FRR vty
// sockets, fared's control socket.
func (l *Lab) waitReady(ctx context.Context, n *Node) error {
	switch n.Kind {
	case "bird":
		return l.waitBIRD(ctx, n)
	case "frr":
		d := frrDaemon(n)
		sock := filepath.Join(frrStateDir, n.FRRName, d+".vty")
		return Poll(ctx, 10*time.Second, "node "+n.Name+": "+d+" vty "+sock, func() error {
			if !alive(n.Pids[d]) {
				return Permanent(fmt.Errorf("%s exited:\n%s", d, tail(filepath.Join(n.Dir, d+".log"), 2000)))
			}
			_, err := os.Stat(sock)
			return err
		})
	case "host":
		if n.Agent == AgentLLDPD {
			return waitSocket(ctx, n, "lldpd", "socket", filepath.Join(n.Dir, "lldpd.sock"))
		}
		if n.Agent != AgentFared {
			return nil
		}
		fallthrough
	case "fared":
		return waitSocket(ctx, n, "fared", "control socket", n.Socket)
	}
	return nil
}

// waitSocket waits until daemon d of n (started by startDaemon) has
// created its socket sock, and fails at once if d exits.
func waitSocket(ctx context.Context, n *Node, d, what, sock string) error {
	return Poll(ctx, 15*time.Second, "node "+n.Name+": "+d+" "+what+" "+sock, func() error {
		if !alive(n.Pids[d]) {
			return Permanent(fmt.Errorf("%s exited:\n%s", d, tail(filepath.Join(n.Dir, d+".log"), 2000)))
		}
		_, err := os.Stat(sock)
		return err
	})
}
