package isis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"

	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/isis/packet"
	"github.com/fared/fared/lsdb"
)

type overloadEvent struct {
	on   *bool // nil: back to the configured value
	done chan<- bool
}

// Report is what a reload did: Changed lists what was applied, in words
// ("interface eth1: hello-interval 3s -> 1s (applied at the next hello)"),
// Warnings what was not.
type Report = daemon.Change

// Check validates a new configuration against the running instance and
// changes nothing: what it accepts, Reconfigure applies in full.
func (in *Instance) Check(cfg *config.Config) error {
	if Section(cfg) == nil {
		return fmt.Errorf("no isis section")
	}
	// One-byte circuit ids (the pseudonode id of a LAN): 255 circuits.
	if n := len(Section(cfg).Interfaces); n > 255 {
		return fmt.Errorf("%d interfaces: IS-IS circuit ids are one byte, at most 255 interfaces", n)
	}
	return nil
}

// Reconfigure applies a new configuration to the running instance, all of
// it, with the least disruption each change allows: timers, metrics,
// bandwidths and prefixes in place; a new interface comes up, a removed
// one goes down; a changed circuit type, passive flag or level restarts
// that circuit only; a changed system id purges our LSPs and restarts the
// instance's adjacencies under the new id (the process and the database
// of the others' LSPs stay).
func (in *Instance) Reconfigure(ctx context.Context, cfg *config.Config) (Report, error) {
	return in.AskReconfigure(ctx, cfg)
}

// SetOverload sets the overload bit at run time (a maintenance drain);
// nil returns to the configured value. It reports the bit now in force.
// The override survives reloads that leave `overload` as it was.
func (in *Instance) SetOverload(ctx context.Context, on *bool) (bool, error) {
	return loop.Ask(ctx, in.lp, func(r chan<- bool) any { return overloadEvent{on: on, done: r} })
}

// ClearAdjacencies drops the adjacencies of one interface, or of all
// (iface ""), as vtysh's `clear isis neighbor` does: they come back
// through the normal hello exchange. It returns how many were Up or
// initialising.
func (in *Instance) ClearAdjacencies(ctx context.Context, iface string) (int, error) {
	return in.AskClear(ctx, iface)
}

// Overload reports the overload bit in force and where it comes from.
func (in *Instance) Overload(ctx context.Context) (apiwire.ISISOverload, error) {
	var v apiwire.ISISOverload
	err := in.Query(ctx, func() {
		v = apiwire.ISISOverload{Overload: in.overloaded(), Configured: in.icfg.Overload, RunTime: in.overloadSet != nil}
	})
	return v, err
}

func (in *Instance) circuit(name string) *circuit {
	for _, c := range in.circuits {
		if c.name == name {
			return c
		}
	}
	return nil
}

// overloaded is the overload bit in force: the run-time override, else
// the configured value.
func (in *Instance) overloaded() bool {
	if in.overloadSet != nil {
		return *in.overloadSet
	}
	return in.icfg.Overload
}

func (in *Instance) reconfigure(nc *config.Config) Report {
	var rep igp.Report
	ni := Section(nc)
	if ni == nil { // the daemon stops the module instead of calling this
		rep.Warn("isis section removed: the module stops")
		return rep.Change
	}
	now := in.opt.Now()
	old := in.icfg
	sysChanged, areasChanged := in.reconfigureInstance(nc, ni, now, rep.Changed)
	in.reconfigureCircuits(old, ni, sysChanged, now, rep.Changed)
	if areasChanged {
		dropped := 0
		for _, c := range in.circuits {
			dropped += c.recheckAreas(now)
		}
		rep.Changed("areas %v -> %v (re-originated; %d level-1 adjacencies without a common area dropped)",
			formatAreas(old.Areas), formatAreas(ni.Areas), dropped)
	}
	in.reportSettings(old, ni, rep.Changed)
	in.reconfigureOverload(old, ni, rep.Changed)
	if old.LSPLifetime != ni.LSPLifetime || old.LSPRefresh != ni.LSPRefresh {
		in.reissueOwn(now)
	}
	in.markLeak(1)
	in.markLeak(2)
	in.scheduleAll()
	return rep.Log(in.log)
}

