package scenarios

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/interop"
)

// clos3 is draft-xu-lsr-fare figure 1 scaled to 4 spines and 4 leaves, with
// FRR in both tiers and unequal bandwidths (one parallel pair l2–s2).
const clos3 = `name: clos
defaults: {hello-interval: 1s}
nodes:
  s1: {kind: fared}
  s2: {kind: fared}
  s3: {kind: frr}
  s4: {kind: frr}
  l1: {kind: fared, prefixes: [10.10.1.0/24]}
  l2: {kind: fared, prefixes: [10.10.2.0/24]}
  l3: {kind: fared, prefixes: [{prefix: 10.10.3.0/24, path-bandwidth: 20G}]}
  l4: {kind: frr}
links:
  - {a: l1, b: s1, bandwidth: 100G}
  - {a: l1, b: s2, bandwidth: 100G}
  - {a: l1, b: s3, bandwidth: 100G}
  - {a: l1, b: s4, bandwidth: 10G}
  - {a: l2, b: s1, bandwidth: 40G}
  - {a: l2, b: s2, bandwidth: 25G}
  - {a: l2, b: s2, bandwidth: 25G}
  - {a: l2, b: s3, bandwidth: 100G}
  - {a: l2, b: s4, bandwidth: 100G}
  - {a: l3, b: s1, bandwidth: 100G}
  - {a: l3, b: s2, bandwidth: 100G}
  - {a: l3, b: s3, bandwidth: 40G}
  - {a: l3, b: s4, bandwidth: 100G}
  - {a: l4, b: s1, bandwidth: 100G}
  - {a: l4, b: s2, bandwidth: 100G}
  - {a: l4, b: s3, bandwidth: 100G}
  - {a: l4, b: s4, bandwidth: 100G}
`

// member is one next hop as the kernel holds it, named by the lab.
type member struct {
	gw     netip.Addr
	label  string // "s2" or "s2#2" for the second parallel link
	weight uint32
}

// fabric wraps a running lab with kernel read-back helpers.
type fabric struct {
	t   *testing.T
	ctx context.Context
	l   *interop.Lab
	// proto is the kernel protocol of fared's routes: isis (the zero
	// value), or ospf for OSPF-only labs.
	proto uint8
}

func (f *fabric) protocol() uint8 {
	if f.proto == 0 {
		return unix.RTPROT_ISIS
	}
	return f.proto
}

func (f *fabric) ns(node string) netns.NsHandle {
	h, err := netns.GetFromName(f.l.Node(node).Netns)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { h.Close() })
	return h
}

// labels maps node's gateways (the peer addresses of its p2p links) to
// the peer's name, numbering parallel links. A route watcher calls it
// while the test adds and removes links, hence LinkList.
func (f *fabric) labels(node string) map[netip.Addr]string {
	m := map[netip.Addr]string{}
	seen := map[string]int{}
	for _, lk := range f.l.LinkList() {
		var peer string
		var gw netip.Addr
		switch node {
		case lk.A:
			peer, gw = lk.B, lk.AddrB.Addr()
		case lk.B:
			peer, gw = lk.A, lk.AddrA.Addr()
		default:
			continue
		}
		seen[peer]++
		if seen[peer] > 1 {
			peer = fmt.Sprintf("%s#%d", peer, seen[peer])
		}
		m[gw] = peer
	}
	return m
}

// kernelRoute reads node's route for prefix back from the kernel over
// netlink and returns its members (one for a plain nexthop). fib.Dump
// reads again when fared moved the route between its two dumps, so an
// unknown nexthop here is a real fault.
func (f *fabric) kernelRoute(ns netns.NsHandle, node, prefix string) ([]member, error) {
	routes, nhs, err := fib.Dump(ns, f.protocol())
	if err != nil {
		return nil, err
	}
	byID := map[uint32]fib.KernelNexthop{}
	for _, n := range nhs {
		byID[n.ID] = n
	}
	lbl := f.labels(node)
	p := netip.MustParsePrefix(prefix)
	for _, r := range routes {
		if r.Prefix != p {
			continue
		}
		top, ok := byID[r.NhID]
		if !ok {
			return nil, fmt.Errorf("%s: route %s points to unknown nexthop %d", node, prefix, r.NhID)
		}
		var ms []member
		if len(top.Group) == 0 {
			return []member{{gw: top.Gateway, label: lbl[top.Gateway], weight: 1}}, nil
		}
		for _, g := range top.Group {
			n, ok := byID[g.ID]
			if !ok {
				return nil, fmt.Errorf("%s: group %d of route %s holds unknown nexthop %d", node, top.ID, prefix, g.ID)
			}
			ms = append(ms, member{gw: n.Gateway, label: lbl[n.Gateway], weight: g.Weight})
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].label < ms[j].label })
		return ms, nil
	}
	return nil, fmt.Errorf("%s: no route of protocol %d for %s in the kernel", node, f.protocol(), prefix)
}

