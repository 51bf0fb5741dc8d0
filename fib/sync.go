package fib

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/fared/fared/internal/nlmsg"
	"golang.org/x/sys/unix"
)

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
	p := f.syncObjects(wants)
	st, err = p.st, p.err
	errs := p.errs
	if err == nil && p.stale {
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
			p = f.syncObjects(wants)
			st, errs, err = plusStats(st, p.st), p.errs, p.err
		}
	}
	f.endConflicts(&st)
	if err != nil {
		return st, err
	}
	return st, errors.Join(errs...)
}

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

// pass is one pass of Sync with nexthop objects: the seven stages of
// doc.go ("Order of a Sync"), one method each, and what they hand each
// other. Each stage is one batch (the group and route stages stream it).
type pass struct {
	f     *FIB
	wants []want
	proto uint8
	limit uint32

	st   Stats
	errs []error // per object: the rest of the pass goes on
	// stale: a kernel answer said our state names an object the kernel
	// no longer has (missingObject); Sync then refreshes and runs again.
	stale bool
	// err is a socket-level failure: the pass stopped there.
	err error

	failedNH  map[nhKey]bool          // 1 → 2: objects the kernel refused
	keep      map[uint32]int          // 2: group id → routes staying on it unchanged
	pending   map[uint32][]*pendRoute // 2: routes waiting for a group, by the group they use now
	claimed   map[string]uint32       // 2: content → the group that will hold it
	replaces  []groupOp               // 2 → 4: groups rewritten in place
	failedGrp map[uint32]bool         // 2 → 3: groups whose creation failed
	dels      []nlmsg.RouteKey        // 3 → 5: our routes this generation does not want

	// Stage 3's filing of the kernel's answers.
	ents         []routeEnt // the new routes' entries, few allocations
	exist, readd []*want    // EEXIST to look into; ours deleted behind our back
}

// syncObjects runs one pass over wants.
func (f *FIB) syncObjects(wants []want) *pass {
	p := &pass{f: f, wants: wants, proto: f.cfg.Protocol, limit: f.weightLimit()}
	p.err = p.run()
	return p
}

// run runs the stages in order; a socket-level error stops the pass.
func (p *pass) run() error {
	for _, stage := range [...]func() error{
		p.nexthops,             // 1. new nexthop objects
		p.groups,               // 2. new groups, and the plan of 4
		p.routes,               // 3. routes added or repointed,
		p.retryExisting,        //    and those the kernel said EEXIST or ENOENT to
		p.rewriteGroups,        // 4. groups rewritten in place
		p.deleteStale,          // 5. stale routes deleted
		p.deleteUnusedGroups,   // 6. unreferenced groups deleted
		p.deleteUnusedNexthops, // 7. unreferenced nexthop objects deleted
	} {
		if err := stage(); err != nil {
			return err
		}
	}
	return nil
}

// fail records a refused request; one naming an object the kernel does
// not have makes the pass stale.
func (p *pass) fail(e error) {
	p.errs = append(p.errs, e)
	p.stale = p.stale || missingObject(e)
}

// nexthops is stage 1: a nexthop object per (gateway, ifindex), and the
// object of every key of every set. Routes of one fabric mostly share
// their next hops: a set with the keys of the one before takes its ids
// without a lookup.
func (p *pass) nexthops() error {
	f := p.f
	var newNH []*nhObj
	b := f.c.newBatch()
	var idSlab []uint32
	var prev *hopSet
	for i := range p.wants {
		set := p.wants[i].set
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
				return err
			}
			o := &nhObj{id: id, key: k, indexed: true}
			f.nhByKey[k] = o // provisional; undone on failure
			newNH = append(newNH, o)
			set.ids[j] = id
			b.Nexthop(b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, id, p.proto, k.fam, k.gw, k.ifindex)
		}
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("add nexthop %#x %s", newNH[i].id, newNH[i].key) }, nil)
	if err != nil {
		return err
	}
	p.failedNH = map[nhKey]bool{}
	for i, o := range newNH {
		if res[i] != nil {
			p.errs = append(p.errs, res[i])
			delete(f.nhByKey, o.key)
			f.free(o.id)
			p.failedNH[o.key] = true
			continue
		}
		f.nhs[o.id] = o
		p.st.NexthopsAdded++
	}
	return nil
}

// pendRoute is a route waiting for a group with its content.
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

// groups is stage 2: which group each route needs, which groups are
// rewritten in place (stage 4), and the new ones.
func (p *pass) groups() error {
	p.decideGroups()
	p.planRewrites()
	return p.createGroups()
}

