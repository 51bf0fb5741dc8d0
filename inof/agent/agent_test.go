package agent_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inof/agent"
	"github.com/fared/fared/inof/fabric"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
)

// A small fabric in memory: switches whose records reach each other at
// once (the exchange), hosts attached to switch ports, frames through the
// real codec. Deliveries are queued and pumped, so a test can drop some.

type frame struct {
	toSwitch bool
	sw       *swNode
	port     string
	host     *hostNode
	iface    string
	src      net.HardwareAddr
	b        []byte
}

type net_ struct {
	t      *testing.T
	now    time.Time
	sws    []*swNode
	hosts  []*hostNode
	queue  []frame
	cut    map[string]bool // "host/iface": frames in both directions dropped
	silent map[*swNode]bool
}

type swNode struct {
	n    *net_
	id   netip.Addr
	name string
	s    *fabric.Switch
	mac  net.HardwareAddr
	att  map[string]*attach // port -> host
}

type attach struct {
	host  *hostNode
	iface string
}

type hostNode struct {
	n      *net_
	id     string
	a      *agent.Agent
	att    map[string]*swPort // iface -> switch port
	events []agent.Event
}

type swPort struct {
	sw   *swNode
	port string
	mac  net.HardwareAddr
}

func (sw *swNode) Send(port string, dst net.HardwareAddr, m *l2.Message) {
	at := sw.att[port]
	if at == nil || sw.n.silent[sw] {
		return
	}
	sw.n.queue = append(sw.n.queue, frame{host: at.host, iface: at.iface, src: sw.mac, b: m.AppendTo(nil)})
}

func (sw *swNode) Publish(add []record.Record, del []record.Key) error {
	for _, o := range sw.n.sws {
		if o == sw || sw.n.silent[sw] {
			continue
		}
		for _, r := range add {
			o.s.RecordUpdate(r.Key(), r)
		}
		for _, k := range del {
			o.s.RecordWithdraw(k)
		}
	}
	return nil
}

type hostTx struct{ h *hostNode }

func (t hostTx) Send(iface string, dst net.HardwareAddr, m *l2.Message) {
	sp := t.h.att[iface]
	if sp == nil {
		return
	}
	t.h.n.queue = append(t.h.n.queue, frame{toSwitch: true, sw: sp.sw, port: sp.port, host: t.h, iface: iface, src: sp.mac, b: m.AppendTo(nil)})
}

func newNet(t *testing.T) *net_ {
	return &net_{t: t, now: time.Unix(1700000000, 0), cut: map[string]bool{}, silent: map[*swNode]bool{}}
}

func (n *net_) addSwitch(last byte, reflector bool, z *zones.Config) *swNode {
	sw := &swNode{n: n, id: netip.AddrFrom4([4]byte{10, 255, 0, last}), name: fmt.Sprint("leaf", last),
		mac: net.HardwareAddr{2, 0xee, 0, 0, 0, last}, att: map[string]*attach{}}
	sw.s = fabric.New(fabric.Config{RouterID: sw.id, Name: sw.name, Reflector: reflector, Zones: z, Stamp: 1},
		slog.New(slog.DiscardHandler), sw, sw, uint32(last), n.now)
	n.sws = append(n.sws, sw)
	return sw
}

func (n *net_) addHost(id string, role l2.Role, sws ...*swNode) *hostNode {
	h := &hostNode{n: n, id: id, att: map[string]*swPort{}}
	var ifaces []string
	for i, sw := range sws {
		iface := fmt.Sprint("eth", i)
		port := fmt.Sprintf("%s-%d", id, i)
		ifaces = append(ifaces, iface)
		h.att[iface] = &swPort{sw: sw, port: port, mac: net.HardwareAddr{2, 0, byte(len(n.hosts)), 0, 0, byte(i)}}
		sw.att[port] = &attach{host: h, iface: iface}
	}
	h.a = agent.New(agent.Config{ID: id, Role: role, Interfaces: ifaces, Hold: 3 * time.Second},
		slog.New(slog.DiscardHandler), hostTx{h}, func(e agent.Event) { h.events = append(h.events, e) }, n.now)
	n.hosts = append(n.hosts, h)
	for i, iface := range ifaces {
		h.a.Interface(iface, h.att[iface].mac, []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(len(n.hosts)), byte(i)})}, true)
	}
	return h
}

