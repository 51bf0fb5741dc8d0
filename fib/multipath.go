package fib

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/fared/fared/internal/nlmsg"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The RTA_MULTIPATH fallback for kernels without nexthop objects: every
// route carries its own next hops, weight = rtnh_hops+1 (8 bits), so a
// reweight costs one message per route instead of one per group.

func (f *FIB) adoptMultipath() error {
	if err := f.adoptRoutes(); err != nil {
		return err
	}
	f.adopted = true
	return nil
}

func pathSig(w *want) string {
	var b strings.Builder
	for i, k := range w.set.keys {
		fmt.Fprintf(&b, "%s/%d,", k, w.set.weights[i])
	}
	return b.String()
}

func (f *FIB) netlinkRoute(h nlmsg.RouteKey) *netlink.Route {
	p := h.Prefix
	return &netlink.Route{
		Dst:      &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())},
		Protocol: netlink.RouteProtocol(h.Protocol),
		Priority: int(h.Metric),
		Table:    h.Table,
		Family:   int(nlmsg.Family(p.Addr())),
	}
}

func (f *FIB) mpRoute(w *want) *netlink.Route {
	rt := f.netlinkRoute(f.hdr(w.prefix))
	if len(w.set.keys) == 1 {
		rt.LinkIndex = w.set.keys[0].ifindex
		if w.set.keys[0].gw.IsValid() {
			rt.Gw = w.set.keys[0].gw.AsSlice()
		}
		return rt
	}
	for j, k := range w.set.keys {
		nh := &netlink.NexthopInfo{LinkIndex: k.ifindex, Hops: int(w.set.weights[j] - 1)}
		if k.gw.IsValid() {
			nh.Gw = k.gw.AsSlice()
		}
		rt.MultiPath = append(rt.MultiPath, nh)
	}
	return rt
}

func (f *FIB) syncMultipath(wants []want) (Stats, error) {
	var st Stats
	var errs []error
	f.gen++
	live := map[string]bool{}
	var exist []*want
	for i := range wants {
		w := &wants[i]
		if len(w.set.keys) == 0 {
			st.RoutesUnresolved++
			continue
		}
		if c := f.conflicts[w.prefix]; c != nil {
			c.gen = f.gen
		}
		live[w.prefix.String()] = true
		sig := pathSig(w)
		cur := f.routes[w.prefix]
		if cur != nil && cur.sig == sig {
			continue
		}
		rt := f.mpRoute(w)
		f.c.msgs++
		// As with nexthop objects: replace only a route we hold, add
		// exclusively otherwise, so another protocol's route is never
		// overwritten. (netlink's RouteReplace is CREATE|REPLACE: a route
		// of ours deleted and re-added by someone else between two Syncs
		// would still be replaced.)
		var err error
		if cur != nil {
			err = f.h.RouteReplace(rt)
		} else {
			err = f.h.RouteAdd(rt)
		}
		switch {
		case err == nil:
		case cur == nil && errors.Is(err, unix.EEXIST):
			if f.conflicts[w.prefix] == nil {
				exist = append(exist, w)
			}
			continue
		default:
			errs = append(errs, &OpError{Op: fmt.Sprintf("route %s multipath %s", w.prefix, sig), Err: err})
			continue
		}
		if cur != nil {
			cur.sig = sig
			st.RoutesReplaced++
		} else {
			f.routes[w.prefix] = &routeEnt{sig: sig}
			f.resolved(w.prefix)
			st.RoutesAdded++
		}
	}
	f.dropUnwanted()
	takeover, retry, err := f.existing(exist)
	if err != nil {
		return st, err
	}
	for i, w := range append(takeover, retry...) {
		rt := f.mpRoute(w)
		f.c.msgs++
		if i < len(takeover) {
			err = f.h.RouteReplace(rt)
		} else {
			err = f.h.RouteAdd(rt)
		}
		if err != nil {
			errs = append(errs, &OpError{Op: fmt.Sprintf("route %s multipath %s (retry)", w.prefix, pathSig(w)), Err: err})
			continue
		}
		f.routes[w.prefix] = &routeEnt{sig: pathSig(w)}
		f.resolved(w.prefix)
		st.RoutesAdded++
	}
	var dels []nlmsg.RouteKey
	for p := range f.routes {
		if !live[p.String()] {
			dels = append(dels, f.hdr(p))
		}
	}
	dels = append(dels, f.stale...)
	f.stale = nil
	for _, h := range dels {
		f.c.msgs++
		err := f.h.RouteDel(f.netlinkRoute(h))
		if err != nil && !errors.Is(err, unix.ESRCH) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, &OpError{Op: fmt.Sprintf("delete route %s metric %d", h.Prefix, h.Metric), Err: err})
			if h.Metric != f.cfg.Metric {
				f.stale = append(f.stale, h)
			}
			continue
		}
		if h.Metric == f.cfg.Metric {
			delete(f.routes, h.Prefix)
		}
		st.RoutesDeleted++
	}
	return st, errors.Join(errs...)
}