// reconfigureInstance applies the instance-wide keys that change what the
// instance is: system id, names, levels, areas, the Path Bandwidth
// codepoint. It reports whether the system id and the areas changed.
func (in *Instance) reconfigureInstance(nc *config.Config, ni *Config, now time.Time, changed igp.Changer) (sysChanged, areasChanged bool) {
	old, oldCfg := in.icfg, in.cfg
	newSys := packet.SystemID(nc.SystemID)
	sysChanged = newSys != in.sysID

	// Our LSPs at the levels we stop running, or all of them under a
	// changing system id, are purged now, while the adjacencies that
	// carry the purges are still up. Copies a neighbour misses are
	// corrected later: we keep the purges for ZeroAgeLifetime and answer
	// any older copy with them (CSNP exchange of the new adjacency).
	var dropLevels, addLevels []int
	for l := 1; l <= 2; l++ {
		switch {
		case old.Level&l != 0 && ni.Level&l == 0:
			dropLevels = append(dropLevels, l)
		case old.Level&l == 0 && ni.Level&l != 0:
			addLevels = append(addLevels, l)
		}
	}
	purged := 0
	for _, lv := range in.levels {
		if lv != nil && (sysChanged || slices.Contains(dropLevels, lv.n)) {
			purged += in.purgeOwn(lv, now)
		}
	}
	if purged > 0 {
		for _, c := range in.circuits {
			c.flood(now)
		}
	}

	in.cfg, in.icfg = nc, ni
	if sysChanged {
		changed("system-id %s -> %s (instance restarted: %d own LSPs purged, adjacencies re-formed and LSPs re-originated under the new id)",
			in.sysID, newSys, purged)
		in.sysID = newSys
	}
	if oldCfg.Hostname != nc.Hostname {
		changed("hostname %s -> %s (re-originated)", oldCfg.Hostname, nc.Hostname)
	}
	if oldCfg.RouterID != nc.RouterID {
		changed("router-id %s -> %s (TE router id and addresses re-originated)", oldCfg.RouterID, nc.RouterID)
	}
	areasChanged = !slices.EqualFunc(ni.Areas, old.Areas, func(a, b []byte) bool { return string(a) == string(b) })
	in.areas = ni.Areas
	if ni.Level != old.Level {
		for _, l := range dropLevels {
			in.levels[l-1] = nil
			in.retireGraph(l)
		}
		for _, l := range addLevels {
			in.levels[l-1] = newLevel(l)
		}
		changed("level %s -> %s (levels added: %v, removed: %v; circuits whose levels changed restarted)",
			levelText(old.Level), levelText(ni.Level), addLevels, dropLevels)
	}
	if !in.isL1L2() {
		in.leaks, in.leakDirty = [2][]leak{}, [2]bool{}
	}
	if ni.PathBandwidthSubTLV != old.PathBandwidthSubTLV {
		in.pbCode = ni.PathBandwidthSubTLV
		for _, lv := range in.levels {
			if lv != nil {
				lv.graphDirty = true // the others' prefixes are read with the new codepoint
			}
		}
		changed("path-bandwidth-subtlv %d -> %d (prefixes re-originated, databases re-read)", old.PathBandwidthSubTLV, ni.PathBandwidthSubTLV)
	}
	return sysChanged, areasChanged
}

