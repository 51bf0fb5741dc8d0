package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestWatchdogEventsJSON: the watchdog's events use snake_case field names
// (docs/api.md) and keep the names first published (At, Kind, Iface, Prio,
// Since) as deprecated aliases with the same values. The loop deadlocks on
// priority 3, so its first event is a detection there.
func TestWatchdogEventsJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-j", dir + "loop4.yaml"}, &out); err != nil {
		t.Fatal(err)
	}
	var o struct {
		Events []map[string]any `json:"watchdog_events"`
	}
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Events) == 0 {
		t.Fatal("no watchdog event in the loop")
	}
	want := []string{"At", "Iface", "Kind", "Prio", "Since", "at", "at_seconds", "interface", "kind", "node", "priority", "since"}
	var got []string
	for k := range o.Events[0] {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	e := o.Events[0]
	if e["kind"] != "detected" || e["node"] == "" || e["priority"] != 3.0 || e["interface"] == "" ||
		e["Kind"] != e["kind"] || e["Iface"] != e["interface"] || e["Prio"] != e["priority"] {
		t.Fatalf("first event %v", e)
	}
	at, err := time.Parse(time.RFC3339Nano, e["at"].(string))
	if d := at.Sub(scenario.Epoch).Seconds() - e["at_seconds"].(float64); err != nil || d > 1e-9 || d < -1e-9 {
		t.Fatalf("at %v and at_seconds %v disagree (%v)", e["at"], e["at_seconds"], err)
	}
}
