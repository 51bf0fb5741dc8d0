// Package reweight measures how fast a remote leaf's kernel weights
// follow a spine's bandwidth change (issue 29): in a CLOS of fared
// routers (S spines, L leaves, 100G links), spine s1's run-time override
// toward the last leaf moves (40G, 10G, 100G, 25G, 60G, again and
// again), one change per interval; leaf l1's kernel is watched through
// netlink (internal/kernwatch), and each change's latency is from the
// moment before the override's API request to the kernel notification
// after which l1's group for the last leaf's loopback holds the new
// weights. By FARE (docs/fare.md) l1 weighs spine s by min(l1–s, s–lL),
// s–lL as s advertises it: s1 gets min(100G, override), every other
// spine 100G.
//
// The next change goes out one interval after the previous one, or when
// the previous one has reached the kernel if that took longer, so that
// every change is measured (a slower router coalesces nothing away).
package reweight

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/kernwatch"
	"github.com/fared/fared/interop"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Sequence is the overrides the burst cycles through, in G.
var Sequence = []float64{40, 10, 100, 25, 60}

// Options of a run.
type Options struct {
	Changes  int           // default 10
	Interval time.Duration // default 1 s
	Spines   int           // default 2
	Leaves   int           // default 2
	Timeout  time.Duration // per wait; default 30 s
	Log      io.Writer
}

func (o *Options) defaults() {
	o.Changes = cmp.Or(o.Changes, 10)
	o.Interval = cmp.Or(o.Interval, time.Second)
	o.Spines = cmp.Or(o.Spines, 2)
	o.Leaves = cmp.Or(o.Leaves, 2)
	o.Timeout = cmp.Or(o.Timeout, 30*time.Second)
}

// Change is one measured change.
type Change struct {
	N         int
	Bandwidth float64 // G, the override set on s1 toward the last leaf
	Share     float64 // s1's share at l1, by hand
	Sent      time.Time
	Reached   time.Time     // the kernel notification that completed it
	Latency   time.Duration // Reached − Sent
	// SPF is what l1's first computation after Sent says of itself.
	SPFKind, SPFReason string
	SPFCapacity        bool
}

// Result is a run's changes and their latencies' median and maximum.
type Result struct {
	Changes     []Change
	Median, Max time.Duration
}

// Topology renders the lab: every node fared; every leaf links to every
// spine at 100G.
func Topology(spines, leaves int) string {
	var b strings.Builder
	b.WriteString("name: rw\ndefaults: {hello-interval: 1s, log-level: info}\nnodes:\n")
	for s := 1; s <= spines; s++ {
		fmt.Fprintf(&b, "  s%d: {kind: fared}\n", s)
	}
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "  l%d: {kind: fared}\n", l)
	}
	b.WriteString("links:\n")
	for l := 1; l <= leaves; l++ {
		for s := 1; s <= spines; s++ {
			fmt.Fprintf(&b, "  - {a: l%d, b: s%d, bandwidth: 100G}\n", l, s)
		}
	}
	return b.String()
}

// ShareOfS1 is s1's share of l1's traffic to the last leaf when s1
// advertises bw (G) toward it: min(100, bw) against 100 per other spine.
func ShareOfS1(bw float64, spines int) float64 {
	w := math.Min(100, bw)
	return w / (w + 100*float64(spines-1))
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
}

// Run plays the burst on a lab of Topology(o.Spines, o.Leaves) that is
// up (interop.StartLab).
func Run(ctx context.Context, lab *interop.Lab, o Options) (*Result, error) {
	o.defaults()
	r := &run{o: o, lab: lab, l1: lab.Node("l1"), s1: lab.Node("s1"), dst: lab.Node(fmt.Sprintf("l%d", o.Leaves))}
	return r.burst(ctx)
}

// run is one lab's measurement.
type run struct {
	o           Options
	lab         *interop.Lab
	l1, s1, dst *interop.Node
	ns          netns.NsHandle
	spineOf     map[netip.Addr]string // l1's gateways → spine
}

