package ospf

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"

	"github.com/fared/fared/config"
	"github.com/fared/fared/lsdb"
)

// Report is what a reload did: Changed lists what was applied, in words
// ("interface eth1: cost 10 -> 20 (re-originated)"), Warnings what was not.
type Report = daemon.Change

// Check validates a new configuration against the running instance and
// changes nothing: what it accepts, Reconfigure applies in full.
func (in *Instance) Check(cfg *config.Config) error {
	if Section(cfg) == nil {
		return fmt.Errorf("no ospf section")
	}
	if rid := RouterID(cfg); !rid.IsValid() || !rid.Is4() {
		return fmt.Errorf("no router id")
	}
	// TE Link LSAs take their opaque id from the interface (24 bits).
	if n := len(Section(cfg).Interfaces); n >= 1<<24 {
		return fmt.Errorf("%d interfaces: more than the TE opaque ids allow", n)
	}
	return nil
}

// Reconfigure applies a new configuration to the running instance, all of
// it, with the least disruption each change allows: costs, bandwidths,
// priorities, timers and prefixes in place; hello and dead intervals at
// the next hello (a neighbour must use the same ones, RFC 2328 §10.5); a
// new interface comes up; a removed one says goodbye (a last hello that
// lists no neighbour) and goes down; a changed type, passive flag or area
// restarts that interface only; a new router id flushes our LSAs and
// restarts the adjacencies under the new id (the process stays).
func (in *Instance) Reconfigure(ctx context.Context, cfg *config.Config) (Report, error) {
	return in.AskReconfigure(ctx, cfg)
}

// ClearNeighbors drops one neighbour (by router id) or all (rid ""), as
// vtysh's `clear ip ospf neighbor` does: each comes back through hellos
// and a new database exchange. It returns how many were dropped.
func (in *Instance) ClearNeighbors(ctx context.Context, rid string) (int, error) {
	return in.AskClear(ctx, rid)
}

func (in *Instance) reconfigure(nc *config.Config) Report {
	var rep igp.Report
	no := Section(nc)
	if no == nil { // the daemon stops the module instead of calling this
		rep.Warn("ospf section removed: the module stops")
		return rep.Change
	}
	now := in.opt.Now()
	old := in.ocfg
	changed := rep.Changed

	if rid := RouterID(nc); rid != in.rid {
		n := in.restartRouterID(rid, now)
		changed("router-id %s -> %s (instance restarted: %d own LSAs flushed, adjacencies re-formed and LSAs re-originated under the new id)",
			in.formerRID(), rid, n)
	}
	in.cfg, in.ocfg = nc, no
	if no.PathBandwidthSubTLV != old.PathBandwidthSubTLV {
		in.pbCode = no.PathBandwidthSubTLV
		for _, a := range in.allDBs() {
			a.graphDirty = true // the others' Extended Prefix LSAs are read with the new codepoint
		}
		changed("path-bandwidth-subtlv %d -> %d (Extended Prefix LSAs re-originated, databases re-read)", old.PathBandwidthSubTLV, no.PathBandwidthSubTLV)
	}

	// Areas first: an interface moving to a new area needs it.
	for _, id := range no.Areas() {
		if in.area(id) == nil {
			in.areas = append(in.areas, newArea(in, id, false))
		}
	}
	in.reconfigureIfaces(no, now, changed)
	// Areas left without interfaces (config keeps no prefix in them).
	for _, a := range slices.Clone(in.areas) {
		if !slices.Contains(no.Areas(), a.id) && !in.prefixArea(a.id) {
			in.dropArea(a)
			changed("area %s: left (no interface in it any more; its routes withdrawn)", a.name)
		}
	}

	var pfx []Prefix
	for _, p := range no.Prefixes {
		if !p.External && in.area(p.Area) == nil {
			rep.Warn("prefix %s: area %s is not attached, ignored", p.Prefix, config.AreaString(p.Area))
			continue
		}
		pfx = append(pfx, p)
	}
	keep := *no
	keep.Prefixes = pfx
	in.ocfg = &keep
	in.reportSettings(old, no, changed)
	in.scheduleSummaries()
	in.scheduleAll()
	for _, a := range in.areas {
		a.graphDirty = true
	}
	return rep.Log(in.log)
}

