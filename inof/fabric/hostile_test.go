package fabric

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// Attacks a tenant host can make on a switch's iNOF state, each written
// before the fix, against the switch's public input (frames, LLDPDUs,
// records): claims of another host's id, a shared port's foreign MAC, a
// flood of ids from one port, a host that never acknowledges.

var attacker = netip.MustParseAddr("10.66.6.6")

// registerFrom sends a Register of id from src on port, with address a
// and no MAC TLV (the switch takes the frame's source).
func (h *harness) registerFrom(port string, src int, id string, a netip.Addr) l2.Message {
	h.t.Helper()
	h.s.Frame(port, mac(src), &l2.Message{Type: l2.TypeRegister, Seq: 7, Hold: 3 * time.Second,
		Host: l2.Host{ID: id, Role: l2.RoleTarget, Addrs: []netip.Addr{a}}})
	h.s.Settle(h.now)
	return h.ackTo(mac(src).String(), l2.TypeRegisterAck)
}

// ackTo returns the last answer of type t sent to dst (and forgets what
// was sent before it).
func (h *harness) ackTo(dst string, t l2.Type) l2.Message {
	h.t.Helper()
	var m l2.Message
	found := false
	for _, o := range h.tx.out {
		if o.dst == dst && o.msg.Type == t {
			m, found = o.msg, true
		}
	}
	if !found {
		h.t.Fatalf("no %s sent to %s in %+v", t, dst, h.tx.out)
	}
	return m
}

// joinsOf lists the addresses host dst was told for peer id.
func joinsOf(out []sent, dst, id string) []string {
	var s []string
	for _, o := range out {
		if o.dst == dst && o.msg.Type == l2.TypeNotify && o.msg.Event == l2.EventJoin && o.msg.Host.ID == id {
			s = append(s, fmt.Sprint(o.msg.Host.Addrs))
		}
	}
	return s
}

func storageZone() *zones.Config {
	z := zones.New(false)
	z.Add("z1", "ini", "tgt")
	return z
}

// TestAttackClaimFromAnotherPort: an attacker on another port claims the
// storage target's id. It is refused and counted; the initiator is told
// only the target's own address.
func TestAttackClaimFromAnotherPort(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	h.tx.take()
	ack := h.registerFrom("p3", 9, "tgt", attacker)
	out := h.tx.take()
	if ack.Status != l2.StatusRefused {
		t.Errorf("the attacker's claim was answered %s, want refused", ack.Status)
	}
	if j := joinsOf(out, mac(1).String(), "tgt"); len(j) != 0 {
		t.Errorf("the initiator was told %v about tgt after the attacker's claim", j)
	}
	if c := h.s.Counters(); c["conflicts"] != 1 {
		t.Errorf("conflicts %d, want 1 (%v)", c["conflicts"], c)
	}
	for _, v := range h.s.Hosts() {
		if v.Record.Host.ID == "tgt" && v.Record.Port != "p2" {
			t.Errorf("tgt is advertised on %s", v.Record.Port)
		}
	}
}

// TestAttackClaimFromAnotherMACOnThePort: the same port (a shared
// segment), another MAC: refused, the registration keeps its MAC.
func TestAttackClaimFromAnotherMACOnThePort(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	h.tx.take()
	if ack := h.registerFrom("p2", 9, "tgt", attacker); ack.Status != l2.StatusRefused {
		t.Errorf("claim from a foreign MAC on the target's port answered %s, want refused", ack.Status)
	}
	if j := joinsOf(h.tx.take(), mac(1).String(), "tgt"); len(j) != 0 {
		t.Errorf("the initiator was told %v", j)
	}
	for _, v := range h.s.Hosts() {
		if v.Record.Host.ID == "tgt" && (v.Record.Host.MAC.String() != mac(2).String() || v.Record.Host.Addrs[0] != netip.MustParseAddr("10.0.0.2")) {
			t.Errorf("tgt's record rewritten: %+v", v.Record.Host)
		}
	}
}

// TestAttackClaimOfARemoteHost: the target is registered on another
// switch (its record came over IBGP); an attacker here claims its id from
// its own MAC: refused.
func TestAttackClaimOfARemoteHost(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	rt := &record.Host{Switch: sw2, SwitchName: "leaf2", Port: "x1", Source: l2.SourceAgent, State: record.StateUp,
		Host: l2.Host{ID: "tgt", Role: l2.RoleTarget, MAC: mac(2), Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}}
	h.s.RecordUpdate(rt.Key(), rt)
	h.tx.take()
	if ack := h.registerFrom("p3", 9, "tgt", attacker); ack.Status != l2.StatusRefused {
		t.Errorf("claim of a remote host's id answered %s, want refused", ack.Status)
	}
	if j := joinsOf(h.tx.take(), mac(1).String(), "tgt"); len(j) != 0 {
		t.Errorf("the initiator was told %v", j)
	}
}

