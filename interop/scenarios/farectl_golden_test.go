package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// The JSON golden of farectl (issue 26, "Must show": JSON output is
// unchanged). One fabric runs every module and every view; the test runs
// every `farectl -j` view on the nodes where it applies and records each
// view's JSON *shape* in testdata/farectl-json.golden: every path with the
// JSON types seen there. Values are never recorded (most depend on timing:
// ages, counters, sequence numbers), only their types.
//
// Shape rules:
//   - "." is the answer itself, ".key" a field of an object, "[]" every
//     element of an array (the union of the elements' shapes), "{}" every
//     value of a map with dynamic keys.
//   - A view read on several nodes records the union of their shapes.
//   - Types: object, array, string, number, bool, null, and map (an object
//     whose keys are data, not field names: counters by name, reload
//     results by module). Which objects are maps is decided per view in
//     goldenViews (maps:), from the wire type: a Go map[string]T with a
//     concrete T is a map; map[string]any (decoded TLVs and LSAs,
//     module_status) holds field names and is recorded as an object. A
//     map of counters declares its value type, recorded even while the map
//     is empty (a counter that counts only sometimes must not change the
//     shape); a map of records must have one. A listed map path that never
//     appears fails the test, so the lists cannot rot.
//   - A path that is null in one place and an array elsewhere records
//     both ("array|null"): a nil slice in Go is null in JSON.
//
// Comparing: each view is read (on all its nodes) until its shape equals
// the golden, with a deadline; the failure shows the difference. The
// fabric is built so that every view is populated (see goldenTopo); views
// that change state run last, where the change is harmless.
//
// Rewrite the golden with
//
//	go test -run TestFarectlJSONGolden ./interop/scenarios/ -update
//
// (it waits for every view to be populated and for two reads a second
// apart to agree) and review the diff: a changed line is a changed API.
//
// Not recorded, on purpose (each is the same JSON shape as a view that is):
//   - route PREFIX, lsdb --level/--area/--protocol, isis database LSPID,
//     isis --level, ospf database TYPE/--area: filters of the recorded views.
//   - completion, help: cobra's, not fared's.
//
// Every farectl command is either a view here or in that list: the test
// walks farectl's command tree (its --help) and fails on one it does not
// know.
//
// Optional fields (omitempty) this fabric does not produce, so the golden
// does not hold them: BFD authentication and last_down (no BFD auth: FRR
// 8.4's bfdd has none; nothing goes down), isis purged/seq wraps/IPv6,
// ospf external routes, qos last_error, IPCC bad_packets, watchdog
// recovers_at/xoff_since (read once the loop is at its limit), iNOF
// pinned/unresponsive hosts and a peer's last loss (reason, flaps), INC
// busy slots, excluded roots and switch errors, fib resilient groups,
// blackhole nexthops and routes without nexthop objects, status panics,
// spf back-off timers (read while idle).
//
// FARECTL_GOLDEN_DUMP=DIR writes every answer read to DIR, to look at the
// values behind a shape.
var updateGolden = flag.Bool("update", false, "TestFarectlJSONGolden: rewrite testdata/farectl-json.golden from this run")

const goldenFile = "testdata/farectl-json.golden"

