// Package kernwatch reads what a router under test wrote into its kernel: a
// read-back of routes and nexthop objects (through fib.Dump), resolved to
// next-hop sets by interface name so that two namespaces compare, and a
// netlink watcher that timestamps every route and nexthop change so a
// benchmark can tell when the kernel first held the final table without
// polling the router (and a lab test when a nexthop group shrank). The
// side-by-side benchmarks (bench/) and the interop scenarios share it.
package kernwatch

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/nsenter"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RTPROT_ISIS: both zebra (for isisd) and fared install IS-IS routes with it.
const ProtoISIS = unix.RTPROT_ISIS

// Hop is one next hop: gateway and interface name.
type Hop struct {
	Gateway netip.Addr
	Dev     string
}

func (h Hop) String() string { return h.Gateway.String() + "@" + h.Dev }

// Hops is a sorted next-hop set.
type Hops []Hop

func (h Hops) String() string {
	s := make([]string, len(h))
	for i, x := range h {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

// Sort sorts a next-hop set by gateway, then interface, without duplicates.
func Sort(h Hops) Hops {
	slices.SortFunc(h, func(a, b Hop) int {
		if c := a.Gateway.Compare(b.Gateway); c != 0 {
			return c
		}
		return strings.Compare(a.Dev, b.Dev)
	})
	return slices.Compact(h)
}

// Table is the IS-IS part of a kernel's main table, resolved.
type Table struct {
	Routes map[netip.Prefix]Hops
	// Weights holds each route's member weights in Hops order (1 for
	// routes without a group).
	Weights map[netip.Prefix][]uint32
	// NexthopObjects counts the nexthop objects the IS-IS routes use
	// (singles and groups, each once).
	NexthopObjects int
	// Groups counts the distinct groups among them.
	Groups int
}

// Read dumps the kernel of the namespace at nsPath and resolves every
// IS-IS route of the main table to its next-hop set.
func Read(nsPath string) (*Table, error) {
	h, names, err := open(nsPath)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	routes, nhs, err := fib.Dump(h, 0)
	if err != nil {
		return nil, err
	}
	byID := map[uint32]fib.KernelNexthop{}
	for _, n := range nhs {
		byID[n.ID] = n
	}
	t := &Table{Routes: map[netip.Prefix]Hops{}, Weights: map[netip.Prefix][]uint32{}}
	used := map[uint32]bool{}
	for _, r := range routes {
		if r.Protocol != ProtoISIS || r.Table != unix.RT_TABLE_MAIN {
			continue
		}
		var hops Hops
		var ws []uint32
		if r.NhID != 0 {
			n, ok := byID[r.NhID]
			if !ok {
				return nil, fmt.Errorf("route %s: nexthop %d not in the dump", r.Prefix, r.NhID)
			}
			used[r.NhID] = true
			if len(n.Group) == 0 {
				hops, ws = Hops{{n.Gateway, names[n.IfIndex]}}, []uint32{1}
			}
			for _, m := range n.Group {
				x, ok := byID[m.ID]
				if !ok {
					return nil, fmt.Errorf("route %s: group %d member %d not in the dump", r.Prefix, n.ID, m.ID)
				}
				used[m.ID] = true
				hops = append(hops, Hop{x.Gateway, names[x.IfIndex]})
				ws = append(ws, m.Weight)
			}
		} else {
			for _, p := range r.Paths {
				hops = append(hops, Hop{p.Gateway, names[p.IfIndex]})
				ws = append(ws, p.Weight)
			}
		}
		// Weights follow the sorted order of the hops.
		idx := make([]int, len(hops))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			if c := hops[idx[a]].Gateway.Compare(hops[idx[b]].Gateway); c != 0 {
				return c < 0
			}
			return hops[idx[a]].Dev < hops[idx[b]].Dev
		})
		sh, sw := make(Hops, len(hops)), make([]uint32, len(hops))
		for i, j := range idx {
			sh[i], sw[i] = hops[j], ws[j]
		}
		t.Routes[r.Prefix], t.Weights[r.Prefix] = sh, sw
	}
	for id := range used {
		t.NexthopObjects++
		if len(byID[id].Group) > 0 {
			t.Groups++
		}
	}
	return t, nil
}

// open opens the namespace at nsPath and reads its interface names by
// index (the caller closes the handle).
func open(nsPath string) (netns.NsHandle, map[int]string, error) {
	h, err := netns.GetFromPath(nsPath)
	if err != nil {
		return h, nil, err
	}
	names, err := IfNames(h)
	if err != nil {
		h.Close()
		return h, nil, err
	}
	return h, names, nil
}

// IfNames maps the interface indexes of a namespace to their names.
func IfNames(ns netns.NsHandle) (map[int]string, error) {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	m := map[int]string{}
	for _, l := range links {
		m[l.Attrs().Index] = l.Attrs().Name
	}
	return m, nil
}

