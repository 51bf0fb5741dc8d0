package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/interop"
)

// The iNOF fabric: 2 reflector spines, 3 leaves, 6 hosts. tgt1 is
// dual-homed (leaf1, leaf2), lldp1 runs only lldpd. Zones: z1 {ini1,
// tgt1, lldp1}, z2 {ini2, tgt1}; tgt2 and free1 are in no user zone and
// share the default zone (auto-add).
var inofFabric = inofLeafSpine("name: inof\n", 3, []string{
	"ini1:   {kind: host, inof: host, role: initiator, hook: %s}",
	"tgt1:   {kind: host, inof: host, role: target, nqn: nqn.2014-08.org.fared:tgt1}",
	"ini2:   {kind: host, inof: host, role: initiator}",
	"lldp1:  {kind: host, agent: lldpd, role: target, nqn: nqn.2014-08.org.fared:lldp1}",
	"tgt2:   {kind: host, inof: host, role: target}",
	"free1:  {kind: host, inof: host, role: initiator}",
}, []string{
	"{a: ini1, b: leaf1}", "{a: tgt1, b: leaf1}", "{a: tgt1, b: leaf2}", "{a: ini2, b: leaf2}",
	"{a: lldp1, b: leaf3}", "{a: tgt2, b: leaf3}", "{a: free1, b: leaf3}",
}) + `zones:
  z1: [ini1, tgt1, lldp1]
  z2: [ini2, tgt1]
`

// inofLeafSpine is the topology of the iNOF labs: two reflector spines
// and leaves leaf1.. (iNOF switches), each leaf linked to both spines,
// then hosts (node lines "name: {...}") and their links ("{a: h, b:
// leafN}"). head holds the top-level keys that come first (name, inof).
func inofLeafSpine(head string, leaves int, hosts, hostLinks []string) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("nodes:\n  spine1: {kind: fared, inof: reflector}\n  spine2: {kind: fared, inof: reflector}\n")
	for i := 1; i <= leaves; i++ {
		fmt.Fprintf(&b, "  leaf%d:  {kind: fared, inof: switch}\n", i)
	}
	for _, h := range hosts {
		b.WriteString("  " + h + "\n")
	}
	b.WriteString("links:\n")
	for i := 1; i <= leaves; i++ {
		fmt.Fprintf(&b, "  - {a: leaf%d, b: spine1}\n  - {a: leaf%d, b: spine2}\n", i, i)
	}
	for _, l := range hostLinks {
		b.WriteString("  - " + l + "\n")
	}
	return b.String()
}

var (
	inofSwitches = []string{"spine1", "spine2", "leaf1", "leaf2", "leaf3"}
	inofAgents   = []string{"ini1", "tgt1", "ini2", "tgt2", "free1"}
	// Each agent host's zone peers, by host id.
	inofPeers = map[string][]string{
		"ini1":  {"lldp1", "tgt1"},
		"tgt1":  {"ini1", "ini2", "lldp1"},
		"ini2":  {"tgt1"},
		"tgt2":  {"free1"},
		"free1": {"tgt2"},
	}
)

func inofHosts(ctx context.Context, l *interop.Lab, node string) ([]wire.INOFHost, error) {
	var v []wire.INOFHost
	return v, l.FarectlJSON(ctx, node, &v, "inof", "hosts")
}

func inofEvents(ctx context.Context, l *interop.Lab, node string) ([]wire.INOFEvent, error) {
	var v []wire.INOFEvent
	return v, l.FarectlJSON(ctx, node, &v, "inof", "events")
}

func inofPeerStates(ctx context.Context, l *interop.Lab, node string) (map[string]wire.INOFPeer, error) {
	var v []wire.INOFPeer
	if err := l.FarectlJSON(ctx, node, &v, "inof", "peers"); err != nil {
		return nil, err
	}
	m := map[string]wire.INOFPeer{}
	for _, p := range v {
		m[p.Address] = p
	}
	return m, nil
}

func inofCounters(ctx context.Context, l *interop.Lab, node string) (map[string]uint64, error) {
	var v wire.INOFStatus
	return v.Counters, l.FarectlJSON(ctx, node, &v, "inof", "status")
}