// goldenTopo is examples/clos3.yaml (IS-IS L2 CLOS of fared and FRR, iNOF
// reflectors, switches and hosts, QoS on l1's host port, INC manager s1,
// BFD everywhere), plus what the demo lacks:
//   - l2 is level 1-2 and shares a LAN (seg) with a1, a level-1 fared
//     node whose prefix carries a Path Bandwidth: isis levels, leaks, LAN
//     neighbours and interfaces (DIS), L1 and L2 LSPs.
//   - an OSPF island: o1 (fared ABR) on a LAN with o2 (FRR) in area 0 and
//     a p2p link to o3 (fared) in area 1, whose prefix has a Path
//     Bandwidth: DR/BDR, summaries, both areas' LSAs; o3's kernel holds a
//     static route that conflicts with one of fared's (fib conflicts).
//   - evil: a host on l1 that claims h2's iNOF id (inof conflicts).
//   - qt and qs: fared on the QoS sim backend (no links), qt playing
//     aiecn-mix.yaml with AI ECN, ECN profiles, flows and IPCC; qs the
//     four-switch PFC deadlock loop4.yaml with the watchdog.
//   - an INC job (h1–h3) that stays joined: groups, trees, clients.
//
// The links are clos3's (fare_test.go), which are the demo's.
var goldenTopo = `name: golden
defaults: {hello-interval: 1s}
inof: {bfd: true, bfd-interval: 200ms, auto-add: true}
zones:
  storage-a: [h1, h2]
  storage-b: [h3, h2, tgt]
nodes:
  s1: {kind: fared, inof: reflector, bfd: {interval: 200ms, multiplier: 5}, config: {inc: {role: both}}}
  s2: {kind: fared, inof: reflector, bfd: {interval: 200ms, multiplier: 5}, config: {inc: {role: switch, manager: "10.255.0.1:7791"}}}
  s3: {kind: frr, bfd: {interval: 200ms, multiplier: 5}}
  s4: {kind: frr, bfd: {interval: 200ms, multiplier: 5}}
  l1:
    kind: fared
    bfd: {interval: 200ms, multiplier: 5}
    prefixes: [10.10.1.0/24]
    inof: switch
    config:
      inc: {role: switch, manager: "10.255.0.1:7791"}
      qos:
        backend: linux
        dscp-map: {26: 3, 46: 5}
        flows: {elephant-rate: 100M, elephant-size: 20MB, elephant-priority: 1, mice-priority: 3}
        interfaces: [{name: h1-1, rate: 10G}]
  l2: {kind: fared, level: 1-2, bfd: {interval: 200ms, multiplier: 5}, prefixes: [10.10.2.0/24], inof: switch, config: {inc: {role: switch, manager: "10.255.0.1:7791"}}}
  l3: {kind: fared, bfd: {interval: 200ms, multiplier: 5}, prefixes: [{prefix: 10.10.3.0/24, path-bandwidth: 20G}], inof: switch, config: {inc: {role: switch, manager: "10.255.0.1:7791"}}}
  l4: {kind: frr, bfd: {interval: 200ms, multiplier: 5}}
  h1: {kind: host, inof: host, role: initiator}
  h2: {kind: host, inof: host, role: target, nqn: "nqn.2014-08.org.fared:h2"}
  h3: {kind: host, inof: host, role: initiator}
  tgt: {kind: host, agent: lldpd, role: target, nqn: "nqn.2014-08.org.fared:tgt"}
  a1: {kind: fared, level: 1, bfd: {interval: 200ms, multiplier: 5}, prefixes: [{prefix: 10.10.9.0/24, path-bandwidth: 10G}]}
  evil: {kind: host, agent: none}
  o1: {kind: fared, protocol: ospf}
  o2: {kind: frr, protocol: ospf}
  o3: {kind: fared, protocol: ospf, area: 1, prefixes: [{prefix: 10.20.3.0/24, path-bandwidth: 20G}]}
  qt: {kind: fared}
  qs: {kind: fared}
` + clos3[strings.Index(clos3, "links:\n"):] + `  - {a: h1, b: l1, bandwidth: 25G}
  - {a: h2, b: l2, bandwidth: 25G}
  - {a: h3, b: l3, bandwidth: 25G}
  - {a: tgt, b: l3, bandwidth: 25G}
  - {lan: seg, nodes: [l2, a1], bandwidth: 10G}
  - {a: evil, b: l1, bandwidth: 1G}
  - {lan: oseg, nodes: [o1, o2], bandwidth: 10G}
  - {a: o1, b: o3, area: 1, bandwidth: 40G}
`

// goldenView is one `farectl -j` view: the command, the nodes it is read
// on, which of its objects are maps with dynamic keys, and (for -update)
// when it counts as populated.
type goldenView struct {
	name  string   // section name in the golden file
	cmd   string   // the farectl command path ("inof hosts")
	args  []string // farectl arguments after -j (default: cmd's words)
	nodes []string
	// maps are the paths of maps with dynamic keys, with their values'
	// type: "number" for counters (recorded even when the map is empty),
	// "object" for maps of records (which must not be empty).
	maps map[string]string
	// ready says whether one node's answer is populated (nil: a non-empty
	// array, or any object).
	ready func(node string, b []byte) error
	// post marks the steps that run in order after every read-only view:
	// the views that change state, and the reads that need their change.
	post bool
}

func (v goldenView) argv() []string {
	if v.args != nil {
		return v.args
	}
	return strings.Fields(v.cmd)
}

