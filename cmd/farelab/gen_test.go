package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fared/fared/interop"
)

// genTopology runs farelab gen with args and parses what it printed.
func genTopology(t *testing.T, args ...string) *interop.Topology {
	t.Helper()
	var out, errb bytes.Buffer
	if code, err := run(context.Background(), append([]string{"gen"}, args...), &out, &errb); code != 0 || err != nil {
		t.Fatalf("gen %v: code %d, err %v", args, code, err)
	}
	topo, err := interop.ParseTopology(out.Bytes())
	if err != nil {
		t.Fatalf("gen %v printed a topology that does not parse: %v\n%s", args, err, out.String())
	}
	return topo
}

// kinds counts nodes per kind.
func kinds(topo *interop.Topology) map[string]int {
	m := map[string]int{}
	for _, n := range topo.Nodes {
		m[n.Kind]++
	}
	return m
}

// linked is the set of "a-b" pairs of the topology's links.
func linked(topo *interop.Topology) map[string]int {
	m := map[string]int{}
	for _, l := range topo.Links {
		m[l.A+"-"+l.B]++
	}
	return m
}

func TestGenClos3(t *testing.T) {
	topo := genTopology(t, "clos3", "--spines", "3", "--leaves", "4", "--frr", "2", "--bw", "400G", "--flooding", "reduced", "--name", "c3")
	if topo.Name != "c3" || topo.Defaults.Flooding != "reduced" {
		t.Errorf("name %q flooding %q", topo.Name, topo.Defaults.Flooding)
	}
	if len(topo.Nodes) != 7 || len(topo.Links) != 12 {
		t.Fatalf("%d nodes, %d links; want 7 and 12", len(topo.Nodes), len(topo.Links))
	}
	if k := kinds(topo); k["fared"] != 5 || k["frr"] != 2 {
		t.Errorf("kinds %v; want 5 fared (3 spines, 2 leaves) and 2 frr", k)
	}
	// The FRR nodes are the last two leaves.
	for _, name := range []string{"l2", "l3"} {
		if n := topo.Node(name); n == nil || n.Kind != "frr" {
			t.Errorf("node %s: %+v; want an frr leaf", name, n)
		}
	}
	pairs := linked(topo)
	for l := 0; l < 4; l++ {
		for s := 0; s < 3; s++ {
			if pairs[fmt.Sprintf("l%d-s%d", l, s)] != 1 {
				t.Errorf("leaf l%d and spine s%d: %d links; want 1", l, s, pairs[fmt.Sprintf("l%d-s%d", l, s)])
			}
		}
	}
	for _, l := range topo.Links {
		if l.Bandwidth != 400e9 {
			t.Errorf("link %s-%s bandwidth %v; want 400G", l.A, l.B, l.Bandwidth)
		}
	}
}

// clos5: pods of leaves and spines; spine i of every pod links to every
// super-spine of plane i.
func TestGenClos5(t *testing.T) {
	topo := genTopology(t, "clos5", "--pods", "2", "--spines", "2", "--leaves", "3", "--super", "2", "--bw", "random")
	// 2 pods × (3 leaves + 2 spines) + 2 planes × 2 super-spines.
	if len(topo.Nodes) != 14 || kinds(topo)["fared"] != 14 {
		t.Fatalf("nodes %d, kinds %v; want 14 fared", len(topo.Nodes), kinds(topo))
	}
	// 2 pods × 3 leaves × 2 spines + 2 pods × 2 spines × 2 super-spines.
	if len(topo.Links) != 20 {
		t.Fatalf("%d links; want 20", len(topo.Links))
	}
	pairs := linked(topo)
	for pod := 0; pod < 2; pod++ {
		for s := 0; s < 2; s++ {
			for x := 0; x < 2; x++ {
				if pairs[fmt.Sprintf("p%ds%d-x%d-%d", pod, s, s, x)] != 1 {
					t.Errorf("p%ds%d not linked to super-spine x%d-%d of its plane", pod, s, s, x)
				}
			}
		}
	}
	for _, l := range topo.Links {
		switch l.Bandwidth {
		case 40e9, 100e9, 200e9, 400e9:
		default:
			t.Errorf("link %s-%s bandwidth %v; want one of 40G-400G", l.A, l.B, l.Bandwidth)
		}
	}
}

func TestGenErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"clos3", "--spines", "2", "--leaves", "2", "--frr", "3"}, "--frr 3: the fabric has 2 leaves"},
		{[]string{"clos3", "--spines", "0"}, "at least 1"},
		{[]string{"clos3", "--bw", "fast"}, "--bw"},
		{[]string{"clos3", "--flooding", "some"}, `flooding "some"`},
		// 300 nodes: more than a lab numbers (10.255.0.N).
		{[]string{"clos3", "--spines", "100", "--leaves", "200"}, "does not load"},
	} {
		var out, errb bytes.Buffer
		code, err := run(context.Background(), append([]string{"gen"}, tc.args...), &out, &errb)
		if code == 0 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("gen %v: code %d, err %v; want an error with %q", tc.args, code, err, tc.want)
		}
	}
}
