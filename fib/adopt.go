package fib

import (
	"cmp"
	"slices"

	"github.com/fared/fared/internal/nlmsg"
)

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
		ok := (k.GroupType == GroupResilient) == (f.cfg.Resilient != nil)
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
	if err := f.adoptRoutes(); err != nil {
		return err
	}
	f.recount()
	f.adopted = true
	return nil
}

// adoptRoutes takes over our routes (protocol, table): those with our
// metric as they are, pointing at the object they use if it is ours
// (without nexthop objects, or on an object we did not adopt, nh 0: the
// first Sync replaces the route atomically, which costs a message but no
// gap); those with another metric (an old config) are stale, deleted by
// the next Sync.
func (f *FIB) adoptRoutes() error {
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
	return nil
}