// TestAttackSharedPortKeepaliveDeregister: on a shared port, a keepalive
// or a deregister naming another host's id from the attacker's MAC
// changes nothing: notifications still go to the host's MAC, and the host
// stays registered.
func TestAttackSharedPortKeepaliveDeregister(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.tx.take()
	h.s.Frame("p1", mac(9), &l2.Message{Type: l2.TypeKeepalive, Seq: 3, Host: l2.Host{ID: "ini"}})
	if a := h.ackTo(mac(9).String(), l2.TypeKeepaliveAck); a.Status == l2.StatusOK {
		t.Errorf("keepalive from a foreign MAC answered ok")
	}
	h.tx.take()
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	out := h.tx.take()
	if j := joinsOf(out, mac(1).String(), "tgt"); len(j) != 1 {
		t.Errorf("ini (at %s) was told %v about tgt; sent: %+v", mac(1), j, out)
	}
	if j := joinsOf(out, mac(9).String(), "tgt"); len(j) != 0 {
		t.Errorf("the attacker's MAC was told %v", j)
	}
	h.s.Frame("p1", mac(9), &l2.Message{Type: l2.TypeDeregister, Seq: 4, Host: l2.Host{ID: "ini"}})
	h.s.Settle(h.now)
	if a := h.ackTo(mac(9).String(), l2.TypeDeregisterAck); a.Status == l2.StatusOK {
		t.Errorf("deregister from a foreign MAC answered ok")
	}
	if st := h.s.Status(); st.Locals != 2 {
		t.Errorf("%d hosts registered after the foreign deregister, want 2", st.Locals)
	}
	if c := h.s.Counters(); c["foreign_mac"] != 2 {
		t.Errorf("foreign_mac %d, want 2 (%v)", c["foreign_mac"], c)
	}
}

// TestAttackPortFlood: one port registers 10,000 ids. The port is capped,
// the refusals are counted, and a host on another port still registers.
func TestAttackPortFlood(t *testing.T) {
	h := newHarness(t, true, storageZone())
	refused := 0
	for i := 0; i < 10000; i++ {
		h.s.Frame("p3", mac(9), &l2.Message{Type: l2.TypeRegister, Seq: uint32(i), Hold: time.Hour,
			Host: l2.Host{ID: fmt.Sprintf("flood-%05d", i), Role: l2.RoleTarget}})
		for _, o := range h.tx.take() {
			if o.msg.Type == l2.TypeRegisterAck && o.msg.Status == l2.StatusRefused {
				refused++
			}
		}
	}
	h.s.Settle(h.now)
	if st := h.s.Status(); st.Locals > 4 {
		t.Errorf("one port holds %d registrations", st.Locals)
	}
	if refused < 10000-4 {
		t.Errorf("%d refused", refused)
	}
	if ack := h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1")); ack.Status != l2.StatusOK {
		t.Errorf("a legitimate host on another port: %s", ack.Status)
	}
	if c := h.s.Counters(); c["refused_port_cap"] < 10000-4 {
		t.Errorf("refused_port_cap %d (%v)", c["refused_port_cap"], c)
	}
}

// TestAttackNeverAck: a host that never acknowledges is not sent its
// notifications forever: retransmissions back off and stop.
func TestAttackNeverAck(t *testing.T) {
	h := newHarness(t, true, zones.New(true))
	h.registerFrom("p1", 1, "mute", netip.MustParseAddr("10.0.0.1"))
	for i := 0; i < 100; i++ {
		r := &record.Host{Switch: sw2, Port: "x", Source: l2.SourceAgent, State: record.StateUp, Host: l2.Host{ID: fmt.Sprint("t", i), Role: l2.RoleTarget}}
		h.s.RecordUpdate(r.Key(), r)
	}
	h.tx.take()
	sent := 0
	for i := 0; i < 10*60*20; i++ { // ten minutes of 50 ms ticks
		if i%20 == 0 { // the host keeps its registration alive
			h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: uint32(i), Host: l2.Host{ID: "mute"}})
		}
		h.tick(50 * time.Millisecond)
		for _, o := range h.tx.take() {
			if o.msg.Type == l2.TypeNotify {
				sent++
			}
		}
	}
	if sent > 64*10 {
		t.Errorf("%d notifications sent in ten minutes to a host that never acknowledges", sent)
	}
	if st := h.s.Status(); st.Pending != 0 {
		t.Errorf("%d notifications still pending", st.Pending)
	}
	if c := h.s.Counters(); c["notify_gave_up"] == 0 {
		t.Errorf("notify_gave_up not counted (%v)", c)
	}
}

