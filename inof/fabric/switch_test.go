package fabric

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// sent is one frame the switch sent.
type sent struct {
	port string
	dst  string
	msg  l2.Message
}

type fakeTx struct{ out []sent }

func (f *fakeTx) Send(port string, dst net.HardwareAddr, m *l2.Message) {
	f.out = append(f.out, sent{port, dst.String(), *m})
}

// take returns and forgets what was sent.
func (f *fakeTx) take() []sent {
	o := f.out
	f.out = nil
	return o
}

type fakeEx struct {
	adv map[record.Key]record.Record
	n   int
}

func (f *fakeEx) Publish(add []record.Record, del []record.Key) error {
	f.n++
	for _, r := range add {
		f.adv[r.Key()] = r
	}
	for _, k := range del {
		delete(f.adv, k)
	}
	return nil
}

var (
	t0  = time.Unix(1700000000, 0)
	sw1 = netip.MustParseAddr("10.255.0.3")
	sw2 = netip.MustParseAddr("10.255.0.4")
	rr  = netip.MustParseAddr("10.255.0.1")
)

type harness struct {
	t   *testing.T
	s   *Switch
	tx  *fakeTx
	ex  *fakeEx
	now time.Time
}

func newHarness(t *testing.T, reflector bool, z *zones.Config) *harness {
	h := &harness{t: t, tx: &fakeTx{}, ex: &fakeEx{adv: map[record.Key]record.Record{}}, now: t0}
	cfg := Config{RouterID: sw1, Name: "leaf1", Reflector: reflector, Zones: z, Stamp: 1, Ports: []string{"p1", "p2", "p3"}}
	h.s = New(cfg, slog.New(slog.DiscardHandler), h.tx, h.ex, 42, t0)
	h.s.Settle(t0)
	return h
}

func mac(i int) net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 0, byte(i)} }

func (h *harness) register(port, id string, i int, role l2.Role) {
	h.t.Helper()
	h.s.Frame(port, mac(i), &l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: 3 * time.Second,
		Host: l2.Host{ID: id, Role: role, Addrs: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})}}})
	h.s.Settle(h.now)
}

func (h *harness) tick(d time.Duration) {
	h.now = h.now.Add(d)
	h.s.Tick(h.now)
	h.s.Settle(h.now)
}

// notifs returns the notifications sent to dst (by MAC), acking them all
// (as the host would), as "event:peer" strings sorted.
func (h *harness) notifs(out []sent) map[string][]string {
	m := map[string][]string{}
	seen := map[string]bool{}
	for _, o := range out {
		if o.msg.Type != l2.TypeNotify || seen[fmt.Sprint(o.dst, o.msg.Seq)] {
			continue // retransmissions keep their sequence number
		}
		seen[fmt.Sprint(o.dst, o.msg.Seq)] = true
		m[o.dst] = append(m[o.dst], o.msg.Event.String()+":"+o.msg.Host.ID)
	}
	for _, v := range m {
		sort.Strings(v)
	}
	return m
}

func (h *harness) ackAll(out []sent, who map[string]string) {
	for _, o := range out {
		if o.msg.Type == l2.TypeNotify {
			// The host acknowledges from its own MAC (the frame's
			// destination).
			src, _ := net.ParseMAC(o.dst)
			h.s.Frame(o.port, src, &l2.Message{Type: l2.TypeNotifyAck, Seq: o.msg.Seq, Host: l2.Host{ID: who[o.dst]}})
		}
	}
}

func twoZones() *zones.Config {
	z := zones.New(false)
	z.Add("z1", "a", "b", "c")
	z.Add("z2", "c", "d")
	return z
}

// TestJoinNoLeak: hosts are told exactly their zone peers, including
// those that registered before them, and nothing crosses zones.
func TestJoinNoLeak(t *testing.T) {
	h := newHarness(t, true, twoZones())
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.register("p2", "d", 4, l2.RoleTarget)
	out := h.tx.take()
	if n := h.notifs(out); len(n) != 0 {
		t.Fatalf("a and d share no zone, yet: %v", n)
	}
	var ack *l2.Message
	for _, o := range out {
		if o.msg.Type == l2.TypeRegisterAck && o.dst == mac(1).String() {
			ack = &o.msg
		}
	}
	if ack == nil || ack.Status != l2.StatusOK || ack.Port != "p1" || ack.Switch != sw1 || ack.Nonce != 42 || ack.Hold != 3*time.Second {
		t.Fatalf("register ack %+v", ack)
	}
	h.register("p3", "c", 3, l2.RoleBoth)
	n := h.notifs(h.tx.take())
	want := map[string][]string{
		mac(1).String(): {"join:c"},           // a learns c (z1)
		mac(4).String(): {"join:c"},           // d learns c (z2)
		mac(3).String(): {"join:a", "join:d"}, // c learns both
	}
	if fmt.Sprint(n) != fmt.Sprint(want) {
		t.Fatalf("notifications %v\nwant %v", n, want)
	}
	// A reflector advertises its hosts and its zone configuration
	// (manifest + one chunk per zone: default, z1, z2).
	kinds := map[record.Kind]int{}
	for k := range h.ex.adv {
		kinds[k.Kind]++
	}
	if kinds[record.KindHost] != 3 || kinds[record.KindManifest] != 1 || kinds[record.KindZone] != 3 {
		t.Fatalf("advertised %v", kinds)
	}
	c := h.ex.adv[(&record.Host{Switch: sw1, Port: "p3", Host: l2.Host{ID: "c"}}).Key()].(*record.Host)
	if !slices.Equal(c.Zones, []string{"z1", "z2"}) || c.State != record.StateUp || c.Source != l2.SourceAgent {
		t.Fatalf("record of c: %+v", c)
	}
}

