package scenarios

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// The hostile-host suite (issue 25, docs/security.md): attacker hosts
// attached to a leaf like any host try every attack of the host edge on
// one fabric, while a legitimate INC job runs allreduce and an iNOF zone
// works; every attack fails with its counter and log line, the job's
// results stay exact, and the zone's hosts are told only legitimate
// peers.
//
//	         s1 (INC manager + switch, iNOF reflector)
//	        /  \
//	      l1    l2 ── seg (LAN) ── r1 (FRR), tap
//	h1 h2 ha hb ini1 evil   h3 tgt1
//	shared port: ini2, evil2
//
// The attacker holds evil (its own port on l1), evil2 (on l1's shared
// port, beside ini2) and tap (a namespace on a LAN where l2 and FRR run
// IS-IS with BFD: a host on a segment with two BFD speakers; farelab
// attaches its host nodes by p2p links or shared ports, where no
// adjacency runs, so tap is an FRR node whose daemons the test stops).
const hostileTopo = `name: hostile
defaults: {hello-interval: 1s}
zones:
  z1: [tgt1, ini1, ini2]
nodes:
  s1: {kind: fared, inof: reflector, config: {inc: {role: both}}}
  l1:
    kind: fared
    inof: switch
    config:
      inc: {role: switch, manager: "10.255.0.1:7791"}
      # IPCC on the port toward hb (hostile_ipcc_test.go's hostileIPCCScene).
      qos:
        backend: linux
        poll-interval: 100ms
        dscp-map: {26: 3, 48: 6}
        watchdog: {enabled: false}
        interfaces: [{name: ha-1, rate: 1G}, {name: hb-1, rate: 20M}, {name: evil-1, rate: 1G}]
        ipcc: {interfaces: [hb-1], capture: [ha-1, hb-1, evil-1], priorities: [3], poll: 1ms, low: 10K, high: 60K,
               few: 2, more: 8, max-flows: 512, max-flows-per-port: 256, max-flows-per-source: 32}
  l2: {kind: fared, inof: switch, bfd: {interval: 200ms, multiplier: 5}, config: {inc: {role: switch, manager: "10.255.0.1:7791"}}}
  r1: {kind: frr, bfd: {interval: 200ms, multiplier: 5}}
  tap: {kind: frr}
  h1: {kind: host, agent: none}
  h2: {kind: host, agent: none}
  h3: {kind: host, agent: none}
  ha: {kind: host, agent: none}
  hb: {kind: host, agent: none}
  tgt1: {kind: host, inof: host, role: target, nqn: "nqn.2014-08.org.fared:tgt1"}
  ini1: {kind: host, inof: host, role: initiator}
  ini2: {kind: host, inof: host, role: initiator}
  evil: {kind: host, agent: none}
  evil2: {kind: host, agent: none}
links:
  - {a: l1, b: s1}
  - {a: l2, b: s1}
  - {lan: seg, nodes: [l2, r1, tap]}
  - {a: h1, b: l1}
  - {a: h2, b: l1}
  - {a: h3, b: l2}
  - {a: ha, b: l1, bandwidth: 1G}
  - {a: hb, b: l1, bandwidth: 1G}
  - {a: tgt1, b: l2}
  - {a: ini1, b: l1}
  - {a: evil, b: l1, bandwidth: 1G}
  - {lan: shared, nodes: [l1, ini2, evil2]}
`