// decideGroups is stage 2's decision: a route with one member targets
// that nexthop, one whose exact (members, weights) group exists targets
// it; the rest are pending, bucketed by the group they use now. The
// decision is taken once per set (and once for sets equal to the last).
func (p *pass) decideGroups() {
	f := p.f
	f.gen++
	p.keep = map[uint32]int{}
	p.pending = map[uint32][]*pendRoute{}
	contents := map[string]*content{}
	pendSlab := make([]pendRoute, 0, len(p.wants)) // never grows: pointers stay valid
	var kb []byte
	var ms []GroupMember
	// The last set decided: a set with the same members and weights (the
	// same next hops reduced to the same weights) takes its decision.
	var lastSet *hopSet
	for i := range p.wants {
		w := &p.wants[i]
		w.cur, w.target = f.routes[w.prefix], 0
		set := w.set
		if len(set.keys) == 0 {
			p.st.RoutesUnresolved++
			continue
		}
		if c := f.conflicts[w.prefix]; c != nil {
			c.gen = f.gen
		}
		keys, weights, ids := set.keys, set.weights, set.ids
		if len(p.failedNH) > 0 {
			keys, weights = withoutFailed(keys, weights, p.failedNH, p.limit)
			ids = nil // looked up below
		}
		if len(keys) <= 1 {
			if len(keys) == 1 {
				w.target = p.id(ids, keys, 0)
			} else if w.cur != nil {
				// No member could be created: leave the prefix as it is
				// in the kernel; the errors say why.
				w.target = w.cur.nh
			}
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
				ms = append(ms, GroupMember{ID: p.id(ids, keys, j), Weight: weights[j]})
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
			p.keep[g.id]++
			continue
		}
		var cur uint32
		if w.cur != nil {
			if g := f.groups[w.cur.nh]; g != nil && g.indexed {
				cur = g.id
			}
		}
		pendSlab = append(pendSlab, pendRoute{w: w, content: c})
		p.pending[cur] = append(p.pending[cur], &pendSlab[len(pendSlab)-1])
	}
	f.dropUnwanted()
}

// id is the nexthop object of keys[j]: from the set's ids, or (members
// left out, ids nil) looked up.
func (p *pass) id(ids []uint32, keys []nhKey, j int) uint32 {
	if ids != nil {
		return ids[j]
	}
	return p.f.nhByKey[keys[j]].id
}

// planRewrites is stage 2's reweight in place: a group none of whose
// routes keeps its current content is rewritten (same id, NLM_F_REPLACE)
// to the content most of its routes now want. Those routes need no
// message at all; routes wanting something else move to other groups
// before the rewrite (stage 4).
func (p *pass) planRewrites() {
	p.claimed = map[string]uint32{}
	for _, gid := range slices.Sorted(maps.Keys(p.pending)) {
		if gid == 0 || p.keep[gid] > 0 {
			continue
		}
		count := map[string]int{}
		for _, r := range p.pending[gid] {
			count[r.key]++
		}
		best := ""
		for _, r := range p.pending[gid] {
			if _, taken := p.claimed[r.key]; taken {
				continue
			}
			if best == "" || count[r.key] > count[best] || (count[r.key] == count[best] && r.key < best) {
				best = r.key
			}
		}
		if best == "" {
			continue
		}
		for _, r := range p.pending[gid] {
			if r.key == best {
				p.replaces = append(p.replaces, groupOp{id: gid, members: r.members, key: best})
				break
			}
		}
		p.claimed[best] = gid
	}
}

