package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// floodClos: 2 spines × 6 leaves, point-to-point, one FRR leaf (l6).
const floodClos = `name: floodred
defaults: {hello-interval: 1s}
nodes:
  s1: {kind: fared}
  s2: {kind: fared}
  l1: {kind: fared}
  l2: {kind: fared}
  l3: {kind: fared}
  l4: {kind: fared}
  l5: {kind: fared}
  l6: {kind: frr}
links:
  - {a: l1, b: s1}
  - {a: l1, b: s2}
  - {a: l2, b: s1}
  - {a: l2, b: s2}
  - {a: l3, b: s1}
  - {a: l3, b: s2}
  - {a: l4, b: s1}
  - {a: l4, b: s2}
  - {a: l5, b: s1}
  - {a: l5, b: s2}
  - {a: l6, b: s1}
  - {a: l6, b: s2}
`

var (
	floodNodes  = []string{"s1", "s2", "l1", "l2", "l3", "l4", "l5", "l6"}
	floodFared  = []string{"s1", "s2", "l1", "l2", "l3", "l4", "l5"}
	floodSpines = []string{"s1", "s2"}
	floodUp     = map[string]int{"s1": 6, "s2": 6, "l1": 2, "l2": 2, "l3": 2, "l4": 2, "l5": 2, "l6": 2}
)

// floodCounts are LSP counters summed over nodes.
type floodCounts struct{ received, duplicates, sent, suppressed uint64 }

func (a floodCounts) minus(b floodCounts) floodCounts {
	return floodCounts{a.received - b.received, a.duplicates - b.duplicates, a.sent - b.sent, a.suppressed - b.suppressed}
}

// TestISISFloodingReduction: the same link flaps with flooding-reduction
// off, then (after a live reload of every fared node) on. Each time the
// databases of every node, FRR's included, end identical within a
// deadline; with reduction on, the spines receive at most half the
// duplicate LSPs they received with it off, and FRR, which does not
// advertise the algorithm, is still sent every LSP.
func TestISISFloodingReduction(t *testing.T) {
	l := startLab(t, floodClos)
	ctx := ctxT(t)
	poll(t, ctx, 60*time.Second, "adjacencies up", adjacencies(ctx, l, floodUp))
	poll(t, ctx, 60*time.Second, "identical LSDBs", sameLSDB(ctx, l, len(floodNodes), floodNodes...))

	off := floodPhase(t, ctx, l, "off")
	for _, n := range floodFared {
		r := editFared(t, ctx, l, n, func(doc *yaml.Node) { yset(yget(root(doc), "isis"), "flooding-reduction", "true") })
		reported(t, r, "isis", "flooding-reduction")
	}
	poll(t, ctx, 60*time.Second, "every fared neighbour seen running the reduction, FRR not", reductionSeen(ctx, l))
	poll(t, ctx, 60*time.Second, "identical LSDBs after the reload", sameLSDB(ctx, l, len(floodNodes), floodNodes...))
	on := floodPhase(t, ctx, l, "on")

	t.Logf("FIGURE flooding reduction, 3 flaps of l1–s1, 2 spines × 6 leaves (1 FRR): fared nodes received %d LSPs (%d duplicates) off, %d (%d duplicates) on; spines %d duplicates off, %d on; LSPs sent off %d, on %d (%d suppressed)",
		off.all.received, off.all.duplicates, on.all.received, on.all.duplicates, off.spines.duplicates, on.spines.duplicates,
		off.all.sent, on.all.sent, on.all.suppressed)
	if off.spines.duplicates == 0 || 2*on.spines.duplicates > off.spines.duplicates {
		t.Errorf("duplicates at the spines: %d with reduction on, %d off: want at most half", on.spines.duplicates, off.spines.duplicates)
	}
	if on.all.suppressed == 0 {
		t.Error("no LSP suppressed with reduction on")
	}
	if off.all.suppressed != 0 {
		t.Errorf("%d LSPs suppressed with reduction off", off.all.suppressed)
	}
	// FRR is flooded in full: the spines never suppress towards it.
	for _, s := range floodSpines {
		fl := flooding(t, ctx, l, s)
		for _, i := range fl.Interfaces {
			if i.Neighbor == "l6" && (i.LSPsSuppressed != 0 || i.Refloods != "all") {
				t.Errorf("%s towards FRR l6: %+v", s, i)
			}
		}
	}
}

// floodResult is one phase's counter deltas: over the fared nodes, and
// over the spines.
type floodResult struct{ all, spines floodCounts }

// floodPhase flaps l1's link to s1 three times, each time down and up,
// waiting for the databases to agree after each change, and returns how
// the LSP counters moved.
func floodPhase(t *testing.T, ctx context.Context, l *interop.Lab, name string) floodResult {
	t.Helper()
	all0, sp0 := floodTotals(t, ctx, l, floodFared), floodTotals(t, ctx, l, floodSpines)
	iface := ifaceToward(l, "l1", "s1")
	if iface == "" {
		t.Fatal("l1 has no link to s1")
	}
	down := map[string]int{}
	for n, c := range floodUp {
		down[n] = c
	}
	down["l1"], down["s1"] = 1, 5
	for i := 0; i < 3; i++ {
		for _, st := range []struct {
			state string
			up    map[string]int
		}{{"down", down}, {"up", floodUp}} {
			if _, err := l.Exec(ctx, "l1", "ip", "link", "set", iface, st.state); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s: flap %d, link %s", name, i+1, st.state)
			poll(t, ctx, 60*time.Second, what+": adjacencies", adjacencies(ctx, l, st.up))
			poll(t, ctx, 60*time.Second, what+": identical LSDBs", sameLSDB(ctx, l, len(floodNodes), floodNodes...))
		}
	}
	return floodResult{all: floodTotals(t, ctx, l, floodFared).minus(all0), spines: floodTotals(t, ctx, l, floodSpines).minus(sp0)}
}

func flooding(t *testing.T, ctx context.Context, l *interop.Lab, node string) wire.ISISFlooding {
	t.Helper()
	var v wire.ISISFlooding
	if err := l.FarectlJSON(ctx, node, &v, "isis", "flooding"); err != nil {
		t.Fatal(err)
	}
	return v
}

func floodTotals(t *testing.T, ctx context.Context, l *interop.Lab, nodes []string) floodCounts {
	t.Helper()
	var c floodCounts
	for _, n := range nodes {
		for _, i := range flooding(t, ctx, l, n).Interfaces {
			c.received += i.LSPsReceived
			c.duplicates += i.Duplicates
			c.sent += i.LSPsSent
			c.suppressed += i.LSPsSuppressed
		}
	}
	return c
}

// reductionSeen succeeds when every fared node runs the reduction and
// sees each fared neighbour advertise it, and FRR's l6 not.
func reductionSeen(ctx context.Context, l *interop.Lab) func() error {
	return func() error {
		for _, n := range floodFared {
			var v wire.ISISFlooding
			if err := l.FarectlJSON(ctx, n, &v, "isis", "flooding"); err != nil {
				return err
			}
			if !v.Reduction {
				return fmt.Errorf("%s: reduction off", n)
			}
			for _, i := range v.Interfaces {
				want := "when_chosen"
				if i.Neighbor == "l6" {
					want = "all"
				}
				if i.Refloods != want {
					return fmt.Errorf("%s %s (neighbour %s): refloods %s (%s), want %s", n, i.Name, i.Neighbor, i.Refloods, i.Why, want)
				}
			}
		}
		return nil
	}
}
