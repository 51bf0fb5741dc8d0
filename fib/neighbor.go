package fib

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/fared/fared/internal/nlmsg"
)

// NeighborDown is local repair (docs/bfd.md): the
// neighbour reached as gws on interface ifindex is gone (its adjacency
// went down, typically by BFD, on a link that is still up), so every
// nexthop group holding it is rewritten without it, in place: one
// RTM_NEWNEXTHOP with NLM_F_REPLACE and the same id per group, as a
// reweight does. The other members keep their weights; no route message
// is sent (routes keep their group ids). SPF and FARE recompute the exact
// weights later, and their Sync replaces the groups again.
//
// Why this cannot loop in a CLOS: every path we still use leaves through
// a member we keep, and each of those was a shortest-path next hop a
// moment ago; removing a member only narrows the set of shortest paths,
// never adds a path through someone who might send the packet back. The
// neighbour that is down carries no traffic we send.
//
// A route whose only next hop is the neighbour is left as it is: there
// is no alternative to repair onto, and SPF decides what replaces it.
// Until a Sync no longer names the neighbour (SPF has removed it) or
// NeighborUp, later Syncs leave it out of multi-path routes too, so a
// computation from an older topology cannot put it back.
//
// It returns how many groups it rewrote.
func (f *FIB) NeighborDown(ifindex int, gws ...netip.Addr) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nbrDown == nil {
		f.nbrDown = map[nhKey]bool{}
	}
	ids := map[uint32]bool{}
	for _, gw := range gws {
		gw = gw.Unmap().WithZone("")
		if !gw.IsValid() {
			continue
		}
		k := nhKey{fam: nlmsg.Family(gw), gw: gw, ifindex: ifindex}
		f.nbrDown[k] = true
		if o := f.nhByKey[k]; o != nil {
			ids[o.id] = true
		}
		for id, o := range f.nhs { // adopted duplicates too
			if o.key == k {
				ids[id] = true
			}
		}
	}
	if !f.caps.NexthopObjects || !f.adopted || len(ids) == 0 {
		return 0, nil
	}
	var ops []groupOp
	for _, gid := range slices.Sorted(maps.Keys(f.groups)) {
		g := f.groups[gid]
		if !slices.ContainsFunc(g.members, func(m GroupMember) bool { return ids[m.ID] }) {
			continue
		}
		keep := make([]GroupMember, 0, len(g.members))
		for _, m := range g.members {
			if !ids[m.ID] {
				keep = append(keep, m)
			}
		}
		if len(keep) == 0 {
			continue // every member is that neighbour's: nothing to repair onto
		}
		ops = append(ops, groupOp{id: gid, members: keep})
	}
	res, err := f.replaceGroups(ops, "local repair: replace ")
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, e := range res {
		if e != nil {
			errs = append(errs, e)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("fib: local repair of %d groups: %w", len(errs), errors.Join(errs...))
	}
	return n, nil
}

// NeighborUp ends a NeighborDown: later Syncs may use the neighbour again.
func (f *FIB) NeighborUp(ifindex int, gws ...netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, gw := range gws {
		gw = gw.Unmap().WithZone("")
		delete(f.nbrDown, nhKey{fam: nlmsg.Family(gw), gw: gw, ifindex: ifindex})
	}
}

// withoutDownNeighbors drops down neighbours from a route's next hops
// when another one remains (in place: keys and weights are the route's
// own part of the slabs), and notes which down neighbours the routes
// still name.
func (f *FIB) withoutDownNeighbors(keys []nhKey, weights []uint32, named map[nhKey]bool) ([]nhKey, []uint32) {
	down := 0
	for _, k := range keys {
		if f.nbrDown[k] {
			named[k] = true
			down++
		}
	}
	if down == 0 || down == len(keys) {
		return keys, weights
	}
	j := 0
	for i, k := range keys {
		if !f.nbrDown[k] {
			keys[j], weights[j] = k, weights[i]
			j++
		}
	}
	return keys[:j], weights[:j]
}

// expireNeighborMarks forgets the down neighbours a Sync no longer names:
// the topology it was computed from has dropped them.
func (f *FIB) expireNeighborMarks(named map[nhKey]bool) {
	for k := range f.nbrDown {
		if !named[k] {
			delete(f.nbrDown, k)
		}
	}
}