// peerIDs is the sorted set of host ids a host knows as peers.
func peerIDs(hs []wire.INOFHost) []string {
	var ids []string
	for _, h := range hs {
		if !slices.Contains(ids, h.ID) {
			ids = append(ids, h.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// eventList prints events as "type:host" in order, from index from.
func eventList(evs []wire.INOFEvent, from int) string {
	var s []string
	for _, e := range evs[min(from, len(evs)):] {
		s = append(s, e.Type+":"+e.Host)
	}
	return strings.Join(s, " ")
}

// allEstablished: every switch's IBGP sessions are up, with BFD up where
// it runs.
func allEstablished(ctx context.Context, l *interop.Lab, nodes ...string) func() error {
	return func() error {
		for _, n := range nodes {
			ps, err := inofPeerStates(ctx, l, n)
			if err != nil {
				return err
			}
			for a, p := range ps {
				if p.State != "established" || p.BFD != "" && p.BFD != "up" {
					return fmt.Errorf("%s: session %s %s, bfd %q", n, a, p.State, p.BFD)
				}
			}
		}
		return nil
	}
}

// switchesHold: every switch lists exactly the host records want (id@switch-name:port).
func switchesHold(ctx context.Context, l *interop.Lab, want []string, switches ...string) func() error {
	sort.Strings(want)
	return func() error {
		for _, sw := range switches {
			hs, err := inofHosts(ctx, l, sw)
			if err != nil {
				return err
			}
			var got []string
			for _, h := range hs {
				got = append(got, h.ID+"@"+h.SwitchName+":"+h.Port)
			}
			sort.Strings(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("%s holds %v\nwant %v", sw, got, want)
			}
		}
		return nil
	}
}

var inofRecords = []string{"ini1@leaf1:ini1-1", "tgt1@leaf1:tgt1-1", "tgt1@leaf2:tgt1-1", "ini2@leaf2:ini2-1",
	"lldp1@leaf3:lldp1-1", "tgt2@leaf3:tgt2-1", "free1@leaf3:free1-1"}

// eventCounts snapshots how many events each agent host has.
func eventCounts(t *testing.T, ctx context.Context, l *interop.Lab) map[string]int {
	t.Helper()
	return eventCountsOf(t, ctx, l, inofAgents)
}

// eventCountsOf snapshots how many events each of hosts has.
func eventCountsOf(t *testing.T, ctx context.Context, l *interop.Lab, hosts []string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, h := range hosts {
		evs, err := inofEvents(ctx, l, h)
		if err != nil {
			t.Fatal(err)
		}
		m[h] = len(evs)
	}
	return m
}

// waitEvents polls until host has, after index from, exactly the events
// want (order-insensitive), and returns them.
func waitEvents(t *testing.T, ctx context.Context, l *interop.Lab, host string, from int, want ...string) []wire.INOFEvent {
	t.Helper()
	sort.Strings(want)
	var got []wire.INOFEvent
	poll(t, ctx, 30*time.Second, host+" events "+strings.Join(want, " "), func() error {
		evs, err := inofEvents(ctx, l, host)
		if err != nil {
			return err
		}
		got = evs[min(from, len(evs)):]
		s := strings.Fields(eventList(evs, from))
		sort.Strings(s)
		if !slices.Equal(s, want) {
			return fmt.Errorf("events since %d: %v", from, s)
		}
		return nil
	})
	return got
}

func eventTime(t *testing.T, e wire.INOFEvent) time.Time {
	ts, err := time.Parse(time.RFC3339Nano, e.Time)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// hookScript writes an executable that appends its stdin to out.
func hookScript(t *testing.T) (script, out string) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	script, out = filepath.Join(dir, "hook.sh"), filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, out
}

// TestINOFFabric: the whole life of an iNOF fabric on real kernels and
// real GoBGP sessions: joins exactly within zones, leave and unreachable,
// bad input, a reflector stopped and restarted, zones changed through the
// API, a leaf's fared killed.
func TestINOFFabric(t *testing.T) {
	script, hookOut := hookScript(t)
	l := startLab(t, fmt.Sprintf(inofFabric, script))
	ctx := ctxT(t)
	start := time.Now()

	t.Run("join", func(t *testing.T) {
		poll(t, ctx, 60*time.Second, "IBGP sessions with BFD", allEstablished(ctx, l, inofSwitches...))
		poll(t, ctx, 30*time.Second, "every switch holds every host", switchesHold(ctx, l, slices.Clone(inofRecords), inofSwitches...))
		for _, h := range inofAgents {
			poll(t, ctx, 30*time.Second, h+"'s zone peers", func() error {
				hs, err := inofHosts(ctx, l, h)
				if err != nil {
					return err
				}
				if got := peerIDs(hs); !slices.Equal(got, inofPeers[h]) {
					return fmt.Errorf("peers %v, want %v", got, inofPeers[h])
				}
				return nil
			})
			// Exactly the peers' joins (a dual-homed peer's two paths are
			// two joins), nothing from another zone.
			evs, err := inofEvents(ctx, l, h)
			if err != nil {
				t.Fatal(err)
			}
			var heard []string
			for _, e := range evs {
				if e.Type != "join" {
					t.Errorf("%s: unexpected %s %s", h, e.Type, e.Host)
				}
				if !slices.Contains(heard, e.Host) {
					heard = append(heard, e.Host)
				}
			}
			sort.Strings(heard)
			if !slices.Equal(heard, inofPeers[h]) {
				t.Errorf("%s was told about %v, want exactly %v", h, heard, inofPeers[h])
			}
		}
		t.Logf("FIGURE inof fabric: all joins within %v of lab start", time.Since(start).Round(time.Millisecond))
		// The module's Prometheus metrics agree: every switch knows the 7
		// records.
		f, err := enableMetrics(t, ctx, l, "leaf3").scrape()
		if err != nil {
			t.Fatal(err)
		}
		if err := metricIs(f, float64(len(inofRecords)), "fared_inof_records"); err != nil {
			t.Error(err)
		}
		// Sources as each switch knows them; the dual-homed host is two
		// records; the agentless target is learnt from LLDP.
		hs, err := inofHosts(ctx, l, "leaf3")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			want := "bgp"
			if h.SwitchName == "leaf3" {
				want = "agent"
				if h.ID == "lldp1" {
					want = "lldp"
				}
			}
			if h.Source != want {
				t.Errorf("leaf3: %s@%s source %s, want %s", h.ID, h.SwitchName, h.Source, want)
			}
			if h.ID == "lldp1" && (h.NQN != "nqn.2014-08.org.fared:lldp1" || h.Role != "target" ||
				!slices.Equal(h.Addresses, []string{l.Node("lldp1").Interfaces[0].Addr.Addr().String()})) {
				t.Errorf("lldp1 as learnt from LLDP: %+v", h)
			}
		}
		var zs []wire.INOFZone
		if err := l.FarectlJSON(ctx, "leaf2", &zs, "inof", "zones"); err != nil {
			t.Fatal(err)
		}
		if len(zs) != 3 || zs[0].Name != "default" || !zs[0].AutoAdd || zs[1].Name != "z1" || !slices.Equal(zs[2].Members, []string{"ini2", "tgt1"}) {
			t.Errorf("zones at leaf2 (from a reflector): %+v", zs)
		}
		// The hook ran once per event, with the event on stdin.
		poll(t, ctx, 10*time.Second, "hook output", func() error {
			b, _ := os.ReadFile(hookOut)
			evs, err := inofEvents(ctx, l, "ini1")
			if err != nil {
				return err
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != len(evs) {
				return fmt.Errorf("%d hook runs, %d events", len(lines), len(evs))
			}
			for i, line := range lines {
				var e wire.INOFEvent
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					return err
				}
				if e.Type != evs[i].Type || e.Host != evs[i].Host || e.Port != evs[i].Port || len(e.Addresses) == 0 {
					return fmt.Errorf("hook run %d got %+v, event %+v", i, e, evs[i])
				}
			}
			return nil
		})
	})
	if t.Failed() {
		return
	}

	t.Run("leave", func(t *testing.T) {
		// ini2 deregisters: its only peer tgt1 hears leave (once, though
		// both of tgt1's switches tell it).
		n := eventCounts(t, ctx, l)
		if _, err := l.Farectl(ctx, "ini2", "inof", "deregister"); err != nil {
			t.Fatal(err)
		}
		waitEvents(t, ctx, l, "tgt1", n["tgt1"], "leave:ini2")
		if _, err := l.Farectl(ctx, "ini2", "inof", "register"); err != nil {
			t.Fatal(err)
		}
		waitEvents(t, ctx, l, "tgt1", n["tgt1"], "leave:ini2", "join:ini2")
		// free1's link is pulled (its leaf sees carrier loss): tgt2 hears
		// unreachable.
		n = eventCounts(t, ctx, l)
		link := linkIndex(t, l, "free1", "leaf3")
		pulled := time.Now()
		if err := l.SetIfaceUp(ctx, "leaf3", "free1-1", false); err != nil {
			t.Fatal(err)
		}
		evs := waitEvents(t, ctx, l, "tgt2", n["tgt2"], "unreachable:free1")
		t.Logf("FIGURE inof: host link down to zone peer notified in %v", eventTime(t, evs[0]).Sub(pulled).Round(time.Millisecond))
		if err := l.SetLinkUp(ctx, link, true); err != nil {
			t.Fatal(err)
		}
		waitEvents(t, ctx, l, "tgt2", n["tgt2"], "unreachable:free1", "join:free1")
		if got := eventCounts(t, ctx, l); got["ini1"] != n["ini1"] || got["ini2"] != n["ini2"] {
			t.Errorf("ini1 or ini2 heard about free1 (another zone): %v -> %v", n, got)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		before := eventCounts(t, ctx, l)
		c0, err := inofCounters(ctx, l, "leaf3")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := l.OpenRaw("free1", "leaf3-1", l2.EtherType)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// A Register whose role TLV says 9.
		m := l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: time.Second, Host: l2.Host{ID: "evil", Role: l2.RoleInitiator}}
		f, _ := l2.EncodeFrame(l2.GroupMAC, raw.MAC, &m)
		f[14+12+2] = 9
		if err := raw.Send(f); err != nil {
			t.Fatal(err)
		}
		// And an LLDPDU with our TLV, truncated inside.
		lraw, err := l.OpenRaw("free1", "leaf3-1", 0x88CC)
		if err != nil {
			t.Fatal(err)
		}
		defer lraw.Close()
		if err := lraw.Send(badLLDP(raw.MAC)); err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, 10*time.Second, "bad input counted", func() error {
			c, err := inofCounters(ctx, l, "leaf3")
			if err != nil {
				return err
			}
			if c["bad_frames"] != c0["bad_frames"]+1 || c["bad_lldp"] != c0["bad_lldp"]+1 {
				return fmt.Errorf("counters %v", c)
			}
			return nil
		})
		if err := switchesHold(ctx, l, slices.Clone(inofRecords), inofSwitches...)(); err != nil {
			t.Fatalf("something was lost: %v", err)
		}
		if got := eventCounts(t, ctx, l); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("events changed: %v -> %v", before, got)
		}
		log, _ := os.ReadFile(l.FaredLog("leaf3"))
		if n := strings.Count(string(log), "malformed frame"); n != 1 {
			t.Errorf("%d log lines about the malformed frame, want 1", n)
		}
	})

	t.Run("reflector restart", func(t *testing.T) {
		before := eventCounts(t, ctx, l)
		stopped := time.Now()
		if err := l.StopNode(ctx, "spine1"); err != nil {
			t.Fatal(err)
		}
		// Nothing is lost: every switch still holds every record, and the
		// leaves still have a session (to spine2).
		poll(t, ctx, 10*time.Second, "spine1 gone from the leaves", func() error {
			ps, err := inofPeerStates(ctx, l, "leaf1")
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p.State == "established" && strings.HasPrefix(p.Address, l.Node("spine1").Iface("leaf1-1").Addr.Addr().String()) {
					return fmt.Errorf("session to spine1 still up")
				}
			}
			return nil
		})
		if err := switchesHold(ctx, l, slices.Clone(inofRecords), "spine2", "leaf1", "leaf2", "leaf3")(); err != nil {
			t.Fatalf("records lost with a reflector: %v", err)
		}
		if err := l.StartNode(ctx, "spine1"); err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, 60*time.Second, "sessions after the restart", allEstablished(ctx, l, inofSwitches...))
		poll(t, ctx, 30*time.Second, "spine1 relearnt every record", switchesHold(ctx, l, slices.Clone(inofRecords), "spine1"))
		// Clients keep spine1's records stale for the restart time (8 s)
		// after it went: wait that out, then check nothing was said.
		time.Sleep(time.Until(stopped.Add(9 * time.Second)))
		if err := switchesHold(ctx, l, slices.Clone(inofRecords), inofSwitches...)(); err != nil {
			t.Fatal(err)
		}
		if got := eventCounts(t, ctx, l); fmt.Sprint(got) != fmt.Sprint(before) {
			for _, h := range inofAgents {
				evs, _ := inofEvents(ctx, l, h)
				t.Logf("%s: %s", h, eventList(evs, before[h]))
			}
			t.Fatalf("spurious events around the reflector's restart: %v -> %v", before, got)
		}
	})

	t.Run("zones from the API", func(t *testing.T) {
		n := eventCounts(t, ctx, l)
		// The operator puts free1 into z2 on both reflectors: it leaves
		// the default zone (it is no longer free).
		for _, rr := range []string{"spine1", "spine2"} {
			if _, err := l.Farectl(ctx, rr, "inof", "zone", "add", "z2", "free1"); err != nil {
				t.Fatal(err)
			}
		}
		waitEvents(t, ctx, l, "free1", n["free1"], "leave:tgt2", "join:ini2", "join:tgt1", "join:tgt1")
		waitEvents(t, ctx, l, "tgt2", n["tgt2"], "leave:free1")
		waitEvents(t, ctx, l, "ini2", n["ini2"], "join:free1")
		// A zone that does not exist: 404 with the reason; the default
		// zone cannot be deleted.
		if _, err := l.Farectl(ctx, "spine1", "inof", "zone", "del", "nosuch"); err == nil || !strings.Contains(err.Error(), `no zone \"nosuch\"`) && !strings.Contains(err.Error(), `no zone "nosuch"`) {
			t.Errorf("deleting an unknown zone: %v", err)
		}
		if _, err := l.Farectl(ctx, "spine1", "inof", "zone", "del", "default"); err == nil || !strings.Contains(err.Error(), "cannot be deleted") {
			t.Errorf("deleting the default zone: %v", err)
		}
		if _, err := l.Farectl(ctx, "leaf1", "inof", "zone", "add", "z9", "x"); err == nil || !strings.Contains(err.Error(), "reflector") {
			t.Errorf("zone change on a leaf: %v", err)
		}
		n = eventCounts(t, ctx, l)
		for _, rr := range []string{"spine1", "spine2"} {
			if _, err := l.Farectl(ctx, rr, "inof", "zone", "del", "z2", "free1"); err != nil {
				t.Fatal(err)
			}
		}
		waitEvents(t, ctx, l, "tgt2", n["tgt2"], "join:free1")
	})

	t.Run("leaf killed", func(t *testing.T) {
		n := eventCounts(t, ctx, l)
		killed := time.Now()
		if err := l.KillNode(ctx, "leaf3", syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Every zone peer elsewhere hears lldp1 (on leaf3) is unreachable.
		var worst time.Duration
		for _, h := range []string{"ini1", "tgt1"} {
			evs := waitEvents(t, ctx, l, h, n[h], "unreachable:lldp1")
			worst = max(worst, eventTime(t, evs[0]).Sub(killed))
		}
		t.Logf("FIGURE inof: kill -9 of a leaf's fared (BFD on) to unreachable at every zone peer: %v", worst.Round(time.Millisecond))
		poll(t, ctx, 30*time.Second, "leaf3's records gone everywhere", switchesHold(ctx, l,
			[]string{"ini1@leaf1:ini1-1", "tgt1@leaf1:tgt1-1", "tgt1@leaf2:tgt1-1", "ini2@leaf2:ini2-1"}, "spine1", "spine2", "leaf1", "leaf2"))
		// leaf3's own hosts lose their switch (keepalives unanswered).
		waitEvents(t, ctx, l, "tgt2", n["tgt2"], "unreachable:free1")
		if err := l.StartNode(ctx, "leaf3"); err != nil {
			t.Fatal(err)
		}
		waitEvents(t, ctx, l, "ini1", n["ini1"], "unreachable:lldp1", "join:lldp1")
		poll(t, ctx, 30*time.Second, "all back", switchesHold(ctx, l, slices.Clone(inofRecords), inofSwitches...))
	})
}