func TestHostileHost(t *testing.T) {
	l := startLab(t, hostileTopo)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	if err := l.StopNode(ctx, "tap"); err != nil {
		t.Fatal(err)
	}
	const mgr = "s1"
	mgrAddr := netip.AddrPortFrom(l.Node(mgr).Loopback, 7791).String()

	// The legitimate fabric first: INC switches registered, hosts reach
	// the manager, IBGP up, the zone's hosts know each other, BFD Up.
	waitINCSwitches(t, ctx, l, mgr, 3)
	for _, h := range []string{"h1", "h2", "h3", "evil"} {
		poll(t, ctx, 60*time.Second, h+" reaches the manager", func() error {
			_, err := l.Exec(ctx, h, "ping", "-c1", "-W1", l.Node(mgr).Loopback.String())
			return err
		})
	}
	poll(t, ctx, 60*time.Second, "IBGP sessions", allEstablished(ctx, l, "s1", "l1", "l2"))
	zoneOK := hostileZone(ctx, l, map[string][]string{"tgt1": {"ini1", "ini2"}, "ini1": {"ini2", "tgt1"}, "ini2": {"ini1", "tgt1"}})
	poll(t, ctx, 60*time.Second, "the zone's hosts know each other", zoneOK)
	waitBFDPeer(t, ctx, l, "r1", ifaceAddr(t, l, "l2", "seg").String(), "up")

	// The legitimate job: h1, h2 (on l1, which aggregates them) and h3,
	// running checked allreduces back to back through every attack but
	// the data-plane ones (which drive the job themselves).
	job := startINCJob(t, l, mgr, "legit", "h1", "h2", "h3")
	incExact(t, "before the attacks", job.allreduce(64<<10))
	if a := job.tree(0); a.SwitchAddress != l.Node("l1").Loopback.String() {
		t.Fatalf("rank 0 sends to %s, not to l1 (the attacker's leaf): %+v", a.SwitchAddress, a)
	}
	before := incGroup(t, ctx, l, mgr, "legit")
	stop := make(chan struct{})
	var ops int
	jobDone := make(chan error, 1)
	go func() { jobDone <- job.runUntil(stop, &ops) }()
	stopJob := func() {
		t.Helper()
		if stop == nil {
			return
		}
		close(stop)
		stop = nil
		if err := <-jobDone; err != nil {
			t.Fatalf("the legitimate job, during the attacks: %v", err)
		}
	}
	t.Cleanup(func() {
		if stop != nil {
			close(stop)
			<-jobDone
		}
	})

	// Row 1 and 7: the INC manager.
	t.Run("inc control plane", func(t *testing.T) {
		AttackINCNoToken(t, ctx, l, "evil", mgr, mgrAddr, "legit")
		AttackINCOtherGroupToken(t, ctx, l, "evil", mgr, mgrAddr, "legit")
		AttackINCOtherClients(t, ctx, l, "evil", mgr, mgrAddr, "legit")
		AttackINCFakeSwitch(t, ctx, l, "evil", mgr, mgrAddr, "l1")
		AttackINCGroupFlood(t, ctx, l, "evil", mgr, mgrAddr)
	})
	// Rows 3 and 4: iNOF identity and state.
	t.Run("inof claim", func(t *testing.T) {
		attackINOFClaim(t, ctx, l, "evil", "l1-1", "l1", "tgt1", []string{"ini1", "ini2"})
	})
	t.Run("inof shared port", func(t *testing.T) {
		attackINOFSharedPort(t, ctx, l, "evil2", "shared", "l1", "ini2", []string{"tgt1"})
	})
	t.Run("inof flood", func(t *testing.T) {
		attackINOFFlood(t, ctx, l, "evil", "l1-1", "l1", 10000, "ini1", "tgt1")
	})
	// Row 5: BFD.
	t.Run("bfd", func(t *testing.T) {
		adj, err := adjacencyTo(ctx, l, "l2", "r1")
		if err != nil || adj.State != "Up" {
			t.Fatalf("l2's adjacency to r1: %+v %v", adj, err)
		}
		attackBFDSpoofedDown(t, ctx, l, "l2", "seg", "r1", "tap", "seg")
		after, err := adjacencyTo(ctx, l, "l2", "r1")
		if err != nil || after.State != "Up" || after.Flaps != adj.Flaps {
			t.Fatalf("l2's adjacency to r1 after the attack: %+v (before %+v) %v", after, adj, err)
		}
	})
	// Row 6: IPCC.
	t.Run("ipcc", func(t *testing.T) {
		hostileIPCCScene(t, ctx, l, ipccScene{Sender: "ha", Receiver: "hb", Attacker: "evil", Switch: "l1",
			A: netip.MustParseAddr(hostAddr(l, "ha")), B: netip.MustParseAddr(hostAddr(l, "hb")), SendIf: "l1-1", AttackerPort: "evil-1"})
	})

	// The job ran exact through all of that, on a tree no attack moved.
	stopJob()
	after := incGroup(t, ctx, l, mgr, "legit")
	if after.Generation != before.Generation || after.TreeID != before.TreeID || after.State != "ready" {
		t.Fatalf("the legitimate group changed: before %+v, after %+v", before, after)
	}
	t.Logf("legitimate allreduces during the attacks: %d, all exact", ops)

	// Row 2: the INC data plane (the attacks drive the job).
	t.Run("inc data plane", func(t *testing.T) {
		attackINCForgedContribution(t, ctx, l, "evil", job, 0)
		attackINCForgedResults(t, ctx, l, "evil", job, 0)
	})
	incExact(t, "after the attacks", job.allreduce(64<<10))

	// The operator's word (row 3): a binding the flood left on evil's
	// port is released; tgt1 is bound at l2, which l1 says.
	t.Run("inof release", func(t *testing.T) { hostileINOFRelease(t, ctx, l, "l1", "tgt1", "l2", "evil-1") })

	// The zone still works, and its initiators know tgt1 only at its own
	// address.
	poll(t, ctx, 30*time.Second, "the zone after the attacks", zoneOK)
	tgtAddr := hostAddr(l, "tgt1")
	for _, h := range []string{"ini1", "ini2"} {
		ps, err := hostPaths(ctx, l, h, "tgt1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ps, []string{"l2:tgt1-1 " + tgtAddr}) {
			t.Errorf("%s knows tgt1 as %v", h, ps)
		}
	}
	// No module paid for any of it with a panic.
	for _, n := range []string{"s1", "l1", "l2"} {
		var st wire.Status
		if err := l.FarectlJSON(ctx, n, &st, "status"); err != nil {
			t.Fatal(err)
		}
		if len(st.Panics) > 0 {
			t.Errorf("%s recovered panics during the attacks: %v", n, st.Panics)
		}
		if d, err := l.Daemons(n); err != nil || d["fared"] == 0 {
			t.Fatalf("fared on %s is gone: %v %v", n, d, err)
		}
	}
}

