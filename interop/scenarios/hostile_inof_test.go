package scenarios

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/interop"
)

// Hostile hosts against iNOF (issue 25, rows 3 and 4), on real kernels:
// an attacker namespace plugged into a leaf like any host sends raw iNOF
// frames. Each attack is a function of the lab and node names, so that
// one fabric can run every area's attacks side by side.

// inofAsk sends m from src (a MAC the attacker plays; nil: its own) and
// returns the switch's answer to it (matched by type and sequence).
func inofAsk(t *testing.T, raw *interop.RawSocket, src net.HardwareAddr, m *l2.Message, want l2.Type) l2.Message {
	t.Helper()
	if src == nil {
		src = raw.MAC
	}
	f, err := l2.EncodeFrame(l2.GroupMAC, src, m)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	for attempt := 0; attempt < 5; attempt++ { // datagrams: ask again, as an agent does
		if err := raw.Send(f); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			n, err := raw.Recv(buf, time.Until(end))
			if err != nil {
				break
			}
			a, err := l2.DecodeFrame(buf[:n])
			if err == nil && a.Type == want && a.Seq == m.Seq && a.Dst.String() == src.String() {
				return a.Message
			}
		}
	}
	t.Fatalf("no %s from the switch to %s %s seq %d", want, m.Type, src, m.Seq)
	return l2.Message{}
}

// hostPaths lists the paths host node knows of peer id, as
// "switch_name:port addresses".
func hostPaths(ctx context.Context, l *interop.Lab, node, id string) ([]string, error) {
	hs, err := inofHosts(ctx, l, node)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range hs {
		if h.ID == id {
			out = append(out, h.SwitchName+":"+h.Port+" "+strings.Join(h.Addresses, ","))
		}
	}
	slices.Sort(out)
	return out, nil
}

// toldAddress reports whether host node was ever told a join of id at
// address a (its event log).
func toldAddress(ctx context.Context, l *interop.Lab, node, id string, a netip.Addr) (bool, error) {
	evs, err := inofEvents(ctx, l, node)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		if e.Host == id && e.Type == "join" && slices.Contains(e.Addresses, a.String()) {
			return true, nil
		}
	}
	return false, nil
}

// inofConflicts reads a switch's refused claims.
func inofConflicts(ctx context.Context, l *interop.Lab, node string) ([]wire.INOFConflict, error) {
	var v []wire.INOFConflict
	return v, l.FarectlJSON(ctx, node, &v, "inof", "hosts", "conflicts")
}

func inofStatus(ctx context.Context, l *interop.Lab, node string) (wire.INOFStatus, error) {
	var v wire.INOFStatus
	return v, l.FarectlJSON(ctx, node, &v, "inof", "status")
}

// inofAttacker reads leaf's iNOF counters before an attack and opens a
// raw socket on attacker's iface for it (the caller closes it).
func inofAttacker(t *testing.T, ctx context.Context, l *interop.Lab, attacker, iface, leaf string) (map[string]uint64, *interop.RawSocket) {
	t.Helper()
	c0, err := inofCounters(ctx, l, leaf)
	if err != nil {
		t.Fatal(err)
	}
	return c0, inofRaw(t, l, attacker, iface)
}

