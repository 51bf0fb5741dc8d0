package main

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fared/fared/api/wire"
)

// farectl inof: -j passes fared's JSON through; tables render it; a zone
// change posts the request body fared expects.
func TestINOF(t *testing.T) {
	hosts := `[{"id":"tgt1","switch":"10.255.0.3","switch_name":"leaf1","port":"tgt1-1","role":"target","addresses":["10.254.0.14"],"zones":["z1"],"source":"lldp"}]`
	sock := serve(t, 200, hosts)
	out, err := run(t, "-s", sock, "-j", "inof", "hosts")
	if err != nil || out != hosts {
		t.Fatalf("-j: %q %v", out, err)
	}
	out, err = run(t, "-s", sock, "inof", "hosts")
	if err != nil || !strings.Contains(out, "tgt1  target  leaf1 (10.255.0.3)  tgt1-1  10.254.0.14  z1     lldp") {
		t.Fatalf("table: %q %v", out, err)
	}

	var req atomic.Value
	zsock := fakeFared(t, 200, []byte(`[{"name":"default","members":[],"default":true,"auto_add":true},{"name":"z2","members":["a","b"]}]`), &req)
	out, err = run(t, "-s", zsock, "inof", "zone", "add", "z2", "a", "b")
	if want := `POST /v1/inof/zones/add {"name":"z2","hosts":["a","b"]}`; err != nil || req.Load() != want {
		t.Fatalf("zone add: %s %v, want %s", req.Load(), err, want)
	}
	if !strings.Contains(out, "default  -        default, auto-add of free hosts") || !strings.Contains(out, "z2       a,b") {
		t.Fatalf("zones table: %q", out)
	}
	// fared's refusal reaches the user.
	esock := serve(t, 422, `{"error":"the default zone cannot be deleted"}`)
	if _, err := run(t, "-s", esock, "inof", "zone", "del", "default"); err == nil || !strings.Contains(err.Error(), "cannot be deleted") {
		t.Fatalf("refusal: %v", err)
	}
}