// goldenViews lists every view. Nodes: see goldenTopo.
func goldenViews(l *interop.Lab) []goldenView {
	isisNodes := []string{"s1", "l1", "l2", "a1"}
	return []goldenView{
		{name: "status", cmd: "status", nodes: []string{"s1", "l1", "l2", "o1", "qt", "h1"}, maps: map[string]string{".module_status.inof.counters": "number"}},
		{name: "running-config", cmd: "running-config", nodes: []string{"l1", "o1"}},

		{name: "isis neighbors", cmd: "isis neighbors", nodes: isisNodes, ready: allOf[wire.ISISNeighbor](func(n wire.ISISNeighbor) bool { return n.State == "Up" })},
		{name: "isis interfaces", cmd: "isis interfaces", nodes: isisNodes, maps: map[string]string{"[].counters": "number"}},
		{name: "isis database", cmd: "isis database", nodes: []string{"l2", "a1"}},
		{name: "isis database --detail", cmd: "isis database", args: []string{"isis", "database", "--detail"}, nodes: []string{"l2", "a1"}},
		{name: "isis levels", cmd: "isis levels", nodes: []string{"s1", "l2", "a1"}},
		{name: "isis leaks", cmd: "isis leaks", nodes: []string{"l2"}},
		{name: "isis overload", cmd: "isis overload", nodes: []string{"l2"}},
		{name: "isis flooding", cmd: "isis flooding", nodes: []string{"l1"}, maps: map[string]string{".interfaces[].decisions": "number"},
			ready: floodingDecided},

		{name: "ospf neighbors", cmd: "ospf neighbors", nodes: []string{"o1", "o3"}, ready: allOf[wire.OSPFNeighbor](func(n wire.OSPFNeighbor) bool { return n.State == "Full" })},
		{name: "ospf interfaces", cmd: "ospf interfaces", nodes: []string{"o1", "o3"}, maps: map[string]string{"[].counters": "number"}},
		{name: "ospf database", cmd: "ospf database", nodes: []string{"o1", "o3"}},
		{name: "ospf database --detail", cmd: "ospf database", args: []string{"ospf", "database", "--detail"}, nodes: []string{"o1", "o3"}},
		{name: "ospf lsdb", cmd: "ospf lsdb", nodes: []string{"o1", "o3"}},
		{name: "ospf summaries", cmd: "ospf summaries", nodes: []string{"o1"}},

		{name: "lsdb", cmd: "lsdb", nodes: []string{"l1", "l2", "a1", "o1"}},
		{name: "route", cmd: "route", nodes: []string{"l1", "l2", "a1", "o1", "o3"}},
		{name: "fare (isis)", cmd: "fare", args: []string{"fare", "10.10.2.0/24"}, nodes: []string{"l1"}},
		{name: "fare (ospf)", cmd: "fare", args: []string{"fare", "10.20.3.0/24"}, nodes: []string{"o1"}},
		{name: "fib", cmd: "fib", nodes: []string{"l1", "o3"}, ready: func(node string, b []byte) error {
			var v wire.FIBView
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			if len(v.Routes) == 0 || node == "o3" && len(v.Conflicts) == 0 {
				return fmt.Errorf("%d routes, %d conflicts", len(v.Routes), len(v.Conflicts))
			}
			return nil
		}},
		{name: "fib capabilities", cmd: "fib capabilities", nodes: []string{"l1"}},
		{name: "spf log", cmd: "spf log", nodes: []string{"l1", "o1"}, maps: map[string]string{".delays": "object"}},
		{name: "bfd sessions", cmd: "bfd sessions", nodes: []string{"s1", "l1"}, maps: map[string]string{".counters": "number"}, ready: func(_ string, b []byte) error {
			var v wire.BFDSessions
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			for _, s := range v.Sessions {
				if s.State != "Up" {
					return fmt.Errorf("session %s %s", s.Peer, s.State)
				}
			}
			if len(v.Sessions) == 0 {
				return errors.New("no sessions")
			}
			return nil
		}},

		{name: "inof hosts (switch)", cmd: "inof hosts", nodes: []string{"l1", "l2", "l3"}, ready: minLen(4)},
		{name: "inof hosts (host)", cmd: "inof hosts", nodes: []string{"h1", "h2", "h3"}},
		{name: "inof hosts bindings", cmd: "inof hosts", args: []string{"inof", "hosts", "bindings"}, nodes: []string{"l1", "l2", "l3"}},
		{name: "inof hosts conflicts", cmd: "inof hosts", args: []string{"inof", "hosts", "conflicts"}, nodes: []string{"l1"}},
		{name: "inof zones", cmd: "inof zones", nodes: []string{"s1", "l1"}, ready: minLen(3)},
		{name: "inof peers (switch)", cmd: "inof peers", nodes: []string{"s1", "l1"}, ready: allOf[wire.INOFPeer](func(p wire.INOFPeer) bool { return p.State == "established" && p.BFD == "up" })},
		{name: "inof peers (host)", cmd: "inof peers", nodes: []string{"h1", "h2"}, ready: allOf[wire.INOFPeer](func(p wire.INOFPeer) bool { return p.State == "registered" })},
		{name: "inof events (switch)", cmd: "inof events", nodes: []string{"l1", "l2"}},
		{name: "inof events (host)", cmd: "inof events", nodes: []string{"h1", "h2"}},
		{name: "inof status (switch)", cmd: "inof status", nodes: []string{"s1", "l1"}, maps: map[string]string{".counters": "number"}},
		{name: "inof status (host)", cmd: "inof status", nodes: []string{"h1"}, maps: map[string]string{".counters": "number"}},

		{name: "qos status", cmd: "qos status", nodes: []string{"l1", "qt", "qs"}},
		{name: "qos pfc", cmd: "qos pfc", nodes: []string{"l1", "qt", "qs"}},
		{name: "qos watchdog", cmd: "qos watchdog", nodes: []string{"qs"}, ready: func(_ string, b []byte) error {
			var v wire.QoSWatchdog
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			for _, i := range v.Interfaces {
				if i.Name == "C" && i.Mode == "limited" {
					return nil
				}
			}
			return fmt.Errorf("C not at the deadlock limit yet: %+v", v.Interfaces)
		}},
		{name: "qos ecn", cmd: "qos ecn", nodes: []string{"qt"}},
		{name: "qos flows", cmd: "qos flows", nodes: []string{"l1", "qt"}},
		{name: "qos ipcc", cmd: "qos ipcc", nodes: []string{"l1", "qt"}, ready: func(node string, b []byte) error {
			var v wire.QoSIPCC
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			if node == "qt" && (v.Sent == 0 || v.Learned < 4) {
				return fmt.Errorf("sent %d learnt %d", v.Sent, v.Learned)
			}
			return nil
		}},
		{name: "qos ecn-tuning", cmd: "qos ecn-tuning", nodes: []string{"qt"}, ready: func(_ string, b []byte) error {
			var v wire.QoSTuning
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			if len(v.Decisions) == 0 {
				return errors.New("no decisions yet")
			}
			return nil
		}},

		{name: "inc groups", cmd: "inc groups", nodes: []string{"s1"}},
		{name: "inc trees", cmd: "inc trees", nodes: []string{"s1"}},
		{name: "inc clients", cmd: "inc clients", nodes: []string{"s1"}, ready: minLen(3)},
		{name: "inc switches", cmd: "inc switches", nodes: []string{"s1"}, ready: minLen(5)},
		{name: "inc security", cmd: "inc security", nodes: []string{"s1"}, maps: map[string]string{".refused": "number"}},
		{name: "inc switch", cmd: "inc switch", nodes: []string{"s1", "s2", "l1", "l2", "l3"}, maps: map[string]string{".bad_packets": "number"}},

		// Views that change state: harmless here, in this order, at the end.
		{name: "reload (unchanged)", cmd: "reload", nodes: []string{"l1"}, maps: map[string]string{".modules": "object"}, post: true},
		{name: "log level", cmd: "log level", args: []string{"log", "level", "debug"}, nodes: []string{"l1"}, post: true},
		{name: "isis overload config", cmd: "isis overload", args: []string{"isis", "overload", "config"}, nodes: []string{"l2"}, post: true},
		{name: "qos pfc restore", cmd: "qos pfc restore", args: []string{"qos", "pfc", "restore", "C"}, nodes: []string{"qs"}, post: true},
		{name: "inof zone add", cmd: "inof zone add", args: []string{"inof", "zone", "add", "golden", "h1"}, nodes: []string{"s1"}, post: true},
		{name: "inof zone del", cmd: "inof zone del", args: []string{"inof", "zone", "del", "golden"}, nodes: []string{"s1"}, post: true},
		{name: "inof register", cmd: "inof register", nodes: []string{"h1"}, post: true},
		{name: "inof deregister", cmd: "inof deregister", nodes: []string{"h3"}, post: true},
		{name: "inof hosts bindings (a host left)", cmd: "inof hosts", args: []string{"inof", "hosts", "bindings"}, nodes: []string{"l3"}, post: true,
			ready: anyOf(func(b wire.INOFBinding) bool { return b.ID == "h3" && b.State == "absent" })},
		{name: "inof release", cmd: "inof release", args: []string{"inof", "release", "h1"}, nodes: []string{"l1"}, post: true},
		{name: "isis bandwidth", cmd: "isis bandwidth", args: []string{"isis", "bandwidth", "s4-1", "40G"}, nodes: []string{"l1"}, post: true},
		{name: "isis interfaces (override)", cmd: "isis interfaces", nodes: []string{"l1"}, maps: map[string]string{"[].counters": "number"}, post: true,
			ready: anyOf(func(i wire.ISISInterface) bool { return i.BandwidthOverride != "" })},
		{name: "isis bandwidth --clear", cmd: "isis bandwidth", args: []string{"isis", "bandwidth", "s4-1", "--clear"}, nodes: []string{"l1"}, post: true},
		{name: "ospf bandwidth", cmd: "ospf bandwidth", args: []string{"ospf", "bandwidth", "o3-1", "40G"}, nodes: []string{"o1"}, post: true},
		{name: "ospf interfaces (override)", cmd: "ospf interfaces", nodes: []string{"o1"}, maps: map[string]string{"[].counters": "number"}, post: true,
			ready: anyOf(func(i wire.OSPFInterface) bool { return i.BandwidthOverride != "" })},
		{name: "ospf bandwidth --clear", cmd: "ospf bandwidth", args: []string{"ospf", "bandwidth", "o3-1", "--clear"}, nodes: []string{"o1"}, post: true},
		{name: "isis clear adjacency", cmd: "isis clear adjacency", args: []string{"isis", "clear", "adjacency", "s4-1"}, nodes: []string{"l1"}, post: true},
		{name: "ospf clear neighbor", cmd: "ospf clear neighbor", args: []string{"ospf", "clear", "neighbor", l.Node("o1").Loopback.String()}, nodes: []string{"o3"}, post: true},
		{name: "inc group dismantle", cmd: "inc group dismantle", args: []string{"inc", "group", "dismantle", "golden"}, nodes: []string{"s1"}, post: true},
	}
}

