package main

import (
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
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

	var got wire.INOFZoneRequest
	var path string
	zsock := filepath.Join(t.TempDir(), "z.sock")
	ln, err := net.Listen("unix", zsock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.Method + " " + r.URL.Path
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`[{"name":"default","members":[],"default":true,"auto_add":true},{"name":"z2","members":["a","b"]}]`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	out, err = run(t, "-s", zsock, "inof", "zone", "add", "z2", "a", "b")
	if err != nil || path != "POST /v1/inof/zones/add" || got.Name != "z2" || strings.Join(got.Hosts, ",") != "a,b" {
		t.Fatalf("zone add: %s %+v %v", path, got, err)
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
