package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
)

// startupClos is a 4 spines × 12 leaves fabric of fared nodes, every one
// started at once by the lab (issue 28: start-up without a storm). Hold
// time 3 s: a node whose loop let LSP work delay its hellos by 3 s would
// drop adjacencies.
func startupClos(spines, leaves int) (topo string, nodes []string, up map[string]int) {
	var b strings.Builder
	b.WriteString("name: startup\ndefaults: {hello-interval: 1s, hello-multiplier: 3, log-level: info}\nnodes:\n")
	up = map[string]int{}
	for s := 1; s <= spines; s++ {
		fmt.Fprintf(&b, "  s%d: {kind: fared}\n", s)
		nodes = append(nodes, fmt.Sprintf("s%d", s))
		up[fmt.Sprintf("s%d", s)] = leaves
	}
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "  l%d: {kind: fared}\n", l)
		nodes = append(nodes, fmt.Sprintf("l%d", l))
		up[fmt.Sprintf("l%d", l)] = spines
	}
	b.WriteString("links:\n")
	for l := 1; l <= leaves; l++ {
		for s := 1; s <= spines; s++ {
			fmt.Fprintf(&b, "  - {a: l%d, b: s%d}\n", l, s)
		}
	}
	return b.String(), nodes, up
}

// TestISISStartupNoStorm: every node of a 4×12 fabric starts at once.
// Within a deadline all adjacencies are Up and every database is the
// same; no interface of any node ever saw an adjacency go down (the
// circuits' adjacency_down counters), and each came up exactly once.
func TestISISStartupNoStorm(t *testing.T) {
	topo, nodes, up := startupClos(4, 12)
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 90*time.Second, "adjacencies up", adjacencies(ctx, l, up))
	poll(t, ctx, 90*time.Second, "identical LSDBs", sameLSDB(ctx, l, len(nodes), nodes...))
	var paced uint64
	for _, n := range nodes {
		ifs, err := isisInterfaces(ctx, l, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ifs {
			if d, u := f.Counters["adjacency_down"], f.Counters["adjacency_up"]; d != 0 || u != 1 {
				t.Errorf("%s %s: adjacency went down %d times, up %d times; want 0 and 1", n, f.Name, d, u)
			}
			paced += f.Counters["tx_lsp_paced"]
		}
	}
	t.Logf("FIGURE start-up of 4×12 fared nodes at once: no adjacency down; %d times an interface's LSPs waited for pacing", paced)
}

func isisInterfaces(ctx context.Context, l *interop.Lab, node string) ([]isis.InterfaceView, error) {
	var ifs []isis.InterfaceView
	err := l.FarectlJSON(ctx, node, &ifs, "isis", "interfaces")
	return ifs, err
}
