// Package ceiling measures the kernel's own limit for installing a route
// set and fared's FIB against it. The same route set goes into a fresh
// namespace twice per round: once through fib.FIB.Sync (fared's kernel
// writer, the code the daemon runs) and once through a bare netlink loop
// that replays exactly the objects fared installed (same nexthop ids,
// groups, weights, routes, message flags and the same batching: up to
// fib's chunk of requests per sendmsg, then their ACKs), with every
// message encoded before the clock starts. The loop encodes and chunks
// with fib's own code (internal/nlmsg), so both send the same bytes. The
// ratio of the two rates is fared's FIB efficiency; the bare loop's rate
// is the ceiling.
package ceiling

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/bench/inject"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/internal/kernwatch"
	"github.com/fared/fared/internal/nlmsg"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/spf"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Set is a route set with the links its gateways live on.
type Set struct {
	Name   string
	Links  []Link // veths to create: Name, our address, the gateway's
	Routes []Route
}

// Link is one veth of the test namespace.
type Link struct {
	Name string
	Addr netip.Prefix // ours
	Peer netip.Prefix // the gateway's
}

// Route is a route by link index, resolved to an ifindex once the links exist.
type Route struct {
	Prefix netip.Prefix
	Hops   []Hop
}

// Hop is one weighted next hop.
type Hop struct {
	Link    int
	Gateway netip.Addr
	Weight  uint32
}

// FabricSet is the table fared computes at the fabric's Self: spf.Run +
// fare.ComputeTable, weights quantised to 16 bits as the rib does, next
// hops on the injector's circuits.
func FabricSet(name string, f *closgen.Fabric) (*Set, error) {
	cs, err := inject.Circuits(f)
	if err != nil {
		return nil, err
	}
	g := f.Graph()
	res := spf.Run(g)
	tb := fare.ComputeTable(res, spf.Routes(res), fare.Options{})
	s := &Set{Name: name}
	for _, c := range cs {
		s.Links = append(s.Links, Link{Name: c.Iface, Addr: c.RUTAddr, Peer: c.Addr})
	}
	self := g.Nodes[g.Self]
	for _, rt := range tb.Routes {
		q, _ := fare.Quantize(rt.Weights(), fare.Max16)
		r := Route{Prefix: rt.Prefix}
		for i, h := range rt.NextHops {
			// Self's k-th link is its k-th cable: the generator adds both
			// directions of each cable in cable order.
			k := int(h.Link - self.First)
			if k < 0 || k >= len(cs) || g.Nodes[g.Links[h.Link].To].ID != f.Nodes[cs[k].Node].Name {
				return nil, fmt.Errorf("route %s: link %d is not circuit %d", rt.Prefix, h.Link, k)
			}
			if q[i] > 0 {
				r.Hops = append(r.Hops, Hop{Link: k, Gateway: cs[k].Addr.Addr(), Weight: q[i]})
			}
		}
		s.Routes = append(s.Routes, r)
	}
	return s, nil
}

// SyntheticSet is fib's BenchmarkSync100k shape: n IPv4 /24s over 64
// groups of 4 members out of 16 gateways on one link.
func SyntheticSet(n int) *Set {
	s := &Set{Name: fmt.Sprintf("%d prefixes over 64 groups of 4", n),
		Links: []Link{{Name: "gw", Addr: netip.MustParsePrefix("10.1.0.1/24"), Peer: netip.MustParsePrefix("10.1.0.2/24")}}}
	gws := make([]netip.Addr, 16)
	for i := range gws {
		gws[i] = netip.AddrFrom4([4]byte{10, 1, 0, byte(2 + i)})
	}
	groups := make([][]Hop, 64)
	for g := range groups {
		for j, off := range []int{0, 1, 3, 7} {
			w := uint32(1+j) + uint32(g/16)*uint32(j)
			groups[g] = append(groups[g], Hop{Gateway: gws[(g+off)%16], Weight: w})
		}
	}
	for i := 0; i < n; i++ {
		a := uint32(20<<24) + uint32(i)<<8
		s.Routes = append(s.Routes, Route{
			Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), 0}), 24),
			Hops:   groups[i%64],
		})
	}
	return s
}

