package fib

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/internal/nlmsg"

	"github.com/fared/fared/api/wire"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NextHop is one weighted next hop of a route.
type NextHop struct {
	Gateway netip.Addr // invalid (zero) = directly connected over IfIndex
	IfIndex int        // required
	Weight  uint32     // 1..; only ratios matter
}

// Route is the desired state of one prefix. One next hop is written as a
// plain nexthop object, several as a group.
type Route struct {
	Prefix   netip.Prefix
	NextHops []NextHop
}

// Config of a FIB. Zero values take the defaults shown.
type Config struct {
	Protocol  uint8      // route and nexthop protocol; default RTPROT_ISIS (187)
	Metric    uint32     // route priority; default 20
	Table     int        // default main (254)
	Resilient *Resilient // nil = hash-threshold (mpath) groups
	// KeepOnShutdown leaves routes and nexthops in the kernel on Close,
	// so a restarting daemon forwards without a gap (see Adopt).
	KeepOnShutdown bool
	// IDBase..IDBase+IDCount-1 are the nexthop ids this FIB allocates.
	// Objects in that range with our Protocol are ours on restart.
	// Defaults 0x0FA0_0000 and 1<<20.
	IDBase  uint32
	IDCount uint32
	// NetNS is the namespace to program (tests); 0 = current.
	NetNS netns.NsHandle
	// Logger gets one line per route conflict (nil = slog.Default()).
	Logger *slog.Logger

	// forceMultipath selects the RTA_MULTIPATH fallback on any kernel
	// (tests of the code path old kernels take).
	forceMultipath bool
}

// Stats counts what one Sync changed. Messages is the number of netlink
// requests sent (the cost of the Sync).
type Stats = wire.FIBStats

// plusStats adds the work of a second pass to s (RoutesUnresolved and the
// conflicts are state, taken from the later pass).
func plusStats(s, o Stats) Stats {
	s.RoutesAdded += o.RoutesAdded
	s.RoutesReplaced += o.RoutesReplaced
	s.RoutesDeleted += o.RoutesDeleted
	s.GroupsAdded += o.GroupsAdded
	s.GroupsReplaced += o.GroupsReplaced
	s.GroupsDeleted += o.GroupsDeleted
	s.NexthopsAdded += o.NexthopsAdded
	s.NexthopsDeleted += o.NexthopsDeleted
	s.RoutesUnresolved = o.RoutesUnresolved
	return s
}

// nhKey identifies a single nexthop object. fam is the nexthop's own
// family (that of the gateway, or of the route for device nexthops).
type nhKey struct {
	fam     uint8
	gw      netip.Addr
	ifindex int
}

func (k nhKey) String() string {
	if k.gw.IsValid() {
		return fmt.Sprintf("via %s dev #%d", k.gw, k.ifindex)
	}
	return fmt.Sprintf("dev #%d (%s)", k.ifindex, famName(k.fam))
}

func famName(f uint8) string {
	if f == unix.AF_INET6 {
		return "inet6"
	}
	return "inet"
}

func cmpKey(a, b nhKey) int {
	if c := cmp.Compare(a.fam, b.fam); c != 0 {
		return c
	}
	if c := a.gw.Compare(b.gw); c != 0 {
		return c
	}
	return cmp.Compare(a.ifindex, b.ifindex)
}

type nhObj struct {
	id      uint32
	key     nhKey
	indexed bool // the one object for key in nhByKey (adoption may find duplicates)
}

type group struct {
	id      uint32
	members []GroupMember // sorted by id
	key     string
	indexed bool // usable for new routes: in grpByKey, type/buckets match Config
	refs    int  // routes referencing it
}

type routeEnt struct {
	nh  uint32 // nexthop or group id; 0 = adopted route that is not ours to keep as is
	gen uint64 // last Sync that wanted it; older ones are deleted
	sig string // RTA_MULTIPATH fallback: the installed paths
}

// FIB owns a set of routes and nexthop objects in one kernel namespace.
// Its methods are safe for concurrent use.
type FIB struct {
	cfg  Config
	caps Capabilities
	log  *slog.Logger

	mu       sync.Mutex
	c        *conn
	h        *netlink.Handle // RTA_MULTIPATH fallback only
	adopted  bool
	nhs      map[uint32]*nhObj
	nhByKey  map[nhKey]*nhObj
	groups   map[uint32]*group
	grpByKey map[string]*group
	routes   map[netip.Prefix]*routeEnt
	// conflicts: prefixes wanted but held by another protocol's route.
	conflicts map[netip.Prefix]*conflictEnt
	stale     []nlmsg.RouteKey    // our routes with another metric (old config)
	ids       map[uint32]struct{} // allocated or reserved ids in our range
	cursor    uint32
	down      map[int]bool
	nbrDown   map[nhKey]bool // neighbours taken out by NeighborDown (neighbor.go)
	gen       uint64         // Sync generation
}

const (
	defaultIDBase  = 0x0FA0_0000
	defaultIDCount = 1 << 20
	defaultBuckets = 128
)

// withDefaults fills the zero fields.
func (cfg Config) withDefaults() Config {
	if cfg.Protocol == 0 {
		cfg.Protocol = unix.RTPROT_ISIS
	}
	if cfg.Metric == 0 {
		cfg.Metric = 20
	}
	if cfg.Table == 0 {
		cfg.Table = unix.RT_TABLE_MAIN
	}
	if cfg.IDBase == 0 {
		cfg.IDBase = defaultIDBase
	}
	if cfg.IDCount == 0 {
		cfg.IDCount = defaultIDCount
	}
	return cfg
}