// shares turns member weights into shares by label.
func shares(ms []member) map[string]float64 {
	var sum float64
	for _, m := range ms {
		sum += float64(m.weight)
	}
	out := map[string]float64{}
	for _, m := range ms {
		out[m.label] = float64(m.weight) / sum
	}
	return out
}

// expect compares kernel shares with hand-computed bandwidths (any unit):
// each share within 0.1 percentage point (16-bit quantisation is far finer).
func expect(ms []member, want map[string]float64) error {
	var sum float64
	for _, w := range want {
		sum += w
	}
	got := shares(ms)
	if len(got) != len(want) {
		return fmt.Errorf("members %v, want %v", got, want)
	}
	for k, w := range want {
		if math.Abs(got[k]-w/sum) > 0.001 {
			return fmt.Errorf("%s: share %.4f, want %.4f (all: %v)", k, got[k], w/sum, got)
		}
	}
	return nil
}

func (f *fabric) waitRoute(ns netns.NsHandle, node, prefix string, want map[string]float64, d time.Duration) {
	f.t.Helper()
	poll(f.t, f.ctx, d, fmt.Sprintf("%s: kernel weights for %s", node, prefix), func() error {
		ms, err := f.kernelRoute(ns, node, prefix)
		if err != nil {
			return err
		}
		return expect(ms, want)
	})
}

