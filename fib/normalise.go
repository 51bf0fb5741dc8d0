package fib

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"

	"github.com/fared/fared/internal/nlmsg"
	"golang.org/x/sys/unix"
)

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
	ids     []uint32 // the nexthop object of each key (pass.nexthops, stage 1)
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
// a full-table Sync (100k routes), hence slabs instead of per-route maps,
// and the runs and memo that let routes with equal next hops share one
// hopSet (normaliser).
func (f *FIB) normalise(routes []Route) ([]want, error) {
	total := 0
	for i := range routes {
		total += len(routes[i].NextHops)
	}
	n := &normaliser{f: f, limit: f.weightLimit(), out: make([]want, 0, len(routes)),
		slab: min(total, 256), setSlab: min(len(routes), 256), memo: map[uint64]memoEnt{}}
	if len(f.nbrDown) > 0 {
		n.named = map[nhKey]bool{}
	}
	for i := range routes {
		n.add(&routes[i])
	}
	return n.finish()
}

// normaliser is the state of one normalise.
type normaliser struct {
	f     *FIB
	limit uint32
	out   []want
	errs  []error
	named map[nhKey]bool // down neighbours the routes still name

	// Keys, weights and sets live in slabs allocated as needed: routes
	// that share the next hops of another route take no room.
	slab    int // size of the next key and weight slabs
	keySlab []nhKey
	wSlab   []uint32
	setSlab int // size of the next set slab
	sets    []hopSet

	// A fabric's routes come in runs with the same next hops and weights
	// (every leaf of a pod, seen from another pod): a route whose next
	// hops equal the last good route's shares its keys and weights.
	prevHops []NextHop
	prevFam  uint8

	// Routes that share next hops without being neighbours (prefixes
	// listed in address order, their groups interleaved) find the first
	// such route's set here by a hash of their hops.
	memo         map[uint64]memoEnt
	hits, misses int

	// The set built last, and whether its keys are its route's hops in
	// order (none dropped, merged or moved): a route with the same
	// gateways and interfaces but other weights (every leaf of a 3-stage
	// fabric, weighted by FARE) then takes those keys and only needs its
	// weights.
	lastRaw []NextHop
	lastSet *hopSet
	lastFam uint8
}

type memoEnt struct {
	hops []NextHop
	fam  uint8
	set  *hopSet
}

// add validates and normalises one route and appends it to out.
func (n *normaliser) add(r *Route) {
	p := r.Prefix
	if !p.IsValid() {
		n.errs = append(n.errs, fmt.Errorf("fib: invalid prefix %v", r.Prefix))
		return
	}
	if p.Addr().Is4In6() {
		p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
	}
	p = p.Masked()
	fam := nlmsg.Family(p.Addr())
	if n.prevHops != nil && fam == n.prevFam && sameHops(r.NextHops, n.prevHops) {
		w := n.out[len(n.out)-1]
		w.prefix = p
		n.out = append(n.out, w)
		return
	}
	n.prevHops = nil
	var h uint64
	useMemo := len(r.NextHops) > 1 && (n.misses < memoTrial || 4*n.hits >= n.misses)
	if useMemo {
		h = hopsHash(fam, r.NextHops)
		if m, ok := n.memo[h]; ok && m.fam == fam && sameHops(m.hops, r.NextHops) {
			n.hits++
			n.out = append(n.out, want{prefix: p, set: m.set})
			n.prevHops, n.prevFam = r.NextHops, fam
			return
		}
	}
	set := n.set(p, fam, r.NextHops)
	if set == nil {
		return // an invalid next hop: errs say which
	}
	n.out = append(n.out, want{prefix: p, set: set})
	if len(r.NextHops) > 0 {
		n.prevHops, n.prevFam = r.NextHops, fam
	}
	if useMemo {
		n.remember(h, r.NextHops, fam, set)
	}
}

// remember files a new set in the memo while it has room.
func (n *normaliser) remember(h uint64, hops []NextHop, fam uint8, set *hopSet) {
	if len(n.memo) >= memoCap {
		return
	}
	n.misses++
	if _, taken := n.memo[h]; !taken {
		n.memo[h] = memoEnt{hops: hops, fam: fam, set: set}
	}
}

func (n *normaliser) newSet(hs hopSet) *hopSet {
	if len(n.sets) == cap(n.sets) {
		n.sets = make([]hopSet, 0, n.setSlab)
	}
	n.sets = append(n.sets, hs)
	return &n.sets[len(n.sets)-1]
}

