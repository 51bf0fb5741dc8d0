package fabric

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// TestRetransmitBackoff: an unacknowledged notification is sent again
// after 250 ms, then after twice as long each time; after 6 retransmissions
// the switch gives up on the host: it is shown unresponsive, counted,
// holds nothing for it, and its keepalive is answered "unknown host". The
// host registers again and is told everything anew.
func TestRetransmitBackoff(t *testing.T) {
	h := newHarness(t, true, storageZone())
	h.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	start := h.now
	var at []time.Duration // when ini was sent tgt's join
	for i := 0; i < 2000; i++ {
		for _, o := range h.tx.take() {
			if o.dst == mac(1).String() && o.msg.Type == l2.TypeNotify {
				at = append(at, h.now.Sub(start))
			}
			if o.dst == mac(2).String() && o.msg.Type == l2.TypeNotify {
				src, _ := net.ParseMAC(o.dst)
				h.s.Frame(o.port, src, &l2.Message{Type: l2.TypeNotifyAck, Seq: o.msg.Seq, Host: l2.Host{ID: "tgt"}})
			}
		}
		if i%20 == 0 {
			h.s.Frame("p2", mac(2), &l2.Message{Type: l2.TypeKeepalive, Seq: 9, Host: l2.Host{ID: "tgt"}})
			if i < 600 {
				h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: 9, Host: l2.Host{ID: "ini"}})
			}
		}
		h.tick(50 * time.Millisecond)
	}
	want := []time.Duration{0, 250 * time.Millisecond, 750 * time.Millisecond, 1750 * time.Millisecond, 3750 * time.Millisecond,
		7750 * time.Millisecond, 15750 * time.Millisecond, 31750 * time.Millisecond}
	if fmt.Sprint(at) != fmt.Sprint(want[:7]) {
		t.Fatalf("sent at %v\nwant     %v (then no more)", at, want[:7])
	}
	c := h.s.Counters()
	if c["notify_gave_up"] != 1 || c["retransmissions"] != 6 {
		t.Fatalf("counters %v", c)
	}
	// Again, ini keeping alive throughout: the switch gives up at 31.75 s;
	// ini is shown unresponsive, its keepalives no longer keep it.
	h2 := newHarness(t, true, storageZone())
	h2.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	h2.registerFrom("p2", 2, "tgt", netip.MustParseAddr("10.0.0.2"))
	for i := 0; i < 660; i++ { // 33 s; both keep alive, ini never acks
		if i%20 == 0 {
			h2.s.Frame("p2", mac(2), &l2.Message{Type: l2.TypeKeepalive, Seq: 9, Host: l2.Host{ID: "tgt"}})
		}
		h2.tick(50 * time.Millisecond)
		for _, o := range h2.tx.take() {
			if o.dst == mac(2).String() && o.msg.Type == l2.TypeNotify {
				h2.s.Frame(o.port, mac(2), &l2.Message{Type: l2.TypeNotifyAck, Seq: o.msg.Seq, Host: l2.Host{ID: "tgt"}})
			}
		}
		if i%20 == 0 {
			h2.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: 9, Host: l2.Host{ID: "ini"}})
		}
	}
	st := h2.s.Status()
	if st.Unresponsive != 1 || st.Pending != 0 {
		t.Fatalf("status %+v", st)
	}
	var shown bool
	for _, v := range h2.s.Hosts() {
		shown = shown || v.Record.Host.ID == "ini" && v.Unresponsive
	}
	if !shown {
		t.Fatalf("ini not shown unresponsive: %+v", h2.s.Hosts())
	}
	h2.tx.take()
	h2.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeKeepalive, Seq: 10, Host: l2.Host{ID: "ini"}})
	if a := h2.ackTo(mac(1).String(), l2.TypeKeepaliveAck); a.Status != l2.StatusUnknownHost {
		t.Fatalf("keepalive of an unresponsive host: %s", a.Status)
	}
	h2.tx.take()
	h2.registerFrom("p1", 1, "ini", netip.MustParseAddr("10.0.0.1"))
	if j := joinsOf(h2.tx.take(), mac(1).String(), "tgt"); len(j) != 1 || h2.s.Status().Unresponsive != 0 {
		t.Fatalf("after registering again: told %v, status %+v", j, h2.s.Status())
	}
}