// badLLDP is an LLDPDU from src with the iNOF TLV whose host-id TLV
// claims more bytes than the TLV holds.
func badLLDP(src net.HardwareAddr) []byte {
	b := []byte{0x01, 0x80, 0xc2, 0, 0, 0x0e}
	b = append(b, src...)
	b = append(b, 0x88, 0xcc)
	b = append(b, 0x02, 0x07, 0x04)
	b = append(b, src...) // chassis id: MAC
	b = append(b, 0x04, 0x07, 0x03)
	b = append(b, src...) // port id: MAC
	b = append(b, 0x06, 0x02, 0x00, 0x78)
	info := []byte{0x02, 0x46, 0x44, 0x01, 0x01, 0x09, 'x'} // host id of 9 bytes, 1 present
	b = append(b, 0xfe, byte(len(info)))
	b = append(b, info...)
	return append(b, 0, 0)
}

// inofSecurity: a reflector and a switch two hops apart (through a
// fared transit node), sessions over loopbacks.
const inofSecurity = `name: inofsec
inof: {password: lab-secret, ttl-security: 1}
nodes:
  rr:  {kind: fared, inof: reflector}
  mid: {kind: fared}
  sw:  {kind: fared, inof: switch}
links:
  - {a: rr, b: mid}
  - {a: mid, b: sw}
`