// Open connects to the kernel, probes it and returns an empty FIB. Call
// Adopt before the first Sync to take over what a previous run left;
// Sync adopts by itself if Adopt was not called.
func Open(cfg Config) (*FIB, error) {
	cfg = cfg.withDefaults()
	if uint64(cfg.IDBase)+uint64(cfg.IDCount) > probeIDs {
		return nil, fmt.Errorf("fib: id range %#x+%#x overlaps the probe ids at %#x", cfg.IDBase, cfg.IDCount, probeIDs)
	}
	if cfg.Resilient != nil {
		r := *cfg.Resilient
		if r.Buckets == 0 {
			r.Buckets = defaultBuckets
		}
		cfg.Resilient = &r
	}
	c, err := dial(cfg.NetNS)
	if err != nil {
		return nil, err
	}
	caps, err := c.probe()
	if err != nil {
		c.close()
		return nil, err
	}
	if cfg.forceMultipath {
		caps = Capabilities{}
	}
	if cfg.Resilient != nil && !caps.Resilient {
		c.close()
		return nil, errors.New("fib: resilient groups requested but the kernel has none")
	}
	f := &FIB{cfg: cfg, caps: caps, c: c, down: map[int]bool{}, log: cfg.Logger}
	if f.log == nil {
		f.log = slog.Default()
	}
	if !caps.NexthopObjects {
		if f.h, err = netlink.NewHandleAt(netif.Namespace(cfg.NetNS)); err != nil {
			c.close()
			return nil, fmt.Errorf("fib: netlink handle: %w", err)
		}
	}
	f.reset()
	return f, nil
}

func (f *FIB) reset() {
	f.nhs = map[uint32]*nhObj{}
	f.nhByKey = map[nhKey]*nhObj{}
	f.groups = map[uint32]*group{}
	f.grpByKey = map[string]*group{}
	f.routes = map[netip.Prefix]*routeEnt{}
	f.conflicts = map[netip.Prefix]*conflictEnt{}
	f.stale = nil
	f.ids = map[uint32]struct{}{}
	f.cursor = f.cfg.IDBase
}

// Capabilities returns what Open probed. Without nexthop objects the FIB
// writes RTA_MULTIPATH routes instead.
func (f *FIB) Capabilities() Capabilities { return f.caps }

func (f *FIB) weightLimit() uint32 {
	if f.caps.Weight16 {
		return nlmsg.MaxWeight16
	}
	return nlmsg.MaxWeight8
}

func (f *FIB) ours(id uint32) bool { return f.cfg.Owned(id) }

// alloc returns the next free id of our range, round robin so a just
// freed id is not reused at once (a late reader of an old dump must not
// mistake a new object for the old one).
func (f *FIB) alloc() (uint32, error) {
	for range f.cfg.IDCount {
		id := f.cursor
		f.cursor++
		if !f.ours(f.cursor) {
			f.cursor = f.cfg.IDBase
		}
		if _, used := f.ids[id]; !used {
			f.ids[id] = struct{}{}
			return id, nil
		}
	}
	return 0, fmt.Errorf("fib: all %d nexthop ids from %#x in use", f.cfg.IDCount, f.cfg.IDBase)
}

func (f *FIB) free(id uint32) { delete(f.ids, id) }

func (f *FIB) hdr(p netip.Prefix) nlmsg.RouteKey {
	return nlmsg.RouteKey{Prefix: p, Table: f.cfg.Table, Protocol: f.cfg.Protocol, Metric: f.cfg.Metric}
}

// groupKey is the content key of a group: its members (sorted by id)
// with their weights, 8 raw bytes each.
func groupKey(ms []GroupMember) string { return string(appendGroupKey(nil, ms)) }

func appendGroupKey(b []byte, ms []GroupMember) []byte {
	for _, m := range ms {
		b = binary.LittleEndian.AppendUint32(b, m.ID)
		b = binary.LittleEndian.AppendUint32(b, m.Weight)
	}
	return b
}

func sortMembers(ms []GroupMember) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j-1].ID > ms[j].ID; j-- {
			ms[j-1], ms[j] = ms[j], ms[j-1]
		}
	}
}

func groupString(id uint32, ms []GroupMember) string {
	var b strings.Builder
	fmt.Fprintf(&b, "group %#x [", id)
	for i, m := range ms {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%#x w%d", m.ID, m.Weight)
	}
	b.WriteString("]")
	return b.String()
}

// indexGroup files g under its content key (computed from its members
// if not given).
func (f *FIB) indexGroup(g *group, key string) {
	if key == "" {
		key = groupKey(g.members)
	}
	g.key = key
	g.indexed = false
	if _, dup := f.grpByKey[g.key]; !dup {
		f.grpByKey[g.key] = g
		g.indexed = true
	}
}

func (f *FIB) unindexGroup(g *group) {
	if g.indexed && f.grpByKey[g.key] == g {
		delete(f.grpByKey, g.key)
	}
	g.indexed = false
}

// want is a validated, normalised desired route.
type want struct {
	prefix netip.Prefix
	set    *hopSet
	cur    *routeEnt
	target uint32 // nexthop or group id to install; 0 = none
}

// hopSet is the normalised next hops of one route or of many: routes
// with equal next hops share one (normalise), so a Sync resolves their
// objects (step 1) and decides their group (step 2) once per set. A
// fabric's 100,000 routes have a few hundred sets.
type hopSet struct {
	keys    []nhKey  // sorted, unique
	weights []uint32 // reduced
	ids     []uint32 // the nexthop object of each key (syncObjects, step 1)
	// Step 2's decision when every member exists: the group the routes
	// use, or else the content they wait for (neither: not decided yet).
	group   *group
	content *content
}

// The memo of next-hop sets pays for itself only when sets repeat: a
// fabric has a few hundred distinct sets (one per group) over many
// routes, and memoCap bounds it. A table whose sets do not repeat
// (every leaf of a 3-stage fabric has its own weights) turns it off
// after memoTrial misses if fewer than a quarter as many hits came.
const (
	memoCap   = 4096
	memoTrial = 256
)

// hopsHash is the memo's key for a route's next hops; collisions are
// told apart by comparing the hops themselves, so it only has to be
// cheap: interfaces and weights, one multiply per next hop. Gateways
// are left out (netip.Addr.As16 cost more than the rest together) but
// for the first: on a LAN several gateways share an interface, and sets
// differing only there just miss the memo.
func hopsHash(fam uint8, hs []NextHop) uint64 {
	a := hs[0].Gateway.As16()
	h := uint64(fam)<<56 ^ uint64(len(hs)) ^ ne.Uint64(a[:8]) ^ bits.RotateLeft64(ne.Uint64(a[8:]), 21)
	for i := range hs {
		x := uint64(hs[i].IfIndex)<<32 ^ uint64(hs[i].Weight)
		h = bits.RotateLeft64((h^x)*0x9e3779b97f4a7c15, 31)
	}
	return h
}