// reconfigureIfaces makes the interfaces those of the new configuration,
// in its order: removed ones say goodbye and go down, new ones come up,
// one whose type, passive flag or area changed restarts with its index,
// counters and (unless its configured bandwidth changed) its run-time
// bandwidth override; the others update in place.
func (in *Instance) reconfigureIfaces(no *Config, now time.Time, changed igp.Changer) {
	want := map[string]bool{}
	for _, ic := range no.Interfaces {
		want[ic.Name] = true
	}
	for _, ifc := range slices.Clone(in.ifaces) {
		if !want[ifc.name] {
			in.dropIface(ifc, now)
			changed("interface %s: removed (final hello without neighbours sent, adjacencies down)", ifc.name)
		}
	}
	next := make([]*iface, 0, len(no.Interfaces))
	for _, ic := range no.Interfaces {
		ifc := in.iface(ic.Name)
		switch {
		case ifc == nil:
			ifc = in.newIfaceAt(ic, -1)
			changed("interface %s: added (area %s)", ic.Name, config.AreaString(ic.Area))
		case ifaceRestart(ifc.cfg, ic) != "":
			why := ifaceRestart(ifc.cfg, ic)
			ov := igp.KeepOverride(changed, ic.Name, ifc.bwOverride, ifc.cfg.Bandwidth, ic.Bandwidth)
			counters := ifc.counters
			in.dropIface(ifc, now)
			ifc = in.newIfaceAt(ic, ifc.idx)
			ifc.counters, ifc.bwOverride = counters, ov
			changed("interface %s: %s (interface restarted)", ic.Name, why)
		default:
			in.updateIface(ifc, ic, now, changed)
		}
		next = append(next, ifc)
	}
	in.ifaces = next
	for _, ifc := range in.ifaces {
		if !ifc.running {
			ifc.refresh(now)
		}
	}
}

func (in *Instance) prefixArea(id uint32) bool {
	for _, p := range in.ocfg.Prefixes {
		if !p.External && p.Area == id {
			return true
		}
	}
	return false
}

// reportSettings words the changes of the instance-wide keys that take
// effect with the new values (origination and timers read them).
func (in *Instance) reportSettings(old, no *Config, changed igp.Changer) {
	strip := func(c *Config) Config {
		s := *c
		s.Interfaces, s.RouterID, s.PathBandwidthSubTLV = nil, netip.Addr{}, 0
		return s
	}
	a, b := strip(old), strip(no)
	igp.Settings(&a, &b, func(d string) string {
		if strings.HasPrefix(d, "prefixes") {
			return "re-originated"
		}
		return igp.HowCommon(d)
	}, changed)
}

// ifaceRestart says why an interface must restart to take its new
// configuration ("" when it updates in place).
func ifaceRestart(o, n Interface) string {
	var why []string
	if o.Type != n.Type {
		why = append(why, fmt.Sprintf("type %s -> %s", o.Type, n.Type))
	}
	if o.Passive != n.Passive {
		why = append(why, fmt.Sprintf("passive %v -> %v", o.Passive, n.Passive))
	}
	if o.Area != n.Area {
		why = append(why, fmt.Sprintf("area %s -> %s", config.AreaString(o.Area), config.AreaString(n.Area)))
	}
	return strings.Join(why, ", ")
}

// updateIface applies what changes in place: cost, bandwidth, hello and
// dead intervals, priority.
func (in *Instance) updateIface(ifc *iface, ic Interface, now time.Time, changed igp.Changer) {
	o := ifc.cfg
	ifc.setCfg(ic)
	if o.Cost != ic.Cost {
		changed("interface %s: cost %d -> %d (re-originated)", ifc.name, o.Cost, ic.Cost)
	}
	igp.Bandwidth(changed, ifc.name, o.Bandwidth, ic.Bandwidth, &ifc.bwOverride)
	const match = "applied at the next hello; the neighbours must use the same, RFC 2328 §10.5"
	if o.HelloInterval != ic.HelloInterval {
		ifc.helloDue = now
		changed("interface %s: hello-interval %s -> %s (%s)", ifc.name, o.HelloInterval, ic.HelloInterval, match)
	}
	if o.DeadInterval != ic.DeadInterval {
		ifc.helloDue = now
		changed("interface %s: dead-interval %s -> %s (%s)", ifc.name, o.DeadInterval, ic.DeadInterval, match)
	}
	if o.Priority != ic.Priority {
		if ifc.isP2P() {
			changed("interface %s: priority %d -> %d (unused on p2p)", ifc.name, o.Priority, ic.Priority)
		} else {
			ifc.helloDue = now
			ifc.neighborChange(now)
			changed("interface %s: priority %d -> %d (DR election re-run)", ifc.name, o.Priority, ic.Priority)
		}
	}
	// bfdTick reconciles the sessions with ifc.cfg every tick. Sign and
	// verify read ifc.cfg: the next packet uses the new chain; keys
	// accepted per their lifetimes make a hitless rollover
	// (docs/config.md).
	igp.BFD(changed, ifc.name, o.BFD, ic.BFD)
	igp.Auth(changed, ifc.name, o.Authentication, ic.Authentication, "applied to the next packet")
	ifc.refresh(now) // bandwidth
	in.scheduleRegen(ifc.area)
}

// newIfaceAt makes the interface for ic with index idx (its TE Link LSA
// opaque id is idx+1), or the lowest free one when idx < 0. A restarted
// interface keeps its index, so its TE LSA keeps its id.
func (in *Instance) newIfaceAt(ic Interface, idx int) *iface {
	if idx < 0 {
		used := map[int]bool{}
		for _, ifc := range in.ifaces {
			used[ifc.idx] = true
		}
		for idx = 0; used[idx]; idx++ {
		}
	}
	ifc := newIface(in, idx, ic)
	in.ifaces = append(in.ifaces, ifc)
	return ifc
}

