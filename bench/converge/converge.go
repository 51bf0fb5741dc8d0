// Package converge measures failure convergence in the data plane, after
// RFC 6413's loss-derived method: a UDP stream at a fixed packet rate runs
// between two leaves of a small CLOS; a spine on its path fails; the loss
// window is the number of lost packets divided by the rate. The same
// topology runs all-FRR and all-fared, one lab after the other, in one
// run.
//
// Failures (Mode):
//
//	link    the spine's link to the receiving leaf goes down (both ends,
//	        carrier lost: both routers see it at once)
//	silent  the same link drops every packet while its carrier stays up
//	        (nftables netdev egress, both ends): only hellos (or BFD)
//	        can tell. Egress, not ingress: FRR's isisd reads with an
//	        ETH_P_ALL packet socket, whose tap sees a frame before the
//	        netdev ingress hook drops it, so an ingress drop leaves FRR's
//	        adjacency up while data is lost for good.
//	kill    kill -9 of the spine's routing daemon (isisd; fared)
//
// BFD: with Options.BFD, FRR nodes run bfdd with a 50 ms × 3 profile on
// every IS-IS interface, and fared nodes get Options.FaredBFD (default
// DefaultFaredBFD, the same 50 ms × 3) appended to their config, applied
// with a reload; the failure waits until every session is Up on both.
package converge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/bench/undertest"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/kernwatch"
	"github.com/fared/fared/interop"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Failure modes.
const (
	Link   = "link"
	Silent = "silent"
	Kill   = "kill"
)

// Options of a run.
type Options struct {
	Kinds  []string // "frr", "fared"; default both
	Modes  []string // default link, silent, kill
	BFD    bool
	Rate   int // packets per second; default 1000 (1 ms resolution)
	Spines int // default 2
	Leaves int // default 2
	// Hello is the IS-IS hello interval (hold = 3 × hello); default 1s.
	Hello      time.Duration
	FaredBin   string
	FarectlBin string
	// FaredBFD is YAML appended to every fared config when BFD is on;
	// default DefaultFaredBFD.
	FaredBFD string
	Timeout  time.Duration // per wait; default 2 min
	// Repeat runs every kind × mode this many times (fresh labs), since
	// one failure's loss depends on where the routers' timers stand.
	Repeat int
	Log    io.Writer
}

// Case is one measured failure.
type Case struct {
	Kind  string `json:"kind"`
	Mode  string `json:"mode"`
	BFD   bool   `json:"bfd"`
	Spine string `json:"spine"` // the spine the flow crossed
	Rate  int    `json:"rate_pps"`
	Sent  int64  `json:"sent"` // from the failure to the end of the measurement
	Lost  int64  `json:"lost"`
	// LossWindow is Lost / Rate; LongestGap the longest run of
	// consecutive lost packets / Rate.
	LossWindow time.Duration `json:"loss_window_ns"`
	LongestGap time.Duration `json:"longest_gap_ns"`
	Recovered  bool          `json:"recovered"`
	Note       string        `json:"note,omitempty"`
}

func (o *Options) defaults() {
	if len(o.Kinds) == 0 {
		o.Kinds = []string{"frr", "fared"}
	}
	if len(o.Modes) == 0 {
		o.Modes = []string{Link, Silent, Kill}
	}
	o.Rate = cmp.Or(o.Rate, 1000)
	o.Spines = cmp.Or(o.Spines, 2)
	o.Leaves = cmp.Or(o.Leaves, 2)
	o.Hello = cmp.Or(o.Hello, time.Second)
	o.Timeout = cmp.Or(o.Timeout, 2*time.Minute)
	if o.Repeat <= 0 {
		o.Repeat = 1
	}
	o.FaredBFD = cmp.Or(o.FaredBFD, DefaultFaredBFD)
}

// DefaultFaredBFD is fared's side of the FRR profile: BFD on every
// adjacency, 50 ms × 3.
const DefaultFaredBFD = "bfd: {interval: 50ms, multiplier: 3}\n"

// Topology renders the lab: every node of one kind; leaf i links to every
// spine at 100G.
func Topology(kind string, spines, leaves int, hello time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: conv\ndefaults: {hello-interval: %s, log-level: info}\nnodes:\n", hello)
	for s := 1; s <= spines; s++ {
		fmt.Fprintf(&b, "  s%d: {kind: %s}\n", s, kind)
	}
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "  l%d: {kind: %s}\n", l, kind)
	}
	b.WriteString("links:\n")
	for l := 1; l <= leaves; l++ {
		for s := 1; s <= spines; s++ {
			fmt.Fprintf(&b, "  - {a: l%d, b: s%d, bandwidth: 100G}\n", l, s)
		}
	}
	return b.String()
}