// sameHops is slices.Equal for next hops, field by field: the generic
// == of the struct calls memequal per element, which was 40% of
// normalise on a 5-stage leaf's table (16 next hops per route).
func sameHops(a, b []NextHop) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i].IfIndex != b[i].IfIndex || a[i].Weight != b[i].Weight || a[i].Gateway != b[i].Gateway {
			return false
		}
	}
	return true
}

// sameGateways reports whether a and b name the same next hops in the
// same order, whatever their weights (a weight of 0 is an error the
// slow path reports).
func sameGateways(a, b []NextHop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].IfIndex != b[i].IfIndex || a[i].Weight == 0 || a[i].Gateway != b[i].Gateway {
			return false
		}
	}
	return true
}

// sameKeys is slices.Equal for keys, field by field, and at once for
// the same slice.
func sameKeys(a, b []nhKey) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if !sameKey(a[i], b[i]) {
			return false
		}
	}
	return true
}

// normalise validates every route before anything is written: a bad
// input must not leave the kernel half-synced. It is on the hot path of
// a full-table Sync (100k routes), hence slabs instead of per-route maps.
func (f *FIB) normalise(routes []Route) ([]want, error) {
	var errs []error
	out := make([]want, 0, len(routes))
	total := 0
	for i := range routes {
		total += len(routes[i].NextHops)
	}
	// Keys and weights live in slabs allocated as needed: routes that
	// share the next hops of the route before take no room.
	slab := min(total, 256)
	var keySlab []nhKey
	var wSlab []uint32
	limit := f.weightLimit()
	var named map[nhKey]bool // down neighbours the routes still name
	if len(f.nbrDown) > 0 {
		named = map[nhKey]bool{}
	}
	// A fabric's routes come in runs with the same next hops and weights
	// (every leaf of a pod, seen from another pod): a route whose next
	// hops equal the last good route's shares its keys and weights.
	var prevHops []NextHop
	var prevFam uint8
	// Routes that share next hops without being neighbours (prefixes
	// listed in address order, their groups interleaved) find the first
	// such route's set here by a hash of their hops.
	type memoEnt struct {
		hops []NextHop
		fam  uint8
		set  *hopSet
	}
	memo := map[uint64]memoEnt{}
	hits, misses := 0, 0
	remember := func(h uint64, hops []NextHop, fam uint8, set *hopSet) {
		if len(memo) >= memoCap {
			return
		}
		misses++
		if _, taken := memo[h]; !taken {
			memo[h] = memoEnt{hops: hops, fam: fam, set: set}
		}
	}
	var sets []hopSet // slab
	// The set built last, and whether its keys are its route's hops in
	// order (none dropped, merged or moved): a route with the same
	// gateways and interfaces but other weights (every leaf of a 3-stage
	// fabric, weighted by FARE) then takes those keys and only needs its
	// weights.
	var lastRaw []NextHop
	var lastSet *hopSet
	var lastFam uint8
	newSet := func(hs hopSet) *hopSet {
		if len(sets) == cap(sets) {
			sets = make([]hopSet, 0, min(len(routes), 256))
		}
		sets = append(sets, hs)
		return &sets[len(sets)-1]
	}
	for _, r := range routes {
		p := r.Prefix
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("fib: invalid prefix %v", r.Prefix))
			continue
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		p = p.Masked()
		fam := nlmsg.Family(p.Addr())
		if prevHops != nil && fam == prevFam && sameHops(r.NextHops, prevHops) {
			w := out[len(out)-1]
			w.prefix = p
			out = append(out, w)
			continue
		}
		prevHops = nil
		var h uint64
		useMemo := len(r.NextHops) > 1 && (misses < memoTrial || 4*hits >= misses)
		if useMemo {
			h = hopsHash(fam, r.NextHops)
			if m, ok := memo[h]; ok && m.fam == fam && sameHops(m.hops, r.NextHops) {
				hits++
				out = append(out, want{prefix: p, set: m.set})
				prevHops, prevFam = r.NextHops, fam
				continue
			}
		}
		if n := len(r.NextHops); cap(keySlab)-len(keySlab) < n || cap(wSlab)-len(wSlab) < n {
			keySlab, wSlab = make([]nhKey, 0, max(n, slab)), make([]uint32, 0, max(n, slab))
			slab = min(2*slab, 4096) // most tables have few distinct sets
		}
		if lastSet != nil && fam == lastFam && sameGateways(r.NextHops, lastRaw) {
			w0 := len(wSlab)
			for _, nh := range r.NextHops {
				wSlab = append(wSlab, nh.Weight)
			}
			set := newSet(hopSet{keys: lastSet.keys, weights: wSlab[w0:len(wSlab):len(wSlab)]})
			reduceInPlace(set.weights, limit)
			out = append(out, want{prefix: p, set: set})
			prevHops, prevFam, lastRaw, lastSet = r.NextHops, fam, r.NextHops, set
			if useMemo {
				remember(h, r.NextHops, fam, set)
			}
			continue
		}
		lastSet = nil
		k0, w0 := len(keySlab), len(wSlab)
		bad := false
		for _, nh := range r.NextHops {
			gw := nh.Gateway.Unmap()
			switch {
			case nh.Weight == 0:
				errs = append(errs, fmt.Errorf("fib: route %s: next hop %v dev #%d: weight 0 (weights start at 1)", p, nh.Gateway, nh.IfIndex))
				bad = true
				continue
			case nh.IfIndex <= 0:
				errs = append(errs, fmt.Errorf("fib: route %s: next hop %v: no interface index", p, nh.Gateway))
				bad = true
				continue
			case fam == unix.AF_INET6 && gw.Is4():
				errs = append(errs, fmt.Errorf("fib: route %s: IPv4 gateway %s for an IPv6 prefix", p, gw))
				bad = true
				continue
			}
			if len(f.down) > 0 && f.down[nh.IfIndex] {
				continue // the kernel refuses nexthops on a down link
			}
			k := nhKey{fam: fam, gw: gw, ifindex: nh.IfIndex}
			if gw.IsValid() {
				k.fam = nlmsg.Family(gw) // IPv4 over an IPv6 gateway (RFC 5549)
			}
			keySlab = append(keySlab, k)
			wSlab = append(wSlab, nh.Weight)
		}
		if bad {
			keySlab, wSlab = keySlab[:k0], wSlab[:w0]
			continue
		}
		// Sorted, and the same gateway twice is one path with the summed
		// weight. The rib's next hops mostly come sorted already: one
		// pass then, where a search for duplicates cost k² compares (16
		// next hops at a 5-stage leaf: 120 per route).
		n, moved := sortMerge(keySlab[k0:], wSlab[w0:])
		keySlab, wSlab = keySlab[:k0+n], wSlab[:w0+n]
		set := newSet(hopSet{keys: keySlab[k0:len(keySlab):len(keySlab)], weights: wSlab[w0:len(wSlab):len(wSlab)]})
		if len(f.nbrDown) > 0 {
			set.keys, set.weights = f.withoutDownNeighbors(set.keys, set.weights, named)
		}
		reduceInPlace(set.weights, limit)
		if !moved && len(set.keys) == len(r.NextHops) && len(set.keys) > 0 {
			lastRaw, lastSet, lastFam = r.NextHops, set, fam
		}
		out = append(out, want{prefix: p, set: set})
		if len(r.NextHops) > 0 {
			prevHops, prevFam = r.NextHops, fam
		}
		if useMemo {
			remember(h, r.NextHops, fam, set)
		}
	}
	// The rib hands its routes over sorted already.
	if !slices.IsSortedFunc(out, cmpWant) {
		slices.SortFunc(out, cmpWant)
	}
	// Duplicates are neighbours once sorted: cheaper than a set of 100k.
	for i := 1; i < len(out); i++ {
		if out[i].prefix == out[i-1].prefix && (i == 1 || out[i-2].prefix != out[i].prefix) {
			errs = append(errs, fmt.Errorf("fib: route %s given twice", out[i].prefix))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(f.nbrDown) > 0 {
		f.expireNeighborMarks(named)
	}
	return out, nil
}

func cmpWant(a, b want) int {
	if c := a.prefix.Addr().Compare(b.prefix.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.prefix.Bits(), b.prefix.Bits())
}

// sortMerge sorts the (few) next hops of one route by key with an
// insertion sort, weights aligned, and merges equal keys into the first
// (weights summed, saturating). It returns how many remain (ks and ws
// keep them at the front) and whether any moved.
func sortMerge(ks []nhKey, ws []uint32) (int, bool) {
	moved := false
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && cmpKey(ks[j-1], ks[j]) > 0; j-- {
			ks[j-1], ks[j] = ks[j], ks[j-1]
			ws[j-1], ws[j] = ws[j], ws[j-1]
			moved = true
		}
	}
	n := min(len(ks), 1)
	for i := 1; i < len(ks); i++ {
		if sameKey(ks[i], ks[n-1]) {
			ws[n-1] = uint32(min(uint64(ws[n-1])+uint64(ws[i]), 1<<32-1))
			continue
		}
		ks[n], ws[n] = ks[i], ws[i]
		n++
	}
	return n, moved || n < len(ks)
}