// set builds the set of a route's next hops in the slabs; nil if one of
// them is invalid.
func (n *normaliser) set(p netip.Prefix, fam uint8, hops []NextHop) *hopSet {
	if k := len(hops); cap(n.keySlab)-len(n.keySlab) < k || cap(n.wSlab)-len(n.wSlab) < k {
		n.keySlab, n.wSlab = make([]nhKey, 0, max(k, n.slab)), make([]uint32, 0, max(k, n.slab))
		n.slab = min(2*n.slab, 4096) // most tables have few distinct sets
	}
	if n.lastSet != nil && fam == n.lastFam && sameGateways(hops, n.lastRaw) {
		return n.reweighted(hops)
	}
	n.lastSet = nil
	k0, w0 := len(n.keySlab), len(n.wSlab)
	if !n.appendKeys(p, fam, hops) {
		n.keySlab, n.wSlab = n.keySlab[:k0], n.wSlab[:w0]
		return nil
	}
	// Sorted, and the same gateway twice is one path with the summed
	// weight. The rib's next hops mostly come sorted already: one
	// pass then, where a search for duplicates cost k² compares (16
	// next hops at a 5-stage leaf: 120 per route).
	k, moved := sortMerge(n.keySlab[k0:], n.wSlab[w0:])
	n.keySlab, n.wSlab = n.keySlab[:k0+k], n.wSlab[:w0+k]
	set := n.newSet(hopSet{keys: n.keySlab[k0:len(n.keySlab):len(n.keySlab)], weights: n.wSlab[w0:len(n.wSlab):len(n.wSlab)]})
	if len(n.f.nbrDown) > 0 {
		set.keys, set.weights = n.f.withoutDownNeighbors(set.keys, set.weights, n.named)
	}
	reduceInPlace(set.weights, n.limit)
	if !moved && len(set.keys) == len(hops) && len(set.keys) > 0 {
		n.lastRaw, n.lastSet, n.lastFam = hops, set, fam
	}
	return set
}

// reweighted is the set of a route with the last set's gateways and
// interfaces, in the same order: its keys, the route's own weights.
func (n *normaliser) reweighted(hops []NextHop) *hopSet {
	w0 := len(n.wSlab)
	for _, nh := range hops {
		n.wSlab = append(n.wSlab, nh.Weight)
	}
	set := n.newSet(hopSet{keys: n.lastSet.keys, weights: n.wSlab[w0:len(n.wSlab):len(n.wSlab)]})
	reduceInPlace(set.weights, n.limit)
	n.lastRaw, n.lastSet = hops, set
	return set
}

// appendKeys validates a route's next hops and appends their keys and
// weights to the slabs, leaving out those on down links; false if one is
// invalid.
func (n *normaliser) appendKeys(p netip.Prefix, fam uint8, hops []NextHop) bool {
	ok := true
	for _, nh := range hops {
		gw := nh.Gateway.Unmap()
		switch {
		case nh.Weight == 0:
			n.errs = append(n.errs, fmt.Errorf("fib: route %s: next hop %v dev #%d: weight 0 (weights start at 1)", p, nh.Gateway, nh.IfIndex))
			ok = false
			continue
		case nh.IfIndex <= 0:
			n.errs = append(n.errs, fmt.Errorf("fib: route %s: next hop %v: no interface index", p, nh.Gateway))
			ok = false
			continue
		case fam == unix.AF_INET6 && gw.Is4():
			n.errs = append(n.errs, fmt.Errorf("fib: route %s: IPv4 gateway %s for an IPv6 prefix", p, gw))
			ok = false
			continue
		}
		if len(n.f.down) > 0 && n.f.down[nh.IfIndex] {
			continue // the kernel refuses nexthops on a down link
		}
		k := nhKey{fam: fam, gw: gw, ifindex: nh.IfIndex}
		if gw.IsValid() {
			k.fam = nlmsg.Family(gw) // IPv4 over an IPv6 gateway (RFC 5549)
		}
		n.keySlab = append(n.keySlab, k)
		n.wSlab = append(n.wSlab, nh.Weight)
	}
	return ok
}

// finish sorts the routes by prefix and rejects prefixes given twice.
func (n *normaliser) finish() ([]want, error) {
	out := n.out
	// The rib hands its routes over sorted already.
	if !slices.IsSortedFunc(out, cmpWant) {
		slices.SortFunc(out, cmpWant)
	}
	// Duplicates are neighbours once sorted: cheaper than a set of 100k.
	for i := 1; i < len(out); i++ {
		if out[i].prefix == out[i-1].prefix && (i == 1 || out[i-2].prefix != out[i].prefix) {
			n.errs = append(n.errs, fmt.Errorf("fib: route %s given twice", out[i].prefix))
		}
	}
	if len(n.errs) > 0 {
		return nil, errors.Join(n.errs...)
	}
	if len(n.f.nbrDown) > 0 {
		n.f.expireNeighborMarks(n.named)
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