// TestINOFSessionSecurity: GTSM refuses a peer two hops away and accepts
// it with a two-hop budget; MD5 with a wrong password gives no session.
func TestINOFSessionSecurity(t *testing.T) {
	l := startLab(t, inofSecurity)
	ctx := ctxT(t)
	rrLo, swLo := l.Node("rr").Loopback.String(), l.Node("sw").Loopback.String()
	poll(t, ctx, 60*time.Second, "loopbacks reachable through mid (IS-IS)", func() error {
		_, err := l.Exec(ctx, "rr", "ping", "-c1", "-W1", "-I", rrLo, swLo)
		return err
	})
	state := func() (string, error) {
		ps, err := inofPeerStates(ctx, l, "rr")
		if err != nil {
			return "", err
		}
		return ps[swLo].State, nil
	}
	// never checks, over several connect retries (1 s), that the session
	// does not come up: what is asserted is that nothing happens.
	never := func(what string, d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if s, err := state(); err != nil || s == "established" {
				t.Fatalf("%s: session %q (%v)", what, s, err)
			}
		}
	}
	never("GTSM one hop, peer two hops away", 6*time.Second)

	edit := func(node, old, new string) {
		t.Helper()
		p := filepath.Join(l.Node(node).Dir, "fared.yaml")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("%s: no %q in\n%s", node, old, b)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Farectl(ctx, node, "reload"); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"rr", "sw"} {
		edit(n, "ttl-security: 1", "ttl-security: 2")
	}
	poll(t, ctx, 30*time.Second, "session with a two-hop GTSM budget", func() error {
		if s, err := state(); err != nil || s != "established" {
			return fmt.Errorf("%q %v", s, err)
		}
		return nil
	})

	edit("sw", "password: lab-secret", "password: not-the-secret")
	poll(t, ctx, 15*time.Second, "the session drops with the wrong password", func() error {
		if s, err := state(); err != nil || s == "established" {
			return fmt.Errorf("%q %v", s, err)
		}
		return nil
	})
	never("MD5 mismatch", 6*time.Second)
	edit("sw", "password: not-the-secret", "password: lab-secret")
	poll(t, ctx, 30*time.Second, "session with the right password again", func() error {
		if s, err := state(); err != nil || s != "established" {
			return fmt.Errorf("%q %v", s, err)
		}
		return nil
	})
}