// TestFARE3Stage is the heart of the product in a real fabric: bandwidth-
// weighted ECMP computed from what fared and FRR flood, written into the
// kernel of each fared leaf as nexthop groups, checked by reading the
// kernel back and by the kernel's own multipath choice for 10,000 flows.
func TestFARE3Stage(t *testing.T) {
	l := startLab(t, clos3)
	f := &fabric{t: t, ctx: ctxT(t), l: l}
	l1 := f.ns("l1")
	l2 := f.ns("l2")

	// Draft §4.1 at l1 toward l2: w = min(up, down, PB) per spine, with
	// l2–s2 = 25G+25G summed per neighbour:
	//   s1 min(100,40)=40  s2 min(100,50)=50  s3 min(100,100)=100  s4 min(10,100)=10
	l2Want := map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 10}
	start := time.Now()
	f.waitRoute(l1, "l1", "10.10.2.0/24", l2Want, 90*time.Second)
	t.Logf("FIGURE clos: weighted group for 10.10.2.0/24 in l1's kernel %v after lab start", time.Since(start).Round(time.Millisecond))

	t.Run("path bandwidth caps the weights", func(t *testing.T) {
		// l3 advertises 10.10.3.0/24 with Path Bandwidth 20G:
		// s1 min(100,100,20)=20 s2 min(100,100,20)=20 s3 min(100,40,20)=20 s4 min(10,100,20)=10
		f.waitRoute(l1, "l1", "10.10.3.0/24", map[string]float64{"s1": 20, "s2": 20, "s3": 20, "s4": 10}, 20*time.Second)
	})
	t.Run("parallel links summed per neighbour, split per link", func(t *testing.T) {
		// At l2 toward l1: s1 min(40,100)=40, s2 min(25+25,100)=50 split
		// 25/25 over the two links, s3 min(100,100)=100, s4 min(100,10)=10.
		f.waitRoute(l2, "l2", "10.10.1.0/24", map[string]float64{"s1": 40, "s2": 25, "s2#2": 25, "s3": 100, "s4": 10}, 20*time.Second)
	})
	t.Run("paths through FRR spines to an FRR leaf", func(t *testing.T) {
		// l4 (FRR) sends no Path Bandwidth; s3/s4 (FRR) send max-bw:
		// s1 min(100,100) s2 min(100,100) s3 min(100,100) s4 min(10,100)
		lo := l.Node("l4").Loopback.String() + "/32"
		f.waitRoute(l1, "l1", lo, map[string]float64{"s1": 100, "s2": 100, "s3": 100, "s4": 10}, 20*time.Second)
	})
	t.Run("FRR routers get equal-cost routes", func(t *testing.T) {
		poll(t, f.ctx, 20*time.Second, "l4: 4 equal next hops to 10.10.1.0/24 in its FIB", func() error {
			var v map[string][]struct {
				Installed bool `json:"installed"`
				Nexthops  []struct {
					IP     string `json:"ip"`
					FIB    bool   `json:"fib"`
					Weight int    `json:"weight"`
				} `json:"nexthops"`
			}
			if err := l.VtyshJSON(f.ctx, "l4", "show ip route 10.10.1.0/24 json", &v); err != nil {
				return err
			}
			rs := v["10.10.1.0/24"]
			if len(rs) != 1 || !rs[0].Installed || len(rs[0].Nexthops) != 4 {
				return fmt.Errorf("route: %+v", rs)
			}
			for _, h := range rs[0].Nexthops {
				if !h.FIB || h.Weight != rs[0].Nexthops[0].Weight {
					return fmt.Errorf("next hops not equal and installed: %+v", rs[0].Nexthops)
				}
			}
			return nil
		})
	})
	t.Run("the kernel splits flows by the weights", func(t *testing.T) {
		if _, err := l.Exec(f.ctx, "l1", "sysctl", "-q", "-w", "net.ipv4.fib_multipath_hash_policy=1"); err != nil {
			t.Fatal(err)
		}
		ms, err := f.kernelRoute(l1, "l1", "10.10.2.0/24")
		if err != nil {
			t.Fatal(err)
		}
		const n = 10000
		var flows []fib.Flow
		for i := 0; i < n; i++ {
			flows = append(flows, fib.Flow{Src: l.Node("l1").Loopback, Dst: netip.MustParseAddr("10.10.2.1"), Proto: unix.IPPROTO_UDP,
				Sport: uint16(1024 + i), Dport: uint16(4791 + (i*7919)%50000)})
		}
		gws, err := fib.Lookup(l1, flows)
		if err != nil {
			t.Fatal(err)
		}
		count := map[netip.Addr]int{}
		for _, g := range gws {
			count[g]++
		}
		want := shares(ms)
		for _, m := range ms {
			got := float64(count[m.gw]) / n
			t.Logf("%s via %s: %.2f%% of flows, computed %.2f%%", m.label, m.gw, 100*got, 100*want[m.label])
			if math.Abs(got-want[m.label]) > 0.02 {
				t.Errorf("%s: %.2f%% of flows, want %.2f%% ± 2", m.label, 100*got, 100*want[m.label])
			}
		}
	})
	t.Run("reweight replaces groups in place and touches no route", func(t *testing.T) {
		// l1–s4 from 10G to 20G by config reload (SIGHUP). By hand, the
		// groups of l1 whose weights change (and nothing else):
		//   l2 (10.10.2.0/24 and l2's loopback): 40/50/100/10 → 40/50/100/20
		//   10.10.3.0/24 (PB 20G):               20/20/20/10  → 20/20/20/20
		//   l3's loopback (s3 link 40G):         100/100/40/10 → 100/100/40/20
		//   l4's loopback:                       100/100/100/10 → 100/100/100/20
		// None of the new weight sets equals another group's, so each
		// group must be replaced once, under its id, with no route message.
		before, err := groupIDs(l1)
		if err != nil {
			t.Fatal(err)
		}
		mon := monitor(t, l1)
		setBandwidth(t, l, "l1", "s4", "20G")
		if err := l.KillNode(f.ctx, "l1", syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		lo3, lo4 := l.Node("l3").Loopback.String()+"/32", l.Node("l4").Loopback.String()+"/32"
		f.waitRoute(l1, "l1", "10.10.2.0/24", map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 20}, 20*time.Second)
		f.waitRoute(l1, "l1", "10.10.3.0/24", map[string]float64{"s1": 1, "s2": 1, "s3": 1, "s4": 1}, 10*time.Second)
		f.waitRoute(l1, "l1", lo3, map[string]float64{"s1": 100, "s2": 100, "s3": 40, "s4": 20}, 10*time.Second)
		f.waitRoute(l1, "l1", lo4, map[string]float64{"s1": 100, "s2": 100, "s3": 100, "s4": 20}, 10*time.Second)
		// Let late messages arrive before counting.
		time.Sleep(500 * time.Millisecond)
		nh, rt, ids := mon.stop()
		after, err := groupIDs(l1)
		if err != nil {
			t.Fatal(err)
		}
		if rt != 0 {
			t.Errorf("%d route messages during a reweight, want 0", rt)
		}
		if nh != 4 {
			t.Errorf("%d nexthop messages, want 4 (one per affected group): ids %v", nh, ids)
		}
		for _, id := range ids {
			if !before[id] {
				t.Errorf("nexthop message for id %d, which is not an existing group", id)
			}
		}
		if fmt.Sprint(sortedIDs(before)) != fmt.Sprint(sortedIDs(after)) {
			t.Errorf("group ids changed: %v → %v", sortedIDs(before), sortedIDs(after))
		}
		// And back, by the API this time.
		if out, err := l.Farectl(f.ctx, "l1", "isis", "bandwidth", ifaceToward(l, "l1", "s4"), "10G"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		setBandwidth(t, l, "l1", "s4", "10G")
		f.waitRoute(l1, "l1", "10.10.2.0/24", l2Want, 20*time.Second)
	})

	t.Run("link down drops the nexthop at once, link up restores it", func(t *testing.T) {
		cut := linkIndex(t, l, "l1", "s1")
		if err := l.SetLinkUp(f.ctx, cut, false); err != nil {
			t.Fatal(err)
		}
		// The kernel removes the nexthop with the link; fared's monitor
		// follows. The prefix stays reachable through the others.
		f.waitRoute(l1, "l1", "10.10.2.0/24", map[string]float64{"s2": 50, "s3": 100, "s4": 10}, 2*time.Second)
		if out, err := l.Exec(f.ctx, "l1", "ping", "-c", "1", "-W", "2", "-I", l.Node("l1").Loopback.String(), l.Node("l2").Loopback.String()); err != nil {
			t.Errorf("l2 unreachable with s1 cut: %v\n%s", err, out)
		}
		if err := l.SetLinkUp(f.ctx, cut, true); err != nil {
			t.Fatal(err)
		}
		f.waitRoute(l1, "l1", "10.10.2.0/24", l2Want, 30*time.Second)
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run("restart by "+sig.String()+" keeps forwarding", func(t *testing.T) {
			restartKeepsRoutes(t, f, l1, sig, l2Want)
		})
	}
}

// restartKeepsRoutes stops fared on l1 (SIGTERM or kill -9), starts it
// again, and samples the kernel all along: the route must never vanish,
// and afterwards there must be no stale or duplicate objects.
func restartKeepsRoutes(t *testing.T, f *fabric, l1 netns.NsHandle, sig syscall.Signal, want map[string]float64) {
	var mu sync.Mutex
	var gaps []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if ms, err := f.kernelRoute(l1, "l1", "10.10.2.0/24"); err != nil || len(ms) == 0 {
				mu.Lock()
				gaps = append(gaps, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
				mu.Unlock()
			}
		}
	}()
	if sig == syscall.SIGTERM {
		if err := f.l.StopNode(f.ctx, "l1"); err != nil {
			t.Fatal(err)
		}
	} else if err := f.l.KillNode(f.ctx, "l1", sig); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // fared is down for a while; routes must stay
	if err := f.l.StartNode(f.ctx, "l1"); err != nil {
		t.Fatal(err)
	}
	f.waitRoute(l1, "l1", "10.10.2.0/24", want, 60*time.Second)
	// After convergence the FIB has been synced once: wait for that.
	poll(t, f.ctx, 30*time.Second, "l1: first FIB sync after restart", func() error {
		var v struct {
			FIBError string `json:"fib_error"`
			Log      []any  `json:"log"`
		}
		if err := f.l.FarectlJSON(f.ctx, "l1", &v, "spf", "log"); err != nil {
			return err
		}
		if v.FIBError != "" || len(v.Log) == 0 {
			return fmt.Errorf("not yet: %q", v.FIBError)
		}
		return nil
	})
	close(stop)
	<-done
	if len(gaps) > 0 {
		t.Errorf("route 10.10.2.0/24 missing from the kernel during the restart: %v", gaps)
	}
	// No stale routes: the kernel holds exactly the routes fared computed;
	// no duplicate nexthop objects.
	var computed []struct {
		Prefix netip.Prefix `json:"prefix"`
	}
	if err := f.l.FarectlJSON(f.ctx, "l1", &computed, "route"); err != nil {
		t.Fatal(err)
	}
	routes, nhs, err := fib.Dump(l1, unix.RTPROT_ISIS)
	if err != nil {
		t.Fatal(err)
	}
	var want1, got []string
	for _, r := range computed {
		want1 = append(want1, r.Prefix.String())
	}
	for _, r := range routes {
		got = append(got, r.Prefix.String())
	}
	sort.Strings(want1)
	sort.Strings(got)
	if strings.Join(want1, " ") != strings.Join(got, " ") {
		t.Errorf("kernel routes differ from computed ones:\n kernel   %v\n computed %v", got, want1)
	}
	seen := map[string]uint32{}
	for _, n := range nhs {
		if len(n.Group) > 0 {
			continue
		}
		k := fmt.Sprintf("%s@%d", n.Gateway, n.IfIndex)
		if id, dup := seen[k]; dup {
			t.Errorf("duplicate nexthop objects %d and %d for %s", id, n.ID, k)
		}
		seen[k] = n.ID
	}
}