// createGroups is stage 2's new groups, one per content no group holds
// or will hold. They stream like routes (a 3-stage leaf has one per
// leaf, of 64 members each): the kernel creates the first while the rest
// are encoded.
func (p *pass) createGroups() error {
	f := p.f
	var creates []groupOp
	b := f.c.newBatch()
	out := f.c.stream(b)
	var encErr error
encode:
	for _, gid := range slices.Sorted(maps.Keys(p.pending)) {
		for _, r := range p.pending[gid] {
			if id, ok := p.claimed[r.key]; ok {
				r.w.target = id
				continue
			}
			id, err := f.alloc()
			if err != nil {
				encErr = err
				break encode
			}
			p.claimed[r.key] = id
			r.w.target = id
			if err := appendGroup(&b.Buf, b.Next(), unix.NLM_F_CREATE|unix.NLM_F_EXCL, id, p.proto, r.members, f.cfg.Resilient); err != nil {
				b.Drop()
				f.free(id)
				encErr = err // weights were reduced: cannot happen
				break encode
			}
			creates = append(creates, groupOp{id: id, members: r.members, key: r.key})
			out.Flush(false)
		}
	}
	p.failedGrp = map[uint32]bool{}
	err := out.Wait(func(a streamAck) {
		for i := a.lo; i < a.hi; i++ {
			op := creates[i]
			if a.err != nil {
				p.failedGrp[op.id] = true // unknown: the next Sync finds out
				continue
			}
			if e := a.failed[i]; e != nil {
				p.fail(e.op("add " + groupString(op.id, op.members)))
				p.failedGrp[op.id] = true
				f.free(op.id)
				continue
			}
			g := &group{id: op.id, members: op.members}
			f.groups[op.id] = g
			f.indexGroup(g, op.key)
			p.st.GroupsAdded++
		}
	})
	if err == nil {
		err = encErr
	}
	return err
}

// routes is stage 3: a prefix we hold is repointed with NLM_F_REPLACE
// (atomic); one we do not hold is added with NLM_F_CREATE|NLM_F_EXCL, so
// a route of another protocol under the same key is never replaced: the
// kernel answers EEXIST and retryExisting finds out whose route it is.
// Only that error path reads the kernel. The routes go out while later
// ones are still being encoded, and the answers are filed while later
// chunks are in the kernel.
func (p *pass) routes() error {
	f := p.f
	rts := make([]*want, 0, len(p.wants))
	b := f.c.newBatch()
	b.Grow(64 * len(p.wants))
	if len(f.routes) == 0 {
		// The first Sync of a full table: no rehashing while it fills.
		f.routes = make(map[netip.Prefix]*routeEnt, len(p.wants))
	}
	out := f.c.stream(b)
	for i := range p.wants {
		w := &p.wants[i]
		if w.target != 0 && p.failedGrp[w.target] {
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
	for pfx, r := range f.routes {
		if r.gen != f.gen {
			p.dels = append(p.dels, f.hdr(pfx))
		}
	}
	return out.Wait(func(a streamAck) {
		if a.err != nil {
			return // unknown outcome: the next Sync finds out
		}
		for i, w := range rts[a.lo:a.hi] {
			var e error
			if ne := a.failed[a.lo+i]; ne != nil {
				e = ne.op(fmt.Sprintf("route %s nhid %#x", w.prefix, w.target))
			}
			p.fileRoute(w, e, len(rts)-a.lo-i)
		}
	})
}

// fileRoute takes the kernel's answer e to route w of stage 3; left is
// how many routes are still to be filed, to size the entries' slab.
func (p *pass) fileRoute(w *want, e error, left int) {
	f := p.f
	switch {
	case e == nil && w.cur != nil:
		w.cur.nh = w.target
		p.st.RoutesReplaced++
	case e == nil:
		if len(p.ents) == cap(p.ents) {
			p.ents = make([]routeEnt, 0, left)
		}
		p.ents = append(p.ents, routeEnt{nh: w.target, gen: f.gen})
		f.routes[w.prefix] = &p.ents[len(p.ents)-1]
		f.resolved(w.prefix)
		p.st.RoutesAdded++
	case w.cur == nil && errors.Is(e, unix.EEXIST):
		if c := f.conflicts[w.prefix]; c != nil {
			c.nh = w.target // still held by the other protocol
		} else {
			p.exist = append(p.exist, w)
		}
	case w.cur != nil && isGone(e):
		// Our route was deleted behind our back: add it afresh,
		// exclusively, as a prefix we do not hold.
		delete(f.routes, w.prefix)
		w.cur = nil
		p.readd = append(p.readd, w)
	default:
		p.fail(e)
	}
}

// retryExisting ends stage 3: prefixes whose exclusive add met a route
// of our own protocol take it over, those held by another protocol
// become conflicts (existing), and the rest are added again.
func (p *pass) retryExisting() error {
	f := p.f
	takeover, retry, err := f.existing(p.exist)
	if err != nil {
		return err
	}
	ops := append(append(takeover, retry...), p.readd...)
	b := f.c.newBatch()
	for i, w := range ops {
		b.Route(b.Next(), f.hdr(w.prefix), w.target, i < len(takeover))
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("route %s nhid %#x (retry)", ops[i].prefix, ops[i].target) }, nil)
	if err != nil {
		return err
	}
	for i, w := range ops {
		if res[i] != nil {
			// A second EEXIST, or the route went away between the dump
			// and the replace: the next Sync looks again.
			p.fail(res[i])
			continue
		}
		f.routes[w.prefix] = &routeEnt{nh: w.target, gen: f.gen}
		f.resolved(w.prefix)
		p.st.RoutesAdded++
	}
	return nil
}

// rewriteGroups is stage 4: the groups planRewrites chose are rewritten
// in place, now that routes leaving them have left.
func (p *pass) rewriteGroups() error {
	res, err := p.f.replaceGroups(p.replaces, "replace ")
	if err != nil {
		return err
	}
	for _, e := range res {
		if e != nil {
			p.fail(e)
			continue
		}
		p.st.GroupsReplaced++
	}
	return nil
}

// replaceGroups rewrites groups in place (NLM_F_REPLACE: the same id,
// atomically under every route on it) and files the members of those
// the kernel took. res[i] is the kernel's answer to ops[i], described as
// what and the group.
func (f *FIB) replaceGroups(ops []groupOp, what string) (res []error, err error) {
	b := f.c.newBatch()
	for _, op := range ops {
		if err := appendGroup(&b.Buf, b.Next(), unix.NLM_F_REPLACE, op.id, f.cfg.Protocol, op.members, f.cfg.Resilient); err != nil {
			return nil, err
		}
	}
	res, err = f.c.run(b, func(i int) string { return what + groupString(ops[i].id, ops[i].members) }, nil)
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		if res[i] != nil {
			continue
		}
		g := f.groups[op.id]
		f.unindexGroup(g)
		g.members = op.members
		f.indexGroup(g, op.key) // key "": computed from the members
	}
	return res, nil
}