func (r *run) burst(ctx context.Context) (*Result, error) {
	ns, err := netns.GetFromName(r.l1.Netns)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	r.ns = ns
	r.spineOf = map[netip.Addr]string{}
	for _, lk := range r.lab.LinkList() {
		if lk.A == "l1" {
			r.spineOf[lk.AddrB.Addr()] = lk.B
		}
	}
	if err := r.waitShare(ctx, ShareOfS1(100, r.o.Spines), r.o.Timeout*4); err != nil {
		return nil, fmt.Errorf("initial weights: %w", err)
	}
	if err := r.quiet(ctx); err != nil {
		return nil, err
	}
	w, err := kernwatch.Watch(filepath.Join("/run/netns", r.l1.Netns))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	routes, nhs, err := fib.Dump(ns, unix.RTPROT_ISIS)
	if err != nil {
		return nil, err
	}
	iface := ""
	for _, i := range r.s1.Interfaces {
		if i.Peer == r.dst.Name {
			iface = i.Name
		}
	}
	var changes []Change
	next := time.Now()
	for i := 0; i < r.o.Changes; i++ {
		time.Sleep(time.Until(next))
		bw := Sequence[i%len(Sequence)]
		c := Change{N: i + 1, Bandwidth: bw, Share: ShareOfS1(bw, r.o.Spines), Sent: time.Now()}
		next = c.Sent.Add(r.o.Interval)
		if _, err := client.New(r.s1.Socket).Post(ctx, "/isis/bandwidth", wire.BandwidthRequest{Interface: iface, Bandwidth: fmt.Sprintf("%gG", bw)}); err != nil {
			return nil, fmt.Errorf("change %d: %w", c.N, err)
		}
		if err := r.waitShare(ctx, c.Share, r.o.Timeout); err != nil {
			return nil, fmt.Errorf("change %d (%gG): %w", c.N, bw, err)
		}
		changes = append(changes, c)
		r.o.logf("change %d: s1→%s %gG, s1's share %.4f reached", c.N, r.dst.Name, bw, c.Share)
	}
	time.Sleep(200 * time.Millisecond) // the last notifications
	evs, werr := w.Events()
	if werr != nil {
		return nil, werr
	}
	if err := r.timeChanges(changes, routes, nhs, evs); err != nil {
		return nil, err
	}
	r.spfEntries(ctx, changes)
	return summarise(changes), nil
}

// waitShare polls l1's kernel until s1's share of the last leaf's
// loopback is share (±0.001: 16-bit weights are finer).
func (r *run) waitShare(ctx context.Context, share float64, timeout time.Duration) error {
	return interop.Poll(ctx, timeout, fmt.Sprintf("l1: s1's share %.4f", share), func() error {
		routes, nhs, err := fib.Dump(r.ns, unix.RTPROT_ISIS)
		if err != nil {
			return err
		}
		k := newKernel(routes, nhs)
		got, ok := k.shareOf(r.dstPrefix(), r.spineOf, "s1")
		if !ok || math.Abs(got-share) > 0.001 {
			return fmt.Errorf("s1's share %.4f (found %v)", got, ok)
		}
		return nil
	})
}

func (r *run) dstPrefix() netip.Prefix { return netip.PrefixFrom(r.dst.Loopback, 32) }

// quiet waits until no router is in an SPF back-off (RFC 8405 holddown
// over), so that the burst starts where the figures did.
func (r *run) quiet(ctx context.Context) error {
	return interop.Poll(ctx, r.o.Timeout, "SPF quiet on every router", func() error {
		for _, n := range r.lab.Nodes {
			var v wire.SPFView
			if err := client.New(n.Socket).GetJSON(ctx, "/spf/log", &v); err != nil {
				return err
			}
			if d := v.Delays["isis"]; d.State != "QUIET" && d.HolddownAt.After(time.Now()) {
				return fmt.Errorf("%s: SPF back-off %s", n.Name, d.State)
			}
		}
		return nil
	})
}

// timeChanges replays l1's notifications from the dump taken before the
// burst: each change is reached at the first notification after its Sent
// that leaves s1's share at the change's.
func (r *run) timeChanges(changes []Change, routes []fib.KernelRoute, nhs []fib.KernelNexthop, evs []kernwatch.Event) error {
	k := newKernel(routes, nhs)
	j := 0
	for i := range changes {
		c := &changes[i]
		for ; j < len(evs) && c.Reached.IsZero(); j++ {
			k.apply(evs[j])
			if evs[j].At.Before(c.Sent) {
				continue
			}
			if got, ok := k.shareOf(r.dstPrefix(), r.spineOf, "s1"); ok && math.Abs(got-c.Share) <= 0.001 {
				c.Reached, c.Latency = evs[j].At, evs[j].At.Sub(c.Sent)
			}
		}
		if c.Reached.IsZero() {
			return fmt.Errorf("change %d: no notification brought s1's share to %.4f", c.N, c.Share)
		}
	}
	return nil
}

// spfEntries notes what l1's first computation after each change says.
func (r *run) spfEntries(ctx context.Context, changes []Change) {
	var v wire.SPFView
	if err := client.New(r.l1.Socket).GetJSON(ctx, "/spf/log", &v); err != nil {
		return
	}
	for i := range changes {
		c := &changes[i]
		for _, e := range v.Log {
			if !e.At.Before(c.Sent) {
				c.SPFKind, c.SPFReason, c.SPFCapacity = e.Kind, e.Reason, e.Capacity
				break
			}
		}
	}
}

func summarise(changes []Change) *Result {
	lat := make([]time.Duration, len(changes))
	for i, c := range changes {
		lat[i] = c.Latency
	}
	slices.Sort(lat)
	res := &Result{Changes: changes}
	if n := len(lat); n > 0 {
		res.Median = lat[n/2]
		if n%2 == 0 {
			res.Median = (lat[n/2-1] + lat[n/2]) / 2
		}
		res.Max = lat[n-1]
	}
	return res
}
