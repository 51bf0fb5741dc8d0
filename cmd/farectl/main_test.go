package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestFormatBytesPerSec(t *testing.T) {
	for in, want := range map[float64]string{1.25e10: "100G", 5e9: "40G", 3.125e9: "25G", 1.25e8: "1G", 125e3: "1M", 3.4028235e38: "max"} {
		if got := formatBytesPerSec(in); got != want {
			t.Errorf("%g: %q, want %q", in, got, want)
		}
	}
}

// printerCase is one row of a printer's table test: the printer applied
// to a hand-written answer, and the text it must print.
type printerCase struct {
	name  string
	print func(w io.Writer) error
	want  string
}

// testPrinters runs the rows. FARECTL_PRINTED=FILE records what each row
// printed there (JSON, by row name), to write the want of a new row from
// output checked by eye.
func testPrinters(t *testing.T, cases []printerCase) {
	t.Helper()
	printed := map[string]string{}
	for _, c := range cases {
		var b strings.Builder
		if err := c.print(&b); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		printed[c.name] = b.String()
		if b.String() != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
	if f := os.Getenv("FARECTL_PRINTED"); f != "" {
		old := map[string]string{}
		if b, err := os.ReadFile(f); err == nil {
			json.Unmarshal(b, &old)
		}
		for k, v := range printed {
			old[k] = v
		}
		b, _ := json.MarshalIndent(old, "", "  ")
		os.WriteFile(f, b, 0o644)
	}
}

// serve answers every request with body on a unix socket, like fared.
func serve(t *testing.T, code int, body string) string { return fakeFared(t, code, []byte(body), nil) }

// fakeFared answers every request with code and answer on a unix socket,
// like fared; when req is not nil it holds the last request as "METHOD
// URI BODY".
func fakeFared(t *testing.T, code int, answer []byte, req *atomic.Value) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "f.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if req != nil {
			req.Store(strings.TrimSpace(r.Method + " " + r.URL.RequestURI() + " " + strings.TrimSpace(string(b))))
		}
		w.WriteHeader(code)
		w.Write(answer)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func run(t *testing.T, args ...string) (string, error) {
	var out bytes.Buffer
	root := newRoot(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// -j prints fared's JSON unchanged; the table is rendered from it.
func TestNeighborsJSONAndTable(t *testing.T) {
	body := `[{"system_id":"0000.0000.0002","hostname":"r1","interface":"e0","level":"L2","state":"Up","type":"p2p","snpa":"aa:bb:cc:dd:ee:ff","hold_time":3,"expires_in":2.5,"areas":["49.0001"],"ipv4":["10.0.0.1"],"flaps":0}]`
	sock := serve(t, 200, body)
	out, err := run(t, "-s", sock, "-j", "isis", "neighbors")
	if err != nil || out != body {
		t.Fatalf("-j: %q, %v", out, err)
	}
	out, err = run(t, "-s", sock, "isis", "neighbors")
	if err != nil || !strings.Contains(out, "0000.0000.0002  r1") || !strings.Contains(out, "10.0.0.1") {
		t.Fatalf("table: %q, %v", out, err)
	}
}

// An API error reaches the user with fared's reason and a failure.
func TestAPIErrorIsReported(t *testing.T) {
	sock := serve(t, 404, `{"error":"no route for 10.9.9.0/24"}`)
	_, err := run(t, "-s", sock, "fare", "10.9.9.0/24")
	if err == nil || !strings.Contains(err.Error(), "no route for 10.9.9.0/24") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err %v", err)
	}
}

// farectl links the API's wire types and client only: never a protocol,
// the rib, the FIB or a module (which may embed a BGP server).
func TestLinksNoDaemon(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{"github.com/fared/fared/api/wire": true, "github.com/fared/fared/api/client": true,
		"github.com/fared/fared/internal/buildinfo": true, "github.com/fared/fared/cmd/farectl": true}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/fared/fared/") && !allowed[p] {
			t.Errorf("farectl links %s", p)
		}
		if strings.Contains(p, "gobgp") || strings.Contains(p, "google.golang.org/grpc") {
			t.Errorf("farectl links %s", p)
		}
	}
}

// --detail shows bandwidths with their unit: bytes/s as on the wire and
// bits/s as configured.
func TestDetailBandwidthUnits(t *testing.T) {
	var b bytes.Buffer
	printFields(&b, map[string]any{"name": "max_link_bandwidth", "type": 9.0, "value": 5e9}, "", nil)
	printFields(&b, map[string]any{"max_bandwidth": 1.25e10, "metric": 10.0}, "", nil)
	out := b.String()
	for _, want := range []string{"value: 5e+09 bytes/s (40G)", "max_bandwidth: 1.25e+10 bytes/s (100G)", "metric: 10\n", "type: 9\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