func ifaceToward(l *interop.Lab, node, peer string) string {
	for _, i := range l.Node(node).Interfaces {
		if i.Peer == peer {
			return i.Name
		}
	}
	return ""
}

func linkIndex(t *testing.T, l *interop.Lab, a, b string) int {
	for _, lk := range l.Links {
		if (lk.A == a && lk.B == b) || (lk.A == b && lk.B == a) {
			return lk.Index
		}
	}
	t.Fatalf("no link %s–%s", a, b)
	return -1
}

// setBandwidth rewrites node's fared.yaml: the interface toward peer gets
// bandwidth bw. The daemon reads it on SIGHUP.
func setBandwidth(t *testing.T, l *interop.Lab, node, peer, bw string) {
	t.Helper()
	ifname := ifaceToward(l, node, peer)
	rewriteFared(t, l, node, "bandwidth for interface "+ifname, func(m *yaml.Node) bool {
		name, bwNode := yget(m, "name"), yget(m, "bandwidth")
		if name == nil || name.Value != ifname || bwNode == nil {
			return false
		}
		bwNode.Value = bw
		return true
	})
}

func groupIDs(ns netns.NsHandle) (map[uint32]bool, error) {
	_, nhs, err := fib.Dump(ns, unix.RTPROT_ISIS)
	if err != nil {
		return nil, err
	}
	m := map[uint32]bool{}
	for _, n := range nhs {
		if len(n.Group) > 0 {
			m[n.ID] = true
		}
	}
	return m, nil
}