// reconfigureCircuits makes the circuits those of the new configuration,
// in its order: removed ones go down, new ones come up, one whose type,
// passive flag or levels changed (or all, under a new system id) restarts
// with its circuit id, counters and (unless its configured bandwidth
// changed) its run-time bandwidth override; the others update in place.
func (in *Instance) reconfigureCircuits(old, ni *Config, sysChanged bool, now time.Time, changed igp.Changer) {
	want := map[string]bool{}
	for _, ic := range ni.Interfaces {
		want[ic.Name] = true
	}
	for _, c := range slices.Clone(in.circuits) {
		if !want[c.name] {
			in.dropCircuit(c, now)
			changed("interface %s: removed (adjacencies down)", c.name)
		}
	}
	next := make([]*circuit, 0, len(ni.Interfaces))
	for _, ic := range ni.Interfaces {
		c := in.circuit(ic.Name)
		switch {
		case c == nil:
			c = in.newCircuitAt(ic, -1)
			changed("interface %s: added", ic.Name)
		case circuitRestart(c.cfg, old, ic, ni) != "" || sysChanged:
			why := circuitRestart(c.cfg, old, ic, ni)
			ov := igp.KeepOverride(changed, ic.Name, c.bwOverride, c.cfg.Bandwidth, ic.Bandwidth)
			counters := c.counters
			in.dropCircuit(c, now)
			c = in.newCircuitAt(ic, int(c.localID)-1)
			c.counters, c.bwOverride = counters, ov
			if why != "" {
				changed("interface %s: %s (circuit restarted)", ic.Name, why)
			}
		default:
			in.updateCircuit(c, ic, now, changed)
		}
		next = append(next, c)
	}
	in.circuits = next
	for _, c := range in.circuits {
		if !c.running {
			c.refresh(now)
		}
	}
}

// reconfigureOverload: a new configured overload bit drops a run-time
// override; an unchanged one keeps it.
func (in *Instance) reconfigureOverload(old, ni *Config, changed igp.Changer) {
	if old.Overload != ni.Overload {
		if in.overloadSet != nil {
			changed("overload: run-time override %s dropped (configured value changed)", onOff(*in.overloadSet))
			in.overloadSet = nil
		}
		changed("overload %s -> %s (re-originated)", onOff(old.Overload), onOff(ni.Overload))
	} else if in.overloadSet != nil {
		changed("overload: run-time override %s kept (configured value unchanged)", onOff(*in.overloadSet))
	}
}

// reissueOwn re-issues our live LSPs after a lifetime or refresh change:
// copies out there carry the old lifetime, and none may expire before the
// new refresh interval comes round.
func (in *Instance) reissueOwn(now time.Time) {
	for _, lv := range in.levels {
		if lv == nil {
			continue
		}
		for id := range lv.ownFrags {
			if e := lv.db[id]; e != nil && e.own && e.purged.IsZero() {
				in.reoriginate(lv, e, now)
			}
		}
	}
}

// reportSettings words the changes of the instance-wide keys that need
// nothing beyond the new values (origination picks them up).
func (in *Instance) reportSettings(old, ni *Config, changed igp.Changer) {
	strip := func(c *Config) Config {
		s := *c
		s.Interfaces, s.Areas, s.Level, s.PathBandwidthSubTLV, s.Overload = nil, nil, 0, 0, false
		return s
	}
	a, b := strip(old), strip(ni)
	igp.Settings(&a, &b, func(d string) string {
		switch {
		case strings.HasPrefix(d, "prefixes"), strings.HasPrefix(d, "lsp-mtu"), strings.HasPrefix(d, "attached-bit"):
			return "re-originated"
		case strings.HasPrefix(d, "lsp-lifetime"), strings.HasPrefix(d, "lsp-refresh"):
			return "own LSPs re-originated with it"
		case strings.HasPrefix(d, "hello-padding"):
			return "applied at the next hello"
		case strings.HasPrefix(d, "multi-topology"):
			return "TLV 229 in the next hello; re-originated (TLVs 229, 222, 237: mt.go)"
		case strings.HasPrefix(d, "lsp-pacing"):
			return "applied to the next LSP sent"
		case strings.HasPrefix(d, "flooding-reflooders"):
			return "applied to the next LSP received"
		case strings.HasPrefix(d, "flooding-reduction"):
			return "applied to the next LSP received; the capability re-originated"
		case strings.HasPrefix(d, "leak-l2-to-l1"), strings.HasPrefix(d, "readvertise-hold"):
			return "leaks recomputed"
		case strings.HasPrefix(d, "authentication"):
			return "LSPs and SNPs signed and checked with it from now; own LSPs re-signed"
		}
		return igp.HowCommon(d)
	}, changed)
}

