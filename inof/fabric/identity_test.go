package fabric

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// newHarnessCfg is newHarness with a config to adjust.
func newHarnessCfg(t *testing.T, z *zones.Config, f func(*Config)) *harness {
	h := &harness{t: t, tx: &fakeTx{}, ex: &fakeEx{adv: map[record.Key]record.Record{}}, now: t0}
	cfg := Config{RouterID: sw1, Name: "leaf1", Reflector: true, Zones: z, Stamp: 1, Ports: []string{"p1", "p2", "p3"}}
	if f != nil {
		f(&cfg)
	}
	h.s = New(cfg, slog.New(slog.DiscardHandler), h.tx, h.ex, 42, t0)
	h.s.Settle(t0)
	return h
}

// remote is a record of id from switch sw2.
func remote(id, port string, m net.HardwareAddr, st record.State, since time.Time) *record.Host {
	return &record.Host{Switch: sw2, SwitchName: "leaf2", Port: port, Source: l2.SourceAgent, State: st, Since: since,
		Host: l2.Host{ID: id, Role: l2.RoleTarget, MAC: m, Addrs: []netip.Addr{netip.MustParseAddr("10.0.2.2")}}}
}

// TestDualHomed: a host on two switches (or two ports) with one identity
// MAC is one host with two paths, whatever MAC its second link has.
func TestDualHomed(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	r := remote("tgt", "x1", mac(2), record.StateUp, t0.Add(-time.Minute))
	h.s.RecordUpdate(r.Key(), r)
	// tgt's second link: frame source mac(3), identity MAC mac(2).
	h.s.Frame("p2", mac(3), &l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: 3 * time.Second,
		Host: l2.Host{ID: "tgt", Role: l2.RoleTarget, MAC: mac(2), Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.3")}}})
	h.s.Settle(h.now)
	if a := h.ackTo(mac(3).String(), l2.TypeRegisterAck); a.Status != l2.StatusOK {
		t.Fatalf("the dual-homed host's second link: %s", a.Status)
	}
	out := h.tx.take()
	if j := joinsOf(out, mac(1).String(), "tgt"); len(j) != 2 {
		t.Fatalf("ini told %v, want both paths", j)
	}
	// Its keepalives come from its own link's MAC.
	h.s.Frame("p2", mac(3), &l2.Message{Type: l2.TypeKeepalive, Seq: 2, Host: l2.Host{ID: "tgt"}})
	if a := h.ackTo(mac(3).String(), l2.TypeKeepaliveAck); a.Status != l2.StatusOK {
		t.Fatalf("keepalive: %s", a.Status)
	}
	// The same on two ports of one switch.
	if a := h.registerFrom("p3", 2, "tgt", netip.MustParseAddr("10.0.0.4")); a.Status != l2.StatusOK {
		t.Fatalf("a second port of the same switch: %s", a.Status)
	}
	if c := h.s.Counters(); c["conflicts"] != 0 {
		t.Fatalf("conflicts %v", c)
	}
}

// TestBindingOutlivesRegistration: a host that left keeps its id bound
// (advertised as bound); another MAC is refused until the binding expires
// or is released; the same MAC comes back.
func TestBindingOutlivesRegistration(t *testing.T) {
	h := newHarnessCfg(t, storageZone(), func(c *Config) { c.BindingHold = time.Hour })
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	h.s.Frame("p2", mac(2), &l2.Message{Type: l2.TypeDeregister, Seq: 2, Host: l2.Host{ID: "tgt"}})
	h.tick(4 * time.Second) // past the tombstone
	k := (&record.Host{Switch: sw1, Port: "p2", Host: l2.Host{ID: "tgt"}}).Key()
	if r, ok := h.ex.adv[k].(*record.Host); !ok || r.State != record.StateBound {
		t.Fatalf("advertised %+v, want bound", h.ex.adv[k])
	}
	if a := h.registerFrom("p2", 9, "tgt", attacker); a.Status != l2.StatusRefused {
		t.Fatalf("another MAC on the bound port: %s", a.Status)
	}
	if a := h.registerFrom("p3", 9, "tgt", attacker); a.Status != l2.StatusRefused {
		t.Fatalf("another MAC on another port: %s", a.Status)
	}
	if a := h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusOK {
		t.Fatalf("the host itself: %s", a.Status)
	}
	h.s.Frame("p2", mac(2), &l2.Message{Type: l2.TypeDeregister, Seq: 3, Host: l2.Host{ID: "tgt"}})
	h.tick(time.Hour + 5*time.Second)
	if _, ok := h.ex.adv[k]; ok {
		t.Fatal("binding not withdrawn after binding-hold")
	}
	if a := h.registerFrom("p3", 9, "tgt", attacker); a.Status != l2.StatusOK {
		t.Fatalf("after the binding expired: %s", a.Status)
	}
	if c := h.s.Counters(); c["bindings_expired"] != 1 || c["conflicts"] != 2 {
		t.Fatalf("counters %v", c)
	}
}

// TestRelease: the operator releases a binding (a replaced NIC): the new
// MAC registers; a registered host is deregistered; releasing what is
// bound elsewhere says where.
func TestRelease(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	if a := h.registerFrom("p2", 5, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusRefused {
		t.Fatalf("new NIC before the release: %s", a.Status)
	}
	if cs := h.s.Conflicts(); len(cs) != 1 || cs[0].ID != "tgt" || cs[0].Port != "p2" || cs[0].MAC != mac(5).String() ||
		!strings.Contains(cs[0].Against, mac(2).String()) || cs[0].Count != 1 {
		t.Fatalf("conflicts %+v", cs)
	}
	h.tx.take()
	ports, err := h.s.Release("tgt")
	if err != nil || strings.Join(ports, ",") != "p2" {
		t.Fatalf("release: %v %v", ports, err)
	}
	h.s.Settle(h.now)
	if n := h.notifs(h.tx.take()); fmt.Sprint(n) != fmt.Sprint(map[string][]string{mac(1).String(): {"leave:tgt"}}) {
		t.Fatalf("after the release: %v", n)
	}
	if a := h.registerFrom("p2", 5, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusOK {
		t.Fatalf("new NIC after the release: %s", a.Status)
	}
	if len(h.s.Conflicts()) != 0 {
		t.Fatalf("conflicts of a released id kept: %+v", h.s.Conflicts())
	}
	var nb *ErrNoBinding
	r := remote("far", "x9", mac(8), record.StateBound, t0)
	h.s.RecordUpdate(r.Key(), r)
	if _, err := h.s.Release("far"); !errors.As(err, &nb) || !strings.Contains(err.Error(), "leaf2(10.255.0.4):x9") {
		t.Fatalf("release of a remote binding: %v", err)
	}
	if _, err := h.s.Release("nobody"); !errors.As(err, &nb) {
		t.Fatalf("release of nothing: %v", err)
	}
}

// TestPortCapEvictsAbsent: a full port refuses new ids while its hosts
// are registered; a binding whose host went makes room (the oldest first);
// refusals are counted per port.
func TestPortCapEvictsAbsent(t *testing.T) {
	h := newHarnessCfg(t, zones.New(true), func(c *Config) { c.MaxHostsPerPort = 2 })
	h.registerFrom("p3", 3, "a", netip.MustParseAddr("10.0.0.3"))
	h.registerFrom("p3", 4, "b", netip.MustParseAddr("10.0.0.4"))
	if a := h.registerFrom("p3", 5, "c", netip.MustParseAddr("10.0.0.5")); a.Status != l2.StatusRefused {
		t.Fatalf("third id on a port of 2: %s", a.Status)
	}
	if a := h.registerFrom("p1", 1, "d", netip.MustParseAddr("10.0.0.1")); a.Status != l2.StatusOK {
		t.Fatalf("another port: %s", a.Status)
	}
	h.s.Frame("p3", mac(3), &l2.Message{Type: l2.TypeDeregister, Seq: 2, Host: l2.Host{ID: "a"}})
	h.tick(time.Second)
	if a := h.registerFrom("p3", 5, "c", netip.MustParseAddr("10.0.0.5")); a.Status != l2.StatusOK {
		t.Fatalf("after a left: %s", a.Status)
	}
	st := h.s.Status()
	if st.Ports["p3"].Refused != 1 || st.Bindings != 3 {
		t.Fatalf("status %+v", st)
	}
	if c := h.s.Counters(); c["bindings_evicted"] != 1 || c["refused_port_cap"] != 1 {
		t.Fatalf("counters %v", c)
	}
	// a's binding is gone: another MAC may take a.
	if a := h.registerFrom("p2", 9, "a", attacker); a.Status != l2.StatusOK {
		t.Fatalf("a after eviction: %s", a.Status)
	}
}

// TestStaticBinding: a static binding pins an id to ports (and a MAC):
// the host registers there only; the switch advertises it pinned (bound
// before the host ever came), and another switch refuses an unpinned
// claim of it. An LLDP target is pinned the same way.
func TestStaticBinding(t *testing.T) {
	h := newHarnessCfg(t, storageZone(), func(c *Config) {
		c.Static = []Static{{ID: "tgt", Ports: []string{"p2"}, MAC: mac(2)}, {ID: "lt", Ports: []string{"p3"}}}
	})
	k := (&record.Host{Switch: sw1, Port: "p2", Host: l2.Host{ID: "tgt"}}).Key()
	if r, ok := h.ex.adv[k].(*record.Host); !ok || r.State != record.StateBound || !r.Pinned || r.Host.MAC.String() != mac(2).String() {
		t.Fatalf("a static binding before the host came: %+v", h.ex.adv[k])
	}
	if a := h.registerFrom("p3", 2, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusRefused {
		t.Fatalf("tgt on a port the binding does not list: %s", a.Status)
	}
	if a := h.registerFrom("p2", 9, "tgt", attacker); a.Status != l2.StatusRefused {
		t.Fatalf("tgt from another MAC: %s", a.Status)
	}
	if a := h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusOK {
		t.Fatalf("tgt where it is pinned: %s", a.Status)
	}
	if r := h.ex.adv[k].(*record.Host); r.State != record.StateUp || !r.Pinned {
		t.Fatalf("record %+v", r)
	}
	if _, err := h.s.Release("tgt"); err == nil || !strings.Contains(err.Error(), "configuration") {
		t.Fatalf("release of a static binding: %v", err)
	}
	// An LLDP target pinned to p3: an LLDPDU naming it on p1 is refused.
	lt := l2.LLDPHost{Found: true, TTL: 4 * time.Second, Src: mac(7), ChassisID: mac(7).String(), Host: l2.Host{ID: "lt", Role: l2.RoleTarget}}
	h.s.LLDP("p1", lt)
	h.s.LLDP("p3", lt)
	var on []string
	for _, v := range h.s.Hosts() {
		if v.Record.Host.ID == "lt" {
			on = append(on, v.Record.Port)
		}
	}
	if strings.Join(on, ",") != "p3" {
		t.Fatalf("lt learnt on %v, want p3 only", on)
	}

	// Another switch holds this one's pinned record: an unpinned claim of
	// tgt there is refused; its own static binding would be accepted.
	o := newHarnessCfg(t, storageZone(), func(c *Config) { c.RouterID = sw2; c.Name = "leaf2" })
	pinned := *h.ex.adv[k].(*record.Host)
	o.s.RecordUpdate(pinned.Key(), &pinned)
	if a := o.registerFrom("p1", 2, "tgt", netip.MustParseAddr("10.0.0.2")); a.Status != l2.StatusRefused {
		t.Fatalf("an unpinned claim of a pinned id, even from its MAC: %s", a.Status)
	}
}

func signed(t *testing.T, m l2.Message, k l2.Key, counter uint64) *l2.Message {
	t.Helper()
	m.Sign(k, counter)
	d, err := l2.Decode(m.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestKeys: a host with a key must sign its registration, keepalives and
// deregistration with it; a wrong key, an unsigned request, a stale
// counter and a replay are refused and counted; the signed host is
// pinned, so it displaces an unsigned squatter and no other switch takes
// an unsigned claim of it.
func TestKeys(t *testing.T) {
	key := l2.Key{ID: 1, Secret: []byte("tgt-secret-0123456789")}
	h := newHarnessCfg(t, storageZone(), func(c *Config) { c.Keys = map[string][]l2.Key{"tgt": {key}} })
	now := uint64(h.now.UnixMilli())
	reg := l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: 3 * time.Second,
		Host: l2.Host{ID: "tgt", Role: l2.RoleTarget, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}}
	try := func(port string, src int, m *l2.Message) l2.Status {
		t.Helper()
		h.s.Frame(port, mac(src), m)
		h.s.Settle(h.now)
		want := map[l2.Type]l2.Type{l2.TypeRegister: l2.TypeRegisterAck, l2.TypeKeepalive: l2.TypeKeepaliveAck, l2.TypeDeregister: l2.TypeDeregisterAck}
		return h.ackTo(mac(src).String(), want[m.Type]).Status
	}
	if st := try("p2", 2, &reg); st != l2.StatusRefused {
		t.Fatalf("unsigned: %s", st)
	}
	if st := try("p2", 2, signed(t, reg, l2.Key{ID: 1, Secret: []byte("guessed")}, now)); st != l2.StatusRefused {
		t.Fatalf("wrong secret: %s", st)
	}
	if st := try("p2", 2, signed(t, reg, key, now-uint64(time.Minute/time.Millisecond))); st != l2.StatusRefused {
		t.Fatalf("a minute old: %s", st)
	}
	good := signed(t, reg, key, now)
	if st := try("p2", 2, good); st != l2.StatusOK {
		t.Fatalf("signed: %s", st)
	}
	if st := try("p2", 2, good); st != l2.StatusRefused {
		t.Fatalf("the same frame again (a replay): %s", st)
	}
	ka := l2.Message{Type: l2.TypeKeepalive, Seq: 2, Host: l2.Host{ID: "tgt"}}
	if st := try("p2", 2, &ka); st != l2.StatusRefused {
		t.Fatalf("unsigned keepalive: %s", st)
	}
	if st := try("p2", 2, signed(t, ka, key, now+1)); st != l2.StatusOK {
		t.Fatalf("signed keepalive: %s", st)
	}
	de := l2.Message{Type: l2.TypeDeregister, Seq: 3, Host: l2.Host{ID: "tgt"}}
	if st := try("p2", 2, &de); st != l2.StatusRefused || h.s.Status().Locals != 1 {
		t.Fatalf("unsigned deregister: %s, %d hosts", st, h.s.Status().Locals)
	}
	if c := h.s.Counters(); c["auth_failures"] != 6 {
		t.Fatalf("auth_failures %d, want 6 (%v)", c["auth_failures"], c)
	}
	k := (&record.Host{Switch: sw1, Port: "p2", Host: l2.Host{ID: "tgt"}}).Key()
	if r := h.ex.adv[k].(*record.Host); !r.Pinned {
		t.Fatal("a signed host is not advertised pinned")
	}
	// A second key (rollover) is accepted, on another port too (a new
	// NIC, a move: the key is the identity).
	h.s.Reconfigure(Config{Name: "leaf1", Ports: []string{"p1", "p2", "p3"}, Keys: map[string][]l2.Key{"tgt": {key, {ID: 2, Secret: []byte("next")}}}})
	if st := try("p3", 6, signed(t, reg, l2.Key{ID: 2, Secret: []byte("next")}, now+2)); st != l2.StatusOK {
		t.Fatalf("key 2 on another port: %s", st)
	}
}

// TestSignedDisplacesSquatter: an attacker registered the id first,
// unsigned; the host signs: the attacker's binding goes.
func TestSignedDisplacesSquatter(t *testing.T) {
	key := l2.Key{ID: 1, Secret: []byte("tgt-secret-0123456789")}
	h := newHarness(t, true, storageZone())
	h.registerFrom("p3", 9, "tgt", attacker)
	h.s.Reconfigure(Config{Name: "leaf1", Ports: []string{"p1", "p2", "p3"}, Keys: map[string][]l2.Key{"tgt": {key}}})
	m := signed(t, l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: 3 * time.Second,
		Host: l2.Host{ID: "tgt", Role: l2.RoleTarget, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}}, key, uint64(h.now.UnixMilli()))
	h.s.Frame("p2", mac(2), m)
	h.s.Settle(h.now)
	var on []string
	for _, v := range h.s.Hosts() {
		on = append(on, v.Record.Host.ID+"@"+v.Record.Port)
	}
	if strings.Join(on, ",") != "tgt@p2" {
		t.Fatalf("hosts %v, want the signed tgt only", on)
	}
}

// TestRacingClaims: two switches accepted contradicting claims before
// either heard of the other; when the records meet, the older binding
// stays and the younger switch drops its own.
func TestRacingClaims(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.now = h.now.Add(time.Second)
	h.s.SetNow(h.now)
	h.registerFrom("p3", 9, "tgt", attacker) // here, at t0+1s
	h.tx.take()
	// leaf2 bound tgt (another MAC) at t0: older.
	r := remote("tgt", "x1", mac(2), record.StateUp, t0)
	h.s.RecordUpdate(r.Key(), r)
	h.s.Settle(h.now)
	var on []string
	for _, v := range h.s.Hosts() {
		if v.Record.Host.ID == "tgt" {
			on = append(on, v.Record.SwitchName+":"+v.Record.Port)
		}
	}
	if strings.Join(on, ",") != "leaf2:x1" {
		t.Fatalf("tgt on %v, want leaf2's only", on)
	}
	if c := h.s.Counters(); c["conflicts"] != 1 {
		t.Fatalf("counters %v", c)
	}
	// A younger remote binding does not displace ours.
	h.registerFrom("p2", 3, "tgt2", netip.MustParseAddr("10.0.0.3"))
	r2 := remote("tgt2", "x2", mac(4), record.StateUp, h.now.Add(time.Second))
	h.s.RecordUpdate(r2.Key(), r2)
	if h.s.Status().Locals != 2 {
		t.Fatalf("our older binding was dropped")
	}
}

// TestLLDPSharedPortAndHold: an LLDP target's hold time is clamped like
// an agent's; a shutdown LLDPDU naming it from another MAC is refused.
func TestLLDPSharedPortAndHold(t *testing.T) {
	h := newHarnessCfg(t, storageZone(), func(c *Config) { c.MaxHold = 10 * time.Second })
	lt := l2.LLDPHost{Found: true, TTL: 65535 * time.Second, Src: mac(7), ChassisID: mac(7).String(), Host: l2.Host{ID: "tgt", Role: l2.RoleTarget}}
	h.s.LLDP("p2", lt)
	if v := h.s.Hosts(); len(v) != 1 || v[0].Expires != 10*time.Second {
		t.Fatalf("hosts %+v, want hold clamped to 10s", v)
	}
	h.s.LLDP("p2", l2.LLDPHost{Src: mac(9), ChassisID: mac(7).String()}) // shutdown, spoofed
	if h.s.Status().Locals != 1 || h.s.Counters()["foreign_mac"] != 1 {
		t.Fatalf("a spoofed shutdown LLDPDU: %d hosts, %v", h.s.Status().Locals, h.s.Counters())
	}
	h.s.LLDP("p2", l2.LLDPHost{Src: mac(7), ChassisID: mac(7).String()})
	if h.s.Status().Locals != 0 {
		t.Fatal("the real shutdown LLDPDU did not end it")
	}
	h.tick(11 * time.Second)
	if a := h.registerFrom("p2", 9, "tgt", attacker); a.Status != l2.StatusRefused {
		t.Fatalf("claim of the LLDP target's id from another MAC: %s", a.Status)
	}
}

// TestDualHomeWindow: a second link of a bound id (the same MAC) is
// taken while the binding is young — a dual-homed host brings its links
// up together — and refused once dual-home-window has passed, unless an
// operator released the binding: an attacker who learnt a host's MAC
// cannot add itself as one more path to it later.
func TestDualHomeWindow(t *testing.T) {
	h := newHarnessCfg(t, storageZone(), func(c *Config) { c.DualHomeWindow = time.Minute })
	tgt := netip.MustParseAddr("10.0.0.2")
	if a := h.registerFrom("p2", 2, "tgt", tgt); a.Status != l2.StatusOK {
		t.Fatalf("first link: %s", a.Status)
	}
	h.tick(10 * time.Second)
	if a := h.registerFrom("p3", 2, "tgt", tgt); a.Status != l2.StatusOK {
		t.Fatalf("second link within the window: %s", a.Status)
	}
	h.tick(2 * time.Minute)
	// Both links again (a reboot): their ports are in the binding.
	if a := h.registerFrom("p3", 2, "tgt", tgt); a.Status != l2.StatusOK {
		t.Fatalf("a bound port after the window: %s", a.Status)
	}
	// The same MAC on a third port, after the window: refused.
	if a := h.registerFrom("p4", 2, "tgt", netip.MustParseAddr("10.0.0.66")); a.Status != l2.StatusRefused {
		t.Fatalf("a new port after the window: %s, want refused", a.Status)
	}
	if c := h.s.Counters(); c["conflicts"] != 1 {
		t.Fatalf("counters %v", c)
	}
	cs := h.s.Conflicts()
	if len(cs) != 1 || cs[0].Port != "p4" || !strings.Contains(cs[0].Reason, "dual-home-window") {
		t.Fatalf("conflicts view %+v", cs)
	}
	// The same against a binding another switch advertises.
	r := remote("tgt2", "x1", mac(5), record.StateUp, h.now.Add(-2*time.Minute))
	h.s.RecordUpdate(r.Key(), r)
	if a := h.registerFrom("p5", 5, "tgt2", netip.MustParseAddr("10.0.0.5")); a.Status != l2.StatusRefused {
		t.Fatalf("a new port for a remote binding after the window: %s", a.Status)
	}
}