// sameKey is a == b field by field (struct == calls memequal).
func sameKey(a, b nhKey) bool { return a.ifindex == b.ifindex && a.gw == b.gw && a.fam == b.fam }

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// Adopt reads back the routes (by protocol, table) and nexthop objects
// (by id range and protocol) a previous run left in the kernel and takes
// them over without touching them, so forwarding continues; the next
// Sync then changes only what differs and removes only what is stale.
// Calling it again re-reads the kernel (resynchronisation).
//
// fared's objects of the other protocol number (a node that switched
// between IS-IS and OSPF keeps fared's id range but not its protocol) are
// removed first: nothing would ever replace or withdraw them.
func (f *FIB) Adopt() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := flushOwned(f.cfg.NetNS, f.cfg, func(p uint8) bool { return p != f.cfg.Protocol })
	if err != nil {
		return err
	}
	if st.Routes+st.Nexthops > 0 {
		f.log.Info("removed fared's routes and nexthops of another protocol number", "routes", st.Routes, "nexthops", st.Nexthops, "protocol_now", f.cfg.Protocol)
	}
	return f.adopt()
}

func (f *FIB) adopt() error {
	f.reset()
	if !f.caps.NexthopObjects {
		return f.adoptMultipath()
	}
	knh, err := f.c.dumpNexthops()
	if err != nil {
		return err
	}
	slices.SortFunc(knh, func(a, b KernelNexthop) int { return cmp.Compare(a.ID, b.ID) })
	var groups []KernelNexthop
	for _, k := range knh {
		if !f.ours(k.ID) {
			continue
		}
		f.ids[k.ID] = struct{}{} // foreign objects in our range: never reused
		if k.Protocol != f.cfg.Protocol {
			continue
		}
		if k.Group != nil {
			groups = append(groups, k)
			continue
		}
		o := &nhObj{id: k.ID, key: nhKey{fam: famOf(k), gw: k.Gateway, ifindex: k.IfIndex}}
		f.nhs[k.ID] = o
		// Blackholes and duplicates are ours but not reusable: they go
		// when no route needs them any more.
		if _, dup := f.nhByKey[o.key]; !dup && !k.Blackhole && k.IfIndex > 0 {
			f.nhByKey[o.key] = o
			o.indexed = true
		}
	}
	for _, k := range groups {
		g := &group{id: k.ID, members: k.Group}
		slices.SortFunc(g.members, func(a, b GroupMember) int { return cmp.Compare(a.ID, b.ID) })
		f.groups[k.ID] = g
		ok := (k.GroupType == "resilient") == (f.cfg.Resilient != nil)
		if ok && f.cfg.Resilient != nil {
			ok = k.Resilient != nil && k.Resilient.Buckets == f.cfg.Resilient.Buckets
		}
		for _, m := range g.members {
			if o := f.nhs[m.ID]; o == nil || !o.indexed {
				ok = false
			}
		}
		if ok {
			f.indexGroup(g, "")
		}
	}
	krt, err := f.c.dumpRoutes(func(r *KernelRoute) bool {
		return r.Protocol == f.cfg.Protocol && r.Table == f.cfg.Table
	})
	if err != nil {
		return err
	}
	for _, r := range krt {
		if r.Metric != f.cfg.Metric {
			f.stale = append(f.stale, nlmsg.RouteKey{Prefix: r.Prefix, Table: r.Table, Protocol: r.Protocol, Metric: r.Metric})
			continue
		}
		e := &routeEnt{}
		if f.nhs[r.NhID] != nil || f.groups[r.NhID] != nil {
			e.nh = r.NhID
		}
		f.routes[r.Prefix] = e
	}
	f.recount()
	f.adopted = true
	return nil
}