// Diff lists the prefixes whose next-hop sets differ between two tables
// (or that only one has), at most max of them.
func Diff(a, b map[netip.Prefix]Hops, max int) []string {
	var out []string
	keys := map[netip.Prefix]bool{}
	for p := range a {
		keys[p] = true
	}
	for p := range b {
		keys[p] = true
	}
	sorted := make([]netip.Prefix, 0, len(keys))
	for p := range keys {
		sorted = append(sorted, p)
	}
	slices.SortFunc(sorted, func(x, y netip.Prefix) int { return x.Addr().Compare(y.Addr()) })
	for _, p := range sorted {
		x, okx := a[p]
		y, oky := b[p]
		switch {
		case !okx:
			out = append(out, fmt.Sprintf("%s: only in the second (%s)", p, y))
		case !oky:
			out = append(out, fmt.Sprintf("%s: only in the first (%s)", p, x))
		case x.String() != y.String():
			out = append(out, fmt.Sprintf("%s: %s vs %s", p, x, y))
		default:
			continue
		}
		if len(out) >= max {
			break
		}
	}
	return out
}

// Event is one kernel change seen by a Watcher.
type Event struct {
	At      time.Time
	Del     bool
	Route   *fib.KernelRoute   // route add/replace/delete, or nil
	Nexthop *fib.KernelNexthop // nexthop add/replace/delete, or nil
}

// Watcher records route and nexthop notifications of one namespace.
type Watcher struct {
	fd    int
	names map[int]string
	mu    sync.Mutex
	ev    []Event
	err   error
	done  chan struct{}
}

// Watch subscribes to IPv4 route and nexthop notifications in the
// namespace at nsPath. The socket buffer is large so that a burst of
// thousands of routes is not lost (an overrun is reported by Stop).
func Watch(nsPath string) (*Watcher, error) {
	h, names, err := open(nsPath)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var fd int
	err = nsenter.Do(h, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kernwatch: netlink socket: %w", err)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 64<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	for _, g := range []int{unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_NEXTHOP} {
		if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, g); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("kernwatch: join group %d: %w", g, err)
		}
	}
	w := &Watcher{fd: fd, names: names, done: make(chan struct{})}
	go w.read()
	return w, nil
}

func (w *Watcher) read() {
	defer close(w.done)
	buf := make([]byte, 1<<20)
	for {
		n, _, err := unix.Recvfrom(w.fd, buf, 0)
		at := time.Now()
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.ENOBUFS) {
				w.mu.Lock()
				w.err = errors.New("kernwatch: netlink notifications lost (ENOBUFS)")
				w.mu.Unlock()
				continue
			}
			return // closed
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			continue
		}
		var evs []Event
		for _, m := range msgs {
			if e, ok := parseEvent(m.Header.Type, m.Data); ok {
				e.At = at
				evs = append(evs, e)
			}
		}
		w.mu.Lock()
		w.ev = append(w.ev, evs...)
		w.mu.Unlock()
	}
}

// Events returns a copy of the events so far and the first error.
func (w *Watcher) Events() ([]Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.ev), w.err
}

// Stop closes the socket.
func (w *Watcher) Stop() {
	// shutdown wakes the blocked recvfrom; close alone does not.
	_ = unix.Shutdown(w.fd, unix.SHUT_RDWR)
	unix.Close(w.fd)
	select {
	case <-w.done:
	case <-time.After(2 * time.Second):
	}
}

// parseEvent reads a notification with fib's own decoders.
func parseEvent(typ uint16, p []byte) (Event, bool) {
	switch typ {
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		r, ok, err := fib.ParseRoute(p)
		if err != nil || !ok {
			return Event{}, false
		}
		return Event{Del: typ == unix.RTM_DELROUTE, Route: &r}, true
	case unix.RTM_NEWNEXTHOP, unix.RTM_DELNEXTHOP:
		n, err := fib.ParseNexthop(p)
		if err != nil {
			return Event{}, false
		}
		return Event{Del: typ == unix.RTM_DELNEXTHOP, Nexthop: &n}, true
	}
	return Event{}, false
}

// Reached replays the events in order and returns the time of the first
// event after which every prefix of want resolved to exactly want's
// next-hop set and stayed so until the last event. ok is false if the
// events never reach want (or leave it again). Extra IS-IS prefixes
// beyond want do not matter.
func (w *Watcher) Reached(want map[netip.Prefix]Hops, after time.Time) (at time.Time, ok bool) {
	evs, _ := w.Events()
	m := newModel(w.names, want)
	reached := time.Time{}
	for _, e := range evs {
		m.apply(e)
		if e.At.Before(after) {
			continue
		}
		good := m.good == len(want)
		switch {
		case good && reached.IsZero():
			reached = e.At
		case !good:
			reached = time.Time{}
		}
	}
	return reached, !reached.IsZero()
}