// Run measures every kind × mode, each on a fresh lab.
func Run(ctx context.Context, o Options) ([]Case, error) {
	o.defaults()
	var out []Case
	for _, mode := range o.Modes {
		for i := 0; i < o.Repeat; i++ {
			// Kinds alternate within a repetition, so load that drifts
			// over the run touches both alike.
			for _, kind := range o.Kinds {
				c, err := runCase(ctx, o, kind, mode)
				if err != nil {
					return out, fmt.Errorf("%s %s: %w", kind, mode, err)
				}
				out = append(out, *c)
			}
		}
	}
	return out, nil
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
}

func runCase(ctx context.Context, o Options, kind, mode string) (c *Case, err error) {
	topo, err := interop.ParseTopology([]byte(Topology(kind, o.Spines, o.Leaves, o.Hello)))
	if err != nil {
		return nil, err
	}
	name := interop.UniqueName("cv" + kind[:2] + mode[:2])
	o.logf("%s %s (bfd %v): lab %s", kind, mode, o.BFD, name)
	lab, err := interop.Up(ctx, topo, interop.Options{Name: name, FaredBin: o.FaredBin, FarectlBin: o.FarectlBin})
	if err != nil {
		_ = interop.Down(name)
		return nil, err
	}
	defer func() {
		if derr := lab.Down(); derr != nil && err == nil {
			err = derr
		}
	}()
	if o.BFD {
		if err := enableBFD(ctx, lab, o); err != nil {
			return nil, err
		}
	}
	src, dst := lab.Node("l1"), lab.Node(fmt.Sprintf("l%d", o.Leaves))
	nsPath := func(n *interop.Node) string { return filepath.Join("/run/netns", n.Netns) }

	// Converged: the sender's leaf reaches the receiver over every spine,
	// and every router's SPF back-off is quiet.
	if err := interop.Poll(ctx, o.Timeout, "ECMP over every spine at l1", func() error {
		t, err := kernwatch.Read(nsPath(src))
		if err != nil {
			return err
		}
		h := t.Routes[netip.PrefixFrom(dst.Loopback, 32)]
		if len(h) != o.Spines {
			return fmt.Errorf("l1 reaches %s over %d spines: %s", dst.Loopback, len(h), h)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := quiet(ctx, lab, o.Timeout); err != nil {
		return nil, err
	}

	flowSrc := netip.AddrPortFrom(src.Loopback, 40000)
	flowDst := netip.AddrPortFrom(dst.Loopback, 40001)
	spine, err := pathSpine(lab, src, flowSrc, flowDst)
	if err != nil {
		return nil, err
	}
	c = &Case{Kind: kind, Mode: mode, BFD: o.BFD, Spine: spine.Name, Rate: o.Rate}
	st, err := newStream(nsPath(src), flowSrc, nsPath(dst), flowDst, o.Rate)
	if err != nil {
		return nil, err
	}
	st.start(ctx)
	stopped := false
	defer func() {
		if !stopped {
			st.stop()
		}
	}()
	if err := interop.Poll(ctx, 10*time.Second, "the stream flowing", func() error {
		if sent, last := st.progress(); last < 0 || sent-last > int64(o.Rate/10) {
			return fmt.Errorf("sent %d, last received %d", sent, last)
		}
		return nil
	}); err != nil {
		return nil, err
	}

	from, _ := st.progress()
	if err := fail(ctx, lab, mode, spine, dst); err != nil {
		return nil, err
	}
	o.logf("%s %s: %s failed at packet %d", kind, mode, spine.Name, from)
	// Recovered: the receiver keeps up with the sender (within 20 ms of
	// packets) for a whole second. Routers that never recover hit the
	// deadline; the case is reported, not failed.
	var since time.Time
	perr := interop.Poll(ctx, 60*time.Second, "traffic recovered", func() error {
		sent, last := st.progress()
		if sent-last > int64(o.Rate/50)+1 {
			since = time.Time{}
			return fmt.Errorf("receiver %d packets behind", sent-last)
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) < time.Second {
			return errors.New("not yet stable for 1 s")
		}
		return nil
	})
	c.Recovered = perr == nil
	to, _ := st.progress()
	st.stop()
	stopped = true
	got, longest := st.received(from, to)
	c.Sent, c.Lost = to-from, to-from-got
	c.LossWindow = time.Duration(c.Lost) * time.Second / time.Duration(o.Rate)
	c.LongestGap = time.Duration(longest) * time.Second / time.Duration(o.Rate)
	if !c.Recovered {
		c.Note = "no recovery within 60 s"
	}
	o.logf("%s %s: lost %d of %d: loss window %v", kind, mode, c.Lost, c.Sent, c.LossWindow)
	return c, nil
}

// Summary is the median and range of the loss windows of one kind and
// mode over its repetitions.
type Summary struct {
	Kind, Mode   string
	BFD          bool
	N            int
	Median       time.Duration
	Min, Max     time.Duration
	NotRecovered int
}

// Summarise groups cases by mode and kind, in the order they appear.
func Summarise(cases []Case) []Summary {
	var out []Summary
	idx := map[string]int{}
	var loss [][]time.Duration
	for _, c := range cases {
		k := c.Mode + "/" + c.Kind
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Summary{Kind: c.Kind, Mode: c.Mode, BFD: c.BFD})
			loss = append(loss, nil)
		}
		loss[i] = append(loss[i], c.LossWindow)
		if !c.Recovered {
			out[i].NotRecovered++
		}
	}
	for i := range out {
		l := loss[i]
		slices.Sort(l)
		out[i].N, out[i].Median, out[i].Min, out[i].Max = len(l), l[len(l)/2], l[0], l[len(l)-1]
	}
	return out
}

// pathSpine asks l1's kernel which next hop the flow takes (the kernel's
// own multipath hash) and returns the spine behind it.
func pathSpine(lab *interop.Lab, src *interop.Node, from, to netip.AddrPort) (*interop.Node, error) {
	h, err := netns.GetFromName(src.Netns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	gws, err := fib.Lookup(h, []fib.Flow{{Src: from.Addr(), Dst: to.Addr(), Proto: unix.IPPROTO_UDP, Sport: from.Port(), Dport: to.Port()}})
	if err != nil {
		return nil, err
	}
	for _, f := range src.Interfaces {
		if f.Type == "p2p" && otherEnd(f.Addr) == gws[0] {
			return lab.Node(f.Peer), nil
		}
	}
	return nil, fmt.Errorf("gateway %s of the flow is no spine of l1", gws[0])
}

func otherEnd(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	b[3] ^= 1
	return netip.AddrFrom4(b)
}

// linkBetween returns the p2p link between two nodes.
func linkBetween(lab *interop.Lab, a, b string) *interop.Link {
	for _, l := range lab.Links {
		if (l.A == a && l.B == b) || (l.A == b && l.B == a) {
			return l
		}
	}
	return nil
}

func fail(ctx context.Context, lab *interop.Lab, mode string, spine, dst *interop.Node) error {
	switch mode {
	case Link, Silent:
		lk := linkBetween(lab, spine.Name, dst.Name)
		if lk == nil {
			return fmt.Errorf("no link %s–%s", spine.Name, dst.Name)
		}
		if mode == Link {
			return lab.SetLinkUp(ctx, lk.Index, false)
		}
		// Both ends drop everything they send on the link; the carrier
		// stays up, so only hellos (or BFD) notice.
		for _, end := range []struct{ node, iface string }{{lk.A, lk.IfA}, {lk.B, lk.IfB}} {
			rules := fmt.Sprintf("table netdev bench {\n chain out {\n  type filter hook egress device %q priority 0; policy drop;\n }\n}\n", end.iface)
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", lab.Node(end.node).Netns, "nft", "-f", "-")
			cmd.Stdin = strings.NewReader(rules)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("nft on %s %s: %v: %s", end.node, end.iface, err, out)
			}
		}
		return nil
	case Kill:
		d := "fared"
		if spine.Kind == "frr" {
			d = "isisd"
		}
		pid := spine.Pids[d]
		if pid == 0 {
			return fmt.Errorf("%s: no %s pid", spine.Name, d)
		}
		return syscall.Kill(pid, syscall.SIGKILL)
	}
	return fmt.Errorf("unknown failure mode %q (link, silent, kill)", mode)
}

// quiet waits until no router is in an SPF back-off: fared's RFC 8405
// holddown over, FRR's last SPF at least 2 s ago.
func quiet(ctx context.Context, lab *interop.Lab, timeout time.Duration) error {
	return interop.Poll(ctx, timeout, "SPF quiet on every router", func() error {
		for _, n := range lab.Nodes {
			if n.Kind == "fared" {
				var v wire.SPFView
				if err := client.New(n.Socket).GetJSON(ctx, "/spf/log", &v); err != nil {
					return err
				}
				d := v.Delays["isis"]
				now := time.Now()
				if d.State != "QUIET" && (d.SPFAt.After(now) || d.HolddownAt.After(now) || d.LearnAt.After(now)) {
					return fmt.Errorf("%s: SPF back-off %s", n.Name, d.State)
				}
				continue
			}
			out, err := lab.Vtysh(ctx, n.Name, "show isis summary")
			if err != nil {
				return err
			}
			s, err := undertest.ParseISISSummary(out)
			if err != nil {
				return err
			}
			if s.Runs == 0 || s.Elapsed < 2*time.Second {
				return fmt.Errorf("%s: %d SPF runs, the last %v ago", n.Name, s.Runs, s.Elapsed)
			}
		}
		return nil
	})
}

// enableBFD starts bfdd on every FRR node with a 50 ms × 3 profile on each
// IS-IS interface and waits for the sessions; fared nodes get
// Options.FaredBFD appended to their config and reload.
func enableBFD(ctx context.Context, lab *interop.Lab, o Options) error {
	for _, n := range lab.Nodes {
		switch n.Kind {
		case "frr":
			conf := filepath.Join(n.Dir, "bfdd.conf")
			prof := "bfd\n profile fast\n  detect-multiplier 3\n  receive-interval 50\n  transmit-interval 50\n exit\nexit\n"
			if err := os.WriteFile(conf, []byte(prof), 0o644); err != nil {
				return err
			}
			argv := []string{"netns", "exec", n.Netns, filepath.Join(interop.FRRDir, "bfdd"), "-N", n.FRRName, "-f", conf,
				"-i", filepath.Join(n.Dir, "bfdd.pid"), "--log", "file:" + filepath.Join(n.Dir, "bfdd.log"), "-P", "0", "-d"}
			outPath := filepath.Join(n.Dir, "bfdd.out")
			out, err := os.Create(outPath)
			if err != nil {
				return err
			}
			cmd := exec.CommandContext(ctx, "ip", argv...)
			cmd.Stdout, cmd.Stderr = out, out
			err = cmd.Run()
			out.Close()
			if err != nil {
				b, _ := os.ReadFile(outPath)
				return fmt.Errorf("%s: bfdd: %v: %s", n.Name, err, b)
			}
			if err := interop.Poll(ctx, 10*time.Second, n.Name+" bfdd vty", func() error {
				_, err := os.Stat(filepath.Join("/var/run/frr", n.FRRName, "bfdd.vty"))
				return err
			}); err != nil {
				return err
			}
			cmds := []string{"configure terminal"}
			for _, f := range n.Interfaces {
				cmds = append(cmds, "interface "+f.Name, "isis bfd", "isis bfd profile fast", "exit")
			}
			if _, err := lab.Vtysh(ctx, n.Name, cmds...); err != nil {
				return err
			}
		case "fared":
			path := filepath.Join(n.Dir, "fared.yaml")
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, append(b, []byte("\n"+o.FaredBFD)...), 0o644); err != nil {
				return err
			}
			if _, err := lab.Farectl(ctx, n.Name, "reload"); err != nil {
				return fmt.Errorf("%s: reload with BFD: %w", n.Name, err)
			}
		}
	}
	return interop.Poll(ctx, o.Timeout, "BFD sessions up", func() error {
		for _, n := range lab.Nodes {
			if n.Kind == "fared" {
				var v wire.BFDSessions
				if err := lab.FarectlJSON(ctx, n.Name, &v, "bfd", "sessions"); err != nil {
					return err
				}
				up := 0
				for _, s := range v.Sessions {
					if s.State == "Up" && s.RemoteState == "Up" {
						up++
					}
				}
				if up < len(n.Interfaces) {
					return fmt.Errorf("%s: %d of %d BFD sessions up", n.Name, up, len(n.Interfaces))
				}
				continue
			}
			if n.Kind != "frr" {
				continue
			}
			out, err := lab.Vtysh(ctx, n.Name, "show bfd peers brief")
			if err != nil {
				return err
			}
			if up := strings.Count(out, " up "); up < len(n.Interfaces) {
				return fmt.Errorf("%s: %d of %d BFD sessions up", n.Name, up, len(n.Interfaces))
			}
		}
		return nil
	})
}