// gen plays many hosts behind one port with raw frames: it registers
// them, answers notifications, and records when each register left.
type gen struct {
	raw  *interop.RawSocket
	mu   sync.Mutex
	sent map[string]time.Time
	acks map[string]bool // registrations answered
	stop chan struct{}
	done chan struct{}
}

func fakeMAC(i int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x5c, 0, 0, byte(i >> 8), byte(i)}
}

func fakeID(i int) string { return fmt.Sprintf("scale-%04d", i) }

func startGen(t testing.TB, l *interop.Lab, node, iface string) *gen {
	raw, err := l.OpenRaw(node, iface, l2.EtherType)
	if err != nil {
		t.Fatal(err)
	}
	g := &gen{raw: raw, sent: map[string]time.Time{}, acks: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go g.receive()
	t.Cleanup(func() { close(g.stop); <-g.done; raw.Close() })
	return g
}

func (g *gen) receive() {
	defer close(g.done)
	buf := make([]byte, 2048)
	for {
		select {
		case <-g.stop:
			return
		default:
		}
		n, err := g.raw.Recv(buf, 200*time.Millisecond)
		if err != nil {
			continue
		}
		f, err := l2.DecodeFrame(buf[:n])
		if err != nil || f.Dst[0] != 0x02 || f.Dst[1] != 0x5c {
			continue
		}
		id := fmt.Sprintf("scale-%04d", int(f.Dst[4])<<8|int(f.Dst[5]))
		switch f.Type {
		case l2.TypeRegisterAck:
			g.mu.Lock()
			g.acks[id] = f.Status == l2.StatusOK
			g.mu.Unlock()
		case l2.TypeNotify:
			ack := l2.Message{Type: l2.TypeNotifyAck, Seq: f.Seq, Host: l2.Host{ID: id}}
			b, _ := l2.EncodeFrame(l2.GroupMAC, f.Dst, &ack)
			g.raw.Send(b)
		}
	}
}

// register sends the Register of fake hosts [from, to) back to back,
// hold time long enough for the test without keepalives.
func (g *gen) register(from, to int, addr func(int) netip.Addr) error {
	for i := from; i < to; i++ {
		m := l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: 10 * time.Minute,
			Host: l2.Host{ID: fakeID(i), Role: l2.RoleTarget, Addrs: []netip.Addr{addr(i)}}}
		b, err := l2.EncodeFrame(l2.GroupMAC, fakeMAC(i), &m)
		if err != nil {
			return err
		}
		g.mu.Lock()
		g.sent[fakeID(i)] = time.Now()
		g.mu.Unlock()
		if err := g.raw.Send(b); err != nil {
			return err
		}
	}
	return nil
}

