package daemon

import (
	"math"
	"net/netip"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/fare"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
	"golang.org/x/sys/unix"
)

// The core's types are its own; the API's JSON shapes are api/wire's,
// whose field names never change. Every core value the API shows is
// converted here, in one place, as GoBGP's gRPC server converts its
// table types: the core may reshape its structs without touching a script.

// each converts every element of in; nil stays nil (JSON null, or an
// omitted omitempty field), empty stays empty ([]).
func each[T, U any](in []T, conv func(*T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i := range in {
		out[i] = conv(&in[i])
	}
	return out
}

// wireRoute is GET /v1/route's shape of a route.
func wireRoute(r *rib.Route) wire.Route {
	out := wire.Route{Prefix: r.Prefix, Protocol: r.Protocol, Level: r.Level, Area: r.Area, Metric: r.Metric, Mode: r.Mode,
		Advertisers: r.Advertisers, Down: r.Down, NextHops: each(r.NextHops, wireNextHop), QuantError: r.QuantError}
	if r.HasPathBW {
		pb := r.PathBW
		out.PathBW = &pb
	}
	return out
}

func wireNextHop(h *rib.NextHop) wire.NextHop {
	return wire.NextHop{Neighbor: h.Neighbor, NeighborName: h.NeighborName, Gateway: h.Gateway,
		Interface: h.Interface, IfIndex: h.IfIndex, Unresolved: h.Unresolved,
		LinkBW: h.LinkBW, NeighborBW: h.NeighborBW, DownCap: h.DownCap, PathBW: h.PathBW,
		Weight: h.Weight, Share: h.Share, KernelWeight: h.KernelWeight, KernelShare: h.KernelShare}
}

// wireSPFView is GET /v1/spf/log: the last computations, the back-off of
// each protocol now, and what the last kernel write did.
func wireSPFView(snap *rib.Snapshot, delays map[string]spf.DelayView) wire.SPFView {
	v := wire.SPFView{Log: each(snap.Log, wireLogEntry),
		LastSync: wireFIBStats(snap.FIB), FIBError: snap.FIBError, Anomalies: wireAnomalies(snap.Anomalies)}
	if delays != nil {
		v.Delays = make(map[string]wire.SPFDelay, len(delays))
	}
	for p, d := range delays {
		v.Delays[p] = wireDelay(d)
	}
	return v
}

func wireDelay(d spf.DelayView) wire.SPFDelay {
	return wire.SPFDelay{State: d.State.String(), SPFAt: d.SPFAt, LearnAt: d.LearnAt, HolddownAt: d.HolddownAt}
}

func wireLogEntry(e *spf.LogEntry) wire.SPFLogEntry {
	return wire.SPFLogEntry{At: e.At, Trigger: e.Trigger, Kind: e.Kind(), Reason: e.Reason, Capacity: e.Capacity, Duration: e.Duration(),
		Compute: e.Compute, Install: e.Install, Nodes: e.Nodes, RoutesChanged: e.RoutesChanged}
}

func wireAnomalies(a fare.Anomalies) wire.FareAnomalies {
	return wire.FareAnomalies{
		LinkMissing: a[fare.LinkMissing], LinkNaN: a[fare.LinkNaN], LinkInf: a[fare.LinkInf],
		LinkNegative: a[fare.LinkNegative], LinkZero: a[fare.LinkZero],
		PathNaN: a[fare.PathNaN], PathInf: a[fare.PathInf], PathNegative: a[fare.PathNegative], PathZero: a[fare.PathZero],
		RoutesMissingBW: a[fare.RoutesMissingBW], RoutesZeroCapacity: a[fare.RoutesZeroCapacity],
	}
}

func wireFIBStats(s fib.Stats) wire.FIBStats {
	return wire.FIBStats{RoutesAdded: s.RoutesAdded, RoutesReplaced: s.RoutesReplaced, RoutesDeleted: s.RoutesDeleted,
		GroupsAdded: s.GroupsAdded, GroupsReplaced: s.GroupsReplaced, GroupsDeleted: s.GroupsDeleted,
		NexthopsAdded: s.NexthopsAdded, NexthopsDeleted: s.NexthopsDeleted, RoutesUnresolved: s.RoutesUnresolved,
		RoutesConflicting: s.RoutesConflicting(), Conflicts: wireConflicts(s.Conflicts, nil), Messages: s.Messages}
}

// wireConflicts appends cs to out (nil stays nil: an omitempty field).
func wireConflicts(cs []fib.Conflict, out []wire.FIBConflict) []wire.FIBConflict {
	for _, c := range cs {
		out = append(out, wire.FIBConflict{Prefix: c.Prefix, Table: c.Table, Metric: c.Metric, Protocol: c.Protocol,
			ProtocolName: c.ProtocolName(), Type: c.Type(), Since: c.Since})
	}
	return out
}

func wireCapabilities(c fib.Capabilities) wire.FIBCapabilities {
	return wire.FIBCapabilities{NexthopObjects: c.NexthopObjects, Weight16: c.Weight16, Resilient: c.Resilient}
}

// wireFIBView is GET /v1/fib: the kernel's routes and nexthops of our
// protocol, and the prefixes another protocol holds.
func wireFIBView(caps fib.Capabilities, routes []fib.KernelRoute, nhs []fib.KernelNexthop, conflicts []fib.Conflict) wire.FIBView {
	return wire.FIBView{Capabilities: wireCapabilities(caps), Routes: each(routes, wireKernelRoute),
		Nexthops: each(nhs, wireNexthop), Conflicts: wireConflicts(conflicts, []wire.FIBConflict{})}
}

func wireKernelRoute(r *fib.KernelRoute) wire.KernelRoute {
	return wire.KernelRoute{Prefix: r.Prefix, Table: r.Table, Protocol: r.Protocol, Metric: r.Metric, NhID: r.NhID,
		Paths: each(r.Paths, func(p *fib.KernelPath) wire.KernelPath {
			return wire.KernelPath{Gateway: p.Gateway, IfIndex: p.IfIndex, Weight: p.Weight}
		})}
}

func wireNexthop(n *fib.KernelNexthop) wire.KernelNexthop {
	out := wire.KernelNexthop{ID: n.ID, Protocol: n.Protocol, Family: familyName[n.Family], Gateway: n.Gateway,
		IfIndex: n.IfIndex, Blackhole: n.Blackhole, Flags: n.Flags, GroupType: n.GroupType.String(),
		Group: each(n.Group, func(m *fib.GroupMember) wire.GroupMember { return wire.GroupMember{ID: m.ID, Weight: m.Weight} })}
	if r := n.Resilient; r != nil {
		out.Resilient = &wire.ResilientInfo{Buckets: r.Buckets, IdleTimer: r.IdleTimer,
			UnbalancedTimer: r.UnbalancedTimer, UnbalancedTime: r.UnbalancedTime}
	}
	return out
}

// familyName is iproute2's name of a nexthop's family.
var familyName = map[uint8]string{unix.AF_INET: "inet", unix.AF_INET6: "inet6"}

// WireTopology is GET /v1/lsdb's (and /v1/ospf/lsdb's) shape of a graph.
func WireTopology(g *lsdb.Graph) wire.Topology {
	v := wire.Topology{Protocol: g.Protocol, Level: g.Level, Area: g.Area, Nodes: []wire.TopoNode{}, Prefixes: []wire.TopoPrefix{}}
	if g.Self >= 0 {
		v.Self = g.Nodes[g.Self].ID
	}
	for i := range g.Nodes {
		v.Nodes = append(v.Nodes, wireTopoNode(g, int32(i)))
	}
	for _, p := range g.Prefixes {
		pv := wire.TopoPrefix{Prefix: p.Prefix.String(), Advertiser: g.Nodes[p.Node].ID, Name: g.Nodes[p.Node].Name, Metric: p.Metric,
			Down: p.Down, External: p.External, InterArea: p.Inter, Type2: p.Type2, Forward: addrString(p.Forward)}
		if p.HasPathBW {
			pv.PathBW = f64(p.PathBW)
		}
		v.Prefixes = append(v.Prefixes, pv)
	}
	return v
}

// wireTopoNode is node i of g with its links.
func wireTopoNode(g *lsdb.Graph, i int32) wire.TopoNode {
	n := &g.Nodes[i]
	nv := wire.TopoNode{ID: n.ID, Name: n.Name, Pseudo: n.Pseudo, Overload: n.Overload, Attached: n.Attached,
		RouterID: addrString(n.RouterID), Links: []wire.TopoLink{}}
	for j, l := range g.LinksOf(i) {
		a := g.LinkAddrs(n.First + int32(j))
		lv := wire.TopoLink{To: g.Nodes[l.To].ID, ToName: g.Nodes[l.To].Name, Metric: l.Metric,
			LocalAddr: addrString(a.Local.Addr()), RemoteAddr: addrString(a.Remote.Addr())}
		if l.HasBW {
			lv.MaxBW = f64(l.MaxBW)
		}
		nv.Links = append(nv.Links, lv)
	}
	return nv
}

// addrString is "" for an absent (invalid) address: an omitempty field.
func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// f64 widens a wire float for JSON; non-finite values (which a peer may send)
// cannot be encoded as JSON numbers, so they are clamped to the float32 range.
func f64(f float32) *float64 {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return nil
	case math.IsInf(x, 1):
		x = math.MaxFloat32
	case math.IsInf(x, -1):
		x = -math.MaxFloat32
	}
	return &x
}
