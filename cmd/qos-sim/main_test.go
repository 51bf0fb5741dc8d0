package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fared/fared/qos/sim/scenario"
)

const dir = "../../qos/sim/scenario/testdata/"

// TestJSON: -j emits the metrics of a run (the incast: every flow done,
// PAUSE frames, no watchdog event).
func TestJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-j", dir + "incast.yaml"}, &out); err != nil {
		t.Fatal(err)
	}
	var o scenario.Output
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	r := o.Results
	if o.Scenario != "incast" || r.Elephants.Done != 8 || r.PauseTx == 0 || len(o.Watchdog) != 0 || len(r.Ports) == 0 {
		t.Errorf("unexpected result: %+v", o)
	}
}

// TestText: the text report names ports, PAUSE frames, FCTs and the
// watchdog's events (the loop deadlocks and recovers).
func TestText(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-flows", dir + "loop4.yaml"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scenario loop4", "PAUSE frames:", "FCT elephants:", "watchdog:", "detected  C prio 3", "victim"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBadScenario: errors come with file:line.
func TestBadScenario(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(f, []byte("name: bad\nswitches: [S]\nhosts: [h1]\nlinks:\n  - {a: S, b: h9}\nqos:\n  pfc: {priorities: [3], xoff: 100K}\n  ecn-profiles: {p: {green: {min: 10K, max: 200K}}}\n  queues: {3: {ecn: p}}\n"), 0o644)
	err := run([]string{f}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("bad scenario accepted")
	}
	for _, want := range []string{f + `:5: link: unknown node "h9"`, "ecn-profile p max threshold 200000 is not below the queue's PFC xoff 100000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