// TestLeaveAndUnreachable: deregistration gives leave, link down and
// keepalive loss give unreachable; the departed record is advertised
// with its reason, then withdrawn after the tombstone time.
func TestLeaveAndUnreachable(t *testing.T) {
	h := newHarness(t, true, twoZones())
	who := map[string]string{mac(1).String(): "a", mac(2).String(): "b", mac(3).String(): "c"}
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.register("p2", "b", 2, l2.RoleTarget)
	h.register("p3", "c", 3, l2.RoleTarget)
	h.ackAll(h.tx.take(), who)

	// b deregisters.
	h.s.Frame("p2", mac(2), &l2.Message{Type: l2.TypeDeregister, Seq: 9, Host: l2.Host{ID: "b"}})
	h.s.Settle(h.now)
	out := h.tx.take()
	if n := h.notifs(out); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"leave:b"}, mac(3).String(): {"leave:b"}}) {
		t.Fatalf("after b deregistered: %v", n)
	}
	h.ackAll(out, who)
	kb := (&record.Host{Switch: sw1, Port: "p2", Host: l2.Host{ID: "b"}}).Key()
	if r, ok := h.ex.adv[kb].(*record.Host); !ok || r.State != record.StateLeft {
		t.Fatalf("b's record during the tombstone: %+v", h.ex.adv[kb])
	}
	h.tick(2 * time.Second) // keepalives of a and c keep them
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: 2, Host: l2.Host{ID: "a"}})
	h.s.Frame("p3", mac(3), &l2.Message{Type: l2.TypeKeepalive, Seq: 2, Host: l2.Host{ID: "c"}})
	h.tick(1500 * time.Millisecond)
	// After the tombstone, b's id stays bound to its port and MAC: the
	// record says so (state bound) until the binding expires.
	if r, ok := h.ex.adv[kb].(*record.Host); !ok || r.State != record.StateBound || r.Host.MAC.String() != mac(2).String() {
		t.Fatalf("b's record after the tombstone: %+v, want state bound", h.ex.adv[kb])
	}
	h.tx.take()

	// c's link goes down: a is told c is unreachable.
	h.s.LinkDown("p3")
	h.s.Settle(h.now)
	out = h.tx.take()
	if n := h.notifs(out); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"unreachable:c"}}) {
		t.Fatalf("after c's link went down: %v", n)
	}
	h.ackAll(out, who)

	// c comes back; a stops sending keepalives: c is told a is
	// unreachable when a's hold time (3s) runs out.
	h.register("p3", "c", 3, l2.RoleTarget)
	h.ackAll(h.tx.take(), who)
	for i := 0; i < 5; i++ {
		h.s.Frame("p3", mac(3), &l2.Message{Type: l2.TypeKeepalive, Seq: 3, Host: l2.Host{ID: "c"}})
		h.tick(time.Second)
	}
	if n := h.notifs(h.tx.take()); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(3).String(): {"unreachable:a"}}) {
		t.Fatalf("after a went silent: %v", n)
	}
	// a's keepalive now: unknown host, register again.
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: 4, Host: l2.Host{ID: "a"}})
	out = h.tx.take()
	if len(out) != 1 || out[0].msg.Type != l2.TypeKeepaliveAck || out[0].msg.Status != l2.StatusUnknownHost {
		t.Fatalf("keepalive of an expired host: %+v", out)
	}
	if c := h.s.Counters(); c["registrations"] != 4 || c["deregistrations"] != 1 || c["expirations"] != 1 {
		t.Fatalf("counters %v", c)
	}
}

