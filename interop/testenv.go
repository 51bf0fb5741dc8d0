package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/logbuf"
)

// labMissing says why lab tests cannot run here, or "".
func labMissing() string {
	if os.Geteuid() != 0 {
		return "lab tests need root"
	}
	for _, b := range []string{"ip", "vtysh"} {
		if _, err := exec.LookPath(b); err != nil {
			return b + " not found (apt-get install iproute2 frr)"
		}
	}
	for _, d := range []string{"zebra", "isisd"} {
		if _, err := os.Stat(filepath.Join(FRRDir, d)); err != nil {
			return "FRR not installed: " + err.Error()
		}
	}
	return ""
}

// RequireLab skips the test when lab tests cannot run here (not root, no
// FRR), or fails it when CI=true: in CI a skipped lab test hides breakage.
func RequireLab(t testing.TB) {
	t.Helper()
	why := labMissing()
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s", why)
	}
	t.Skip(why)
}

// LockedBuffer is a buffer that writers on other goroutines may write
// while it is read: a lab's command log, printed only when the test
// fails (so passing tests stay quiet), or a process's stderr.
type LockedBuffer = logbuf.Buffer

// Bins are the binaries a lab test runs, built from this tree.
type Bins struct{ Fared, Farectl, Fareinc string }

// BuildBins builds fared, farectl and fareinc into dir (lab tests' TestMain).
func BuildBins(dir string) (Bins, error) {
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/fared/fared/cmd/fared",
		"github.com/fared/fared/cmd/farectl", "github.com/fared/fared/cmd/fareinc")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return Bins{}, fmt.Errorf("building: %w", err)
	}
	return Bins{Fared: filepath.Join(dir, "fared"), Farectl: filepath.Join(dir, "farectl"), Fareinc: filepath.Join(dir, "fareinc")}, nil
}

// MainWithBins is the TestMain of a package of lab tests: it builds the
// binaries into a temporary directory, sets *bins, runs the tests and
// removes the directory. The lab runs the real binaries, built from this
// tree.
func MainWithBins(m *testing.M, bins *Bins) {
	dir, err := os.MkdirTemp("", "fared-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *bins, err = BuildBins(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// LabBins is for a package with a single lab test, which needs no
// TestMain: it skips (or fails) like RequireLab, then builds the binaries
// into the test's temporary directory.
func LabBins(t testing.TB) Bins {
	t.Helper()
	RequireLab(t)
	bins, err := BuildBins(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// StartLab parses topoYAML, brings the lab up under a unique name (o.Name,
// or else the topology name, is the prefix) and registers its teardown
// with t.Cleanup, which runs even when the test fails or panics. On
// failure the command log and daemon log tails are printed.
func StartLab(t testing.TB, topoYAML string, o Options) *Lab {
	t.Helper()
	RequireLab(t)
	topo, err := ParseTopology([]byte(topoYAML))
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	prefix := o.Name
	if prefix == "" {
		prefix = topo.Name
	}
	o.Name = UniqueName(prefix[:min(len(prefix), 8)])
	buf := &LockedBuffer{}
	if o.Log == nil {
		o.Log = buf
	}
	// Registered before Up: if Up dies half-way (or the test is killed
	// by a timeout panic after it), the name-based Down still cleans.
	var lab *Lab
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lab %s command log:\n%s", o.Name, buf.String())
			if lab != nil {
				dumpLogs(t, lab)
			}
		}
		var err error
		if lab != nil {
			err = lab.Down()
		} else {
			err = DownAt(o.withDefaults().RunDir, o.Name)
		}
		if err != nil {
			t.Errorf("down %s: %v", o.Name, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	lab, err = Up(ctx, topo, o)
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	t.Logf("lab %s up in %v", lab.Name, time.Since(start).Round(time.Millisecond))
	return lab
}

func dumpLogs(t testing.TB, l *Lab) {
	for _, n := range l.Nodes {
		var files []string
		switch n.Kind {
		case "frr":
			files = []string{"zebra.log", "isisd.log"}
		case "fared":
			files = []string{"fared.log"}
		case "host":
			files = []string{"fared.log", "lldpd.log"}
		case "bird":
			files = []string{"bird.log"}
		}
		for _, f := range files {
			s := tail(filepath.Join(n.Dir, f), 4000)
			if strings.TrimSpace(s) != "" {
				t.Logf("%s %s (tail):\n%s", n.Name, f, s)
			}
		}
	}
}