// circuitRestart says why an interface must restart to take its new
// configuration ("" when it updates in place): a new circuit type,
// passive flag or set of levels changes what the adjacencies are.
func circuitRestart(o Interface, oi *Config, n Interface, ni *Config) string {
	var why []string
	if o.Type != n.Type {
		why = append(why, fmt.Sprintf("type %s -> %s", o.Type, n.Type))
	}
	if o.Passive != n.Passive {
		why = append(why, fmt.Sprintf("passive %v -> %v", o.Passive, n.Passive))
	}
	if ol, nl := o.Level&oi.Level, n.Level&ni.Level; ol != nl {
		why = append(why, fmt.Sprintf("level %s -> %s", levelText(ol), levelText(nl)))
	}
	return strings.Join(why, ", ")
}

// updateCircuit applies what changes in place: metric, bandwidth, hello
// timers, priority. Nothing here drops an adjacency.
func (in *Instance) updateCircuit(c *circuit, ic Interface, now time.Time, changed igp.Changer) {
	o := c.cfg
	c.cfg = ic
	if o.Metric != ic.Metric {
		changed("interface %s: metric %d -> %d (re-originated)", c.name, o.Metric, ic.Metric)
	}
	igp.Bandwidth(changed, c.name, o.Bandwidth, ic.Bandwidth, &c.bwOverride)
	if o.HelloInterval != ic.HelloInterval || o.HelloMultiplier != ic.HelloMultiplier {
		// The next hello carries the new hold time: send it now so a
		// neighbour never holds us for less than the new interval.
		c.helloDue = [2]time.Time{now, now}
		if o.HelloInterval != ic.HelloInterval {
			changed("interface %s: hello-interval %s -> %s (applied at the next hello)", c.name, o.HelloInterval, ic.HelloInterval)
		}
		if o.HelloMultiplier != ic.HelloMultiplier {
			changed("interface %s: hello-multiplier %d -> %d (applied at the next hello)", c.name, o.HelloMultiplier, ic.HelloMultiplier)
		}
	}
	if o.Priority != ic.Priority {
		if c.isP2P() {
			changed("interface %s: priority %d -> %d (unused on p2p)", c.name, o.Priority, ic.Priority)
		} else {
			c.helloDue = [2]time.Time{now, now}
			for l := 1; l <= 2; l++ {
				if c.running && c.levelOn(l) {
					c.elect(l, now)
				}
			}
			changed("interface %s: priority %d -> %d (DIS election re-run)", c.name, o.Priority, ic.Priority)
		}
	}
	if pacingText(o.LSPPacing) != pacingText(ic.LSPPacing) {
		changed("interface %s: lsp-pacing %s -> %s (applied to the next LSP sent)", c.name, pacingText(o.LSPPacing), pacingText(ic.LSPPacing))
	}
	// Hellos are signed and checked with c.cfg: the next hello uses the
	// new chain; bfdTick reconciles the sessions with c.cfg every tick.
	igp.Auth(changed, c.name, o.Authentication, ic.Authentication, "applied to the next hello")
	igp.BFD(changed, c.name, o.BFD, ic.BFD)
	c.refresh(now) // bandwidth
	in.scheduleAll()
}

// pacingText words an interface's lsp-pacing override.
func pacingText(d *time.Duration) string {
	if d == nil {
		return "the section's"
	}
	return config.FormatDuration(*d)
}

// newCircuitAt makes the circuit for ic with circuit id idx+1, or the
// lowest free one when idx < 0. A restarted circuit keeps its id, so its
// pseudonode LSP id stays.
func (in *Instance) newCircuitAt(ic Interface, idx int) *circuit {
	if idx < 0 {
		used := map[uint8]bool{}
		for _, c := range in.circuits {
			used[c.localID] = true
		}
		for idx = 0; used[uint8(idx+1)]; idx++ {
		}
	}
	c := newCircuit(in, idx, ic)
	in.circuits = append(in.circuits, c)
	return c
}

// dropCircuit takes a circuit out of service: its adjacencies go down
// (neighbours see our LSP lose the link at once and time the adjacency
// out; IS-IS has no goodbye), its socket closes, and the next
// origination purges its pseudonode LSP.
func (in *Instance) dropCircuit(c *circuit, now time.Time) {
	c.setDown(now)
	c.close()
	in.circuits = slices.DeleteFunc(in.circuits, func(x *circuit) bool { return x == c })
	in.scheduleAll()
}

