package interop

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fared/fared/config"
	_ "github.com/fared/fared/inc"  // sections the topologies' config: extras use
	_ "github.com/fared/fared/inof" // the inof section
	_ "github.com/fared/fared/qos"
)

var updateRender = flag.Bool("update-render", false, "rewrite testdata/render with what farelab renders now")

// The fared configs farelab renders for the topologies of the examples,
// the scenarios, the benchmarks and this package's tests (taken when
// farelab still wrote them from its own structs) parse to the same
// configuration as what it renders now through config.Render. Each
// testdata/render file is a topology and, per node running fared, the
// file farelab wrote ("RUNDIR" stands for the lab's run directory).
func TestRenderedConfigsParseTheSame(t *testing.T) {
	files, err := filepath.Glob("testdata/render/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { checkRenderGolden(t, f) })
	}
}

func checkRenderGolden(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	parts := splitGolden(string(b))
	topo, err := ParseTopology([]byte(parts["topology"]))
	if err != nil {
		t.Fatal(err)
	}
	rd := t.TempDir()
	l, err := Plan(topo, Options{Name: "g", RunDir: rd})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.makeINCCredentials(); err != nil { // an inc section's files must exist to parse
		t.Fatal(err)
	}
	var upd strings.Builder
	upd.WriteString("-- topology --\n" + parts["topology"])
	for _, n := range l.Nodes {
		if !n.runsFared() {
			continue
		}
		now, err := l.renderNodeConfig(n)
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		upd.WriteString("-- node " + n.Name + " --\n" + strings.ReplaceAll(string(now), rd, "RUNDIR"))
		old, ok := parts["node "+n.Name]
		if !ok {
			t.Errorf("%s: no golden", n.Name)
			continue
		}
		c1, err := config.Parse("old.yaml", []byte(strings.ReplaceAll(old, "RUNDIR", rd)))
		if err != nil {
			t.Fatalf("%s: golden: %v", n.Name, err)
		}
		c2, err := config.Parse("new.yaml", now)
		if err != nil {
			t.Fatalf("%s: rendered config does not parse: %v\n%s", n.Name, err, now)
		}
		r1, _ := config.Render(c1)
		r2, _ := config.Render(c2)
		if string(r1) != string(r2) {
			t.Errorf("%s: parses to another config: %v\nwas:\n%s\nnow:\n%s", n.Name, config.Diff(c1, c2), old, now)
		}
	}
	if *updateRender {
		if err := os.WriteFile(file, []byte(upd.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// splitGolden splits a file of "-- name --" sections.
func splitGolden(s string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --\n") {
			name = strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --\n")
			continue
		}
		out[name] += line
	}
	return out
}