// floodingDecided: every interface of the answer has a neighbour and a
// decision taken for it (the optional fields the golden holds).
func floodingDecided(node string, b []byte) error {
	var v wire.ISISFlooding
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for _, i := range v.Interfaces {
		if i.Neighbor == "" || i.LastReason == "" {
			return fmt.Errorf("%s: interface %s: no neighbour or no decision yet", node, i.Name)
		}
	}
	return nil
}

// goldenSkipped are the farectl commands with no view of their own, and why.
var goldenSkipped = map[string]string{
	"completion": "cobra's shell completion",
	"help":       "cobra's help",
}

func TestFarectlJSONGolden(t *testing.T) {
	cmds := farectlCommands(t)
	l := startLab(t, goldenTopo)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	views := goldenViews(l)
	checkGoldenCoverage(t, cmds, views)

	var want map[string]string
	if !*updateGolden {
		var err error
		if want, err = readGolden(goldenFile); err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
	}

	// The reload that adds qt's qos section: a view of its own ("started").
	added := goldenSimQoS(t, ctx, l)
	goldenFabric(t, ctx, l)

	got := map[string]string{}
	addedView := goldenView{name: "reload (section added)", cmd: "reload", nodes: []string{"qt"}, maps: map[string]string{".modules": "object"}}
	dumpView(addedView, [][]byte{added})
	if text, err := addedView.section([][]byte{added}); err != nil {
		t.Error(err)
	} else if err := goldenSame(addedView, text, want); err != nil {
		t.Error(err)
	} else {
		got[addedView.name] = text
	}

	// Read-only views first, then the steps in order (post: true). Every
	// view is polled until it matches: the steps that change state are
	// idempotent here or harmless to repeat.
	for _, post := range []bool{false, true} {
		for _, v := range views {
			if v.post != post {
				continue
			}
			text, err := readView(ctx, l, v, want, 90*time.Second)
			if err != nil {
				t.Error(err)
				continue
			}
			got[v.name] = text
		}
	}

	if *updateGolden {
		if t.Failed() {
			t.Fatal("not writing the golden: some views failed")
		}
		writeGolden(t, goldenFile, got)
		return
	}
	for name := range want {
		if _, ok := got[name]; !ok && !t.Failed() {
			t.Errorf("the golden has a view %q this test no longer reads (run with -update if that is meant)", name)
		}
	}
}