// inofRaw opens a raw socket for iNOF frames on attacker's iface.
func inofRaw(t *testing.T, l *interop.Lab, attacker, iface string) *interop.RawSocket {
	t.Helper()
	raw, err := l.OpenRaw(attacker, iface, l2.EtherType)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// attackINOFClaim: the attacker (node, its interface to leaf) claims the
// id of a host registered elsewhere, victim, with its own MAC and
// address. The leaf refuses it; it is counted and listed in the leaf's
// conflicts (farectl inof hosts conflicts); the observers (agent hosts
// in the victim's zones) keep exactly the victim's paths they had and are
// never told the attacker's address.
func attackINOFClaim(t *testing.T, ctx context.Context, l *interop.Lab, attacker, iface, leaf, victim string, observers []string) {
	t.Helper()
	before := map[string][]string{}
	for _, o := range observers {
		ps, err := hostPaths(ctx, l, o, victim)
		if err != nil || len(ps) == 0 {
			t.Fatalf("%s knows no path of %s before the attack (%v)", o, victim, err)
		}
		before[o] = ps
	}
	c0, raw := inofAttacker(t, ctx, l, attacker, iface, leaf)
	defer raw.Close()
	evil := l.Node(attacker).Iface(iface).Addr.Addr()
	a := inofAsk(t, raw, nil, &l2.Message{Type: l2.TypeRegister, Seq: 101, Hold: 10 * time.Minute,
		Host: l2.Host{ID: victim, Role: l2.RoleTarget, NQN: "nqn.2014-08.org.evil:" + victim, Addrs: []netip.Addr{evil}}}, l2.TypeRegisterAck)
	if a.Status != l2.StatusRefused {
		t.Errorf("%s's claim of %s on %s was answered %s, want refused", attacker, victim, leaf, a.Status)
	}
	// Nothing must reach the observers: watch them for 3 s (a claim that
	// got through reaches them in well under a second).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		for _, o := range observers {
			ps, err := hostPaths(ctx, l, o, victim)
			if err != nil {
				t.Fatal(err)
			}
			told, err := toldAddress(ctx, l, o, victim, evil)
			if err != nil {
				t.Fatal(err)
			}
			if told || !slices.Equal(ps, before[o]) {
				t.Fatalf("%s was told the attacker's %s as %s: paths %v (before %v)", o, evil, victim, ps, before[o])
			}
		}
	}
	poll(t, ctx, 10*time.Second, "the claim counted and listed at "+leaf, func() error {
		c, err := inofCounters(ctx, l, leaf)
		if err != nil {
			return err
		}
		if c["conflicts"] <= c0["conflicts"] {
			return fmt.Errorf("conflicts %d (was %d)", c["conflicts"], c0["conflicts"])
		}
		cs, err := inofConflicts(ctx, l, leaf)
		if err != nil {
			return err
		}
		for _, cf := range cs {
			if cf.ID == victim && cf.MAC == raw.MAC.String() && cf.Against != "" {
				return nil
			}
		}
		return fmt.Errorf("not in the conflicts view: %+v", cs)
	})
	log, _ := os.ReadFile(l.FaredLog(leaf))
	if !strings.Contains(string(log), "claim of a host id refused") {
		t.Errorf("%s logged no refused claim", leaf)
	}
}

// attackINOFSharedPort: on a shared port (a LAN in front of the leaf's
// port), the attacker sends a keepalive and a deregistration naming
// victim (an agent host on the same segment) from its own MAC, then
// claims victim's id from its MAC. All are refused and counted
// (foreign_mac, conflicts); victim stays registered with its own MAC,
// and its zone peers (observers) hear nothing.
func attackINOFSharedPort(t *testing.T, ctx context.Context, l *interop.Lab, attacker, iface, leaf, victim string, observers []string) {
	t.Helper()
	evs0 := eventCountsOf(t, ctx, l, observers)
	c0, raw := inofAttacker(t, ctx, l, attacker, iface, leaf)
	defer raw.Close()
	if a := inofAsk(t, raw, nil, &l2.Message{Type: l2.TypeKeepalive, Seq: 201, Host: l2.Host{ID: victim}}, l2.TypeKeepaliveAck); a.Status == l2.StatusOK {
		t.Errorf("a keepalive for %s from %s's MAC was answered ok", victim, attacker)
	}
	if a := inofAsk(t, raw, nil, &l2.Message{Type: l2.TypeDeregister, Seq: 202, Host: l2.Host{ID: victim}}, l2.TypeDeregisterAck); a.Status == l2.StatusOK {
		t.Errorf("a deregistration of %s from %s's MAC was answered ok", victim, attacker)
	}
	if a := inofAsk(t, raw, nil, &l2.Message{Type: l2.TypeRegister, Seq: 203, Hold: time.Minute,
		Host: l2.Host{ID: victim, Role: l2.RoleTarget, Addrs: []netip.Addr{l.Node(attacker).Iface(iface).Addr.Addr()}}}, l2.TypeRegisterAck); a.Status != l2.StatusRefused {
		t.Errorf("%s's claim of %s on the shared port was answered %s", attacker, victim, a.Status)
	}
	// The victim is still registered, from its own MAC; its peers heard
	// nothing (watched for 3 s: a deregistration reaches them at once).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		hs, err := inofHosts(ctx, l, leaf)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hs {
			if h.ID == victim && h.SwitchName == leaf {
				found = true
				if h.MAC == raw.MAC.String() {
					t.Fatalf("%s's registration now has the attacker's MAC", victim)
				}
			}
		}
		if !found {
			t.Fatalf("%s is no longer registered at %s", victim, leaf)
		}
		for _, o := range observers {
			evs, err := inofEvents(ctx, l, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != evs0[o] {
				t.Fatalf("%s heard %s after the attack", o, eventList(evs, evs0[o]))
			}
		}
	}
	c, err := inofCounters(ctx, l, leaf)
	if err != nil {
		t.Fatal(err)
	}
	if c["foreign_mac"] < c0["foreign_mac"]+2 || c["conflicts"] <= c0["conflicts"] {
		t.Errorf("counters at %s: foreign_mac %d -> %d, conflicts %d -> %d", leaf, c0["foreign_mac"], c["foreign_mac"], c0["conflicts"], c["conflicts"])
	}
}