func sortedIDs(m map[uint32]bool) []uint32 {
	var out []uint32
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// nlMonitor counts the kernel's nexthop and IPv4 route notifications in a
// namespace.
type nlMonitor struct {
	s    *nl.NetlinkSocket
	mu   sync.Mutex
	nh   int
	rt   int
	ids  []uint32
	done chan struct{}
}

func monitor(t *testing.T, ns netns.NsHandle) *nlMonitor {
	t.Helper()
	s, err := nl.SubscribeAt(ns, netns.None(), unix.NETLINK_ROUTE, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_NEXTHOP)
	if err != nil {
		t.Fatal(err)
	}
	m := &nlMonitor{s: s, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			msgs, _, err := s.Receive()
			if err != nil {
				return
			}
			m.mu.Lock()
			for _, msg := range msgs {
				switch msg.Header.Type {
				case unix.RTM_NEWNEXTHOP, unix.RTM_DELNEXTHOP:
					m.nh++
					// struct nhmsg is 8 bytes; NHA_ID is the first attribute.
					if attrs, err := nl.ParseRouteAttr(msg.Data[8:]); err == nil {
						for _, a := range attrs {
							if a.Attr.Type == 1 && len(a.Value) == 4 {
								m.ids = append(m.ids, nl.NativeEndian().Uint32(a.Value))
							}
						}
					}
				case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
					m.rt++
				}
			}
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() { m.s.Close() })
	return m
}

func (m *nlMonitor) stop() (nh, rt int, ids []uint32) {
	m.s.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nh, m.rt, m.ids
}