// goldenSimQoS starts the two sim-backend nodes' qos sections (by reload,
// as TestQoSSimWatchdogCLI and TestQoSSimTuningAndIPCC do) and returns
// qt's reload answer.
func goldenSimQoS(t *testing.T, ctx context.Context, l *interop.Lab) []byte {
	t.Helper()
	simLoop4(t, ctx, l, "qs")
	return simMix(t, ctx, l, "qt")
}

// goldenFabric brings the fabric to the state every view needs: routes,
// iNOF sessions and zones, INC switches and a joined job that ran one
// allreduce, a refused iNOF claim at l1, and a fib conflict on o3.
func goldenFabric(t *testing.T, ctx context.Context, l *interop.Lab) {
	t.Helper()
	f := &fabric{t: t, ctx: ctx, l: l, proto: 187}
	f.waitRoute(f.ns("l1"), "l1", "10.10.2.0/24", map[string]float64{"s1": 40, "s2": 50, "s3": 100, "s4": 10}, 90*time.Second)
	poll(t, ctx, 60*time.Second, "IBGP sessions", allEstablished(ctx, l, "s1", "s2", "l1", "l2", "l3"))
	poll(t, ctx, 60*time.Second, "h1 told that h2 joined storage-a", func() error {
		evs, err := inofEvents(ctx, l, "h1")
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == "join" && e.Host == "h2" && e.Zone == "storage-a" {
				return nil
			}
		}
		return fmt.Errorf("events %s", eventList(evs, 0))
	})
	// A claim of h2's id from evil's port on l1: refused and listed.
	attackINOFClaim(t, ctx, l, "evil", "l1-1", "l1", "h2", []string{"h1"})

	waitINCSwitches(t, ctx, l, "s1", 5)
	job := startINCJob(t, l, "s1", "golden", "h1", "h2", "h3")
	incExact(t, "the golden job", job.allreduce(64<<10))
	// evil tries to join without a token, and with a forged one: refused,
	// counted by reason (inc security).
	AttackINCNoToken(t, ctx, l, "evil", "s1", fmt.Sprintf("%s:7791", l.Node("s1").Loopback), "golden")

	goldenConflict(t, ctx, l)
}