// Result of a ceiling run.
type Result struct {
	Set      string        `json:"set"`
	Routes   int           `json:"routes"`
	Objects  int           `json:"nexthop_objects"` // singles + groups fared installed
	Rounds   int           `json:"rounds"`
	Fared    time.Duration `json:"fared_ns"` // median Sync
	FaredCPU time.Duration `json:"fared_cpu_ns"`
	Bare     time.Duration `json:"bare_ns"` // median bare loop
	BareCPU  time.Duration `json:"bare_cpu_ns"`
	Messages int           `json:"messages"` // requests in one install (both)
	Chunk    int           `json:"chunk"`    // requests per sendmsg
}

// FaredRate and BareRate are routes per second; Fraction is fared's rate
// as a fraction of the bare loop's.
func (r Result) FaredRate() float64 { return float64(r.Routes) / r.Fared.Seconds() }
func (r Result) BareRate() float64  { return float64(r.Routes) / r.Bare.Seconds() }
func (r Result) Fraction() float64  { return r.Bare.Seconds() / r.Fared.Seconds() }

// Options of Run.
type Options struct {
	Rounds int       // default 5
	Log    io.Writer // progress; nil: none
}

// Run measures the set in a fresh namespace (removed on return).
func Run(ctx context.Context, s *Set, o Options) (*Result, error) {
	if o.Rounds <= 0 {
		o.Rounds = 5
	}
	name := interop.UniqueName("ceil")
	ns, peer := name+"-k", name+"-p"
	defer func() { _ = interop.Down(name) }()
	var root, in, out strings.Builder
	in.WriteString("link set lo up\n") // fib's capability probe uses it
	for _, l := range s.Links {
		fmt.Fprintf(&root, "link add %s netns %s type veth peer name %s netns %s\n", l.Name, ns, l.Name, peer)
		fmt.Fprintf(&in, "addr add %s dev %s\nlink set %s up\n", l.Addr, l.Name, l.Name)
		fmt.Fprintf(&out, "addr add %s dev %s\nlink set %s up\n", l.Peer, l.Name, l.Name)
	}
	for _, step := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"netns", "add", ns}},
		{"", []string{"netns", "add", peer}},
		{root.String(), []string{"-batch", "-"}},
		{in.String(), []string{"-n", ns, "-batch", "-"}},
		{out.String(), []string{"-n", peer, "-batch", "-"}},
		{"", []string{"netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.nexthop_compat_mode=0"}},
	} {
		cmd := exec.CommandContext(ctx, "ip", step.args...)
		cmd.Stdin = strings.NewReader(step.stdin)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(step.args, " "), err, b)
		}
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	idx, err := ifindexes(h)
	if err != nil {
		return nil, err
	}
	routes := make([]fib.Route, len(s.Routes))
	for i, r := range s.Routes {
		routes[i].Prefix = r.Prefix
		for _, hp := range r.Hops {
			routes[i].NextHops = append(routes[i].NextHops, fib.NextHop{Gateway: hp.Gateway, IfIndex: idx[s.Links[hp.Link].Name], Weight: hp.Weight})
		}
	}
	res := &Result{Set: s.Name, Routes: len(routes), Rounds: o.Rounds}
	var faredT, faredC, bareT, bareC []time.Duration
	var replay *objects
	for round := 0; round < o.Rounds; round++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Alternate who goes first, so neither always meets a warm cache.
		order := []bool{true, false}
		if round%2 == 1 {
			order = []bool{false, true}
		}
		for _, faredTurn := range order {
			if faredTurn {
				d, c, msgs, objs, err := syncFared(h, routes, replay == nil)
				if err != nil {
					return nil, err
				}
				faredT, faredC = append(faredT, d), append(faredC, c)
				if replay == nil {
					replay = objs
					res.Objects = len(objs.singles) + len(objs.groups)
					res.Messages = msgs
				}
				continue
			}
			if replay == nil {
				continue // the first round's fared run captures what to replay
			}
			d, c, chunk, err := replay.install(h)
			if err != nil {
				return nil, err
			}
			res.Chunk = chunk
			bareT, bareC = append(bareT, d), append(bareC, c)
		}
		if o.Log != nil && len(bareT) > 0 {
			fmt.Fprintf(o.Log, "round %d: fared %v, bare %v\n", round+1, faredT[len(faredT)-1], bareT[len(bareT)-1])
		}
	}
	if len(bareT) == 0 {
		return nil, fmt.Errorf("no bare round ran")
	}
	res.Fared, res.FaredCPU, res.Bare, res.BareCPU = median(faredT), median(faredC), median(bareT), median(bareC)
	return res, nil
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// ifindexes maps the interface names of a namespace to their indexes.
func ifindexes(h netns.NsHandle) (map[string]int, error) {
	names, err := kernwatch.IfNames(h)
	if err != nil {
		return nil, err
	}
	m := make(map[string]int, len(names))
	for idx, name := range names {
		m[name] = idx
	}
	return m, nil
}