// TestRemoteRecords: records from other switches: join with source bgp,
// a withdrawal while up is unreachable, a departure record says why.
func TestRemoteRecords(t *testing.T) {
	h := newHarness(t, true, twoZones())
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.tx.take()
	rb := &record.Host{Switch: sw2, SwitchName: "leaf2", Port: "x1", Source: l2.SourceAgent, State: record.StateUp,
		Host: l2.Host{ID: "b", Role: l2.RoleTarget, Addrs: []netip.Addr{netip.MustParseAddr("10.9.9.9")}}}
	h.s.RecordUpdate(rb.Key(), rb)
	out := h.tx.take()
	if len(out) != 1 || out[0].msg.Event != l2.EventJoin || out[0].msg.Source != l2.SourceBGP || out[0].msg.Switch != sw2 ||
		out[0].msg.Port != "x1" || out[0].msg.SwitchName != "leaf2" || !slices.Equal(out[0].msg.Zones, []string{"z1"}) {
		t.Fatalf("join: %+v", out)
	}
	// The same record again (through the other reflector): nothing.
	h.s.RecordUpdate(rb.Key(), rb)
	// A retransmission of the unacked join, then the ack.
	h.tick(300 * time.Millisecond)
	out = h.tx.take()
	if len(out) != 1 || out[0].msg.Seq == 0 {
		t.Fatalf("retransmission: %+v", out)
	}
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeNotifyAck, Seq: out[0].msg.Seq, Host: l2.Host{ID: "a"}})
	h.tick(300 * time.Millisecond)
	if out := h.tx.take(); len(out) != 0 {
		t.Fatalf("sent after the ack: %+v", out)
	}
	// leaf2 dies: its record is withdrawn while up.
	h.s.RecordWithdraw(rb.Key())
	out = h.tx.take()
	if len(out) != 1 || out[0].msg.Event != l2.EventUnreachable || out[0].msg.Host.ID != "b" || out[0].msg.Switch != sw2 {
		t.Fatalf("unreachable: %+v", out)
	}
	// b comes back, then leaves in good order (re-advertised as left).
	h.s.RecordUpdate(rb.Key(), rb)
	left := *rb
	left.State = record.StateLeft
	h.s.RecordUpdate(rb.Key(), &left)
	h.s.RecordWithdraw(rb.Key())
	var evs []string
	for _, o := range h.tx.take() {
		evs = append(evs, o.msg.Event.String())
	}
	if strings.Join(evs, ",") != "join,leave" {
		t.Fatalf("events %v", evs)
	}
	// Our own records echoed by BGP are ignored.
	mine := &record.Host{Switch: sw1, Port: "p9", Source: l2.SourceAgent, State: record.StateUp, Host: l2.Host{ID: "ghost", Role: l2.RoleTarget}}
	h.s.RecordUpdate(mine.Key(), mine)
	for _, v := range h.s.Hosts() {
		if v.Record.Host.ID == "ghost" {
			t.Fatal("own record from BGP taken")
		}
	}
}

// TestZonesFromReflector: a non-reflector tells nothing until it holds a
// reflector's whole configuration; a zone change gives leave and join.
func TestZonesFromReflector(t *testing.T) {
	h := newHarness(t, false, nil)
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.register("p2", "b", 2, l2.RoleTarget)
	if n := h.notifs(h.tx.take()); len(n) != 0 {
		t.Fatalf("notifications before any zone configuration: %v", n)
	}
	cfg := zones.New(false)
	cfg.Add("z1", "a", "b")
	recs := cfg.Records(rr, 100)
	for _, r := range recs[:len(recs)-1] {
		h.s.RecordUpdate(r.Key(), r)
	}
	if n := h.notifs(h.tx.take()); len(n) != 0 {
		t.Fatalf("notifications with an incomplete configuration: %v", n)
	}
	h.s.RecordUpdate(recs[len(recs)-1].Key(), recs[len(recs)-1])
	h.s.Settle(h.now)
	out := h.tx.take()
	if n := h.notifs(out); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"join:b"}, mac(2).String(): {"join:a"}}) {
		t.Fatalf("after the configuration: %v", n)
	}
	h.ackAll(out, map[string]string{mac(1).String(): "a", mac(2).String(): "b"})
	// Records are re-advertised with their zones.
	for _, r := range h.ex.adv {
		if hr, ok := r.(*record.Host); ok && !slices.Equal(hr.Zones, []string{"z1"}) {
			t.Fatalf("record %s has zones %v", hr.Host.ID, hr.Zones)
		}
	}
	// b moves to z2: a and b are told the other left.
	next := zones.New(false)
	next.Add("z1", "a")
	next.Add("z2", "b")
	for _, r := range next.Records(rr, 200) {
		h.s.RecordUpdate(r.Key(), r)
	}
	if n := h.notifs(h.tx.take()); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"leave:b"}, mac(2).String(): {"leave:a"}}) {
		t.Fatalf("after the zone change: %v", n)
	}
}