// dropIface takes an interface out of service: a last hello without
// neighbours tells them at once (1-WayReceived), then it goes down and
// its socket closes. What we originated for it (Network, TE Link LSAs) is
// flushed by the next origination.
func (in *Instance) dropIface(ifc *iface, now time.Time) {
	ifc.goodbye(now)
	if ifc.running {
		ifc.setDown(now)
	}
	ifc.running = false
	ifc.close()
	in.ifaces = slices.DeleteFunc(in.ifaces, func(x *iface) bool { return x == ifc })
	in.scheduleAll()
}

// goodbye drops every neighbour of a running interface and sends a hello
// that lists none, so each neighbour leaves the adjacency now instead of
// after its dead interval.
func (ifc *iface) goodbye(now time.Time) {
	if !ifc.running || ifc.cfg.Passive || ifc.port == nil {
		return
	}
	for k, n := range ifc.nbrs {
		n.kill(now, "interface leaves OSPF")
		delete(ifc.nbrs, k)
	}
	ifc.dr, ifc.bdr = netip.Addr{}, netip.Addr{}
	ifc.sendHello()
	ifc.count("tx_goodbye_hello")
}

// dropArea forgets an area we have no interface in any more: the rib gets
// an empty graph for it, so its routes go.
func (in *Instance) dropArea(a *area) {
	in.areas = slices.DeleteFunc(in.areas, func(x *area) bool { return x == a })
	in.graphs.Delete(a.name)
	if in.opt.OnGraph != nil {
		in.opt.OnGraph(a.name, lsdb.NewBuilder("ospf", 0, a.name).Build(""))
	}
}

// restartRouterID moves the instance to a new router id: our LSAs are
// flushed and sent at once over the adjacencies still up, every
// neighbour gets a goodbye hello, then the interfaces come back under the
// new id. LSAs of the old id that a neighbour still holds later (a lost
// flush) are recognised as ours (formerRIDs) and flushed again when they
// come back in a database exchange (RFC 2328 §13.4). It returns how many
// LSAs were flushed.
func (in *Instance) restartRouterID(rid netip.Addr, now time.Time) int {
	n := 0
	for _, a := range in.allDBs() {
		for k := range a.own {
			if e := a.db[k]; e != nil && e.age(now) < MaxAge {
				in.flush(a, e, now)
				n++
			}
		}
		a.own, a.wrap = map[lsaKey]bool{}, map[lsaKey]wantLSA{}
	}
	for _, ifc := range in.ifaces {
		ifc.flush(now)
	}
	for _, ifc := range in.ifaces {
		ifc.goodbye(now)
		if ifc.running {
			ifc.setDown(now)
		}
	}
	if in.formerRIDs == nil {
		in.formerRIDs = map[netip.Addr]time.Time{}
	}
	in.formerRIDs[in.rid] = now.Add(MaxAge * time.Second)
	in.lastRID = in.rid
	in.rid = rid
	delete(in.formerRIDs, rid)
	in.pfxIDs, in.nextPfxID = map[netip.Prefix]uint32{}, 0
	for _, ifc := range in.ifaces {
		ifc.refresh(now)
	}
	in.scheduleAll()
	return n
}

// formerRID is the router id before the last change.
func (in *Instance) formerRID() netip.Addr { return in.lastRID }

// wasOurs reports whether a router id was ours within MaxAge: LSAs it
// advertises are still ours to flush.
func (in *Instance) wasOurs(rid netip.Addr) bool {
	until, ok := in.formerRIDs[rid]
	return ok && in.opt.Now().Before(until)
}

func (in *Instance) setBandwidth(name string, bw config.Bandwidth) error {
	ifc := in.iface(name)
	if ifc == nil {
		return ErrNotFound{What: "interface " + name}
	}
	old := ifc.bwOverride
	ifc.bwOverride = bw
	ifc.refresh(in.opt.Now())
	in.scheduleAll()
	igp.LogOverride(in.log, name, old, bw, ifc.cfg.Bandwidth, ifc.bw)
	return nil
}

func (in *Instance) clearNeighbors(rid string) igp.ClearResult {
	now := in.opt.Now()
	var want netip.Addr
	if rid != "" {
		a, err := netip.ParseAddr(rid)
		if err != nil || !a.Is4() {
			return igp.ClearResult{Err: ErrBadQuery{Err: fmt.Errorf("router id %q is not an IPv4 address", rid)}}
		}
		want = a
	}
	n := 0
	for _, ifc := range in.ifaces {
		hit := false
		for k, nb := range ifc.nbrs {
			if want.IsValid() && nb.rid != want {
				continue
			}
			nb.kill(now, "cleared by operator")
			delete(ifc.nbrs, k)
			n++
			hit = true
		}
		if hit {
			// Our next hello no longer lists them: they drop to Init
			// (1-WayReceived) and both sides start over.
			ifc.neighborChange(now)
			ifc.helloDue = now
		}
	}
	if n == 0 && want.IsValid() {
		return igp.ClearResult{Err: ErrNotFound{What: "neighbor " + rid}}
	}
	in.log.Info("neighbors cleared by operator", "router_id", rid, "count", n)
	return igp.ClearResult{N: n}
}