// pump delivers queued frames (and what they cause) until quiet.
func (n *net_) pump() {
	for i := 0; len(n.queue) > 0; i++ {
		if i > 100000 {
			n.t.Fatal("frames never stop")
		}
		f := n.queue[0]
		n.queue = n.queue[1:]
		if n.cut[f.host.id+"/"+f.iface] {
			continue
		}
		m, err := l2.Decode(f.b)
		if err != nil {
			n.t.Fatal(err)
		}
		if f.toSwitch {
			f.sw.s.Frame(f.port, f.src, &m)
		} else {
			f.host.a.Frame(f.iface, f.src, &m)
		}
	}
	for _, sw := range n.sws {
		sw.s.Settle(n.now)
	}
	if len(n.queue) > 0 {
		n.pump()
	}
}

// run advances time in 50 ms ticks, pumping frames.
func (n *net_) run(d time.Duration) {
	for end := n.now.Add(d); n.now.Before(end); {
		n.now = n.now.Add(50 * time.Millisecond)
		for _, sw := range n.sws {
			if !n.silent[sw] {
				sw.s.Tick(n.now)
			}
		}
		for _, h := range n.hosts {
			h.a.Tick(n.now)
		}
		n.pump()
	}
}

// log returns a host's events as "type:peer@switch" strings, and forgets
// them.
func (h *hostNode) log() string {
	var s []string
	for _, e := range h.events {
		s = append(s, fmt.Sprintf("%s:%s@%s", e.Type, e.Peer.Key.ID, e.Peer.SwitchName))
	}
	sort.Strings(s)
	h.events = nil
	return strings.Join(s, " ")
}

func zcfg() *zones.Config {
	z := zones.New(false)
	z.Add("z1", "ini", "tgt", "dual")
	z.Add("z2", "other")
	return z
}

// TestAgentsAcrossSwitches: registration on two switches, joins across
// them; a dual-homed target is two paths, each told once to the initiator
// although it is dual-homed itself.
func TestAgentsAcrossSwitches(t *testing.T) {
	n := newNet(t)
	s1 := n.addSwitch(1, true, zcfg())
	s2 := n.addSwitch(2, false, nil)
	n.run(100 * time.Millisecond) // s1's zone records reach s2
	ini := n.addHost("ini", l2.RoleInitiator, s1, s2)
	tgt := n.addHost("tgt", l2.RoleTarget, s2)
	other := n.addHost("other", l2.RoleTarget, s1)
	n.run(time.Second)
	if got, want := ini.log(), "join:tgt@leaf2"; got != want {
		t.Fatalf("ini: %q, want %q", got, want)
	}
	if got, want := tgt.log(), "join:ini@leaf1 join:ini@leaf2"; got != want {
		t.Fatalf("tgt: %q, want %q (ini's two paths)", got, want)
	}
	if got := other.log(); got != "" {
		t.Fatalf("other (zone z2) heard %q", got)
	}
	for _, l := range ini.a.Links() {
		if l.State != agent.Registered {
			t.Fatalf("link %+v", l)
		}
	}
	// Peer table of ini: tgt reported by both of ini's switches.
	ps := ini.a.Peers()
	if len(ps) != 1 || strings.Join(ps[0].Via, ",") != "eth0,eth1" || ps[0].Host.Role != l2.RoleTarget || ps[0].Source != l2.SourceAgent && ps[0].Source != l2.SourceBGP {
		t.Fatalf("peers %+v", ps)
	}
	// Quiet while keepalives flow.
	n.run(5 * time.Second)
	if got := ini.log() + tgt.log(); got != "" {
		t.Fatalf("events in steady state: %q", got)
	}

	// tgt deregisters: ini hears leave once, although two switches say so.
	tgt.a.Deregister()
	n.run(500 * time.Millisecond)
	if got, want := ini.log(), "leave:tgt@leaf2"; got != want {
		t.Fatalf("ini after tgt left: %q, want %q", got, want)
	}
	tgt.a.Register()
	n.run(time.Second)
	if got := ini.log(); got != "join:tgt@leaf2" {
		t.Fatalf("ini after tgt is back: %q", got)
	}
	// tgt itself: leave (its own deregistration) and join again, per path.
	if got, want := tgt.log(), "join:ini@leaf1 join:ini@leaf2 leave:ini@leaf1 leave:ini@leaf2"; got != want {
		t.Fatalf("tgt: %q, want %q", got, want)
	}

	// ini loses its link to s2: ini's paths stay (s1 still reports
	// tgt); tgt hears ini's path through s2 is unreachable.
	n.cut["ini/eth1"] = true
	s2.s.LinkDown("ini-1")
	n.run(4 * time.Second)
	if got := ini.log(); got != "" {
		t.Fatalf("ini lost one of two switches and heard %q", got)
	}
	if got := tgt.log(); got != "unreachable:ini@leaf2" {
		t.Fatalf("tgt: %q", got)
	}
	// s2 dies: ini's last report of tgt came through s1, which learns
	// that s2's records are gone; tgt loses its only switch.
	n.silent[s2] = true
	// The exchange withdraws what s2 advertised (as BGP does when the
	// switch dies).
	for _, h := range s2.s.Hosts() {
		if h.Record.Switch == s2.id {
			s1.s.RecordWithdraw(h.Record.Key())
		}
	}
	n.run(5 * time.Second)
	if got := ini.log(); got != "unreachable:tgt@leaf2" {
		t.Fatalf("ini after s2 died: %q", got)
	}
	if got := tgt.log(); got != "unreachable:ini@leaf1" {
		t.Fatalf("tgt after its switch died: %q (its last path, lost with the switch)", got)
	}
}