// recount recomputes group reference counts from the routes. Counting
// from the full route table after each Sync, rather than inc/dec on every
// edge, cannot drift when a kernel request fails half way.
func (f *FIB) recount() {
	for _, g := range f.groups {
		g.refs = 0
	}
	for _, r := range f.routes {
		if g := f.groups[r.nh]; g != nil {
			g.refs++
		}
	}
	for _, c := range f.conflicts {
		if g := f.groups[c.nh]; g != nil {
			g.refs++
		}
	}
}

// isGone reports errors that mean "already deleted" (by the kernel on a
// link down, or by an operator).
func isGone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// missingObject reports the kernel's answer to a group or route naming a
// nexthop id it does not have ("Invalid nexthop id", "Nexthop id does not
// exist"): EINVAL, on Linux 5.3 to 6.18. Other EINVALs make Sync re-read
// its objects once for nothing, which is harmless.
func missingObject(err error) bool { return errors.Is(err, unix.EINVAL) }

// withoutFailed returns keys and weights without the next hops whose
// object could not be created, the weights reduced again (so the rest
// shares a group with the same ratio). It copies: the slabs are shared
// with a possible second pass.
func withoutFailed(keys []nhKey, weights []uint32, failed map[nhKey]bool, limit uint32) ([]nhKey, []uint32) {
	n := 0
	for _, k := range keys {
		if failed[k] {
			n++
		}
	}
	if n == 0 {
		return keys, weights
	}
	ks := make([]nhKey, 0, len(keys)-n)
	ws := make([]uint32, 0, len(keys)-n)
	for i, k := range keys {
		if !failed[k] {
			ks = append(ks, k)
			ws = append(ws, weights[i])
		}
	}
	reduceInPlace(ws, limit)
	return ks, ws
}

type pendRoute struct {
	w *want
	*content
}

// content is one group content some routes want and no group has: the
// routes wanting it share one copy of its members and key.
type content struct {
	members []GroupMember
	key     string
}

type groupOp struct {
	id      uint32
	members []GroupMember
	key     string
}

// Sync makes the kernel match routes, the full desired state: prefixes
// not listed (and those left with no next hop) are removed. Input is
// validated first; an invalid route (weight 0, no interface, duplicate
// prefix) fails the whole Sync before anything is written. Kernel errors
// are per object: the rest is still applied, the failures come back
// joined as *OpError, and the next Sync retries them. A next hop whose
// object cannot be created (its interface is gone) is left out of its
// routes, which are installed with the other members. A prefix that
// another protocol's route holds (same table, prefix, metric) is never
// replaced: it is reported in Stats.Conflicts and retried on later Syncs.
func (f *FIB) Sync(routes []Route) (st Stats, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.adopted {
		if err := f.adopt(); err != nil {
			return st, err
		}
	}
	wants, err := f.normalise(routes)
	if err != nil {
		return st, err
	}
	start := f.c.msgs
	defer func() { st.Messages = f.c.msgs - start }()
	if !f.caps.NexthopObjects {
		st, err = f.syncMultipath(wants)
		f.endConflicts(&st)
		return st, err
	}
	st, errs, stale, err := f.syncObjects(wants)
	if err == nil && stale {
		// The kernel refused an object we believe exists: something
		// deleted it behind our back (an interface removed before
		// Monitor's LinkDown ran, an operator's flush). Re-read our
		// objects and do the Sync once more from the kernel's state; the
		// first pass's errors were about objects that no longer exist.
		if err = f.refresh(); err == nil {
			for i := range wants {
				set := wants[i].set
				set.ids, set.group, set.content = nil, nil, nil
			}
			var st2 Stats
			st2, errs, _, err = f.syncObjects(wants)
			st = plusStats(st, st2)
		}
	}
	f.endConflicts(&st)
	if err != nil {
		return st, err
	}
	return st, errors.Join(errs...)
}

