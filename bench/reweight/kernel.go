package reweight

import (
	"net/netip"

	"github.com/fared/fared/fib"
	"github.com/fared/fared/internal/kernwatch"
)

// kernel is a router's IS-IS routes and nexthop objects as a dump and
// then notifications leave them.
type kernel struct {
	routes map[netip.Prefix]fib.KernelRoute
	nhs    map[uint32]fib.KernelNexthop
}

func newKernel(routes []fib.KernelRoute, nhs []fib.KernelNexthop) *kernel {
	k := &kernel{routes: map[netip.Prefix]fib.KernelRoute{}, nhs: map[uint32]fib.KernelNexthop{}}
	for _, r := range routes {
		k.routes[r.Prefix] = r
	}
	for _, n := range nhs {
		k.nhs[n.ID] = n
	}
	return k
}

func (k *kernel) apply(e kernwatch.Event) {
	switch {
	case e.Route != nil && e.Route.Protocol == kernwatch.ProtoISIS:
		if e.Del {
			delete(k.routes, e.Route.Prefix)
		} else {
			k.routes[e.Route.Prefix] = *e.Route
		}
	case e.Nexthop != nil:
		if e.Del {
			delete(k.nhs, e.Nexthop.ID)
		} else {
			k.nhs[e.Nexthop.ID] = *e.Nexthop
		}
	}
}

// shareOf is the share of p's traffic through the next hops whose
// gateway belongs to node (names: gateway → node); ok is false when p
// has no route or points at an unknown object.
func (k *kernel) shareOf(p netip.Prefix, names map[netip.Addr]string, node string) (float64, bool) {
	r, ok := k.routes[p]
	if !ok {
		return 0, false
	}
	top, ok := k.nhs[r.NhID]
	if !ok {
		return 0, false
	}
	if len(top.Group) == 0 {
		if names[top.Gateway] == node {
			return 1, true
		}
		return 0, true
	}
	var sum, mine float64
	for _, g := range top.Group {
		n, ok := k.nhs[g.ID]
		if !ok {
			return 0, false
		}
		sum += float64(g.Weight)
		if names[n.Gateway] == node {
			mine += float64(g.Weight)
		}
	}
	return mine / sum, sum > 0
}