// hostileZone checks that each host knows exactly its zone peers.
func hostileZone(ctx context.Context, l *interop.Lab, want map[string][]string) func() error {
	return func() error {
		for h, peers := range want {
			hs, err := inofHosts(ctx, l, h)
			if err != nil {
				return err
			}
			if got := peerIDs(hs); !slices.Equal(got, peers) {
				return fmt.Errorf("%s knows %v, want %v", h, got, peers)
			}
		}
		return nil
	}
}

// hostileINOFRelease: the operator's view and word at leaf: it holds no
// binding of remote (bound at remoteLeaf, which the refusal names); one
// of the flood's bindings on port is released, and the port has room for
// one more id.
func hostileINOFRelease(t *testing.T, ctx context.Context, l *interop.Lab, leaf, remote, remoteLeaf, port string) {
	if _, err := l.Farectl(ctx, leaf, "inof", "release", remote); err == nil || !strings.Contains(err.Error(), remoteLeaf+"(") {
		t.Errorf("release of %s at %s: %v, want a 404 naming %s", remote, leaf, err, remoteLeaf)
	}
	var bs []wire.INOFBinding
	if err := l.FarectlJSON(ctx, leaf, &bs, "inof", "hosts", "bindings"); err != nil {
		t.Fatal(err)
	}
	var flooded []string
	for _, b := range bs {
		if b.Port == port {
			flooded = append(flooded, b.ID)
		}
	}
	if len(flooded) != 4 {
		t.Fatalf("%s's port %s holds %v, want 4 bindings", leaf, port, flooded)
	}
	var rel wire.INOFRelease
	if err := l.FarectlJSON(ctx, leaf, &rel, "inof", "release", flooded[0]); err != nil || rel.ID != flooded[0] || !slices.Equal(rel.Ports, []string{port}) {
		t.Fatalf("release: %+v %v", rel, err)
	}
	st, err := inofStatus(ctx, l, leaf)
	if err != nil || st.Counters["released"] != 1 || st.Bindings != len(bs)-1 {
		t.Fatalf("after the release: %d bindings (was %d), counters %v, %v", st.Bindings, len(bs), st.Counters, err)
	}
}
