package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/views.golden")

// TestViews runs every command against answers fared gave in a lab
// (testdata/views.json: the fabric of interop/scenarios'
// TestFarectlJSONGolden, arrays cut short) and pins what farectl does with
// them in testdata/views.golden: the request it sends (method, path and
// query, body) and the text it prints. With -j it must print the answer
// byte for byte. -update rewrites the golden; review its diff.
func TestViews(t *testing.T) {
	raw, err := os.ReadFile("testdata/views.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Args   []string        `json:"args"`
		Answer json.RawMessage `json:"answer"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, c := range cases {
		var req atomic.Value
		sock := fakeFared(t, 200, c.Answer, &req)
		out, err := run(t, append([]string{"-s", sock}, c.Args...)...)
		if err != nil {
			t.Errorf("farectl %s: %v", strings.Join(c.Args, " "), err)
			continue
		}
		fmt.Fprintf(&got, "== farectl %s\n> %s\n%s\n", strings.Join(c.Args, " "), req.Load(), out)
		out, err = run(t, append([]string{"-s", sock, "-j"}, c.Args...)...)
		if err != nil || out != string(c.Answer) {
			t.Errorf("farectl -j %s: %v\n%s\nwant the answer as it came:\n%s", strings.Join(c.Args, " "), err, out, c.Answer)
		}
	}
	const golden = "testdata/views.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		gs, ws := sections(got.String()), sections(string(want))
		for k, w := range ws {
			if gs[k] != w {
				t.Errorf("%s\ngot:\n%s\nwant:\n%s", k, gs[k], w)
			}
		}
		for k := range gs {
			if _, ok := ws[k]; !ok {
				t.Errorf("%s: not in the golden (-update)", k)
			}
		}
	}
}

// sections splits the golden by its "== farectl ..." headers; a command
// run twice (on two answers) gets a numbered key.
func sections(s string) map[string]string {
	out := map[string]string{}
	for _, sec := range strings.Split(s, "== farectl ")[1:] {
		head, _, _ := strings.Cut(sec, "\n")
		k := head
		for i := 2; out[k] != ""; i++ {
			k = fmt.Sprintf("%s (%d)", head, i)
		}
		out[k] = sec
	}
	return out
}