// cpuTime is user+system time of this process.
func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syncFared installs routes with a fresh fib.FIB and removes them again
// (Close without KeepOnShutdown). With capture it also reads back what was
// installed, for the bare loop to replay.
func syncFared(h netns.NsHandle, routes []fib.Route, capture bool) (time.Duration, time.Duration, int, *objects, error) {
	f, err := fib.Open(fib.Config{NetNS: h})
	if err != nil {
		return 0, 0, 0, nil, err
	}
	// Adopt reads the (empty) kernel; Sync would do it on its first call,
	// which is not the cost of installing routes.
	if err := f.Adopt(); err != nil {
		f.Close()
		return 0, 0, 0, nil, err
	}
	t0, c0 := time.Now(), cpuTime()
	st, err := f.Sync(routes)
	d, c := time.Since(t0), cpuTime()-c0
	if err != nil {
		f.Close()
		return 0, 0, 0, nil, fmt.Errorf("fared Sync: %w", err)
	}
	if st.RoutesAdded != len(routes) {
		f.Close()
		return 0, 0, 0, nil, fmt.Errorf("fared Sync added %d routes of %d: %+v", st.RoutesAdded, len(routes), st)
	}
	var objs *objects
	if capture {
		if objs, err = readObjects(h); err != nil {
			f.Close()
			return 0, 0, 0, nil, err
		}
	}
	if err := f.Close(); err != nil {
		return 0, 0, 0, nil, fmt.Errorf("fared Close: %w", err)
	}
	return d, c, st.Messages, objs, nil
}

// objects is what fared installed, to be replayed.
type objects struct {
	singles []fib.KernelNexthop
	groups  []fib.KernelNexthop
	routes  []fib.KernelRoute
}

func readObjects(h netns.NsHandle) (*objects, error) {
	routes, nhs, err := fib.Dump(h, unix.RTPROT_ISIS)
	if err != nil {
		return nil, err
	}
	o := &objects{}
	for _, n := range nhs {
		if len(n.Group) > 0 {
			o.groups = append(o.groups, n)
		} else {
			o.singles = append(o.singles, n)
		}
	}
	for _, r := range routes {
		if r.Table == unix.RT_TABLE_MAIN {
			o.routes = append(o.routes, r)
		}
	}
	return o, nil
}

// install replays the objects with the bare loop and deletes them again.
func (o *objects) install(h netns.NsHandle) (time.Duration, time.Duration, int, error) {
	c, err := dial(h)
	if err != nil {
		return 0, 0, 0, err
	}
	defer unix.Close(c.fd)
	// Three batches like fib.Sync: nexthops, groups, routes; each encoded
	// up front.
	b1 := after(nil)
	for _, n := range o.singles {
		addNexthop(b1, n)
	}
	b2 := after(b1)
	for _, n := range o.groups {
		if err := addGroup(b2, n); err != nil {
			return 0, 0, 0, err
		}
	}
	b3 := after(b2)
	for _, r := range o.routes {
		addRoute(b3, r)
	}
	t0, c0 := time.Now(), cpuTime()
	for _, b := range []*nlmsg.Batch{b1, b2, b3} {
		if err := c.run(b); err != nil {
			return 0, 0, 0, err
		}
	}
	d, cpu := time.Since(t0), cpuTime()-c0
	// Deleting a group removes the routes on it; then the singles (and
	// the routes that use one directly).
	del := after(b3)
	for _, n := range o.groups {
		del.DelNexthop(del.Next(), n.ID)
	}
	for _, n := range o.singles {
		del.DelNexthop(del.Next(), n.ID)
	}
	if err := c.runIgnore(del, unix.ENOENT); err != nil {
		return 0, 0, 0, err
	}
	return d, cpu, c.chunk, nil
}