// goldenConflict makes o3's kernel hold a static route with the prefix,
// table and metric of one of fared's (o2's loopback), then restarts fared
// on o3: the route is reported, not replaced (fib conflicts).
func goldenConflict(t *testing.T, ctx context.Context, l *interop.Lab) {
	t.Helper()
	o2lo := l.Node("o2").Loopback.String() + "/32"
	poll(t, ctx, 90*time.Second, "o3 routes to o2's loopback", func() error {
		var rs []wire.Route
		if err := l.FarectlJSON(ctx, "o3", &rs, "route", o2lo); err != nil {
			return err
		}
		if len(rs) == 0 || len(rs[0].NextHops) == 0 {
			return fmt.Errorf("routes %+v", rs)
		}
		return nil
	})
	if err := l.StopNode(ctx, "o3"); err != nil {
		t.Fatal(err)
	}
	ns := l.Node("o3").Netns
	if out, err := exec.CommandContext(ctx, "ip", "-n", ns, "route", "replace", "blackhole", o2lo, "metric", "20", "proto", "static").CombinedOutput(); err != nil {
		t.Fatalf("ip route: %v %s", err, out)
	}
	if err := l.StartNode(ctx, "o3"); err != nil {
		t.Fatal(err)
	}
}

// readView reads v on all its nodes until its shape equals the golden's
// (or, with -update, until every node's answer is populated and two
// reads a second apart agree; a step's first populated answer), and
// returns the section.
func readView(ctx context.Context, l *interop.Lab, v goldenView, want map[string]string, d time.Duration) (string, error) {
	var last string
	var lastErr error
	deadline := time.Now().Add(d)
	for {
		text, err := readOnce(ctx, l, v)
		switch {
		case err != nil:
		case *updateGolden && (text == last || v.post):
			// A step is taken once: a second zone del is a 404.
			return text, nil
		case *updateGolden:
			err = errors.New("not yet stable")
		default:
			if err = goldenSame(v, text, want); err == nil {
				return text, nil
			}
		}
		last, lastErr = text, err
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("view %q after %v: %v", v.name, d, lastErr)
		}
		time.Sleep(time.Second)
	}
}