// TestQueuedSaysTheLatest: a notification waiting for the window says the
// peer's state when it is sent: a join queued, then the peer's new
// address, then its departure, is one leave; a peer that comes and goes
// while queued costs the host nothing twice.
func TestQueuedSaysTheLatest(t *testing.T) {
	h := newHarnessCfg(t, zones.New(true), func(c *Config) { c.Window = 1 })
	h.registerFrom("p1", 1, "a", netip.MustParseAddr("10.0.0.1"))
	h.tx.take()
	r1 := remote("b", "x1", mac(2), record.StateUp, t0)
	r2 := remote("c", "x2", mac(3), record.StateUp, t0)
	h.s.RecordUpdate(r1.Key(), r1) // sent (window 1)
	h.s.RecordUpdate(r2.Key(), r2) // queued
	moved := *r2
	moved.Host.Addrs = []netip.Addr{netip.MustParseAddr("10.9.9.9")}
	h.s.RecordUpdate(r2.Key(), &moved)
	out := h.tx.take()
	if len(out) != 1 {
		t.Fatalf("sent %d, want 1 (window)", len(out))
	}
	h.s.Frame("p1", mac(1), &l2.Message{Type: l2.TypeNotifyAck, Seq: out[0].msg.Seq, Host: l2.Host{ID: "a"}})
	out = h.tx.take()
	if len(out) != 1 || out[0].msg.Event != l2.EventJoin || out[0].msg.Host.Addrs[0] != netip.MustParseAddr("10.9.9.9") {
		t.Fatalf("the queued join: %+v", out)
	}
	if st := h.s.Status(); st.Pending != 1 {
		t.Fatalf("pending %d", st.Pending)
	}
}

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// zoneOf builds a switch with locals agent hosts (4 per port) and
// members-locals remote records, all in the default zone, every
// notification acknowledged.
func zoneOf(t testing.TB, locals, members int) (*harness, int) {
	tx := &ackTx{}
	h := &harness{tx: &fakeTx{}, ex: &fakeEx{adv: map[record.Key]record.Record{}}, now: t0}
	var ports []string
	for p := 0; p < (locals+3)/4; p++ {
		ports = append(ports, fmt.Sprint("eth", p))
	}
	h.s = New(Config{RouterID: sw1, Name: "leaf1", Reflector: true, Zones: zones.New(true), Stamp: 1, Ports: ports,
		MaxHosts: members}, slog.New(slog.DiscardHandler), tx, h.ex, 42, t0)
	tx.s = h.s
	for i := 0; i < members-locals; i++ {
		r := &record.Host{Switch: sw2, SwitchName: "leaf2", Port: fmt.Sprint("x", i), Source: l2.SourceAgent, State: record.StateUp, Since: t0,
			Host: l2.Host{ID: fmt.Sprintf("r%05d", i), Role: l2.RoleTarget, MAC: net.HardwareAddr{2, 1, 0, 0, byte(i >> 8), byte(i)},
				Addrs: []netip.Addr{netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})}}}
		h.s.RecordUpdate(r.Key(), r)
	}
	for i := 0; i < locals; i++ {
		src := net.HardwareAddr{2, 2, 0, 0, byte(i >> 8), byte(i)}
		h.s.Frame(ports[i/4], src, &l2.Message{Type: l2.TypeRegister, Seq: 1, Hold: time.Hour,
			Host: l2.Host{ID: fmt.Sprintf("l%05d", i), Role: l2.RoleInitiator, Addrs: []netip.Addr{netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)})}}})
		tx.pump()
	}
	h.s.Settle(t0)
	tx.pump()
	return h, tx.sent
}

// ackTx acknowledges every notification, as a host would, after the
// switch's call returns (pump).
type ackTx struct {
	s    *Switch
	acks []sent
	sent int
}

func (a *ackTx) Send(port string, dst net.HardwareAddr, m *l2.Message) {
	a.sent++
	if m.Type == l2.TypeNotify {
		a.acks = append(a.acks, sent{port: port, dst: dst.String(), msg: l2.Message{Seq: m.Seq}})
	}
}

func (a *ackTx) pump() {
	for len(a.acks) > 0 {
		q := a.acks
		a.acks = nil
		for _, o := range q {
			src, _ := net.ParseMAC(o.dst)
			id := fmt.Sprintf("l%05d", int(src[4])<<8|int(src[5]))
			a.s.Frame(o.port, src, &l2.Message{Type: l2.TypeNotifyAck, Seq: o.msg.Seq, Host: l2.Host{ID: id}})
		}
	}
}
