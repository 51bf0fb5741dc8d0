package main

import (
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