// readOnce reads v on each of its nodes and returns its section, or why
// it is not populated yet.
func readOnce(ctx context.Context, l *interop.Lab, v goldenView) (string, error) {
	var outs [][]byte
	for _, n := range v.nodes {
		b, err := l.Farectl(ctx, n, v.argv()...)
		if err != nil {
			return "", fmt.Errorf("%s: %v", n, err)
		}
		ready := v.ready
		if ready == nil {
			ready = minLen(1)
		}
		if err := ready(n, b); err != nil {
			return "", fmt.Errorf("%s: not populated: %v", n, err)
		}
		outs = append(outs, b)
	}
	dumpView(v, outs)
	return v.section(outs)
}

// dumpView writes the answers of v to $FARECTL_GOLDEN_DUMP/<view>@<node>.json
// when that is set: the values behind a shape, to look at.
func dumpView(v goldenView, outs [][]byte) {
	dir := os.Getenv("FARECTL_GOLDEN_DUMP")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	for i, b := range outs {
		os.WriteFile(filepath.Join(dir, strings.ReplaceAll(v.name, " ", "_")+"@"+v.nodes[i]+".json"), b, 0o644)
	}
}

// section renders the shape of the answers as the golden file's section:
// a header naming the command and nodes, then "path<TAB>types" sorted.
func (v goldenView) section(outs [][]byte) (string, error) {
	s := shape{}
	for i, b := range outs {
		var x any
		if err := json.Unmarshal(b, &x); err != nil {
			return "", fmt.Errorf("%s on %s: bad JSON: %v: %.200s", v.name, v.nodes[i], err, b)
		}
		s.add("", x, v.maps)
	}
	for m, kind := range v.maps {
		switch {
		case !s[m]["map"]:
			return "", fmt.Errorf("%s: %s is listed as a map but is not an object in any answer", v.name, m)
		case kind == "object" && !s[m+"{}"]["object"]:
			return "", fmt.Errorf("%s: map %s: no value in any answer", v.name, m)
		case kind != "object":
			s.mark(m+"{}", kind) // counters: the same line whether or not one has counted yet
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "== %s: farectl -j %s on %s\n", v.name, strings.Join(v.argv(), " "), strings.Join(v.nodes, " "))
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range s {
			if !yield(p) {
				return
			}
		}
	}) {
		name := p
		if name == "" {
			name = "."
		}
		kinds := make([]string, 0, len(s[p]))
		for k := range s[p] {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "%s\t%s\n", name, strings.Join(kinds, "|"))
	}
	return b.String(), nil
}

// shape maps a JSON path to the set of types seen there.
type shape map[string]map[string]bool

func (s shape) mark(path, kind string) {
	if s[path] == nil {
		s[path] = map[string]bool{}
	}
	s[path][kind] = true
}

func (s shape) add(path string, v any, maps map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if maps[path] != "" {
			s.mark(path, "map")
			for _, e := range x {
				s.add(path+"{}", e, maps)
			}
			return
		}
		s.mark(path, "object")
		for k, e := range x {
			s.add(path+"."+k, e, maps)
		}
	case []any:
		s.mark(path, "array")
		for _, e := range x {
			s.add(path+"[]", e, maps)
		}
	case string:
		s.mark(path, "string")
	case float64:
		s.mark(path, "number")
	case bool:
		s.mark(path, "bool")
	case nil:
		s.mark(path, "null")
	default:
		s.mark(path, fmt.Sprintf("%T", v))
	}
}