// faredCPU is the CPU time fared on node has used (user + system).
func faredCPU(t testing.TB, l *interop.Lab, node string) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", l.Node(node).Pids["fared"]))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command (in parentheses): state is field 3; utime
	// and stime are 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// attackINOFFlood: n registrations of distinct ids from one port, each
// from its own MAC, as fast as the attacker can send. The leaf's memory
// and CPU stay bounded (logged: the figure), the port holds at most its
// cap, the rest are refused and counted per port (a second round of n
// shows it does not grow with more); afterwards legit (an agent host
// elsewhere on the fabric) registers again and its zone peer (observer)
// hears it.
func attackINOFFlood(t *testing.T, ctx context.Context, l *interop.Lab, attacker, iface, leaf string, n int, legit, observer string) {
	t.Helper()
	st0, err := inofStatus(ctx, l, leaf)
	if err != nil {
		t.Fatal(err)
	}
	raw := inofRaw(t, l, attacker, iface)
	defer raw.Close()
	port := l.Node(attacker).Iface(iface).PeerIface
	// Two rounds of n: the first shows the cost of n attempts, the
	// second that it does not grow with more.
	rss0 := rssKB(t, l, leaf)
	var st wire.INOFStatus
	for round := 0; round < 2; round++ {
		rss, cpu0 := rssKB(t, l, leaf), faredCPU(t, l, leaf)
		start := time.Now()
		for i := round * n; i < (round+1)*n; i++ {
			src := net.HardwareAddr{0x02, 0x66, 0x66, byte(i >> 16), byte(i >> 8), byte(i)}
			m := l2.Message{Type: l2.TypeRegister, Seq: uint32(i), Hold: 10 * time.Minute,
				Host: l2.Host{ID: fmt.Sprintf("flood-%05d", i), Role: l2.RoleTarget, Addrs: []netip.Addr{netip.AddrFrom4([4]byte{10, 66, byte(i >> 8), byte(i)})}}}
			f, err := l2.EncodeFrame(l2.GroupMAC, src, &m)
			if err != nil {
				t.Fatal(err)
			}
			if err := raw.Send(f); err != nil {
				t.Fatal(err)
			}
		}
		sent := time.Since(start)
		poll(t, ctx, 60*time.Second, fmt.Sprintf("%d registrations handled at %s", (round+1)*n, leaf), func() error {
			var err error
			if st, err = inofStatus(ctx, l, leaf); err != nil {
				return err
			}
			for _, p := range st.Ports {
				if p.Port == port && p.Refused >= uint64((round+1)*n-4) {
					return nil
				}
			}
			return fmt.Errorf("ports %+v", st.Ports)
		})
		rss1, cpu1 := rssKB(t, l, leaf), faredCPU(t, l, leaf)
		t.Logf("FIGURE inof hostile flood (lab), round %d: %d registrations of new ids from one port of %s in %v: fared RSS %d -> %d kB (%+d kB), CPU %.2f s; %d local hosts (was %d), %d bindings",
			round+1, n, leaf, sent.Round(time.Millisecond), rss, rss1, rss1-rss, (cpu1 - cpu0).Seconds(), st.LocalHosts, st0.LocalHosts, st.Bindings)
	}
	if st.LocalHosts > st0.LocalHosts+4 {
		t.Errorf("%s holds %d hosts after the flood (was %d): one port took more than its cap", leaf, st.LocalHosts, st0.LocalHosts)
	}
	if d := rssKB(t, l, leaf) - rss0; d > 32*1024 {
		t.Errorf("the flood grew %s's RSS by %d kB", leaf, d)
	}
	// A legitimate host still registers: legit leaves and comes back; its
	// zone peer hears both.
	evs, err := inofEvents(ctx, l, observer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Farectl(ctx, legit, "inof", "deregister"); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, ctx, l, observer, len(evs), "leave:"+legit)
	if _, err := l.Farectl(ctx, legit, "inof", "register"); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, ctx, l, observer, len(evs), "leave:"+legit, "join:"+legit)
}