// TestStaleRetransmission: a notification older than one applied (a late
// retransmission) changes nothing; a duplicate is acknowledged again.
func TestStaleRetransmission(t *testing.T) {
	var sent []l2.Message
	tx := txFunc(func(iface string, dst net.HardwareAddr, m *l2.Message) { sent = append(sent, *m) })
	var evs []agent.Event
	now := time.Unix(1700000000, 0)
	a := agent.New(agent.Config{ID: "h", Interfaces: []string{"eth0"}}, slog.New(slog.DiscardHandler), tx, func(e agent.Event) { evs = append(evs, e) }, now)
	a.Interface("eth0", net.HardwareAddr{2, 0, 0, 0, 0, 1}, nil, true)
	reg := sent[len(sent)-1]
	sw := netip.MustParseAddr("10.255.0.9")
	a.Frame("eth0", nil, &l2.Message{Type: l2.TypeRegisterAck, Seq: reg.Seq, Switch: sw, Port: "p", Hold: 3 * time.Second, Nonce: 7})
	peer := l2.Host{ID: "t", Role: l2.RoleTarget}
	join := l2.Message{Type: l2.TypeNotify, Seq: 10, Event: l2.EventJoin, Host: peer, Switch: sw, Port: "q", Nonce: 7}
	leave := join
	leave.Seq, leave.Event = 11, l2.EventLeave
	a.Frame("eth0", nil, &join)
	a.Frame("eth0", nil, &leave)
	a.Frame("eth0", nil, &join) // late retransmission of 10
	if len(evs) != 2 || evs[0].Type != l2.EventJoin || evs[1].Type != l2.EventLeave {
		t.Fatalf("events %+v", evs)
	}
	acks := 0
	for _, m := range sent {
		if m.Type == l2.TypeNotifyAck {
			acks++
		}
	}
	if acks != 3 || len(a.Peers()) != 0 {
		t.Fatalf("%d acks, peers %+v", acks, a.Peers())
	}
	// From another run of the switch (nonce): acknowledged, not applied.
	other := join
	other.Seq, other.Nonce = 12, 8
	a.Frame("eth0", nil, &other)
	if len(evs) != 2 {
		t.Fatal("notification of an unknown switch run applied")
	}
}

type txFunc func(string, net.HardwareAddr, *l2.Message)

func (f txFunc) Send(i string, d net.HardwareAddr, m *l2.Message) { f(i, d, m) }