// deleteStale is stage 5: routes not wanted in this generation (found
// while the routes were in the kernel) and adopted ones with another
// metric, before the objects they reference.
func (p *pass) deleteStale() error {
	f := p.f
	dels := append(p.dels, f.stale...)
	b := f.c.newBatch()
	for _, h := range dels {
		b.DelRoute(b.Next(), h)
	}
	res, err := f.c.run(b, func(i int) string { return fmt.Sprintf("delete route %s metric %d", dels[i].Prefix, dels[i].Metric) }, nil)
	if err != nil {
		return err
	}
	var stillStale []nlmsg.RouteKey
	for i, h := range dels {
		if res[i] != nil && !isGone(res[i]) {
			p.errs = append(p.errs, res[i])
			if h.Metric != f.cfg.Metric {
				stillStale = append(stillStale, h)
			}
			continue
		}
		if h.Metric == f.cfg.Metric {
			delete(f.routes, h.Prefix)
		}
		p.st.RoutesDeleted++
	}
	f.stale = stillStale
	f.recount()
	return nil
}

// deleteUnusedGroups is stage 6: groups no route references any more.
func (p *pass) deleteUnusedGroups() error {
	f := p.f
	var ids []uint32
	for id, g := range f.groups {
		if g.refs == 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	n, err := p.deleteUnused(ids, func(i int) string { return fmt.Sprintf("delete group %#x", ids[i]) }, f.forgetGroup)
	p.st.GroupsDeleted = n
	return err
}

// deleteUnusedNexthops is stage 7: nexthop objects no group, route or
// conflict uses any more.
func (p *pass) deleteUnusedNexthops() error {
	f := p.f
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
	n, err := p.deleteUnused(ids, func(i int) string { return fmt.Sprintf("delete nexthop %#x %s", ids[i], f.nhs[ids[i]].key) }, f.forgetNexthop)
	p.st.NexthopsDeleted = n
	return err
}

// deleteUnused deletes objects (stages 6 and 7) and forgets those the
// kernel no longer has; it returns how many.
func (p *pass) deleteUnused(ids []uint32, what func(i int) string, forget func(id uint32)) (int, error) {
	res, err := p.f.deleteNexthops(ids, what)
	if err != nil {
		return 0, err
	}
	n := 0
	for i, id := range ids {
		if res[i] != nil && !isGone(res[i]) {
			p.errs = append(p.errs, res[i])
			continue
		}
		forget(id)
		n++
	}
	return n, nil
}

// deleteNexthops deletes nexthop objects or groups by id; res[i] is the
// kernel's answer to ids[i], described by what(i).
func (f *FIB) deleteNexthops(ids []uint32, what func(i int) string) (res []error, err error) {
	b := f.c.newBatch()
	for _, id := range ids {
		b.DelNexthop(b.Next(), id)
	}
	return f.c.run(b, what, nil)
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