// purgeOwn purges every LSP we originate at a level and returns how many.
func (in *Instance) purgeOwn(lv *level, now time.Time) int {
	n := 0
	for id := range lv.ownFrags {
		if e := lv.db[id]; e != nil && e.purged.IsZero() {
			in.purgeEntry(lv, e, now)
			n++
		}
	}
	lv.ownFrags = map[packet.LSPID]bool{}
	return n
}

// retireGraph hands the rib an empty graph for a level we stopped
// running: its routes leave the table.
func (in *Instance) retireGraph(l int) {
	in.graphs[l-1].Store(nil)
	if in.opt.OnGraph != nil {
		in.opt.OnGraph(l, lsdb.NewBuilder("isis", l, "").Build(""))
	}
}

// recheckAreas drops level-1 adjacencies that no longer share an area
// with us (ISO 10589 §8.2.5.2, §8.4.2.1) after our areas changed, and
// returns how many.
func (c *circuit) recheckAreas(now time.Time) int {
	n := 0
	if a := c.p2p; a != nil {
		// Its usable levels change: down, and back through hellos with a
		// full synchronisation (as rxP2PHello does, ISO 10589 §8.2.5.2).
		if lv := c.p2pLevels(a.nbrType, a.areas); lv != a.level {
			n += a.level &^ lv & 1
			c.adjDown(a, now, "no common area")
			c.p2p = nil
		}
		return n
	}
	if ll := c.lan[0]; ll != nil {
		for mac, a := range ll.adjs {
			if !c.in.areaMatch(a.areas) {
				c.adjDown(a, now, "no common area")
				delete(ll.adjs, mac)
				n++
			}
		}
		if n > 0 {
			c.elect(1, now)
		}
	}
	return n
}

func (in *Instance) setBandwidth(name string, bw config.Bandwidth) error {
	c := in.circuit(name)
	if c == nil {
		return ErrNotFound{What: "interface " + name}
	}
	old := c.bwOverride
	c.bwOverride = bw
	c.refresh(in.opt.Now())
	in.scheduleAll()
	igp.LogOverride(in.log, name, old, bw, c.cfg.Bandwidth, c.bw)
	return nil
}

func (in *Instance) setOverload(on *bool) bool {
	was := in.overloaded()
	in.overloadSet = on
	if on == nil {
		in.log.Info("overload override cleared", "overload", in.overloaded(), "configured", in.icfg.Overload)
	} else {
		in.log.Info("overload set at run time", "overload", *on, "configured", in.icfg.Overload,
			"note", "kept across reloads that leave overload unchanged")
	}
	if in.overloaded() != was {
		in.scheduleAll()
	}
	return in.overloaded()
}

func (in *Instance) clearAdjacencies(name string) igp.ClearResult {
	now := in.opt.Now()
	n, found := 0, false
	for _, c := range in.circuits {
		if name != "" && c.name != name {
			continue
		}
		found = true
		if a := c.p2p; a != nil {
			// Our next hello says Down (RFC 5303), so the neighbour
			// restarts its side too.
			c.adjDown(a, now, "cleared by operator")
			c.p2p = nil
			n++
		}
		for l := 0; l < 2; l++ {
			ll := c.lan[l]
			if ll == nil || len(ll.adjs) == 0 {
				continue
			}
			for mac, a := range ll.adjs {
				c.adjDown(a, now, "cleared by operator")
				delete(ll.adjs, mac)
				n++
			}
			c.elect(l+1, now)
		}
		c.helloDue = [2]time.Time{now, now}
	}
	if !found {
		return igp.ClearResult{Err: ErrNotFound{What: "interface " + name}}
	}
	in.log.Info("adjacencies cleared by operator", "iface", name, "count", n)
	return igp.ClearResult{N: n}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// levelText names a level set as the config does: 1, 2 or 1-2.
func levelText(l int) string {
	switch l {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "1-2"
	}
	return "none"
}