// syncObjects is one pass of Sync with nexthop objects. stale reports a
// kernel answer that means our state names an object the kernel no longer
// has; err is a socket-level failure.
func (f *FIB) syncObjects(wants []want) (st Stats, errs []error, stale bool, err error) {
	proto := f.cfg.Protocol
	limit := f.weightLimit()

	// 1. Nexthop objects per (gateway, ifindex), and the object of every
	// key of every route. Routes of one fabric mostly share their next
	// hops: a route with the keys of the one before takes its ids
	// without a lookup.
	var newNH []*nhObj
	b := f.c.newBatch()
	var idSlab []uint32
	var prev *hopSet
	for i := range wants {
		set := wants[i].set
		if set.ids != nil || len(set.keys) == 0 {
			continue // resolved for a route before
		}
		if n := len(set.keys); cap(idSlab)-len(idSlab) < n {
			idSlab = make([]uint32, 0, max(n, 4096))
		}
		set.ids = idSlab[len(idSlab) : len(idSlab)+len(set.keys) : len(idSlab)+len(set.keys)]
		idSlab = idSlab[:len(idSlab)+len(set.keys)]
		if prev != nil && sameKeys(prev.keys, set.keys) {
			copy(set.ids, prev.ids) // same next hops, other weights
			prev = set
			continue
		}
		prev = set
		for j, k := range set.keys {
			if o := f.nhByKey[k]; o != nil {
				set.ids[j] = o.id
				continue
			}
			id, err := f.alloc()
			if err != nil {
				return st, errs, stale, err
			}
			o := &nhObj{id: id, key: k, indexed: true}
			f.nhByKey[k] = o // provisional; undone on failure
			newNH = append(newNH, o)
			set.ids[j] = id
			b.Nexthop(b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, id, proto, k.fam, k.gw, k.ifindex)
		}
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("add nexthop %#x %s", newNH[i].id, newNH[i].key) }, nil)
	if err != nil {
		return st, errs, stale, err
	}
	failedNH := map[nhKey]bool{}
	for i, o := range newNH {
		if res[i] != nil {
			errs = append(errs, res[i])
			delete(f.nhByKey, o.key)
			f.free(o.id)
			failedNH[o.key] = true
			continue
		}
		f.nhs[o.id] = o
		st.NexthopsAdded++
	}

	// 2. Groups. Routes whose exact (members, weights) group exists use
	// it. The rest are "pending", bucketed by the group they use now.
	f.gen++
	keep := map[uint32]int{} // group id -> routes that stay on it unchanged
	pending := map[uint32][]*pendRoute{}
	contents := map[string]*content{}
	pendSlab := make([]pendRoute, 0, len(wants)) // never grows: pointers stay valid
	var kb []byte
	var ms []GroupMember
	// The last set decided: a set with the same members and weights (the
	// same next hops reduced to the same weights) takes its decision.
	var lastSet *hopSet
	for i := range wants {
		w := &wants[i]
		w.cur, w.target = f.routes[w.prefix], 0
		set := w.set
		if len(set.keys) == 0 {
			st.RoutesUnresolved++
			continue
		}
		if c := f.conflicts[w.prefix]; c != nil {
			c.gen = f.gen
		}
		keys, weights, ids := set.keys, set.weights, set.ids
		if len(failedNH) > 0 {
			keys, weights = withoutFailed(keys, weights, failedNH, limit)
			ids = nil // looked up below
		}
		id := func(j int) uint32 {
			if ids != nil {
				return ids[j]
			}
			return f.nhByKey[keys[j]].id
		}
		if len(keys) == 0 {
			// No member could be created: leave the prefix as it is in
			// the kernel; the errors say why.
			if w.cur != nil {
				w.target = w.cur.nh
			}
			continue
		}
		if len(keys) == 1 {
			w.target = id(0)
			continue
		}
		var g *group
		var c *content
		switch {
		case ids != nil && (set.group != nil || set.content != nil):
			g, c = set.group, set.content
		case ids != nil && lastSet != nil && slices.Equal(ids, lastSet.ids) && slices.Equal(weights, lastSet.weights):
			g, c = lastSet.group, lastSet.content
		default:
			ms = ms[:0]
			for j := range keys {
				ms = append(ms, GroupMember{ID: id(j), Weight: weights[j]})
			}
			sortMembers(ms)
			kb = appendGroupKey(kb[:0], ms)
			if g = f.grpByKey[string(kb)]; g == nil { // no allocation: lookup by []byte
				if c = contents[string(kb)]; c == nil {
					c = &content{members: slices.Clone(ms), key: string(kb)}
					contents[c.key] = c
				}
			}
		}
		if ids != nil {
			set.group, set.content = g, c
			lastSet = set
		}
		if g != nil {
			w.target = g.id
			keep[g.id]++
			continue
		}
		var cur uint32
		if w.cur != nil {
			if g := f.groups[w.cur.nh]; g != nil && g.indexed {
				cur = g.id
			}
		}
		pendSlab = append(pendSlab, pendRoute{w: w, content: c})
		pending[cur] = append(pending[cur], &pendSlab[len(pendSlab)-1])
	}
	f.dropUnwanted()
	// Reweight in place: a group none of whose routes keeps its current
	// content is rewritten (same id, NLM_F_REPLACE) to the content most of
	// its routes now want. Those routes need no message at all; routes
	// wanting something else move to other groups before the rewrite.
	claimed := map[string]uint32{}
	var replaces, creates []groupOp
	for _, gid := range sortedKeys(pending) {
		if gid == 0 || keep[gid] > 0 {
			continue
		}
		count := map[string]int{}
		for _, p := range pending[gid] {
			count[p.key]++
		}
		best := ""
		for _, p := range pending[gid] {
			if _, taken := claimed[p.key]; taken {
				continue
			}
			if best == "" || count[p.key] > count[best] || (count[p.key] == count[best] && p.key < best) {
				best = p.key
			}
		}
		if best == "" {
			continue
		}
		for _, p := range pending[gid] {
			if p.key == best {
				replaces = append(replaces, groupOp{id: gid, members: p.members, key: best})
				break
			}
		}
		claimed[best] = gid
	}
	// New groups stream like routes (a 3-stage leaf has one per leaf, of
	// 64 members each): the kernel creates the first while the rest are
	// encoded.
	b = f.c.newBatch()
	out := f.c.stream(b)
	var encErr error