// TestAutoAddDefault: with auto-add, free hosts share the default zone.
func TestAutoAddDefault(t *testing.T) {
	z := zones.New(true)
	z.Add("z1", "a")
	h := newHarness(t, true, z)
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.register("p2", "free1", 2, l2.RoleTarget)
	h.register("p3", "free2", 3, l2.RoleTarget)
	n := h.notifs(h.tx.take())
	if fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(2).String(): {"join:free2"}, mac(3).String(): {"join:free1"}}) {
		t.Fatalf("%v", n)
	}
}

// TestLLDPHost: an agentless host is advertised and its peers told; it is
// sent nothing; its TTL and its shutdown LLDPDU end it.
func TestLLDPHost(t *testing.T) {
	h := newHarness(t, true, twoZones())
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.tx.take()
	tgt := l2.LLDPHost{Found: true, TTL: 4 * time.Second, ChassisID: mac(7).String(),
		Host: l2.Host{ID: "b", Role: l2.RoleTarget, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.7")}}}
	h.s.LLDP("p2", tgt)
	h.s.Settle(h.now)
	out := h.tx.take()
	if len(out) != 1 || out[0].dst != mac(1).String() || out[0].msg.Event != l2.EventJoin || out[0].msg.Source != l2.SourceLLDP {
		t.Fatalf("%+v", out)
	}
	h.ackAll(out, map[string]string{mac(1).String(): "a"})
	hv := h.s.Hosts()
	if len(hv) != 2 || hv[1].Record.Host.ID != "b" || hv[1].Source != l2.SourceLLDP || hv[1].Record.Host.MAC.String() != mac(7).String() {
		t.Fatalf("hosts %+v", hv)
	}
	// Refreshed by the next LLDPDU, then lost: unreachable after the TTL.
	h.tick(3 * time.Second)
	h.s.LLDP("p2", tgt)
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Host: l2.Host{ID: "a"}})
	h.tick(3 * time.Second)
	if out := h.tx.take(); len(h.notifs(out)) != 0 {
		t.Fatalf("expired early: %+v", out)
	}
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Host: l2.Host{ID: "a"}})
	h.tick(1500 * time.Millisecond)
	if n := h.notifs(h.tx.take()); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"unreachable:b"}}) {
		t.Fatalf("after the TTL: %v", n)
	}
	// Back, then a shutdown LLDPDU (no iNOF TLV, TTL 0): leave.
	h.s.LLDP("p2", tgt)
	h.s.Settle(h.now)
	h.ackAll(h.tx.take(), map[string]string{mac(1).String(): "a"})
	h.s.LLDP("p2", l2.LLDPHost{ChassisID: mac(7).String()})
	if n := h.notifs(h.tx.take()); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"leave:b"}}) {
		t.Fatalf("after the shutdown LLDPDU: %v", n)
	}
}

// TestWindow: at most Window notifications unacknowledged; the rest wait.
func TestWindow(t *testing.T) {
	z := zones.New(true)
	h := newHarness(t, true, z)
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.tx.take()
	for i := 0; i < 100; i++ {
		r := &record.Host{Switch: sw2, Port: "x", Source: l2.SourceAgent, State: record.StateUp, Host: l2.Host{ID: fmt.Sprint("t", i), Role: l2.RoleTarget}}
		h.s.RecordUpdate(r.Key(), r)
	}
	out := h.tx.take()
	if len(out) != 64 {
		t.Fatalf("%d sent at once, want the window (64)", len(out))
	}
	h.ackAll(out[:10], map[string]string{mac(1).String(): "a"})
	if out := h.tx.take(); len(out) != 10 {
		t.Fatalf("%d sent after 10 acks", len(out))
	}
	if st := h.s.Status(); st.Pending != 90 {
		t.Fatalf("pending %d", st.Pending)
	}
}

// TestBadInput: counted, logged, nothing lost.
func TestBadInput(t *testing.T) {
	h := newHarness(t, true, twoZones())
	h.register("p1", "a", 1, l2.RoleInitiator)
	h.s.BadFrame("p1", errors.New("inof l2 register: TLV 2 at offset 12: role 7"))
	h.s.BadLLDP("p2", errors.New("x"))
	h.s.BadRecord(sw2, "nlri", errors.New("y"))
	rb := &record.Host{Switch: sw2, Port: "x1", Source: l2.SourceAgent, State: record.StateUp, Zones: []string{"nope"},
		Host: l2.Host{ID: "b", Role: l2.RoleTarget}}
	h.s.RecordUpdate(rb.Key(), rb)
	c := h.s.Counters()
	if c["bad_frames"] != 1 || c["bad_lldp"] != 1 || c["bad_records"] != 1 || c["unknown_zones"] != 1 {
		t.Fatalf("%v", c)
	}
	if len(h.s.Hosts()) != 2 {
		t.Fatal("lost a host")
	}
}