// The identity views: pure printers, and the release request.
func TestINOFIdentityPrinters(t *testing.T) {
	var b strings.Builder
	printINOFBindings(&b, []wire.INOFBinding{
		{ID: "tgt1", Port: "tgt1-1", MAC: "02:00:00:00:00:07", State: "registered", Pinned: true, Static: true, Since: "2026-11-28T01:00:00Z"},
		{ID: "ini1", Port: "ini1-1", MAC: "02:00:00:00:00:01", State: "absent", Since: "2026-11-28T01:00:00Z", ExpiresIn: 86399.6},
	})
	want := "Host  Port    MAC                State       Pinned  Since                 Expires\n" +
		"tgt1  tgt1-1  02:00:00:00:00:07  registered  static  2026-11-28T01:00:00Z  -\n" +
		"ini1  ini1-1  02:00:00:00:00:01  absent      -       2026-11-28T01:00:00Z  in 86400s\n"
	if b.String() != want {
		t.Fatalf("bindings:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printINOFConflicts(&b, []wire.INOFConflict{{ID: "tgt1", Port: "evil-1", MAC: "02:66:00:00:00:01", Reason: "the id is bound to another MAC",
		Against: "leaf1(10.255.0.3):tgt1-1 MAC 02:00:00:00:00:07", Count: 3, Last: "2026-11-28T01:02:03Z"}})
	want = "Host  Port    MAC                Reason                          Bound                                           Count  Last\n" +
		"tgt1  evil-1  02:66:00:00:00:01  the id is bound to another MAC  leaf1(10.255.0.3):tgt1-1 MAC 02:00:00:00:00:07  3      2026-11-28T01:02:03Z\n"
	if b.String() != want {
		t.Fatalf("conflicts:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printINOFHosts(&b, []wire.INOFHost{{ID: "x", Role: "initiator", Switch: "10.255.0.3", Port: "p1", Source: "agent", Unresponsive: true, Pinned: true}})
	if !strings.Contains(b.String(), "pinned,unresponsive") {
		t.Fatalf("hosts: %s", b.String())
	}
	b.Reset()
	printINOFStatus(&b, wire.INOFStatus{Role: "switch", RouterID: "10.255.0.3", Bindings: 5, Unresponsive: 1,
		Ports: []wire.INOFPort{{Port: "evil-1", Refused: 9996, Conflicts: 2, ForeignMAC: 1, AuthFailures: 0}}})
	if !strings.Contains(b.String(), "5 bindings, 1 unresponsive hosts") || !strings.Contains(b.String(), "port evil-1       refused 9996, conflicts 2, foreign MAC 1, auth failures 0") {
		t.Fatalf("status: %s", b.String())
	}

	var req atomic.Value
	sock := fakeFared(t, 200, []byte(`{"id":"tgt1","ports":["tgt1-1"]}`), &req)
	out, err := run(t, "-s", sock, "inof", "release", "tgt1")
	if err != nil || req.Load() != `POST /v1/inof/release {"id":"tgt1"}` || out != "released tgt1 on tgt1-1\n" {
		t.Fatalf("release: %s %q %v", req.Load(), out, err)
	}
	if _, err := run(t, "-s", sock, "inof", "hosts", "nonsense"); err == nil || !strings.Contains(err.Error(), "want bindings or conflicts") {
		t.Fatalf("hosts nonsense: %v", err)
	}
	// fared's 404 names where the id is bound.
	esock := serve(t, 404, `{"error":"no binding of \"tgt1\" on this switch; it is bound at leaf2(10.255.0.4):tgt1-1 (release it there)"}`)
	if _, err := run(t, "-s", esock, "inof", "release", "tgt1"); err == nil || !strings.Contains(err.Error(), "release it there") {
		t.Fatalf("release elsewhere: %v", err)
	}
}

func TestINOFPrinters(t *testing.T) {
	testPrinters(t, []printerCase{
		{name: "hosts", print: func(w io.Writer) error {
			return printINOFHosts(w, []wire.INOFHost{
				{ID: "tgt", Role: "target", Switch: "10.255.0.7", SwitchName: "l3", Port: "tgt-1", Addresses: []string{"10.254.0.40"}, Zones: []string{"storage-b"},
					Source: "lldp", NQN: "nqn.2014-08.org.fared:tgt"},
				{ID: "h1", Role: "initiator", Switch: "10.255.0.5", Port: "h1-1", Source: "agent", Pinned: true},
			})
		}, want: `Host  Role       Switch           Port   Addresses    Zones      Source  NQN                        Notes
tgt   target     l3 (10.255.0.7)  tgt-1  10.254.0.40  storage-b  lldp    nqn.2014-08.org.fared:tgt  -
h1    initiator  10.255.0.5       h1-1   -            -          agent   -                          pinned
`},
		{name: "bindings", print: func(w io.Writer) error {
			return printINOFBindings(w, []wire.INOFBinding{
				{ID: "h1", Port: "h1-1", MAC: "02:00:00:00:00:01", State: "registered", Pinned: true, Since: "2026-11-28T01:00:00Z"},
				{ID: "h3", Port: "h3-1", State: "absent", Static: true, Since: "2026-11-28T01:00:00Z", Left: "2026-11-28T02:00:00Z"},
			})
		}, want: `Host  Port  MAC                State       Pinned  Since                 Expires
h1    h1-1  02:00:00:00:00:01  registered  key     2026-11-28T01:00:00Z  -
h3    h3-1  -                  absent      static  2026-11-28T01:00:00Z  never (release it)
`},
		{name: "conflicts", print: func(w io.Writer) error {
			return printINOFConflicts(w, []wire.INOFConflict{{ID: "h2", Port: "evil-1", Reason: "the id is pinned", Count: 1, Last: "2026-11-28T01:02:03Z"}})
		}, want: `Host  Port    MAC  Reason            Bound  Count  Last
h2    evil-1  -    the id is pinned  -      1      2026-11-28T01:02:03Z
`},
		{name: "release", print: func(w io.Writer) error {
			return printINOFRelease(w, wire.INOFRelease{ID: "h1", Ports: []string{"h1-1", "h1-2"}})
		}, want: `released h1 on h1-1, h1-2
`},
		{name: "zones", print: func(w io.Writer) error {
			return printZones(w, []wire.INOFZone{{Name: "default", Default: true}, {Name: "storage-a", Members: []string{"h1", "h2"}}})
		}, want: `Zone       Members  Notes
default    -        default
storage-a  h1,h2    
`},
		{name: "peers", print: func(w io.Writer) error {
			return printINOFPeers(w, []wire.INOFPeer{
				{Address: "10.255.0.1", State: "established", BFD: "up", UptimeSeconds: 61.4, Received: 4},
				{Address: "10.255.0.2", State: "active", Reason: "hold timer expired", Flaps: 1},
				{State: "registered", Interface: "l1-1", Port: "h1-1", SwitchName: "l1"},
			})
		}, want: `Address     State        BFD  Uptime  Received  Interface  Port  Last reason
10.255.0.1  established  up   61s     4         -          -     -
10.255.0.2  active       -    0s      0         -          -     hold timer expired
-           registered   -    0s      0         l1-1       h1-1  -
`},
		{name: "events", print: func(w io.Writer) error {
			return printINOFEvents(w, []wire.INOFEvent{
				{Time: "2026-11-28T01:00:00.1Z", Type: "join", Host: "h2", Zone: "storage-a", Addresses: []string{"10.254.0.36"}, Switch: "10.255.0.6",
					SwitchName: "l2", Port: "h2-1", To: "h1", ToPort: "h1-1"},
				{Time: "2026-11-28T01:00:01Z", Type: "unreachable", Host: "h3", Switch: "10.255.0.7", Port: "h3-1", Via: "l3", Reason: "bfd down"},
				{Time: "2026-11-28T01:00:02Z", Type: "leave", Host: "h3", Switch: "10.255.0.7", Port: "h3-1"},
			})
		}, want: `Time                    Event        Host  Zone       Addresses    Switch      Port  To / via
2026-11-28T01:00:00.1Z  join         h2    storage-a  10.254.0.36  l2          h2-1  h1 on h1-1
2026-11-28T01:00:01Z    unreachable  h3    -          -            10.255.0.7  h3-1  l3 bfd down
2026-11-28T01:00:02Z    leave        h3    -          -            10.255.0.7  h3-1  -
`},
		{name: "status switch", print: func(w io.Writer) error {
			return printINOFStatus(w, wire.INOFStatus{Role: "reflector", RouterID: "10.255.0.1", LocalHosts: 0, Records: 4, Zones: 3, ZonesReady: true,
				Counters: map[string]uint64{"registrations": 2, "conflicts": 1}})
		}, want: `reflector 10.255.0.1: 0 hosts here, 4 in the fabric, 3 zones from - (ready true), 0 notifications pending
0 bindings, 0 unresponsive hosts
  conflicts                1
  registrations            2
`},
		{name: "status host", print: func(w io.Writer) error {
			return printINOFStatus(w, wire.INOFStatus{Role: "host", ID: "h1", Peers: 2, Counters: map[string]uint64{"frames_tx": 9}})
		}, want: `host h1: 2 peer paths
  frames_tx                9
`},
	})
}