// resend repeats the Register of the hosts not answered yet.
func (g *gen) unanswered(from, to int) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int
	for i := from; i < to; i++ {
		if !g.acks[fakeID(i)] {
			out = append(out, i)
		}
	}
	return out
}

func scaleTopology(n int) string {
	var b strings.Builder
	// The generator plays every host behind one port: above fared's
	// per-port cap (4), which the test raises.
	b.WriteString(inofLeafSpine("name: inofscale\ninof: {max-hosts-per-port: 10000}\n", 2,
		[]string{"gen:    {kind: host, agent: none}", "obs:    {kind: host, inof: host, role: initiator}"},
		[]string{"{a: gen, b: leaf1}", "{a: obs, b: leaf2}"}))
	b.WriteString("zones:\n")
	// One zone per generated host with the observer: each registration is
	// one notification to obs (and one to the generated host), so the
	// test measures registration-to-notification per host without a
	// quadratic burst.
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  s%04d: [obs, %s]\n", i, fakeID(i))
	}
	return b.String()
}

func rssKB(t testing.TB, l *interop.Lab, node string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", l.Node(node).Pids["fared"]))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var kb int
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %d kB", &kb); err == nil {
			return kb
		}
	}
	return 0
}

// TestINOFScale: 500 hosts register at once behind one leaf port (raw
// frames from a generator namespace): every switch holds exactly the 500
// records, the observer in their zones hears each once; when the leaf
// dies none of them is left anywhere.
func TestINOFScale(t *testing.T) {
	const n = 500
	l := startLab(t, scaleTopology(n))
	ctx := ctxT(t)
	switches := []string{"spine1", "spine2", "leaf1", "leaf2"}
	poll(t, ctx, 60*time.Second, "IBGP sessions", allEstablished(ctx, l, switches...))
	poll(t, ctx, 30*time.Second, "obs registered", func() error {
		hs, err := inofHosts(ctx, l, "leaf2")
		if err != nil || len(hs) != 1 {
			return fmt.Errorf("%v %v", hs, err)
		}
		return nil
	})
	genLink := l.Node("gen").Interfaces[0]
	g := startGen(t, l, "gen", genLink.Name)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 77, byte(i >> 8), byte(i)}) }
	rss0 := map[string]int{"spine1": rssKB(t, l, "spine1"), "leaf2": rssKB(t, l, "leaf2")}
	t0 := time.Now()
	if err := g.register(0, n, addr); err != nil {
		t.Fatal(err)
	}
	// Registers are datagrams: the generator repeats unanswered ones, as
	// the host agent does.
	poll(t, ctx, 30*time.Second, "every registration answered", func() error {
		if left := g.unanswered(0, n); len(left) > 0 {
			for _, i := range left {
				g.register(i, i+1, addr)
			}
			return fmt.Errorf("%d unanswered", len(left))
		}
		return nil
	})
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, fakeID(i)+"@leaf1:"+l.Node("leaf1").Iface("gen-1").Name)
	}
	wantAll := append(slices.Clone(want), "obs@leaf2:obs-1")
	poll(t, ctx, 60*time.Second, "500 records on every switch", switchesHold(ctx, l, wantAll, switches...))
	tAll := time.Now()
	var evs []wire.INOFEvent
	poll(t, ctx, 60*time.Second, "obs heard every host once", func() error {
		var err error
		if evs, err = inofEvents(ctx, l, "obs"); err != nil {
			return err
		}
		if len(evs) != n {
			return fmt.Errorf("%d events", len(evs))
		}
		return nil
	})
	var lat []time.Duration
	var last time.Time
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Type != "join" || !strings.HasPrefix(e.Host, "scale-") || seen[e.Host] {
			t.Fatalf("unexpected event %+v", e)
		}
		seen[e.Host] = true
		at := eventTime(t, e)
		if at.After(last) {
			last = at
		}
		lat = append(lat, at.Sub(g.sent[e.Host]))
	}
	slices.Sort(lat)
	t.Logf("FIGURE inof scale: registration to zone-peer notification over %d hosts: median %v, p99 %v, max %v",
		n, lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	t.Logf("FIGURE inof scale: %d records through the reflectors to the far host in %v (%.0f records/s); on every switch within %v",
		n, last.Sub(t0).Round(time.Millisecond), float64(n)/last.Sub(t0).Seconds(), tAll.Sub(t0).Round(time.Millisecond))
	t.Logf("FIGURE inof scale: fared RSS with %d records: spine1 %d kB (was %d), leaf2 %d kB (was %d)",
		n+1, rssKB(t, l, "spine1"), rss0["spine1"], rssKB(t, l, "leaf2"), rss0["leaf2"])

	// leaf1 dies (kill -9): none of its 500 records is left anywhere, and
	// obs hears each one unreachable.
	killed := time.Now()
	if err := l.KillNode(ctx, "leaf1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 60*time.Second, "no record of leaf1 left", switchesHold(ctx, l, []string{"obs@leaf2:obs-1"}, "spine1", "spine2", "leaf2"))
	poll(t, ctx, 30*time.Second, "obs told", func() error {
		var err error
		if evs, err = inofEvents(ctx, l, "obs"); err != nil {
			return err
		}
		if c := strings.Count(eventList(evs, n), "unreachable:"); c != n {
			return fmt.Errorf("%d unreachable", c)
		}
		return nil
	})
	t.Logf("FIGURE inof scale: leaf with %d hosts killed to the last unreachable at a zone peer: %v",
		n, eventTime(t, evs[len(evs)-1]).Sub(killed).Round(time.Millisecond))
}

// Figures for the note (go test -run XXX -bench INOF ./interop/scenarios):
// slower than CI wants (the no-BFD cases wait out hold and restart
// timers), so they are benchmarks; each runs its lab once whatever b.N.

var deathTopo = inofLeafSpine("name: inofdeath\ninof: {bfd: %v}\nzones:\n  z: [obs, v1]\n", 2,
	[]string{"obs:    {kind: host, inof: host}", "v1:     {kind: host, inof: host, role: target}"},
	[]string{"{a: obs, b: leaf1}", "{a: v1, b: leaf2}"})

// BenchmarkINOFLeafDeath: a leaf's death to the unreachable notification
// at a zone peer on another leaf, with and without BFD, for a killed
// fared (the kernel closes its TCP sessions: graceful restart keeps the
// records unless BFD says the switch is dead) and for a hung one (SIGSTOP:
// the sessions stay open, only BFD or the hold timer notices).
func BenchmarkINOFLeafDeath(b *testing.B) {
	for _, bfd := range []bool{true, false} {
		l := interop.StartLab(b, fmt.Sprintf(deathTopo, bfd), interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, how := range []struct {
			name string
			sig  syscall.Signal
		}{{"kill", syscall.SIGKILL}, {"hang", syscall.SIGSTOP}} {
			must(b, interop.Poll(ctx, 60*time.Second, "sessions", allEstablished(ctx, l, "spine1", "spine2", "leaf1", "leaf2")))
			var from int
			must(b, interop.Poll(ctx, 30*time.Second, "obs hears v1", func() error {
				hs, err := inofHosts(ctx, l, "obs")
				if err != nil || len(hs) != 1 {
					return fmt.Errorf("%v %v", hs, err)
				}
				evs, err := inofEvents(ctx, l, "obs")
				from = len(evs)
				return err
			}))
			at := time.Now()
			must(b, l.KillNode(ctx, "leaf2", how.sig))
			var got time.Time
			must(b, interop.Poll(ctx, 60*time.Second, "unreachable at obs", func() error {
				evs, err := inofEvents(ctx, l, "obs")
				if err != nil {
					return err
				}
				for _, e := range evs[min(from, len(evs)):] {
					if e.Type == "unreachable" && e.Host == "v1" {
						got, _ = time.Parse(time.RFC3339Nano, e.Time)
						return nil
					}
				}
				return fmt.Errorf("not yet")
			}))
			d := got.Sub(at)
			b.Logf("FIGURE inof: leaf %s (BFD %v) to unreachable at a zone peer: %v", how.name, bfd, d.Round(time.Millisecond))
			b.ReportMetric(d.Seconds(), fmt.Sprintf("s-%s-bfd-%v", how.name, bfd))
			if how.sig == syscall.SIGSTOP {
				must(b, l.KillNode(ctx, "leaf2", syscall.SIGKILL))
			}
			must(b, l.StartNode(ctx, "leaf2"))
		}
		l.Down()
	}
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkINOFRecords: n hosts registered at once behind one port,
// without zones (nobody is notified): how fast their records cross the
// reflectors to another leaf, and fared's memory with them.
func BenchmarkINOFRecords(b *testing.B) {
	for _, n := range []int{500, 5000} {
		topo := strings.Replace(strings.Split(scaleTopology(0), "zones:")[0], "name: inofscale\ninof: {max-hosts-per-port: 10000}\n", "name: inofrec\ninof: {auto-add: false, max-hosts-per-port: 10000}\n", 1)
		l := interop.StartLab(b, topo, interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		must(b, interop.Poll(ctx, 60*time.Second, "sessions", allEstablished(ctx, l, "spine1", "spine2", "leaf1", "leaf2")))
		rss0 := map[string]int{}
		for _, s := range []string{"spine1", "leaf1", "leaf2"} {
			rss0[s] = rssKB(b, l, s)
		}
		g := startGenB(b, l)
		addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 77, byte(i >> 8), byte(i)}) }
		t0 := time.Now()
		must(b, g.register(0, n, addr))
		must(b, interop.Poll(ctx, 120*time.Second, "answered", func() error {
			if left := g.unanswered(0, n); len(left) > 0 {
				for _, i := range left {
					g.register(i, i+1, addr)
				}
				return fmt.Errorf("%d unanswered", len(left))
			}
			return nil
		}))
		must(b, interop.Poll(ctx, 120*time.Second, "records at leaf2", func() error {
			var st wire.INOFStatus
			if err := l.FarectlJSON(ctx, "leaf2", &st, "inof", "status"); err != nil {
				return err
			}
			if st.Records < n+1 {
				return fmt.Errorf("%d records", st.Records)
			}
			return nil
		}))
		d := time.Since(t0)
		b.Logf("FIGURE inof records: %d records registered at leaf1 reach leaf2 through the reflectors in %v (%.0f records/s, polled every 200 ms)",
			n, d.Round(time.Millisecond), float64(n)/d.Seconds())
		for _, s := range []string{"spine1", "leaf1", "leaf2"} {
			b.Logf("FIGURE inof records: fared RSS of %s with %d records: %d kB (%d kB before)", s, n, rssKB(b, l, s), rss0[s])
		}
		b.ReportMetric(float64(n)/d.Seconds(), fmt.Sprintf("records/s-%d", n))
		l.Down()
	}
}

// startGenB is startGen for a benchmark.
func startGenB(b *testing.B, l *interop.Lab) *gen {
	return startGen(b, l, "gen", l.Node("gen").Interfaces[0].Name)
}
