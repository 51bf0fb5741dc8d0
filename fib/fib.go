package fib

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/fared/fared/internal/netif"
	"github.com/fared/fared/internal/nlmsg"
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
type Stats struct {
	RoutesAdded     int
	RoutesReplaced  int
	RoutesDeleted   int
	GroupsAdded     int
	GroupsReplaced  int
	GroupsDeleted   int
	NexthopsAdded   int
	NexthopsDeleted int
	// RoutesUnresolved counts prefixes left with no usable next hop (none
	// given, or all on links reported down): they are not in the kernel.
	RoutesUnresolved int
	// Conflicts are the prefixes not installed because another protocol's
	// route holds the same table, prefix and metric, as of the end of the
	// Sync.
	Conflicts []Conflict
	Messages  int
}

// RoutesConflicting counts the prefixes Conflicts lists.
func (s Stats) RoutesConflicting() int { return len(s.Conflicts) }

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

// forgetGroup drops a group the kernel no longer has from the state.
func (f *FIB) forgetGroup(id uint32) {
	f.unindexGroup(f.groups[id])
	delete(f.groups, id)
	f.free(id)
}

// forgetNexthop drops a nexthop object the kernel no longer has.
func (f *FIB) forgetNexthop(id uint32) {
	o := f.nhs[id]
	if o.indexed && f.nhByKey[o.key] == o {
		delete(f.nhByKey, o.key)
	}
	delete(f.nhs, id)
	f.free(id)
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
	res, err := f.deleteNexthops(ids, func(i int) string { return fmt.Sprintf("delete nexthop %#x on down link #%d", ids[i], ifindex) })
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
	for id := range f.nhs {
		if byID[id] == nil {
			f.forgetNexthop(id)
		}
	}
	for id, g := range f.groups {
		k := byID[id]
		if k == nil {
			f.forgetGroup(id)
			continue
		}
		f.unindexGroup(g)
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