// goldenSame compares a view's section with the golden's (nil with
// -update: there is nothing to compare with yet).
func goldenSame(v goldenView, text string, want map[string]string) error {
	if *updateGolden {
		return nil
	}
	w, ok := want[v.name]
	if !ok {
		return fmt.Errorf("view %q is not in %s (run with -update to add it)", v.name, goldenFile)
	}
	if w == text {
		return nil
	}
	gotL, wantL := strings.Split(text, "\n"), strings.Split(w, "\n")
	var d []string
	for _, x := range wantL {
		if !slices.Contains(gotL, x) {
			d = append(d, "- "+x)
		}
	}
	for _, x := range gotL {
		if !slices.Contains(wantL, x) {
			d = append(d, "+ "+x)
		}
	}
	return fmt.Errorf("view %q differs from the golden (- golden, + now):\n%s", v.name, strings.Join(d, "\n"))
}

func readGolden(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, sec := range strings.Split(string(b), "\n== ")[1:] {
		name, _, _ := strings.Cut(sec, ":")
		out[name] = "== " + strings.TrimSuffix(sec, "\n") + "\n"
	}
	return out, nil
}

func writeGolden(t *testing.T, path string, secs map[string]string) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`# The JSON shape of every farectl -j view (TestFarectlJSONGolden,
# farectl_golden_test.go, which says how it is taken). Generated: rewrite
# with "go test -run TestFarectlJSONGolden ./interop/scenarios/ -update".
# "." the answer, ".key" a field, "[]" every array element, "{}" every
# value of a map with dynamic keys; then the JSON types seen there.
`)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range secs {
			if !yield(n) {
				return
			}
		}
	}) {
		b.WriteString("\n" + secs[name])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// farectlCommands walks farectl's command tree through its --help and
// returns the runnable command paths ("isis neighbors", "fib").
func farectlCommands(t *testing.T) []string {
	t.Helper()
	var out []string
	var walk func(path []string)
	walk = func(path []string) {
		b, err := exec.Command(bins.Farectl, append(path, "--help")...).Output()
		if err != nil {
			t.Fatalf("farectl %s --help: %v", strings.Join(path, " "), err)
		}
		section := ""
		var subs []string
		runnable := false
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
				section = line
				continue
			case strings.TrimSpace(line) == "":
				section = ""
				continue
			}
			f := strings.Fields(line)
			switch section {
			case "Usage:":
				if !strings.HasSuffix(line, "[command]") {
					runnable = true
				}
			case "Available Commands:":
				subs = append(subs, f[0])
			}
		}
		if runnable && len(path) > 0 {
			out = append(out, strings.Join(path, " "))
		}
		for _, s := range subs {
			if len(path) == 0 && goldenSkipped[s] != "" {
				continue
			}
			walk(append(slices.Clone(path), s))
		}
	}
	walk(nil)
	if len(out) < 20 {
		t.Fatalf("farectl's command tree: only %v", out)
	}
	return out
}

// checkGoldenCoverage fails on a farectl command no view reads (and on a
// view of a command farectl does not have).
func checkGoldenCoverage(t *testing.T, cmds []string, views []goldenView) {
	t.Helper()
	covered := map[string]bool{"reload": true} // the "section added" view
	for _, v := range views {
		covered[v.cmd] = true
		if !slices.Contains(cmds, v.cmd) {
			t.Errorf("view %q: farectl has no command %q", v.name, v.cmd)
		}
	}
	for _, c := range cmds {
		if !covered[c] {
			t.Errorf("farectl %s: no view in goldenViews and not in goldenSkipped: add it", c)
		}
	}
}

// minLen: an array answer with at least n elements (an object: any).
func minLen(n int) func(string, []byte) error {
	return func(_ string, b []byte) error {
		var x any
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		if a, ok := x.([]any); ok && len(a) < n {
			return fmt.Errorf("%d elements, want at least %d", len(a), n)
		}
		if x == nil {
			return errors.New("null")
		}
		return nil
	}
}

// allOf: a non-empty array answer whose every element satisfies ok.
func allOf[T any](ok func(T) bool) func(string, []byte) error { return elements(ok, true) }

// anyOf: an array answer with an element that satisfies ok.
func anyOf[T any](ok func(T) bool) func(string, []byte) error { return elements(ok, false) }

func elements[T any](ok func(T) bool, all bool) func(string, []byte) error {
	return func(_ string, b []byte) error {
		var v []T
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		for _, x := range v {
			switch {
			case all && !ok(x):
				return fmt.Errorf("%+v", x)
			case !all && ok(x):
				return nil
			}
		}
		if all && len(v) > 0 {
			return nil
		}
		return fmt.Errorf("none yet in %d", len(v))
	}
}