// LastChange returns the time of the last event at or after after that
// touched an IS-IS route or any nexthop, and how many such events there
// were.
func (w *Watcher) LastChange(after time.Time) (time.Time, int) {
	evs, _ := w.Events()
	var last time.Time
	n := 0
	for _, e := range evs {
		if e.At.Before(after) {
			continue
		}
		if e.Route != nil && e.Route.Protocol != ProtoISIS {
			continue
		}
		last = e.At
		n++
	}
	return last, n
}

// FirstChange returns the time of the first such event at or after after.
func (w *Watcher) FirstChange(after time.Time) time.Time {
	evs, _ := w.Events()
	for _, e := range evs {
		if e.At.Before(after) || (e.Route != nil && e.Route.Protocol != ProtoISIS) {
			continue
		}
		return e.At
	}
	return time.Time{}
}

// model is the kernel's IS-IS routes and all nexthops, as events build
// it, with a running count of the wanted prefixes that resolve to their
// wanted next-hop set (recomputed only for the routes an event touches).
type model struct {
	names    map[int]string
	want     map[netip.Prefix]Hops
	routes   map[netip.Prefix]*fib.KernelRoute
	nhs      map[uint32]*fib.KernelNexthop
	refs     map[uint32]map[netip.Prefix]bool // nexthop id -> routes using it
	memberOf map[uint32]map[uint32]bool       // nexthop id -> groups holding it
	ok       map[netip.Prefix]bool
	good     int
}

func newModel(names map[int]string, want map[netip.Prefix]Hops) *model {
	return &model{names: names, want: want, routes: map[netip.Prefix]*fib.KernelRoute{}, nhs: map[uint32]*fib.KernelNexthop{},
		refs: map[uint32]map[netip.Prefix]bool{}, memberOf: map[uint32]map[uint32]bool{}, ok: map[netip.Prefix]bool{}}
}

func addRef[K comparable, V comparable](m map[K]map[V]bool, k K, v V) {
	s := m[k]
	if s == nil {
		s = map[V]bool{}
		m[k] = s
	}
	s[v] = true
}

func (m *model) apply(e Event) {
	switch {
	case e.Route != nil:
		r := e.Route
		if r.Protocol != ProtoISIS || r.Table != unix.RT_TABLE_MAIN {
			return
		}
		if old := m.routes[r.Prefix]; old != nil && old.NhID != 0 {
			delete(m.refs[old.NhID], r.Prefix)
		}
		if e.Del {
			delete(m.routes, r.Prefix)
		} else {
			m.routes[r.Prefix] = r
			if r.NhID != 0 {
				addRef(m.refs, r.NhID, r.Prefix)
			}
		}
		m.check(r.Prefix)
	case e.Nexthop != nil:
		n := e.Nexthop
		if old := m.nhs[n.ID]; old != nil {
			for _, g := range old.Group {
				delete(m.memberOf[g.ID], n.ID)
			}
		}
		if e.Del {
			delete(m.nhs, n.ID)
		} else {
			m.nhs[n.ID] = n
			for _, g := range n.Group {
				addRef(m.memberOf, g.ID, n.ID)
			}
		}
		for p := range m.refs[n.ID] {
			m.check(p)
		}
		for g := range m.memberOf[n.ID] {
			for p := range m.refs[g] {
				m.check(p)
			}
		}
	}
}

func (m *model) check(p netip.Prefix) {
	h, wanted := m.want[p]
	if !wanted {
		return
	}
	good := false
	if r := m.routes[p]; r != nil {
		if got, ok := m.hops(r); ok && len(got) == len(h) {
			good = true
			for i := range got {
				if got[i] != h[i] {
					good = false
					break
				}
			}
		}
	}
	if good != m.ok[p] {
		m.ok[p] = good
		if good {
			m.good++
		} else {
			m.good--
		}
	}
}

func (m *model) hops(r *fib.KernelRoute) (Hops, bool) {
	var out Hops
	if r.NhID != 0 {
		n := m.nhs[r.NhID]
		if n == nil {
			return nil, false
		}
		if len(n.Group) == 0 {
			return Hops{{n.Gateway, m.names[n.IfIndex]}}, true
		}
		for _, g := range n.Group {
			x := m.nhs[g.ID]
			if x == nil {
				return nil, false
			}
			out = append(out, Hop{x.Gateway, m.names[x.IfIndex]})
		}
		return Sort(out), true
	}
	for _, p := range r.Paths {
		out = append(out, Hop{p.Gateway, m.names[p.IfIndex]})
	}
	return Sort(out), true
}