encode:
	for _, gid := range sortedKeys(pending) {
		for _, p := range pending[gid] {
			if id, ok := claimed[p.key]; ok {
				p.w.target = id
				continue
			}
			id, err := f.alloc()
			if err != nil {
				encErr = err
				break encode
			}
			claimed[p.key] = id
			p.w.target = id
			if err := appendGroup(&b.Buf, b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, id, proto, p.members, f.cfg.Resilient); err != nil {
				b.Drop()
				f.free(id)
				encErr = err // weights were reduced: cannot happen
				break encode
			}
			creates = append(creates, groupOp{id: id, members: p.members, key: p.key})
			out.Flush(false)
		}
	}
	failedGrp := map[uint32]bool{}
	err = out.Wait(func(a streamAck) {
		for i := a.lo; i < a.hi; i++ {
			op := creates[i]
			if a.err != nil {
				failedGrp[op.id] = true // unknown: the next Sync finds out
				continue
			}
			if e := a.failed[i]; e != nil {
				errs = append(errs, e.op("add "+groupString(op.id, op.members)))
				stale = stale || missingObject(errs[len(errs)-1])
				failedGrp[op.id] = true
				f.free(op.id)
				continue
			}
			g := &group{id: op.id, members: op.members}
			f.groups[op.id] = g
			f.indexGroup(g, op.key)
			st.GroupsAdded++
		}
	})
	if err == nil {
		err = encErr
	}
	if err != nil {
		return st, errs, stale, err
	}

	// 3. Routes: a prefix we hold is repointed with NLM_F_REPLACE (atomic);
	// one we do not hold is added with NLM_F_CREATE|NLM_F_EXCL, so a route
	// of another protocol under the same key is never replaced: the kernel
	// answers EEXIST and existing() finds out whose route it is. Only that
	// error path reads the kernel.
	rts := make([]*want, 0, len(wants))
	b = f.c.newBatch()
	b.Grow(64 * len(wants))
	if len(f.routes) == 0 {
		// The first Sync of a full table: no rehashing while it fills.
		f.routes = make(map[netip.Prefix]*routeEnt, len(wants))
	}
	// The routes go out while later ones are still being encoded, and
	// the answers are filed while later chunks are in the kernel.
	out = f.c.stream(b)
	for i := range wants {
		w := &wants[i]
		if w.target != 0 && failedGrp[w.target] {
			w.target = 0
			if w.cur != nil {
				w.target = w.cur.nh // stay where it is
			}
		}
		if w.target == 0 {
			continue
		}
		if w.cur != nil {
			w.cur.gen = f.gen
			if w.cur.nh == w.target {
				continue
			}
		}
		rts = append(rts, w)
		b.Route(b.Next(), f.hdr(w.prefix), w.target, w.cur != nil)
		out.Flush(false)
	}
	// The routes we hold that this generation does not want, found
	// while the kernel works (filing below only adds wanted ones).
	var dels []nlmsg.RouteKey
	for p, r := range f.routes {
		if r.gen != f.gen {
			dels = append(dels, f.hdr(p))
		}
	}
	var exist, readd []*want
	var ents []routeEnt // the new routes' entries, one allocation
	err = out.Wait(func(a streamAck) {
		if a.err != nil {
			return // unknown outcome: the next Sync finds out
		}
		for i, w := range rts[a.lo:a.hi] {
			var e error
			if ne := a.failed[a.lo+i]; ne != nil {
				e = ne.op(fmt.Sprintf("route %s nhid %#x", w.prefix, w.target))
			}
			switch {
			case e == nil:
				if w.cur != nil {
					w.cur.nh = w.target
					st.RoutesReplaced++
				} else {
					if len(ents) == cap(ents) {
						ents = make([]routeEnt, 0, len(rts)-a.lo-i)
					}
					ents = append(ents, routeEnt{nh: w.target, gen: f.gen})
					f.routes[w.prefix] = &ents[len(ents)-1]
					f.resolved(w.prefix)
					st.RoutesAdded++
				}
			case w.cur == nil && errors.Is(e, unix.EEXIST):
				if c := f.conflicts[w.prefix]; c != nil {
					c.nh = w.target // still held by the other protocol
				} else {
					exist = append(exist, w)
				}
			case w.cur != nil && isGone(e):
				// Our route was deleted behind our back: add it afresh,
				// exclusively, as a prefix we do not hold.
				delete(f.routes, w.prefix)
				w.cur = nil
				readd = append(readd, w)
			default:
				errs = append(errs, e)
				stale = stale || missingObject(e)
			}
		}
	})
	if err != nil {
		return st, errs, stale, err
	}
	takeover, retry, err := f.existing(exist)
	if err != nil {
		return st, errs, stale, err
	}
	retry = append(retry, readd...)
	ops := append(takeover, retry...)
	b = f.c.newBatch()
	for i, w := range ops {
		b.Route(b.Next(), f.hdr(w.prefix), w.target, i < len(takeover))
	}
	res, err = f.c.run(b, func(i int) string { return fmt.Sprintf("route %s nhid %#x (retry)", ops[i].prefix, ops[i].target) }, nil)
	if err != nil {
		return st, errs, stale, err
	}
	for i, w := range ops {
		if res[i] != nil {
			// A second EEXIST, or the route went away between the dump
			// and the replace: the next Sync looks again.
			errs = append(errs, res[i])
			stale = stale || missingObject(res[i])
			continue
		}
		f.routes[w.prefix] = &routeEnt{nh: w.target, gen: f.gen}
		f.resolved(w.prefix)
		st.RoutesAdded++
	}

	// 4. Groups rewritten in place, now that routes leaving them have left.
	b = f.c.newBatch()
	for _, op := range replaces {
		if err := appendGroup(&b.Buf, b.Next(), unix.NLM_F_REPLACE, op.id, proto, op.members, f.cfg.Resilient); err != nil {
			return st, errs, stale, err
		}
	}
	res, err = f.c.run(b, func(i int) string { return "replace " + groupString(replaces[i].id, replaces[i].members) }, nil)
	if err != nil {
		return st, errs, stale, err
	}
	for i, op := range replaces {
		if res[i] != nil {
			errs = append(errs, res[i])
			stale = stale || missingObject(res[i])
			continue
		}
		g := f.groups[op.id]
		f.unindexGroup(g)
		g.members = op.members
		f.indexGroup(g, op.key)
		st.GroupsReplaced++
	}

	// 5. Stale routes (not wanted in this generation, found while the
	// routes were in the kernel), before the objects they reference.
	dels = append(dels, f.stale...)
	b = f.c.newBatch()
	for _, h := range dels {
		b.DelRoute(b.Next(), h)
	}
	res, err = f.c.run(b, func(i int) string { return fmt.Sprintf("delete route %s metric %d", dels[i].Prefix, dels[i].Metric) }, nil)
	if err != nil {
		return st, errs, stale, err
	}
	var stillStale []nlmsg.RouteKey
	for i, h := range dels {
		if res[i] != nil && !isGone(res[i]) {
			errs = append(errs, res[i])
			if h.Metric != f.cfg.Metric {
				stillStale = append(stillStale, h)
			}
			continue
		}
		if h.Metric == f.cfg.Metric {
			delete(f.routes, h.Prefix)
		}
		st.RoutesDeleted++
	}
	f.stale = stillStale
	f.recount()

	// 6. Unreferenced groups, then 7. unreferenced nexthops.
	gd, err := f.deleteUnusedGroups(&errs)
	st.GroupsDeleted = gd
	if err != nil {
		return st, errs, stale, err
	}
	nd, err := f.deleteUnusedNexthops(&errs)
	st.NexthopsDeleted = nd
	if err != nil {
		return st, errs, stale, err
	}
	return st, errs, stale, nil
}