// TestFigure10kZone: the figures of a leaf that holds 256 agent hosts
// (64 ports at the per-port cap) in a 10,000-host default zone (the rest
// on other switches), every notification acknowledged.
//
// First, the heap the switch takes for it (records, zones, bindings and
// the notification state, which grows with hosts here × zone members):
// asserted under 64 MiB ("tens of MB").
//
// Then 10,000 hostile registration attempts from one port: 5,000 new ids,
// 5,000 claims of bound ids from random MACs. The heap and CPU they cost
// are logged; the test asserts they are bounded — the port holds at most
// its cap, the conflicts view its 256 kinds — and that a legitimate host
// still registers and is told its peers.
func TestFigure10kZone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-host zone")
	}
	const locals, members = 256, 10000
	heapStart := heapNow()
	h, _ := zoneOf(t, locals, members)
	if st := h.s.Status(); st.Locals != locals || st.Records != members || st.Pending != 0 {
		t.Fatalf("status %+v", st)
	}
	mib := float64(heapNow()-heapStart) / (1 << 20)
	t.Logf("FIGURE inof notification state: %d local hosts in a %d-host zone: %.1f MiB of heap (the whole switch: records, zones, bindings, notification state)", locals, members, mib)
	if mib > 64 {
		t.Fatalf("%.1f MiB, want tens of MB", mib)
	}

	heap0 := heapNow()
	cpu0 := cpuTime()
	const flood = "eth999"
	for i := 0; i < 10000; i++ {
		src := net.HardwareAddr{0x02, 0x66, byte(i >> 16), byte(i >> 8), byte(i), 1}
		id := fmt.Sprintf("flood-%05d", i)
		if i%2 == 1 {
			id = fmt.Sprintf("r%05d", i%9000) // a bound id of another switch
		}
		h.s.Frame(flood, src, &l2.Message{Type: l2.TypeRegister, Seq: uint32(i), Hold: time.Hour,
			Host: l2.Host{ID: id, Role: l2.RoleTarget, Addrs: []netip.Addr{attacker}}})
	}
	h.s.Settle(h.now)
	cpu := cpuTime() - cpu0
	heap1 := heapNow()
	st := h.s.Status()
	c := h.s.Counters()
	t.Logf("FIGURE inof hostile flood: 10,000 registration attempts from one port of a leaf with 256 hosts in a 10,000-host zone: "+
		"heap %+.2f MiB, CPU %.3f s; port holds %d bindings, refused %d over the cap, %d conflicts (%d kinds kept)",
		float64(int64(heap1)-int64(heap0))/(1<<20), cpu.Seconds(), len(h.s.portBinds[flood]), c["refused_port_cap"], c["conflicts"], len(h.s.Conflicts()))
	if n := len(h.s.portBinds[flood]); n > 4 || st.Ports[flood].Refused < 4996 || c["conflicts"] != 5000 || len(h.s.Conflicts()) > 256 {
		t.Fatalf("flood not bounded: %d bindings, %+v, %v", n, st.Ports[flood], c)
	}
	if d := int64(heap1) - int64(heap0); d > 4<<20 {
		t.Fatalf("the flood grew the heap by %d bytes", d)
	}
	// A legitimate host on another port registers and hears its peers.
	tx := h.s.tx.(*ackTx)
	n0 := tx.sent
	h.s.Frame("eth0", mac(77), &l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: time.Hour, Host: l2.Host{ID: "legit", Role: l2.RoleInitiator}})
	if h.s.locals[localKey{"eth0", "legit"}] != nil {
		t.Fatal("eth0 is full (4 hosts): test setup")
	}
	h.s.Frame("eth998", mac(77), &l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: time.Hour, Host: l2.Host{ID: "legit", Role: l2.RoleInitiator}})
	if h.s.locals[localKey{"eth998", "legit"}] == nil || tx.sent-n0 < 64 {
		t.Fatalf("a legitimate host did not register after the flood (%d frames)", tx.sent-n0)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostileRegister: the cost of one refused registration attempt
// on a full port (new id) and of one conflicting claim (bound id).
func BenchmarkHostileRegister(b *testing.B) {
	h := newHarness(&testing.T{}, true, storageZone())
	rt := remote("tgt", "x1", mac(2), record.StateUp, t0)
	h.s.RecordUpdate(rt.Key(), rt)
	for i := 0; i < 4; i++ {
		h.registerFrom("p3", 10+i, fmt.Sprint("fill", i), attacker)
	}
	h.s.tx = nopTx{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := net.HardwareAddr{0x02, 0x66, byte(i >> 16), byte(i >> 8), byte(i), 1}
		id := "tgt"
		if i%2 == 0 {
			id = fmt.Sprint("flood-", i)
		}
		h.s.Frame("p3", src, &l2.Message{Type: l2.TypeRegister, Seq: uint32(i), Hold: time.Hour, Host: l2.Host{ID: id, Role: l2.RoleTarget}})
	}
}

type nopTx struct{}

func (nopTx) Send(string, net.HardwareAddr, *l2.Message) {}
