package wire

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// fieldLines flattens a JSON value into "path<TAB>type" lines, sorted:
// the shape scripts depend on (names and types, not values).
func fieldLines(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			out = append(out, path+"\tobject")
			for k, v := range x {
				walk(path+"."+k, v)
			}
		case []any:
			out = append(out, path+"\tarray")
			for _, v := range x {
				walk(path+"[]", v)
			}
		case string:
			out = append(out, path+"\tstring")
		case float64:
			out = append(out, path+"\tnumber")
		case bool:
			out = append(out, path+"\tbool")
		case nil:
			out = append(out, path+"\tnull")
		}
	}
	walk("", x)
	slices.Sort(out)
	return slices.Compact(out)
}

// The INC views' JSON field names and types (docs/api.md): the golden is
// written by hand from the API's documentation, so a renamed, removed or
// retyped field fails here before it reaches a script.
func TestINCJSONFieldNames(t *testing.T) {
	bn := 33275000000.0 // bytes/s: 266.2 Gb/s
	views := map[string]any{
		"trees": INCTree{Group: "g", TreeID: 1, Generation: 2, Root: "s1", RootAddr: "10.255.0.1", Levels: 2, Members: 8,
			Bottleneck: &bn, Ready: true, Topology: "isis L2", Excluded: []string{"s2"},
			Switches: []INCTreeSwitch{{Switch: "s1", Address: "10.255.0.1", Role: "root", Parent: "x", QP: 257, Children: []string{"rank 0"}, Applied: true}}},
		"clients": INCClient{ID: "c1", Group: "g", Rank: 1, Address: "10.1.1.10", QP: 4097, Host: "h1", LastSeenAgo: 0.2, Generation: 2,
			Attach: "l1", Timeouts: 1, Bytes: 1 << 20, Operations: 4, FailedOperations: 1, Retransmissions: 17, RTOs: 3},
		"groups": INCGroup{Name: "g", Size: 8, Joined: 8, State: "dismantled", Reason: "dismantled by the operator", Generation: 3, TreeID: 1, Root: "s1"},
	}
	want, err := os.ReadFile("testdata/inc-fields.golden")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, name := range []string{"clients", "groups", "trees"} {
		fmt.Fprintf(&got, "== %s\n%s\n", name, strings.Join(fieldLines(t, views[name]), "\n"))
	}
	if got.String() != string(want) {
		t.Errorf("INC JSON fields differ from testdata/inc-fields.golden:\ngot:\n%s", got.String())
	}
}

// bottleneck_bps is whole bits/s (266.2G, the value farectl's text shows),
// null when the tree is unconstrained; bottleneck_bandwidth, deprecated,
// keeps its bytes/s.
func TestINCBottleneckBPS(t *testing.T) {
	bn := 33275000000.0
	b, err := json.Marshal(INCTree{Bottleneck: &bn})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"bottleneck_bandwidth":33275000000`, `"bottleneck_bps":266200000000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %s in %s", want, b)
		}
	}
	b, _ = json.Marshal(INCTree{})
	if !strings.Contains(string(b), `"bottleneck_bandwidth":null`) || !strings.Contains(string(b), `"bottleneck_bps":null`) {
		t.Errorf("unconstrained: %s", b)
	}
}