func (f *FIB) deleteUnusedGroups(errs *[]error) (int, error) {
	var ids []uint32
	for id, g := range f.groups {
		if g.refs == 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	b := f.c.newBatch()
	for _, id := range ids {
		b.DelNexthop(b.Next(), id)
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("delete group %#x", ids[i]) }, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for i, id := range ids {
		if res[i] != nil && !isGone(res[i]) {
			*errs = append(*errs, res[i])
			continue
		}
		f.unindexGroup(f.groups[id])
		delete(f.groups, id)
		f.free(id)
		n++
	}
	return n, nil
}

func (f *FIB) deleteUnusedNexthops(errs *[]error) (int, error) {
	// Strike out the objects anything uses; the few left are unused.
	// Groups first: their members are most of our objects, so the walk
	// over 100,000 routes usually ends at once.
	unused := make(map[uint32]bool, len(f.nhs))
	for id := range f.nhs {
		unused[id] = true
	}
	for _, g := range f.groups {
		if len(unused) == 0 {
			break
		}
		for _, m := range g.members {
			delete(unused, m.ID)
		}
	}
	for _, c := range f.conflicts {
		delete(unused, c.nh)
	}
	for _, r := range f.routes {
		if len(unused) == 0 {
			break
		}
		delete(unused, r.nh)
	}
	ids := make([]uint32, 0, len(unused))
	for id := range unused {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := f.c.newBatch()
	for _, id := range ids {
		b.DelNexthop(b.Next(), id)
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("delete nexthop %#x %s", ids[i], f.nhs[ids[i]].key) }, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for i, id := range ids {
		if res[i] != nil && !isGone(res[i]) {
			*errs = append(*errs, res[i])
			continue
		}
		o := f.nhs[id]
		if o.indexed && f.nhByKey[o.key] == o {
			delete(f.nhByKey, o.key)
		}
		delete(f.nhs, id)
		f.free(id)
		n++
	}
	return n, nil
}

func sortedKeys[V any](m map[uint32]V) []uint32 {
	ks := make([]uint32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// LinkDown tells the FIB that interface ifindex went down. What Linux
// (6.18 observed) does by itself on admin down and on carrier loss: it
// deletes every nexthop object on that device; that removes it from its
// groups (remaining members keep their weights); a group left empty is
// deleted too; routes using a deleted nexthop or group are deleted. The
// objects do not come back on link up.
//
// LinkDown makes that happen now even if only the daemon (an adjacency
// going down) noticed: it deletes our nexthops on ifindex, re-reads our
// objects so the FIB's state is the kernel's, and leaves out members on
// ifindex in later Syncs (the kernel refuses new nexthops on a down
// device) until LinkUp. A prefix whose next hops were all on the link is
// gone from the kernel until a Sync gives it a live next hop.
func (f *FIB) LinkDown(ifindex int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[ifindex] = true
	if !f.caps.NexthopObjects || !f.adopted {
		return nil
	}
	var ids []uint32
	for id, o := range f.nhs {
		if o.key.ifindex == ifindex {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	b := f.c.newBatch()
	for _, id := range ids {
		b.DelNexthop(b.Next(), id)
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("delete nexthop %#x on down link #%d", ids[i], ifindex) }, nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range res {
		if e != nil && !isGone(e) {
			errs = append(errs, e)
		}
	}
	if err := f.refresh(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// LinkUp ends a LinkDown: the next Sync may use the link again.
func (f *FIB) LinkUp(ifindex int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.down, ifindex)
}

// refresh re-reads our nexthop objects and drops from the state what the
// kernel removed (with the routes that used it), and takes group members
// from the kernel.
func (f *FIB) refresh() error {
	knh, err := f.c.dumpNexthops()
	if err != nil {
		return err
	}
	byID := make(map[uint32]*KernelNexthop, len(knh))
	for i := range knh {
		byID[knh[i].ID] = &knh[i]
	}
	for id, o := range f.nhs {
		if byID[id] == nil {
			if o.indexed && f.nhByKey[o.key] == o {
				delete(f.nhByKey, o.key)
			}
			delete(f.nhs, id)
			f.free(id)
		}
	}
	for id, g := range f.groups {
		k := byID[id]
		f.unindexGroup(g)
		if k == nil {
			delete(f.groups, id)
			f.free(id)
			continue
		}
		g.members = k.Group
		slices.SortFunc(g.members, func(a, b GroupMember) int { return cmp.Compare(a.ID, b.ID) })
		ok := true
		for _, m := range g.members {
			if o := f.nhs[m.ID]; o == nil || !o.indexed {
				ok = false
			}
		}
		if ok {
			f.indexGroup(g, "")
		}
	}
	for p, r := range f.routes {
		if r.nh != 0 && f.nhs[r.nh] == nil && f.groups[r.nh] == nil {
			delete(f.routes, p) // the kernel deleted it with its nexthop
		}
	}
	for _, c := range f.conflicts {
		if f.nhs[c.nh] == nil && f.groups[c.nh] == nil {
			c.nh = 0
		}
	}
	f.recount()
	return nil
}

// Close ends the FIB. With KeepOnShutdown everything stays in the kernel
// for the next run to Adopt; otherwise our routes, groups and nexthops
// are removed (in that order).
func (f *FIB) Close() error {
	var err error
	if !f.cfg.KeepOnShutdown {
		_, err = f.Sync(nil)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.h != nil {
		f.h.Close()
	}
	if cerr := f.c.close(); err == nil {
		err = cerr
	}
	return err
}
